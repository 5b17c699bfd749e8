//! Quantization of key values.
//!
//! * Rotations, `SmallestThree48`: the largest-magnitude component is made positive and
//!   dropped (2-bit index); the other three lie in `[-1/√2, 1/√2]` and take 15 bits each.
//! * Rotations, `RangedRotation`: each key is stored relative to a per-track reference
//!   rotation (the track's mean, itself stored in smallest-three form): `q' = ref⁻¹ q` lies
//!   near identity, so its `w` is large (made positive and dropped) and `x, y, z` are small;
//!   they are range-reduced over the track and stored with `bits` each — far fewer than 15
//!   when the joint moves little, and finer than 15 when a long lever arm needs it.
//! * Vectors (translation, scale): range-reduced per component, `bits` each; components
//!   that do not vary take no bits.
//!
//! Ranges are stored as f32 and used exactly as stored, so decoding is bit-exact.

use glam::{Quat, Vec4};
use serde::Serialize;

use skelpack_runtime::quant::{KeyFormat, KeyRange, S3_BITS, S3_MAX};

/// How one animated track's key values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Format {
    /// 48 bits per rotation key.
    SmallestThree48,
    /// Smallest-three with `bits` (16 to 23) per component: 2 + 3 x bits per key, for
    /// rotations that swing too far for a reference and need more than 15 bits.
    SmallestThreeWide { bits: u8 },
    /// Rotation relative to the range's reference: `x, y, z` in `bits` each within the range.
    RangedRotation { bits: u8 },
    /// Vector: `bits` per varying component within the range.
    RangedVector { bits: u8 },
}

/// Per-component minimum and extent of a range-reduced track, and (rotations) the
/// reference rotation keys are stored relative to.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Range {
    pub min: [f32; 3],
    pub extent: [f32; 3],
    #[serde(skip)]
    pub reference: Quat,
    /// The reference's smallest-three code, as stored (re-encoding a decoded rotation can
    /// pick another dropped component when two tie, so the code is kept).
    #[serde(skip)]
    pub reference_code: Codes,
}

impl Default for Range {
    fn default() -> Self {
        Self {
            min: [0.0; 3],
            extent: [0.0; 3],
            reference: Quat::IDENTITY,
            reference_code: [0; 3],
        }
    }
}

impl Range {
    /// The bounding range of `values` over components `comps`.
    pub fn of(values: impl Iterator<Item = [f32; 3]>) -> Self {
        let mut lo = [f32::INFINITY; 3];
        let mut hi = [f32::NEG_INFINITY; 3];
        for v in values {
            for c in 0..3 {
                lo[c] = lo[c].min(v[c]);
                hi[c] = hi[c].max(v[c]);
            }
        }
        let mut extent = [0.0; 3];
        for c in 0..3 {
            if !lo[c].is_finite() {
                lo[c] = 0.0;
            }
            extent[c] = (hi[c] - lo[c]).max(0.0);
            if !extent[c].is_finite() {
                extent[c] = 0.0;
            }
        }
        Self {
            min: lo,
            extent,
            ..Self::default()
        }
    }

    /// Components that vary (and therefore take bits).
    pub fn varying(&self) -> usize {
        self.extent.iter().filter(|&&e| e > 0.0).count()
    }
}

impl Format {
    /// Bits one key's value takes.
    pub fn bits_per_key(&self, range: &Range) -> u32 {
        match *self {
            Self::SmallestThree48 => 48,
            Self::SmallestThreeWide { bits } => 2 + 3 * bits as u32,
            Self::RangedRotation { bits } | Self::RangedVector { bits } => {
                bits as u32 * range.varying() as u32
            }
        }
    }
}

/// Quantized integers of one key (unused components are zero).
pub type Codes = [u32; 3];

fn to_unit(v: f32, min: f32, extent: f32, bits: u8) -> u32 {
    if extent <= 0.0 {
        return 0;
    }
    let max = ((1u64 << bits) - 1) as f32;
    round_unsigned(((v - min) / extent).clamp(0.0, 1.0) * max)
}

/// `x.round() as u32` for `x` in `[0, 2^24]` (or a NaN: 0), without the library call
/// `f32::round` makes on a CPU baseline without SSE4.1 (about 2 % of a compression's
/// instructions): `x` less its whole part is exact there (the two within a factor of two,
/// or the whole part 0), and a half rounds up, away from zero, as `round` does.
#[inline]
pub(crate) fn round_unsigned(x: f32) -> u32 {
    let whole = x as u32;
    whole + u32::from(x - whole as f32 >= 0.5)
}

/// Encodes a rotation in smallest-three 48-bit form: (index, three 15-bit codes).
pub fn encode_s3(q: Quat) -> (u8, Codes) {
    encode_s3_bits(q, S3_BITS as u8)
}

/// Smallest-three with `bits` per component: (index, three codes).
pub fn encode_s3_bits(q: Quat, bits: u8) -> (u8, Codes) {
    let a = q.to_array();
    let mut idx = 0;
    for i in 1..4 {
        if a[i].abs() > a[idx].abs() {
            idx = i;
        }
    }
    let sign = if a[idx] < 0.0 { -1.0 } else { 1.0 };
    let mut codes = [0u32; 3];
    let mut k = 0;
    for (i, &c) in a.iter().enumerate() {
        if i != idx {
            codes[k] = to_unit(c * sign, -S3_MAX, 2.0 * S3_MAX, bits);
            k += 1;
        }
    }
    (idx as u8, codes)
}

/// Decodes a smallest-three rotation.
pub fn decode_s3(idx: u8, codes: Codes) -> Quat {
    decode_s3_bits(idx, codes, S3_BITS as u8)
}

pub use skelpack_runtime::quant::decode_s3_bits;

/// `x, y, z` of `reference⁻¹ q` with `w` made positive.
pub fn relative_xyz(q: Quat, reference: Quat) -> [f32; 3] {
    let r = reference.conjugate() * q;
    let r = if r.w < 0.0 { -r } else { r };
    [r.x, r.y, r.z]
}

/// The reference for a ranged rotation track: its mean rotation, rounded to smallest-three
/// form (as stored); `None` when some key lies more than ~145° from it (`w` < 0.3), where
/// rebuilding `w` would lose precision.
pub fn choose_reference(track: &[Quat]) -> Option<(Quat, Codes)> {
    let mean = crate::codec::classify::constant_quat(track);
    let code = encode(Format::SmallestThree48, &Range::default(), Vec4::from(mean));
    let reference = Quat::from_vec4(decode(Format::SmallestThree48, &Range::default(), code));
    track
        .iter()
        .all(|q| (reference.conjugate() * *q).w.abs() >= 0.3)
        .then_some((reference, code))
}

/// Encodes one value in `format` with `range`.
pub fn encode(format: Format, range: &Range, v: Vec4) -> Codes {
    match format {
        Format::SmallestThree48 => {
            let (idx, c) = encode_s3(Quat::from_vec4(v));
            [c[0] | (idx as u32) << 16, c[1], c[2]]
        }
        Format::SmallestThreeWide { bits } => {
            let (idx, c) = encode_s3_bits(Quat::from_vec4(v), bits);
            [c[0] | (idx as u32) << 24, c[1], c[2]]
        }
        Format::RangedRotation { bits } => {
            let k = relative_xyz(Quat::from_vec4(v), range.reference);
            std::array::from_fn(|c| to_unit(k[c], range.min[c], range.extent[c], bits))
        }
        Format::RangedVector { bits } => {
            let a = v.truncate().to_array();
            std::array::from_fn(|c| to_unit(a[c], range.min[c], range.extent[c], bits))
        }
    }
}

/// Encodes a ranged format's components (for rotations, `x, y, z` relative to the range's
/// reference: [`relative_xyz`]), as [`encode`] does from the value.
pub fn encode_ranged(format: Format, range: &Range, k: [f32; 3]) -> Codes {
    match format {
        Format::RangedRotation { bits } | Format::RangedVector { bits } => {
            std::array::from_fn(|c| to_unit(k[c], range.min[c], range.extent[c], bits))
        }
        Format::SmallestThree48 | Format::SmallestThreeWide { .. } => {
            unreachable!("smallest-three formats have no range")
        }
    }
}

/// Decodes one value.
pub fn decode(format: Format, range: &Range, codes: Codes) -> Vec4 {
    skelpack_runtime::quant::decode(format.into(), &(*range).into(), codes)
}

impl From<Format> for KeyFormat {
    #[inline]
    fn from(f: Format) -> Self {
        match f {
            Format::SmallestThree48 => Self::SmallestThree48,
            Format::SmallestThreeWide { bits } => Self::SmallestThreeWide { bits },
            Format::RangedRotation { bits } => Self::RangedRotation { bits },
            Format::RangedVector { bits } => Self::RangedVector { bits },
        }
    }
}

impl From<KeyFormat> for Format {
    #[inline]
    fn from(f: KeyFormat) -> Self {
        match f {
            KeyFormat::SmallestThree48 => Self::SmallestThree48,
            KeyFormat::SmallestThreeWide { bits } => Self::SmallestThreeWide { bits },
            KeyFormat::RangedRotation { bits } => Self::RangedRotation { bits },
            KeyFormat::RangedVector { bits } => Self::RangedVector { bits },
        }
    }
}

impl From<Range> for KeyRange {
    #[inline]
    fn from(r: Range) -> Self {
        Self {
            min: r.min,
            extent: r.extent,
            reference: r.reference,
            reference_code: r.reference_code,
        }
    }
}

impl From<KeyRange> for Range {
    #[inline]
    fn from(r: KeyRange) -> Self {
        Self {
            min: r.min,
            extent: r.extent,
            reference: r.reference,
            reference_code: r.reference_code,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `round_unsigned` is `round` on every value a code can be made of: a spread of every
    /// magnitude up to 2^24, every half and its neighbours up to 2^13 and near 2^23 and 2^24,
    /// and the ends.
    #[test]
    fn rounding_without_the_library_is_round() {
        let top = (1u32 << 24) as f32;
        let spread = (0..=top.to_bits()).step_by(4099).map(f32::from_bits);
        let halves = (0..1u32 << 13)
            .chain((1 << 23) - 64..(1 << 23) + 64)
            .chain((1 << 24) - 64..1 << 24)
            .flat_map(|k| {
                let h = k as f32 + 0.5;
                [
                    h,
                    f32::from_bits(h.to_bits() - 1),
                    f32::from_bits(h.to_bits() + 1),
                    k as f32,
                ]
            });
        let ends = [0.0, -0.0, 0.5, 0.49999997, 1.0, top, f32::NAN];
        for x in spread
            .chain(halves)
            .chain(ends)
            .filter(|x| x.is_nan() || *x <= top)
        {
            assert_eq!(
                round_unsigned(x),
                x.round() as u32,
                "{x:e} ({:#x})",
                x.to_bits()
            );
        }
    }

    #[test]
    fn ranged_rotation_is_finer_than_s3_with_enough_bits() {
        let track: Vec<Quat> = (0..50)
            .map(|i| {
                Quat::from_euler(
                    glam::EulerRot::ZYX,
                    2.0 + 0.01 * i as f32,
                    -1.2,
                    0.4 * (i as f32 * 0.1).sin(),
                )
            })
            .collect();
        let (reference, reference_code) = choose_reference(&track).unwrap();
        let mut range = Range::of(track.iter().map(|q| relative_xyz(*q, reference)));
        range.reference = reference;
        range.reference_code = reference_code;
        let f = Format::RangedRotation { bits: 20 };
        for q in &track {
            let d = Quat::from_vec4(decode(f, &range, encode(f, &range, Vec4::from(*q))));
            assert!(
                crate::model::quat_angle(*q, d) < 2e-6,
                "{}",
                crate::model::quat_angle(*q, d)
            );
        }
    }

    #[test]
    fn s3_precision_is_about_4e5_per_component() {
        for i in 0..200 {
            let q = Quat::from_euler(
                glam::EulerRot::XYZ,
                i as f32 * 0.1,
                i as f32 * -0.37,
                i as f32 * 0.05,
            )
            .normalize();
            let c = encode(Format::SmallestThree48, &Range::default(), Vec4::from(q));
            let d = Quat::from_vec4(decode(Format::SmallestThree48, &Range::default(), c));
            // Half a 15-bit step (2.2e-5) per stored component; the rebuilt one absorbs theirs.
            for (a, b) in q.to_array().iter().zip(d.to_array()) {
                assert!((a.abs() - b.abs()).abs() < 6e-5, "{q:?} {d:?}");
            }
        }
    }

    #[test]
    fn ranged_vector_round_trips_within_half_step() {
        let r = Range {
            min: [-1.0, 2.0, 0.0],
            extent: [2.0, 0.0, 1.0],
            ..Range::default()
        };
        let f = Format::RangedVector { bits: 8 };
        let v = Vec4::new(0.3, 2.0, 0.77, 0.0);
        let d = decode(f, &r, encode(f, &r, v));
        assert!((d - v).abs().max_element() <= 2.0 / 255.0 / 2.0 + 1e-6);
        assert_eq!(f.bits_per_key(&r), 16);
    }
}
