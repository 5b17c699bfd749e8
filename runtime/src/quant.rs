//! Dequantization of key values (docs/FORMAT.md):
//!
//! * `SmallestThree48` / `SmallestThreeWide`: the largest-magnitude component of a unit
//!   quaternion was made positive and dropped (2-bit index); the other three lie in
//!   `[-1/√2, 1/√2]` with 15 (or 16 to 23) bits each.
//! * `RangedRotation`: `x, y, z` of `reference⁻¹ q` (its `w` positive and dropped),
//!   range-reduced with `bits` each; the value is `reference * q'`.
//! * `RangedVector`: range-reduced per component; components that do not vary take no bits.
//!
//! Ranges are stored as f32 and used exactly as stored, so decoding is bit-exact.

use glam::{Quat, Vec4};

use crate::predict::Codes;

/// Half the span of a smallest-three component.
pub const S3_MAX: f32 = std::f32::consts::FRAC_1_SQRT_2;
/// Bits per component of `SmallestThree48`.
pub const S3_BITS: u32 = 15;

/// How one animated track's key values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KeyFormat {
    /// 48 bits per rotation key.
    SmallestThree48,
    /// Smallest-three with `bits` (16 to 23) per component.
    SmallestThreeWide { bits: u8 },
    /// Rotation relative to the range's reference: `x, y, z` in `bits` each.
    RangedRotation { bits: u8 },
    /// Vector: `bits` per varying component within the range.
    RangedVector { bits: u8 },
}

/// Per-component minimum and extent of a range-reduced track, and (rotations) the
/// reference rotation keys are stored relative to, with its stored code.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct KeyRange {
    pub min: [f32; 3],
    pub extent: [f32; 3],
    pub reference: Quat,
    pub reference_code: Codes,
}

impl Default for KeyRange {
    fn default() -> Self {
        Self {
            min: [0.0; 3],
            extent: [0.0; 3],
            reference: Quat::IDENTITY,
            reference_code: [0; 3],
        }
    }
}

/// A code of `bits` bits back to its value in `[min, min + extent]`.
#[inline]
pub fn from_unit(q: u32, min: f32, extent: f32, bits: u8) -> f32 {
    if extent <= 0.0 {
        return min;
    }
    let max = ((1u64 << bits) - 1) as f32;
    min + (q as f32 / max) * extent
}

/// Decodes smallest-three with `bits` per component (`idx` the dropped component).
#[inline]
pub fn decode_s3_bits(idx: u8, codes: Codes, bits: u8) -> Quat {
    let mut kept = [0.0f32; 3];
    for k in 0..3 {
        kept[k] = from_unit(codes[k], -S3_MAX, 2.0 * S3_MAX, bits);
    }
    rebuild(idx, kept)
}

/// Rebuilds a unit quaternion from three components and the (positive) dropped one.
#[inline]
pub fn rebuild(dropped: u8, kept: [f32; 3]) -> Quat {
    let sum = kept[0] * kept[0] + kept[1] * kept[1] + kept[2] * kept[2];
    let d = (1.0 - sum).max(0.0).sqrt();
    let mut a = [0.0f32; 4];
    let mut k = 0;
    for (i, slot) in a.iter_mut().enumerate() {
        if i == dropped as usize {
            *slot = d;
        } else {
            *slot = kept[k];
            k += 1;
        }
    }
    Quat::from_array(a).normalize()
}

/// Decodes one key's codes (rotations as x, y, z, w; vectors with w = 0).
#[inline]
pub fn decode(format: KeyFormat, range: &KeyRange, codes: Codes) -> Vec4 {
    match format {
        KeyFormat::SmallestThree48 => {
            let idx = (codes[0] >> 16) as u8 & 3;
            Vec4::from(decode_s3_bits(
                idx,
                [codes[0] & 0xFFFF, codes[1], codes[2]],
                S3_BITS as u8,
            ))
        }
        KeyFormat::SmallestThreeWide { bits } => {
            let idx = (codes[0] >> 24) as u8 & 3;
            Vec4::from(decode_s3_bits(
                idx,
                [codes[0] & 0xFF_FFFF, codes[1], codes[2]],
                bits,
            ))
        }
        KeyFormat::RangedRotation { bits } => {
            let xyz =
                std::array::from_fn(|c| from_unit(codes[c], range.min[c], range.extent[c], bits));
            Vec4::from((range.reference * rebuild(3, xyz)).normalize())
        }
        KeyFormat::RangedVector { bits } => {
            let v: [f32; 3] =
                std::array::from_fn(|c| from_unit(codes[c], range.min[c], range.extent[c], bits));
            Vec4::new(v[0], v[1], v[2], 0.0)
        }
    }
}
