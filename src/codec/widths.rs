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
    /// Per format index, its floor once computed.
    floors: Vec<Option<f32>>,
}

impl Quantizer {
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

/// Whether a format quantizes within a range (its width is searched).
pub(super) fn is_ranged(format: Format) -> bool {
    matches!(
        format,
        Format::RangedRotation { .. } | Format::RangedVector { .. }
    )
}
