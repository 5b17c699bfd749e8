//! Encoding one track at a local tolerance: rest, constant, or animated with the smallest
//! (format, bit width, interpolation) whose fitted keys hold the tolerance.

use glam::{Quat, Vec4};
use serde::Serialize;

use super::classify::{constant_quat, midrange};
use super::curve::{Curve, Interpolation};
use super::fit::{Fit, Insertions, Target, distance, distance_of_squared, squared_distance};
use super::predict::value_bits;
use super::quantize::{Codes, Format, Range, choose_reference, decode, encode};
use super::refine::{KeyValues, nudge_keys, refine_nudged};
use super::widths::{Quantizer, is_ranged};
use crate::settings::{Bits, Effort, Method};

/// One track's reference data.
#[derive(Clone, Copy, Debug)]
pub struct TrackInput<'a> {
    /// Values at every frame (rotations as x, y, z, w; vectors with w = 0).
    pub raw: &'a [Vec4],
    /// Reference values halfway between frames, when midpoints are enforced.
    pub mids: Option<&'a [Vec4]>,
    /// The skeleton's rest value.
    pub rest: Vec4,
    pub is_rotation: bool,
}

/// How a track is stored.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackData {
    /// Equal to the rest pose within tolerance: nothing stored.
    Rest,
    /// One value; `quantized` when it is stored in the track's key format (S3 48-bit for
    /// rotations) rather than as raw f32.
    Constant { value: Vec4, quantized: bool },
    /// Keys. Boxed, so a track is 32 bytes rather than 192: clips, memo entries and
    /// candidates move and clone tracks by the hundred, most of them rest or constant on a
    /// short clip (121_10 at `fast`: 1.6 to 1.4 M instructions, 09_02 22.5 to 22.3 M).
    Animated(Box<Animated>),
}

/// An animated track: quantized keys and the curve they decode to.
#[derive(Clone, Debug, PartialEq)]
pub struct Animated {
    pub curve: Curve,
    pub format: Format,
    pub range: Range,
    /// Quantized codes per key.
    pub codes: Vec<Codes>,
    /// Frames in the order the fitter inserted them.
    pub insert_order: Vec<u32>,
}

/// Summary of a track's storage, for reports.
#[derive(Clone, Debug, Serialize)]
pub struct TrackCost {
    pub keys: usize,
    pub bits_per_key: u32,
    pub bits: u64,
}

impl TrackData {
    /// Evaluates at a fractional frame (`rest` for rest tracks).
    #[inline]
    pub fn sample(&self, frame: f32, rest: Vec4) -> Vec4 {
        match self {
            Self::Rest => rest,
            Self::Constant { value, .. } => *value,
            Self::Animated(a) => a.curve.sample(frame),
        }
    }

    /// The values at every sample `0..frames`, then at every midpoint `f + 0.5`, pushed to
    /// `out` (cleared first) as [`TrackData::sample`] gives them, each segment prepared once
    /// for the sample and the midpoint inside it ([`Curve::sample_positions`]); one value for
    /// a track with fewer than two keys, the same at every position.
    pub fn sample_positions(&self, frames: usize, rest: Vec4, out: &mut Vec<Vec4>) {
        out.clear();
        match self {
            Self::Animated(a) if a.curve.len() > 1 => a.curve.sample_positions(frames, out),
            _ => out.push(self.sample(0.0, rest)),
        }
    }

    /// Key count (0 rest, 1 constant).
    pub fn keys(&self) -> usize {
        match self {
            Self::Rest => 0,
            Self::Constant { .. } => 1,
            Self::Animated(a) => a.curve.len(),
        }
    }

    /// The interpolation between its keys (none for a rest or constant track).
    pub fn interpolation(&self) -> Option<Interpolation> {
        match self {
            Self::Animated(a) => Some(a.curve.interpolation),
            _ => None,
        }
    }

    /// Storage in bits according to the container's layout.
    pub fn cost(&self, is_rotation: bool, frames: usize) -> TrackCost {
        match self {
            Self::Rest => TrackCost {
                keys: 0,
                bits_per_key: 0,
                bits: 0,
            },
            Self::Constant { quantized, .. } => {
                let b = constant_bits(is_rotation, *quantized);
                TrackCost {
                    keys: 1,
                    bits_per_key: b,
                    bits: b as u64,
                }
            }
            Self::Animated(a) => {
                let bpk = a.format.bits_per_key(&a.range);
                TrackCost {
                    keys: a.curve.len(),
                    bits_per_key: bpk,
                    bits: animated_bits(a.format, &a.range, &a.curve.frames, &a.codes, frames),
                }
            }
        }
    }
}

/// Bits of a constant value after its class: a 1-bit "quantized" flag, then 48 (S3) or
/// 32 per float.
pub fn constant_bits(is_rotation: bool, quantized: bool) -> u32 {
    1 + match (is_rotation, quantized) {
        (true, true) => 48,
        (true, false) => 128,
        (false, _) => 96,
    }
}

pub use skelpack_runtime::payload::count_bits;

/// Metadata bits of an animated track after its class (see docs/FORMAT.md): descriptor 13,
/// range (3 minimums + 1 extent per varying component, f32 each; none for S3), key count,
/// gap width 5, gaps `(keys - 2) x width`.
pub fn animated_meta_bits(
    format: Format,
    range: &Range,
    frames: &[u32],
    frame_count: usize,
) -> u64 {
    let keys = frames.len() as u64;
    13 + range_bits(format, range)
        + count_bits(frame_count) as u64
        + 5
        + keys.saturating_sub(2) * gap_width(frames) as u64
}

/// Bits of a track's range: 3 minimums and an extent per varying component (f32 each),
/// plus a 48-bit reference for ranged rotations.
pub fn range_bits(format: Format, range: &Range) -> u64 {
    match format {
        Format::SmallestThree48 | Format::SmallestThreeWide { .. } => 0,
        Format::RangedRotation { .. } => 48 + 32 * (3 + range.varying() as u64),
        Format::RangedVector { .. } => 32 * (3 + range.varying() as u64),
    }
}

/// Total bits of an animated track: metadata plus coded key values.
pub fn animated_bits(
    format: Format,
    range: &Range,
    frames: &[u32],
    codes: &[Codes],
    frame_count: usize,
) -> u64 {
    animated_meta_bits(format, range, frames, frame_count)
        + value_bits(format, range, codes, frames)
}

/// Bits needed for the largest `gap - 1` between consecutive keys.
pub fn gap_width(frames: &[u32]) -> u32 {
    let max = frames
        .windows(2)
        .map(|w| w[1] - w[0] - 1)
        .max()
        .unwrap_or(0);
    32 - max.leading_zeros()
}

/// How much of the bit-width search an encoding makes. Every ranged width is a full fit of
/// the track (both interpolations); a width whose next narrower one already quantizes the
/// samples within a share of the tolerance would keep about the same keys at more bits
/// each, so it is skipped: the search fits the widths near the narrowest that can hold the
/// tolerance, and S3-48.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum WidthSearch {
    /// Skips a width when the next narrower one quantizes within half the tolerance (a
    /// quarter before session 22: with the default's start at 4 times the budgets, the same
    /// `.skp` on the ACL clips and 0.01 % larger over the shared assets, for 5 % fewer
    /// instructions; docs/COMPRESSION.md, "Session 22"). The default's and `Effort::Max`'s.
    #[default]
    Thorough,
    /// Fits only the narrowest width that quantizes within the tolerance (and the next
    /// narrower one, to see it fail or win): up to 3 % larger on a few clips, 20-27 % less
    /// CPU. The edit loop's and batch previews' search (`Effort::Fast`).
    Quick,
}

impl WidthSearch {
    /// The width search of an effort.
    pub fn of(effort: Effort) -> Self {
        match effort {
            Effort::Fast => Self::Quick,
            Effort::Default | Effort::Max => Self::Thorough,
        }
    }

    /// The share of the tolerance under which the next narrower width's quantization error
    /// lets a width be skipped.
    fn skip_below(self) -> f32 {
        match self {
            Self::Thorough => 0.5,
            Self::Quick => 1.0,
        }
    }
}

/// How an encoding searches, besides its tolerance.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Variant {
    /// Key values refined off the samples where that saves bits ([`refine_nudged`]).
    pub refined: bool,
    pub search: WidthSearch,
    /// The one interpolation fitted (of those the method tries), or every one. The settle
    /// pass (`Effort::Fast`) re-encodes a track with its current encoding's interpolation:
    /// on the shared capture clips linear wins every encoding, and a Catmull-Rom fit costs
    /// more than the linear one it loses to.
    pub only: Option<Interpolation>,
}

impl Variant {
    /// Plain keys, every interpolation, the width search of `effort`.
    pub fn plain(effort: Effort) -> Self {
        Self {
            refined: false,
            search: WidthSearch::of(effort),
            only: None,
        }
    }
}

/// Encodes a track at `tolerance` (radians for rotations, units for vectors).
pub fn encode_track(input: &TrackInput, tolerance: f32, method: Method, bits: Bits) -> TrackData {
    TrackEncoder::new(*input, method, bits, tolerance).encode(tolerance)
}

/// The finest encoding of a track: every sample a key, in the most precise candidate
/// format. What it misses by is the track's floor: no tolerance below it can be held.
pub fn finest_track(input: &TrackInput, bits: Bits) -> TrackData {
    every_key(input, finest_formats(input, bits))
}

/// The formats [`every_key`] tries of [`candidate_formats`] (each kind's widest), listed
/// without making the whole list: the floors pass asks it of every moving track.
fn finest_formats(input: &TrackInput, bits: Bits) -> &'static [Format] {
    const S3: Format = Format::SmallestThree48;
    match (input.is_rotation, bits) {
        (false, _) => &[Format::RangedVector { bits: 24 }],
        (true, Bits::Fixed) => &[S3],
        (true, Bits::Auto) if choose_reference(as_quats(input.raw)).is_some() => {
            &[S3, Format::RangedRotation { bits: 23 }]
        }
        (true, Bits::Auto) => &[Format::SmallestThreeWide { bits: 23 }, S3],
    }
}

/// Encodes one track at any number of tolerances, keeping what does not depend on the
/// tolerance for the next call: how far the rest value and the constants miss, each
/// format's quantized keys, and the fitter's insertions (recorded down to `finest`, so
/// every tolerance from there up reuses them).
pub struct TrackEncoder<'a> {
    input: TrackInput<'a>,
    method: Method,
    finest: f32,
    search: WidthSearch,
    /// The one interpolation fitted, or every one ([`Variant::only`]).
    only: Option<Interpolation>,
    /// Rest and constant encodings in order of preference, with their largest deviation.
    constants: Constants,
    /// The formats' bit widths (fixed or searched).
    bits: Bits,
    /// The candidate formats, widest first: listed on the first encoding that no constant
    /// holds (empty until then: on a short clip most tracks are constants, and listing a
    /// rotation's formats chooses its range's reference).
    formats: Vec<Format>,
    /// Per format (filled on first use): quantized keys and insertions per interpolation.
    /// Boxed: an encoder has a slot for each of about 22 formats and fills a few, and
    /// unboxed slots were most of a short clip's fresh heap pages.
    quantized: Vec<Option<Box<Quantized>>>,
    /// The formats' range and floors.
    quantizer: Quantizer,
}

/// What a [`TrackEncoder`] keeps that depends only on the track's samples, its method and
/// bit widths: kept across compressions of the same clip (see `codec::Recompressor`), it
/// makes encoding the track at a new tolerance a replay of recorded insertions.
pub struct EncoderState {
    method: Method,
    finest: f32,
    constants: Constants,
    bits: Bits,
    formats: Vec<Format>,
    quantized: Vec<Option<Box<Quantized>>>,
    quantizer: Quantizer,
}

/// Nudged keys kept per format and interpolation (the encoder state lives as long as the
/// app's document: this bounds it).
const NUDGED_KEPT: usize = 8;

/// One format's keys for every frame, and the fitter's insertions through them.
struct Quantized {
    range: Range,
    codes: Vec<Codes>,
    key_values: Vec<Vec4>,
    /// The largest deviation of the keys from the samples (the quantization error).
    floor: f32,
    insertions: Vec<Option<Insertions>>,
    /// Per interpolation, the bits of the fits already costed, by insertion prefix.
    costs: Vec<Vec<(usize, u64)>>,
    /// Per interpolation, the keys of the fits refined last after their nudging rounds
    /// ([`nudge_keys`]), by insertion prefix: at most [`NUDGED_KEPT`].
    nudged: Vec<Vec<(usize, KeyValues)>>,
}

impl<'a> TrackEncoder<'a> {
    /// An encoder for tolerances of at least `finest` (finer ones work, at a full refit).
    pub fn new(input: TrackInput<'a>, method: Method, bits: Bits, finest: f32) -> Self {
        Self {
            input,
            method,
            finest,
            search: WidthSearch::Thorough,
            only: None,
            constants: Constants::of(&input),
            bits,
            formats: Vec::new(),
            quantized: Vec::new(),
            quantizer: Quantizer::default(),
        }
    }

    /// An encoder continuing from `state`, which an encoder of the same samples with the
    /// same method and bit widths left ([`TrackEncoder::into_state`]).
    pub fn resume(input: TrackInput<'a>, state: EncoderState) -> Self {
        let EncoderState {
            method,
            finest,
            constants,
            bits,
            formats,
            quantized,
            quantizer,
        } = state;
        Self {
            input,
            method,
            finest,
            search: WidthSearch::Thorough,
            only: None,
            constants,
            bits,
            formats,
            quantized,
            quantizer,
        }
    }

    /// Encodes the track at `tolerance` as `variant` says (plain or refined keys).
    pub fn encode_as(&mut self, tolerance: f32, variant: Variant) -> TrackData {
        self.search = variant.search;
        self.only = variant.only;
        self.encode_with(tolerance, variant.refined)
    }

    /// What this encoder computed that later encodings of the same samples reuse.
    pub fn into_state(self) -> EncoderState {
        EncoderState {
            method: self.method,
            finest: self.finest,
            constants: self.constants,
            bits: self.bits,
            formats: self.formats,
            quantized: self.quantized,
            quantizer: self.quantizer,
        }
    }

    /// Encodes the track at `tolerance` (radians for rotations, units for vectors).
    pub fn encode(&mut self, tolerance: f32) -> TrackData {
        self.encode_with(tolerance, false)
    }

    fn encode_with(&mut self, tolerance: f32, refined: bool) -> TrackData {
        if let Some(c) = self.constants.within(tolerance) {
            return c;
        }
        self.list_formats();
        // The cheapest candidate as (cost, format, interpolation, prefix of the recorded
        // insertions): only the winner is built.
        let mut best: Option<(u64, usize, usize, usize)> = None;
        // Narrowing the width first shrinks the track, then the extra keys it needs outweigh
        // the saved bits: stop once the cost has risen at two widths in a row.
        let (mut previous, mut rising) = (u64::MAX, 0);
        // A ranged width is not fitted where the next narrower one quantizes within a share
        // of the tolerance: its fit would keep about the same keys at more bits each.
        let skip_below = self.search.skip_below();
        for fi in 0..self.formats.len() {
            let format = self.formats[fi];
            if is_ranged(format)
                && self.formats.get(fi + 1).is_some_and(|f| is_ranged(*f))
                && self.floor_within(fi + 1, tolerance * skip_below)
            {
                continue;
            }
            // Keys that miss by more than the tolerance hold it with no interpolation: at a
            // ranged width, no narrower one can either.
            if !self.floor_within(fi, tolerance) {
                if is_ranged(format) {
                    break;
                }
                continue;
            }
            let mut any = false;
            let mut width_best = u64::MAX;
            for (ii, &interp) in self.method.candidates().iter().enumerate() {
                if self.only.is_some_and(|only| only != interp) {
                    continue;
                }
                let Some(prefix) = self.fit(fi, ii, interp, tolerance) else {
                    continue;
                };
                any = true;
                let cost = self.cost(fi, ii, prefix);
                width_best = width_best.min(cost);
                if best.is_none_or(|(b, ..)| cost < b) {
                    best = Some((cost, fi, ii, prefix));
                }
            }
            let ranged = is_ranged(format);
            if ranged {
                rising = if width_best > previous { rising + 1 } else { 0 };
                previous = width_best;
            }
            // Fewer bits only add error: once a width cannot hold the tolerance, stop narrowing.
            if ranged && (!any || rising >= 2) {
                break;
            }
        }
        let Some((cost, fi, ii, prefix)) = best else {
            return every_key(&self.input, &self.formats);
        };
        let a = self.animated(fi, ii, prefix);
        if refined {
            flat_as_constant(self.refined(cost, a, tolerance, (fi, ii, prefix)))
        } else {
            flat_as_constant(a)
        }
    }

    /// Lists the candidate formats, each with an empty slot for its keys (once).
    fn list_formats(&mut self) {
        if self.formats.is_empty() {
            self.formats = candidate_formats(&self.input, self.bits);
            self.quantized = self.formats.iter().map(|_| None).collect();
        }
    }

    /// The keys of format `fi` with interpolation `ii` that the first `prefix` recorded
    /// insertions leave (every frame with [`Method::None`]).
    fn fit_of(&self, fi: usize, ii: usize, prefix: usize) -> Fit {
        if self.method == Method::None {
            let all: Vec<u32> = (0..self.input.raw.len() as u32).collect();
            return Fit {
                insert_order: all.clone(),
                frames: all,
            };
        }
        let q = self.quantized[fi].as_ref().expect("quantized by fit");
        q.insertions[ii]
            .as_ref()
            .expect("recorded by fit")
            .fit_of(prefix)
    }

    /// Bits of the candidate [`TrackEncoder::fit_of`] gives, computed once per candidate.
    fn cost(&mut self, fi: usize, ii: usize, prefix: usize) -> u64 {
        let known = self.quantized[fi].as_ref().expect("quantized by fit").costs[ii]
            .iter()
            .find(|(p, _)| *p == prefix)
            .map(|&(_, cost)| cost);
        if let Some(cost) = known {
            return cost;
        }
        let frames = self.fit_of(fi, ii, prefix).frames;
        let q = self.quantized[fi].as_mut().expect("quantized by fit");
        let kept: Vec<Codes> = frames.iter().map(|&f| q.codes[f as usize]).collect();
        let cost = animated_bits(
            self.formats[fi],
            &q.range,
            &frames,
            &kept,
            self.input.raw.len(),
        );
        q.costs[ii].push((prefix, cost));
        cost
    }

    /// The animated track of candidate `(fi, ii, prefix)` ([`TrackEncoder::fit_of`]).
    fn animated(&self, fi: usize, ii: usize, prefix: usize) -> Animated {
        let Fit {
            frames,
            insert_order,
        } = self.fit_of(fi, ii, prefix);
        let q = self.quantized[fi].as_ref().expect("quantized by fit");
        let codes = frames.iter().map(|&f| q.codes[f as usize]).collect();
        let values = frames.iter().map(|&f| q.key_values[f as usize]).collect();
        let interp = self.method.candidates()[ii];
        Animated {
            curve: Curve::new(interp, self.input.is_rotation, frames, values),
            format: self.formats[fi],
            range: q.range,
            codes,
            insert_order,
        }
    }

    /// `a` (costing `cost` bits), candidate `(fi, ii, prefix)`, with refined keys
    /// ([`refine_nudged`]) when that is smaller.
    fn refined(
        &mut self,
        cost: u64,
        a: Animated,
        tolerance: f32,
        (fi, ii, prefix): (usize, usize, usize),
    ) -> Animated {
        if self.method == Method::None {
            return a;
        }
        let fit = Fit {
            frames: a.curve.frames.clone(),
            insert_order: a.insert_order.clone(),
        };
        let (format, interp) = (a.format, a.curve.interpolation);
        let input = self.input;
        let q = self.quantized[fi].as_mut().expect("quantized by fit");
        let target = Target {
            raw: input.raw,
            mids: input.mids,
            key_values: &q.key_values,
            is_rotation: input.is_rotation,
        };
        let nudged = &mut q.nudged[ii];
        let at = match nudged.iter().position(|(p, _)| *p == prefix) {
            Some(at) => at,
            None => {
                if nudged.len() == NUDGED_KEPT {
                    nudged.remove(0);
                }
                let keys = nudge_keys(&target, interp, &fit, &q.codes, format, q.range);
                nudged.push((prefix, keys));
                nudged.len() - 1
            }
        };
        let range = q.range;
        let (fit, codes, values) = refine_nudged(
            &target,
            interp,
            tolerance,
            &fit,
            &q.codes,
            format,
            range,
            &nudged[at].1,
        );
        let refined_cost = animated_bits(format, &range, &fit.frames, &codes, input.raw.len());
        if refined_cost >= cost {
            return a;
        }
        Animated {
            curve: Curve::new(interp, input.is_rotation, fit.frames, values),
            format,
            range,
            codes,
            insert_order: fit.insert_order,
        }
    }

    /// Whether format `fi`'s keys miss the samples by at most `limit` (without quantizing
    /// them where a bound on the quantization error answers, nor keeping them where they
    /// are not quantized yet: the width search asks this of many widths and fits few).
    fn floor_within(&mut self, fi: usize, limit: f32) -> bool {
        match &self.quantized[fi] {
            Some(q) => q.floor <= limit,
            None => self
                .quantizer
                .floor_within(&self.input, self.formats[fi], fi, limit),
        }
    }

    /// Format `fi`'s keys for every frame (quantized on first use).
    fn quantized(&mut self, fi: usize) -> &mut Quantized {
        let input = self.input;
        let format = self.formats[fi];
        let n_interp = self.method.candidates().len();
        let quantizer = &mut self.quantizer;
        self.quantized[fi].get_or_insert_with(|| {
            let (range, codes, key_values, floor) = quantizer.keys(&input, format, fi);
            Box::new(Quantized {
                range,
                codes,
                key_values,
                floor,
                insertions: vec![None; n_interp],
                costs: vec![Vec::new(); n_interp],
                nudged: vec![Vec::new(); n_interp],
            })
        })
    }

    /// The fit of format `fi` with interpolation `interp` (candidate `ii`) at `tolerance`,
    /// as the prefix of recorded insertions it keeps ([`TrackEncoder::fit_of`]).
    fn fit(
        &mut self,
        fi: usize,
        ii: usize,
        interp: Interpolation,
        tolerance: f32,
    ) -> Option<usize> {
        let (input, method, finest) = (self.input, self.method, self.finest);
        let q = self.quantized(fi);
        let target = Target {
            raw: input.raw,
            mids: input.mids,
            key_values: &q.key_values,
            is_rotation: input.is_rotation,
        };
        if method == Method::None {
            return fits_all(&target, tolerance).then_some(0);
        }
        let recorded = &mut q.insertions[ii];
        if let Some(Ok(prefix)) = recorded.as_ref().map(|r| r.prefix(tolerance)) {
            return prefix;
        }
        // The first recording goes down to the finest tolerance (or stops where the fit is
        // bound to give up); a tolerance it does not answer continues it.
        let mut r = recorded
            .take()
            .unwrap_or_else(|| Insertions::record(&target, interp, tolerance.min(finest)));
        if r.prefix(tolerance).is_err() {
            r = r.continue_to(&target, interp, tolerance);
        }
        recorded
            .insert(r)
            .prefix(tolerance)
            .expect("insertions continued down to a tolerance answer it")
    }
}

/// A track's rest and constant encodings in order of preference, with how far each misses
/// the samples: the rest value; for a rotation, its constant quantized as S3-48 (when that
/// round trip is stable); the constant as raw floats. Kept inline (no heap): an encoder is
/// made for every track, and most tracks of a short clip end as one of these.
#[derive(Clone, Copy, Debug)]
struct Constants {
    /// How far the rest value misses.
    rest: f32,
    /// A rotation's S3-48 constant, and how far it misses.
    quantized: Option<(f32, Vec4)>,
    /// The constant as raw floats, and how far it misses.
    raw: (f32, Vec4),
}

impl Constants {
    /// The rest and constant values of `input`, each with how far it misses.
    fn of(input: &TrackInput) -> Self {
        let raw = input.raw;
        let rot = input.is_rotation;
        // The largest distance is the distance of the largest square (the root and `asin`
        // never decrease): one root a constant, not one a sample.
        let max_dev = |v: Vec4| {
            let largest = raw
                .iter()
                .chain(input.mids.unwrap_or_default())
                .map(|x| squared_distance(rot, *x, v))
                .fold(0.0f32, f32::max);
            distance_of_squared(rot, largest)
        };
        let rest = max_dev(input.rest);
        if !rot {
            let c = midrange(raw.iter().map(|v| v.truncate())).extend(0.0);
            return Self {
                rest,
                quantized: None,
                raw: (max_dev(c), c),
            };
        }
        let value = Vec4::from(constant_quat(as_quats(raw)));
        // The container stores the constant by re-encoding it: use the quantized value only
        // when that round trip is stable (it may not be when two components tie for largest).
        let s3 = |v: Vec4| {
            let r = Range::default();
            decode(
                Format::SmallestThree48,
                &r,
                encode(Format::SmallestThree48, &r, v),
            )
        };
        let q = s3(value);
        let again = s3(q);
        let stable = if again == q {
            Some(q)
        } else {
            (s3(again) == again).then_some(again)
        };
        Self {
            rest,
            quantized: stable.map(|q| (max_dev(q), q)),
            raw: (max_dev(value), value),
        }
    }

    /// The first encoding in order of preference that misses by at most `tolerance`.
    fn within(&self, tolerance: f32) -> Option<TrackData> {
        if self.rest <= tolerance {
            return Some(TrackData::Rest);
        }
        let constant = |(dev, value): (f32, Vec4), quantized| {
            (dev <= tolerance).then_some(TrackData::Constant { value, quantized })
        };
        self.quantized
            .and_then(|q| constant(q, true))
            .or_else(|| constant(self.raw, false))
    }
}

/// Every frame at the finest format: for a tolerance below quantization, where even that
/// misses (verification reports the floor).
/// Every sample as a key, in the candidate format that reproduces the samples best: the
/// track's floor, used when no format holds the tolerance (so an impossible tolerance gets
/// the finest encoding there is, never a coarser one).
fn every_key(input: &TrackInput, formats: &[Format]) -> TrackData {
    let raw = input.raw;
    let rot = input.is_rotation;
    let widest = |f: &Format| match f {
        Format::SmallestThree48 => true,
        Format::SmallestThreeWide { bits } | Format::RangedRotation { bits } => *bits == 23,
        Format::RangedVector { bits } => *bits == 24,
    };
    let mut candidates: Vec<Format> = formats.iter().copied().filter(widest).collect();
    if !rot {
        candidates.push(Format::RangedVector { bits: 24 });
    } else if candidates.is_empty() {
        candidates.push(Format::SmallestThree48);
    }
    candidates.dedup();
    let frames: Vec<u32> = (0..raw.len() as u32).collect();
    let mut quantizer = Quantizer::default();
    let (format, (range, codes, values, _)) = candidates
        .into_iter()
        .enumerate()
        .map(|(i, format)| (format, quantizer.keys(input, format, i)))
        .min_by(|a, b| (a.1).3.total_cmp(&(b.1).3))
        .expect("at least one candidate format");
    flat_as_constant(Animated {
        curve: Curve::new(Interpolation::Linear, rot, frames.clone(), values),
        format,
        range,
        codes,
        insert_order: frames,
    })
}

/// `a`, or the constant it decodes to where its keys would take no bits (a ranged format
/// over a range that varies in no component, which the container refuses: such keys would
/// cost nothing to declare). Every key of such a track decodes to the same value.
fn flat_as_constant(a: Animated) -> TrackData {
    let ranged = matches!(
        a.format,
        Format::RangedRotation { .. } | Format::RangedVector { .. }
    );
    if ranged && a.range.varying() == 0 {
        TrackData::Constant {
            value: a.curve.values[0],
            quantized: false,
        }
    } else {
        TrackData::Animated(Box::new(a))
    }
}

/// Whether every key value is within `tolerance` of its sample.
fn fits_all(target: &Target, tolerance: f32) -> bool {
    (0..target.raw.len())
        .all(|f| distance(target.is_rotation, target.raw[f], target.key_values[f]) <= tolerance)
}

/// Rotation samples (x, y, z, w) as quaternions, without copying them (the same layout).
fn as_quats(v: &[Vec4]) -> &[Quat] {
    bytemuck::cast_slice(v)
}

/// Formats to try, widest first (so the narrowing loop can stop at the first failure).
fn candidate_formats(input: &TrackInput, bits: Bits) -> Vec<Format> {
    match (input.is_rotation, bits) {
        (true, Bits::Fixed) => vec![Format::SmallestThree48],
        (false, Bits::Fixed) => vec![Format::RangedVector { bits: 16 }],
        (true, Bits::Auto) => {
            let mut v = vec![Format::SmallestThree48];
            if choose_reference(as_quats(input.raw)).is_some() {
                v.extend((3..=23u8).rev().map(|b| Format::RangedRotation { bits: b }));
            } else {
                // Large swings: finer smallest-three for long lever arms.
                v.splice(
                    0..0,
                    (16..=23u8)
                        .rev()
                        .map(|b| Format::SmallestThreeWide { bits: b }),
                );
            }
            v
        }
        (false, Bits::Auto) => (3..=24u8)
            .rev()
            .map(|b| Format::RangedVector { bits: b })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_track_whose_keys_would_take_no_bits_is_stored_as_its_constant() {
        // Equal samples: a ranged rotation relative to them varies in no component.
        let q = Quat::from_rotation_z(0.3);
        let raw = vec![Vec4::from(q); 10];
        let input = TrackInput {
            raw: &raw,
            mids: None,
            rest: Vec4::from(Quat::IDENTITY),
            is_rotation: true,
        };
        for t in [
            finest_track(&input, Bits::Auto),
            encode_track(&input, 1e-9, Method::CatmullRom, Bits::Auto),
        ] {
            match t {
                TrackData::Constant { value, quantized } => {
                    assert!(!quantized);
                    assert!(distance(true, value, Vec4::from(q)) < 1e-6);
                }
                TrackData::Animated(a) => assert!(stores_bits(&a), "{:?}", a.format),
                TrackData::Rest => panic!("the track is not at rest"),
            }
        }
    }

    #[test]
    fn the_finest_formats_are_the_widest_candidates() {
        let swing = |amp: f32| -> Vec<Vec4> {
            (0..20)
                .map(|f| Vec4::from(Quat::from_rotation_y(amp * (f as f32 * 0.3).sin())))
                .collect()
        };
        let vector: Vec<Vec4> = (0..20)
            .map(|f| Vec4::new(f as f32, 1.0, 0.0, 0.0))
            .collect();
        let (small, large) = (swing(0.2), swing(3.0));
        for (raw, is_rotation) in [(&small, true), (&large, true), (&vector, false)] {
            let input = TrackInput {
                raw,
                mids: None,
                rest: Vec4::ZERO,
                is_rotation,
            };
            for bits in [Bits::Auto, Bits::Fixed] {
                let all = candidate_formats(&input, bits);
                let quick = finest_formats(&input, bits);
                assert_eq!(every_key(&input, &all), every_key(&input, quick));
                assert!(quick.iter().all(|f| all.contains(f) || !is_rotation));
            }
        }
        // Both ways a rotation's formats are listed: ranged about a reference, or wide
        // smallest-three for large swings.
        let auto = |raw: &[Vec4]| {
            let input = TrackInput {
                raw,
                mids: None,
                rest: Vec4::ZERO,
                is_rotation: true,
            };
            finest_formats(&input, Bits::Auto)[1]
        };
        assert_eq!(auto(&small), Format::RangedRotation { bits: 23 });
        assert_eq!(auto(&large), Format::SmallestThree48);
    }

    #[test]
    fn a_track_stays_small_to_move() {
        // Animated keys are boxed: a track is a constant's size, not the keys' header's.
        assert!(std::mem::size_of::<TrackData>() <= 32);
    }

    /// Whether an animated track's keys take bits.
    fn stores_bits(a: &Animated) -> bool {
        matches!(
            a.format,
            Format::SmallestThree48 | Format::SmallestThreeWide { .. }
        ) || a.range.varying() > 0
    }
}
