//! One track quantized in its candidate formats, for the width search: the range of its
//! ranged formats (the same at every width) and each frame's components in it (for
//! rotations, relative to the range's reference) are computed once, and a format's floor
//! (how far its keys miss the samples) without keeping its keys, as the search asks for
//! the floors of many widths and the keys of few.

use glam::{Quat, Vec4};

use super::fit::{distance_of_squared, squared_distance};
use super::quantize::{
    Codes, Format, Range, choose_reference, decode, encode, encode_ranged, relative_xyz,
};
use super::track::TrackInput;

/// A track's quantization in its candidate formats, filled on first use.
#[derive(Clone, Debug, Default)]
pub(super) struct Quantizer {
    /// The range of the track's ranged formats, and each frame's components within it.
    ranged: Option<(Range, Vec<[f32; 3]>)>,
    /// What bounds a ranged width's floor besides the width ([`Quantizer::floor_bound`]).
    spread: Option<Spread>,
    /// Per format index, its floor once computed.
    floors: Vec<Option<f32>>,
}

impl Quantizer {
    /// Whether the floor of `format` (format index `fi`) is at most `limit`: without
    /// quantizing where [`Quantizer::floor_bound`] answers, as the search asks this of every
    /// width wider than the narrowest that holds the tolerance.
    pub fn floor_within(
        &mut self,
        input: &TrackInput,
        format: Format,
        fi: usize,
        limit: f32,
    ) -> bool {
        if let Some(Some(floor)) = self.floors.get(fi) {
            return *floor <= limit;
        }
        if is_ranged(format) && self.floor_bound(input, format) <= limit {
            return true;
        }
        self.floor(input, format, fi) <= limit
    }

    /// An upper bound of a ranged format's floor from its range and width alone: each
    /// component rounds to the nearest of `2^bits` levels over its extent (half a step,
    /// plus a margin far beyond f32 rounding). A rotation's `w` is rebuilt from its `x, y,
    /// z`: moving them by `d` moves `w` by at most `d (2 |xyz| + d) / w`; the angle is that
    /// of the chord, plus the samples' distance from unit length.
    fn floor_bound(&mut self, input: &TrackInput, format: Format) -> f32 {
        let bits = match format {
            Format::RangedRotation { bits } | Format::RangedVector { bits } => bits,
            _ => return f32::INFINITY,
        };
        let spread = *self.spread(input);
        let range = self.ranged(input).0;
        let step = 0.5 / ((1u64 << bits) - 1) as f32;
        let d2: f32 = (0..3)
            .map(|c| {
                let (min, extent) = (range.min[c], range.extent[c]);
                let b = extent * step + 1e-6 * (min.abs() + extent);
                b * b
            })
            .sum();
        let d = d2.sqrt();
        let bound = if input.is_rotation {
            let dw = d * (2.0 * spread.xyz + d) / spread.w;
            let chord = (d2 + dw * dw).sqrt() + spread.unit + 1e-6;
            distance_of_squared(true, chord * chord)
        } else {
            d
        };
        let bound = bound * (1.0 + 1e-4);
        if bound.is_finite() {
            bound
        } else {
            f32::INFINITY
        }
    }

    /// The spread of the track's ranged components ([`Spread`]), computed once.
    fn spread(&mut self, input: &TrackInput) -> &Spread {
        if self.spread.is_none() {
            let components = &self.ranged(input).1;
            let mut spread = Spread {
                xyz: 0.0,
                w: f32::INFINITY,
                unit: 0.0,
            };
            for k in components {
                let s = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
                spread.xyz = spread.xyz.max(s.sqrt());
                spread.w = spread.w.min((1.0 - s).max(0.0).sqrt());
            }
            if input.is_rotation {
                for v in input.raw {
                    spread.unit = spread.unit.max((v.length() - 1.0).abs());
                }
            }
            // A `w` this small (or none) bounds nothing.
            if spread.w.is_nan() || spread.w <= 1e-3 || !spread.unit.is_finite() {
                spread.w = 0.0;
            }
            self.spread = Some(spread);
        }
        self.spread.as_ref().expect("spread computed")
    }

    /// The floor of `format` (format index `fi`): the largest distance of its keys from
    /// the samples, as [`Quantizer::keys`] gives it.
    pub fn floor(&mut self, input: &TrackInput, format: Format, fi: usize) -> f32 {
        if let Some(Some(floor)) = self.floors.get(fi) {
            return *floor;
        }
        let rot = input.is_rotation;
        let mut largest = 0.0f32;
        self.each_key(input, format, |f, _, value| {
            largest = largest.max(squared_distance(rot, input.raw[f], value));
        });
        let floor = distance_of_squared(rot, largest);
        self.remember(fi, floor);
        floor
    }

    /// `format`'s (format index `fi`) range, the codes and decoded value of every frame,
    /// and its floor.
    pub fn keys(
        &mut self,
        input: &TrackInput,
        format: Format,
        fi: usize,
    ) -> (Range, Vec<Codes>, Vec<Vec4>, f32) {
        let n = input.raw.len();
        let (mut codes, mut values) = (Vec::with_capacity(n), Vec::with_capacity(n));
        let rot = input.is_rotation;
        let mut largest = 0.0f32;
        let range = self.each_key(input, format, |f, c, value| {
            largest = largest.max(squared_distance(rot, input.raw[f], value));
            codes.push(c);
            values.push(value);
        });
        let floor = distance_of_squared(rot, largest);
        self.remember(fi, floor);
        (range, codes, values, floor)
    }

    fn remember(&mut self, fi: usize, floor: f32) {
        if self.floors.len() <= fi {
            self.floors.resize(fi + 1, None);
        }
        self.floors[fi] = Some(floor);
    }

    /// Calls `key(frame, codes, decoded value)` for every frame in `format`; returns the
    /// range.
    fn each_key(
        &mut self,
        input: &TrackInput,
        format: Format,
        mut key: impl FnMut(usize, Codes, Vec4),
    ) -> Range {
        if !is_ranged(format) {
            let range = Range::default();
            for (f, v) in input.raw.iter().enumerate() {
                let c = encode(format, &range, *v);
                key(f, c, decode(format, &range, c));
            }
            return range;
        }
        let (range, components) = self.ranged(input);
        let range = *range;
        for (f, k) in components.iter().enumerate() {
            let c = encode_ranged(format, &range, *k);
            key(f, c, decode(format, &range, c));
        }
        range
    }

    /// The ranged formats' range and each frame's components within it (computed once).
    fn ranged(&mut self, input: &TrackInput) -> &(Range, Vec<[f32; 3]>) {
        self.ranged.get_or_insert_with(|| {
            if input.is_rotation {
                let quats: Vec<Quat> = input.raw.iter().map(|x| Quat::from_vec4(*x)).collect();
                let (reference, code) =
                    choose_reference(&quats).unwrap_or((Quat::IDENTITY, [0; 3]));
                let components: Vec<[f32; 3]> =
                    quats.iter().map(|q| relative_xyz(*q, reference)).collect();
                let mut r = Range::of(components.iter().copied());
                r.reference = reference;
                r.reference_code = code;
                (r, components)
            } else {
                let components: Vec<[f32; 3]> =
                    input.raw.iter().map(|v| v.truncate().to_array()).collect();
                (Range::of(components.iter().copied()), components)
            }
        })
    }
}

/// How far a track's ranged components spread, for [`Quantizer::floor_bound`].
#[derive(Clone, Copy, Debug)]
struct Spread {
    /// The largest length of a frame's `x, y, z` (rotations relative to the reference).
    xyz: f32,
    /// The least `w` of a frame's relative rotation (0 when it bounds nothing).
    w: f32,
    /// The largest distance of a sample rotation's length from 1.
    unit: f32,
}

/// Whether a format quantizes within a range (its width is searched).
pub(super) fn is_ranged(format: Format) -> bool {
    matches!(
        format,
        Format::RangedRotation { .. } | Format::RangedVector { .. }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A rotation track swinging about several axes, and a translation track.
    fn tracks() -> Vec<(bool, Vec<Vec4>)> {
        let rot = |amp: f32| -> Vec<Vec4> {
            (0..200)
                .map(|f| {
                    let t = f as f32 * 0.07;
                    Vec4::from(Quat::from_euler(
                        glam::EulerRot::ZYX,
                        0.4 + amp * t.sin(),
                        -0.3 + amp * 0.5 * (1.3 * t).cos(),
                        amp * 0.2 * (0.7 * t).sin(),
                    ))
                })
                .collect()
        };
        let vec = (0..200)
            .map(|f| {
                let t = f as f32 * 0.05;
                Vec4::new(3.0 + t.sin(), -20.0 + 0.01 * t.cos(), 0.5, 0.0)
            })
            .collect();
        vec![
            (true, rot(1e-3)),
            (true, rot(0.3)),
            (true, rot(1.2)),
            (false, vec),
        ]
    }

    #[test]
    fn the_floor_bound_is_never_below_the_floor_and_answers_like_it() {
        let mut bounded = 0;
        for (is_rotation, raw) in tracks() {
            let input = TrackInput {
                raw: &raw,
                mids: None,
                rest: Vec4::ZERO,
                is_rotation,
            };
            let mut q = Quantizer::default();
            for bits in 3..=23u8 {
                let format = if is_rotation {
                    Format::RangedRotation { bits }
                } else {
                    Format::RangedVector { bits }
                };
                let bound = q.floor_bound(&input, format);
                let floor = Quantizer::default().floor(&input, format, 0);
                assert!(bound >= floor, "{format:?}: bound {bound} < floor {floor}");
                // Not so loose that it never answers: within 4x of the floor at some widths.
                if bound.is_finite() && bound <= 4.0 * floor.max(1e-7) {
                    bounded += 1;
                }
                for limit in [0.5 * floor, floor, 2.0 * floor, bound] {
                    let within = Quantizer::default().floor_within(&input, format, 0, limit);
                    assert_eq!(within, floor <= limit, "{format:?} {limit}");
                }
            }
        }
        assert!(bounded >= 40, "{bounded} widths bounded closely");
    }
}
