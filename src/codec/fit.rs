//! Key reduction by greedy insertion: start from the end keys, find the sample (or midpoint)
//! with the largest error, insert a key there, repeat until every sample is within tolerance.
//! Works for both interpolations; evaluates exactly what [`super::Curve`] evaluates, with the
//! key values the quantizer will produce, so the tolerance holds after quantization.

use std::collections::BinaryHeap;
use std::ops::ControlFlow;

use glam::{Quat, Vec4};

use super::curve::{Interpolation, Segment, with_fma};
use crate::model::{angle_of_chord_squared, quat_angle, quat_chord_squared};

/// An f32 with a total order, for the max-heap of segment errors.
#[derive(Clone, Copy, Debug, PartialEq)]
struct OrdF32(f32);

impl Eq for OrdF32 {}

impl PartialOrd for OrdF32 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdF32 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Kept keys and the order in which the fitter inserted them (the two end keys first).
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub frames: Vec<u32>,
    pub insert_order: Vec<u32>,
}

/// Distance used for a track: angle for rotations, Euclidean for vectors.
#[inline]
pub fn distance(is_rotation: bool, a: Vec4, b: Vec4) -> f32 {
    if is_rotation {
        quat_angle(Quat::from_vec4(a), Quat::from_vec4(b))
    } else {
        (a - b).truncate().length()
    }
}

/// What to fit: reference values at samples (and optionally midpoints), and the value a key
/// at each frame would decode to.
pub struct Target<'a> {
    pub raw: &'a [Vec4],
    pub mids: Option<&'a [Vec4]>,
    pub key_values: &'a [Vec4],
    pub is_rotation: bool,
}

/// Fits keys so every sample (and midpoint) is within `tolerance`; `None` when impossible
/// (the quantized values themselves miss by more).
pub fn fit(target: &Target, interpolation: Interpolation, tolerance: f32) -> Option<Fit> {
    Insertions::record(target, interpolation, tolerance)
        .fit(tolerance)
        .expect("insertions recorded down to the tolerance")
}

/// The greedy insertions that fit a target, recorded down to some tolerance. The tolerance
/// only decides where insertion stops, so the fit at any looser tolerance is a prefix of
/// them: one recording serves every tolerance from the one it was recorded to up, or (when
/// it stopped where the fit was bound to give up) up to the error it was bound to miss by.
#[derive(Clone, Debug)]
pub struct Insertions {
    frames: usize,
    /// Largest deviation of the key values themselves from the samples.
    floor: f32,
    /// With two frames or fewer (no insertions): the error between them.
    between_ends: f32,
    steps: Vec<Step>,
    /// When recording stopped (within its tolerance, or where the fit was bound to give
    /// up): the worst point of every segment then (empty otherwise), so that continuing
    /// need not measure them again.
    stopped_segments: Vec<(f32, f32)>,
}

/// One step of the greedy loop: the error of the worst segment, and what the fitter did.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Step {
    /// Inserted a key at this frame.
    Insert(f32, u32),
    /// Found no frame to insert (both neighbours of the worst midpoint are keys).
    GiveUp(f32),
    /// Stopped recording: the error is within the recording tolerance.
    Stop(f32),
    /// Stopped recording: two neighbouring keys miss the recording tolerance at their
    /// midpoint by at least this error in every window of keys still possible around them
    /// ([`least_error`]). That segment stays, so every later step has at least this error
    /// and the loop ends giving up: no tolerance below it can be held.
    Doomed(f32),
    /// No segment left.
    Exhausted,
    /// Not recorded: the key values themselves miss the recording tolerance.
    Unrecorded,
}

/// What recording does once the fit is bound to give up ([`Step::Doomed`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Doom {
    Stop,
    /// Records on (the tests' full recordings).
    #[cfg(test)]
    Continue,
}

/// A tolerance finer than the one insertions were recorded to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Finer;

impl Insertions {
    /// Runs the greedy fitter at `tolerance`, recording every insertion, or fewer where
    /// the fit is bound to give up ([`Step::Doomed`]): enough to answer `tolerance`.
    pub fn record(target: &Target, interpolation: Interpolation, tolerance: f32) -> Self {
        Self::record_with(
            target,
            interpolation,
            tolerance,
            Doom::Stop,
            Default::default(),
        )
    }

    /// [`Insertions::record`] through every insertion down to `tolerance`, even where the
    /// fit is bound to give up: it answers every tolerance from `tolerance` up.
    #[cfg(test)]
    pub fn record_through(target: &Target, interpolation: Interpolation, tolerance: f32) -> Self {
        Self::record_with(
            target,
            interpolation,
            tolerance,
            Doom::Continue,
            Default::default(),
        )
    }

    /// These insertions (of the same target and interpolation) continued from where they
    /// stopped, at their tolerance or where the fit was bound to give up, as
    /// [`Insertions::record`] records them down to `tolerance`: it answers `tolerance`.
    pub fn continue_to(
        mut self,
        target: &Target,
        interpolation: Interpolation,
        tolerance: f32,
    ) -> Self {
        match self.steps.last() {
            Some(Step::Doomed(_) | Step::Stop(_)) => {
                self.steps.pop();
                let earlier = (self.steps, self.stopped_segments);
                Self::record_with(target, interpolation, tolerance, Doom::Stop, earlier)
            }
            _ => Self::record(target, interpolation, tolerance),
        }
    }

    /// Records from the end keys and the insertions `earlier` on (with the worst point of
    /// each segment they leave, when known).
    fn record_with(
        target: &Target,
        interpolation: Interpolation,
        tolerance: f32,
        doom: Doom,
        earlier: (Vec<Step>, Vec<(f32, f32)>),
    ) -> Self {
        let n = target.raw.len();
        // Room for every sample and midpoint: a segment never holds more.
        let mut dev = Deviations::with_capacity(target.is_rotation, 2 * n);
        for (f, (&r, &v)) in target.raw.iter().zip(target.key_values).enumerate() {
            dev.push(r, v, f as f32);
        }
        let floor = dev.worst(0.0).0;
        let mut between_ends = 0.0f32;
        let mut steps = Vec::new();
        let mut stopped_segments = Vec::new();
        if n <= 2 {
            let ends: Vec<u32> = (0..n as u32).collect();
            for s in 0..n.saturating_sub(1) {
                let e = segment_error(target, interpolation, &ends, s, &mut dev).0;
                between_ends = between_ends.max(e);
            }
        } else if floor > tolerance {
            steps.push(Step::Unrecorded);
        } else {
            (steps, stopped_segments) =
                insert_keys(target, interpolation, tolerance, doom, &mut dev, earlier);
        }
        Self {
            frames: n,
            floor,
            between_ends,
            steps,
            stopped_segments,
        }
    }

    /// The largest deviation of the key values themselves from the samples: no fit holds
    /// a tolerance below it.
    pub fn floor(&self) -> f32 {
        self.floor
    }

    /// The fit at `tolerance` (`None` when impossible), or [`Finer`] when `tolerance` is
    /// finer than the recording reached.
    pub fn fit(&self, tolerance: f32) -> Result<Option<Fit>, Finer> {
        Ok(self.prefix(tolerance)?.map(|p| self.fit_of(p)))
    }

    /// How many of the recorded insertions the fit at `tolerance` keeps (`None` when no fit
    /// holds it), or [`Finer`] when `tolerance` is finer than the recording reached. Equal
    /// prefixes are equal fits ([`Insertions::fit_of`]), so a caller can key what it derives
    /// from a fit by its prefix.
    pub fn prefix(&self, tolerance: f32) -> Result<Option<usize>, Finer> {
        if self.floor > tolerance {
            return Ok(None);
        }
        if self.frames <= 2 {
            return Ok((self.between_ends <= tolerance).then_some(0));
        }
        let mut inserted = 0;
        for &step in &self.steps {
            match step {
                Step::Insert(err, _) | Step::GiveUp(err) | Step::Stop(err) if err <= tolerance => {
                    break;
                }
                Step::Insert(..) => inserted += 1,
                Step::GiveUp(_) => return Ok(None),
                Step::Doomed(err) if err > tolerance => return Ok(None),
                Step::Stop(_) | Step::Doomed(_) | Step::Unrecorded => return Err(Finer),
                Step::Exhausted => break,
            }
        }
        Ok(Some(inserted))
    }

    /// The fit made of the end keys and the first `prefix` recorded insertions.
    pub fn fit_of(&self, prefix: usize) -> Fit {
        let n = self.frames;
        if n <= 2 {
            let frames: Vec<u32> = (0..n as u32).collect();
            return Fit {
                insert_order: frames.clone(),
                frames,
            };
        }
        let mut order = Vec::with_capacity(prefix + 2);
        order.extend([0, n as u32 - 1]);
        order.extend(self.steps.iter().take(prefix).map(|step| match step {
            Step::Insert(_, frame) => *frame,
            _ => unreachable!("a prefix holds insertions only"),
        }));
        let mut frames = order.clone();
        frames.sort_unstable();
        Fit {
            frames,
            insert_order: order,
        }
    }
}

/// The greedy loop: from the end keys, insert a key at the worst point of the worst
/// segment until every segment is within `tolerance`, recording each step.
fn insert_keys(
    target: &Target,
    interpolation: Interpolation,
    tolerance: f32,
    doom: Doom,
    dev: &mut Deviations,
    (mut steps, segments): (Vec<Step>, Vec<(f32, f32)>),
) -> (Vec<Step>, Vec<(f32, f32)>) {
    let n = target.raw.len();
    let dist = |a: Vec4, b: Vec4| distance(target.is_rotation, a, b);
    // Sized for the usual fit (a key every few frames) so that few of them grow.
    let room = (n / 2 + 2).max(steps.len() + 2);
    steps.reserve(room - steps.len());
    let mut keys: Vec<u32> = Vec::with_capacity(room);
    keys.extend([0, n as u32 - 1]);
    keys.extend(steps.iter().map(|step| match step {
        Step::Insert(_, frame) => *frame,
        _ => unreachable!("recording continues after insertions only"),
    }));
    keys.sort_unstable();
    // Worst point per segment, keyed by the segment's first key frame; a max-heap of
    // (error, first key frame) finds the worst segment, skipping entries made stale by an
    // insertion (their error no longer matches the segment's). Continuing earlier steps,
    // the heap holds each segment once: the same worst segments, in the same order.
    let mut seg: Vec<(f32, f32)> = segments;
    if seg.len() != keys.len() - 1 {
        seg.clear();
        seg.reserve(room);
        for s in 0..keys.len() - 1 {
            seg.push(segment_error(target, interpolation, &keys, s, dev));
        }
    }
    let mut heap: BinaryHeap<(OrdF32, u32)> = BinaryHeap::with_capacity(4 * room);
    heap.extend(
        seg.iter()
            .zip(&keys)
            .map(|(&(err, _), &k0)| (OrdF32(err), k0)),
    );
    while let Some((OrdF32(err), k0)) = heap.pop() {
        let Ok(si) = keys.binary_search(&k0) else {
            continue;
        };
        if si + 1 >= keys.len() || seg[si].0 != err {
            continue;
        }
        if err <= tolerance {
            steps.push(Step::Stop(err));
            return (steps, seg);
        }
        let at = seg[si].1;
        // The worst point is a sample frame, or a midpoint whose neighbours may be keys.
        let k1 = keys[si + 1];
        let frame = if at.fract() == 0.0 {
            at as u32
        } else {
            let (a, b) = (at.floor() as u32, at.ceil() as u32);
            let candidates = [a, b].into_iter().filter(|&f| f > k0 && f < k1);
            let curve = segment(target, interpolation, &keys, si);
            let error = |f: u32| dist(target.raw[f as usize], curve.eval(f as f32));
            // With both neighbours already keys, more keys cannot help: give up.
            let Some(frame) = candidates.max_by(|&x, &y| error(x).total_cmp(&error(y))) else {
                steps.push(Step::GiveUp(err));
                return (steps, Vec::new());
            };
            frame
        };
        steps.push(Step::Insert(err, frame));
        let pos = si + 1;
        keys.insert(pos, frame);
        seg.insert(pos, (0.0, 0.0));
        // Segments whose shape depends on the new key: its own two, plus (Catmull-Rom)
        // the neighbours on either side, whose windows of four keys now include it.
        let reach = if interpolation == Interpolation::CatmullRom {
            1
        } else {
            0
        };
        let lo = (pos - 1).saturating_sub(reach);
        let hi = (pos + reach).min(keys.len() - 2);
        for s in lo..=hi {
            seg[s] = segment_error(target, interpolation, &keys, s, dev);
            heap.push((OrdF32(seg[s].0), keys[s]));
        }
        // Only these segments changed, so only they can have become bound to miss.
        if doom == Doom::Stop
            && let Some(e) = (lo..=hi)
                .filter(|&s| seg[s].0 > tolerance)
                .filter_map(|s| least_error(target, interpolation, &keys, s))
                .find(|&e| e > tolerance)
        {
            steps.push(Step::Doomed(e));
            return (steps, seg);
        }
    }
    steps.push(Step::Exhausted);
    (steps, Vec::new())
}

/// Windows of keys [`least_error`] tries at most.
const WINDOWS_TRIED: usize = 64;

/// The least error segment `s` can ever have, when it joins neighbouring frames (no key can
/// be inserted into it) and the keys that can still be inserted around it leave at most
/// [`WINDOWS_TRIED`] windows of Catmull-Rom keys to try: the nearest key before it is one
/// of the frames from its present one on, and the nearest after likewise.
fn least_error(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
) -> Option<f32> {
    let (f0, f1) = (keys[s], keys[s + 1]);
    if f1 != f0 + 1 {
        return None;
    }
    let mids = target.mids?;
    let before = if s == 0 {
        f0..=f0
    } else {
        keys[s - 1]..=f0 - 1
    };
    let after = match keys.get(s + 2) {
        Some(&b) => f1 + 1..=b,
        None => f1..=f1,
    };
    let key = |f: u32| (f as f32, target.key_values[f as usize]);
    let error = |a: u32, b: u32| {
        let curve = Segment::new(
            interpolation,
            target.is_rotation,
            &[key(a), key(f0), key(f1), key(b)],
        );
        distance(
            target.is_rotation,
            mids[f0 as usize],
            curve.eval(f0 as f32 + 0.5),
        )
    };
    if interpolation == Interpolation::Linear {
        return Some(error(f0, f1));
    }
    if before.clone().count() * after.clone().count() > WINDOWS_TRIED {
        return None;
    }
    let mut least = f32::INFINITY;
    for a in before {
        for b in after.clone() {
            least = least.min(error(a, b));
        }
    }
    Some(least)
}

/// Largest error strictly inside segment `s` (and at its midpoints), and where.
pub(super) fn segment_error(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
    dev: &mut Deviations,
) -> (f32, f32) {
    with_fma(
        #[inline(always)]
        |inline| {
            if inline {
                segment_error_in::<true>(target, interpolation, keys, s, dev)
            } else {
                segment_error_in::<false>(target, interpolation, keys, s, dev)
            }
        },
    )
}

/// [`segment_error`], its curve's sines inline when `INLINE` ([`with_fma`]).
#[inline(always)]
fn segment_error_in<const INLINE: bool>(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
    dev: &mut Deviations,
) -> (f32, f32) {
    let (k0, k1) = (keys[s], keys[s + 1]);
    let curve = segment_in::<INLINE>(target, interpolation, keys, s);
    dev.clear();
    let _: ControlFlow<()> = visit_points(
        target,
        k0,
        k1,
        #[inline(always)]
        |x, reference| {
            dev.push(reference, curve.eval_in::<INLINE>(x), x);
            ControlFlow::Continue(())
        },
    );
    dev.worst(k0 as f32)
}

/// The largest error strictly inside segment `s` (and at its midpoints), as
/// [`segment_error`] gives it, or, as soon as one point's error exceeds `limit`, that error
/// instead: enough to compare the segment's error with `limit`, without the work of the
/// points after it. The largest [`distance`] is the distance of the largest square (the
/// root and `asin` never decrease), so only the largest square is kept.
pub(super) fn segment_error_until(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
    limit: f32,
) -> f32 {
    with_fma(
        #[inline(always)]
        |inline| {
            if inline {
                segment_error_until_in::<true>(target, interpolation, keys, s, limit)
            } else {
                segment_error_until_in::<false>(target, interpolation, keys, s, limit)
            }
        },
    )
}

/// [`segment_error_until`], its curve's sines inline when `INLINE` ([`with_fma`]).
#[inline(always)]
fn segment_error_until_in<const INLINE: bool>(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
    limit: f32,
) -> f32 {
    let (k0, k1) = (keys[s], keys[s + 1]);
    let curve = segment_in::<INLINE>(target, interpolation, keys, s);
    let rot = target.is_rotation;
    let beyond = Beyond::new(rot, limit);
    let mut largest = 0.0f32;
    let exceeded = visit_points(
        target,
        k0,
        k1,
        #[inline(always)]
        |x, reference| {
            let d = squared_distance(rot, reference, curve.eval_in::<INLINE>(x));
            largest = largest.max(d);
            match beyond.exceeds(d) {
                Some(e) => ControlFlow::Break(e),
                None => ControlFlow::Continue(()),
            }
        },
    );
    match exceeded {
        ControlFlow::Break(e) => e,
        ControlFlow::Continue(()) => distance_of_squared(rot, largest),
    }
}

/// Visits the points strictly inside the segment from key frame `k0` to `k1`, then its
/// midpoints, as `(frame, reference value)`, until `visit` breaks. Two plain loops: pass an
/// `#[inline(always)]` closure, so that it compiles into its caller ([`with_fma`]).
#[inline(always)]
pub(super) fn visit_points<B>(
    target: &Target,
    k0: u32,
    k1: u32,
    mut visit: impl FnMut(f32, Vec4) -> ControlFlow<B>,
) -> ControlFlow<B> {
    for f in k0 + 1..k1 {
        visit(f as f32, target.raw[f as usize])?;
    }
    if let Some(mids) = target.mids {
        for f in k0..k1 {
            visit(f as f32 + 0.5, mids[f as usize])?;
        }
    }
    ControlFlow::Continue(())
}

/// The square [`distance`] is taken of: the squared chord for rotations.
#[inline]
pub(super) fn squared_distance(is_rotation: bool, reference: Vec4, value: Vec4) -> f32 {
    if is_rotation {
        quat_chord_squared(Quat::from_vec4(reference), Quat::from_vec4(value))
    } else {
        (reference - value).truncate().length_squared()
    }
}

/// [`distance`] from its square ([`squared_distance`]).
#[inline]
pub(super) fn distance_of_squared(is_rotation: bool, d: f32) -> f32 {
    if is_rotation {
        angle_of_chord_squared(d)
    } else {
        d.sqrt()
    }
}

/// Finds squares whose [`distance`] exceeds a limit: only squares above the limit's own
/// square (less 0.1%, far beyond the rounding of `sqrtf`, `sinf` and `asinf`) are taken the
/// root of, and the answer is always the exact comparison.
struct Beyond {
    is_rotation: bool,
    limit: f32,
    square: f32,
}

impl Beyond {
    fn new(is_rotation: bool, limit: f32) -> Self {
        let square = if limit.is_nan() || limit < 0.0 {
            0.0
        } else if !is_rotation {
            limit * limit * 0.999
        } else if limit < 2.0 * std::f32::consts::PI {
            let chord = 2.0 * (limit * 0.25).sin();
            chord * chord * 0.999
        } else {
            f32::INFINITY
        };
        Self {
            is_rotation,
            limit,
            square,
        }
    }

    /// The distance of square `d` when it exceeds the limit.
    #[inline]
    fn exceeds(&self, d: f32) -> Option<f32> {
        if d < self.square {
            return None;
        }
        let e = distance_of_squared(self.is_rotation, d);
        (e > self.limit).then_some(e)
    }
}

/// Distances of points from their reference values, collected to find the largest
/// [`distance`] and the first point that has it, exactly as a scan of [`distance`] keeping
/// strict improvements does. Only squares are kept (squared chords for rotations); the
/// root (and `asin`) is taken only of points whose square is within 0.2% of the largest.
/// The others are more than 0.1% nearer, far beyond the rounding of `sqrtf` and `asinf`,
/// so none of them can reach the largest distance. For rotations every squared chord above
/// 3.9 is taken too, as the clamp of `asin` at 1 makes angles near it tie.
pub(super) struct Deviations {
    is_rotation: bool,
    /// `(squared distance or chord, position)` in the order pushed.
    points: Vec<(f32, f32)>,
}

impl Deviations {
    /// No points yet, with room for `points` of them.
    pub(super) fn with_capacity(is_rotation: bool, points: usize) -> Self {
        Self {
            is_rotation,
            points: Vec::with_capacity(points),
        }
    }

    fn clear(&mut self) {
        self.points.clear();
    }

    /// Adds the point at position `at` whose value is `value` instead of `reference`.
    #[inline]
    fn push(&mut self, reference: Vec4, value: Vec4, at: f32) {
        let d = squared_distance(self.is_rotation, reference, value);
        self.points.push((d, at));
    }

    /// The largest [`distance`] and the first point with it; `(0.0, at)` when none is
    /// positive.
    fn worst(&self, at: f32) -> (f32, f32) {
        let largest = self.points.iter().fold(0.0f32, |m, p| m.max(p.0));
        let floor = if self.is_rotation {
            (largest * 0.998).min(3.9)
        } else {
            largest * 0.998
        };
        let mut worst = (0.0f32, at);
        for &(d, x) in &self.points {
            if d < floor {
                continue;
            }
            let e = distance_of_squared(self.is_rotation, d);
            if e > worst.0 {
                worst = (e, x);
            }
        }
        worst
    }
}

/// The curve through `keys` inside segment `s`, as `Curve::sample_segment` evaluates it.
#[inline]
pub(super) fn segment(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
) -> Segment {
    segment_in::<false>(target, interpolation, keys, s)
}

/// [`segment`], its sine inline when `INLINE` ([`with_fma`]).
#[inline(always)]
pub(super) fn segment_in<const INLINE: bool>(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
) -> Segment {
    let key = |i: usize| (keys[i] as f32, target.key_values[keys[i] as usize]);
    let window = [
        key(s.saturating_sub(1)),
        key(s),
        key(s + 1),
        key((s + 2).min(keys.len() - 1)),
    ];
    Segment::new_in::<INLINE>(interpolation, target.is_rotation, &window)
}

#[cfg(test)]
mod tests {
    use super::super::curve::Curve;
    use super::*;

    fn wave(n: usize) -> Vec<Vec4> {
        (0..n)
            .map(|f| {
                Vec4::new(
                    (f as f32 * 0.05).sin(),
                    (f as f32 * 0.02).cos(),
                    0.01 * f as f32,
                    0.0,
                )
            })
            .collect()
    }

    fn midpoints(raw: &[Vec4]) -> Vec<Vec4> {
        raw.windows(2).map(|w| (w[0] + w[1]) * 0.5).collect()
    }

    /// A vector track keyed at its raw samples.
    fn target<'a>(raw: &'a [Vec4], mids: &'a [Vec4]) -> Target<'a> {
        Target {
            raw,
            mids: Some(mids),
            key_values: raw,
            is_rotation: false,
        }
    }

    #[test]
    fn fit_holds_tolerance_and_matches_curve() {
        let raw = wave(120);
        let mids = midpoints(&raw);
        for interp in [Interpolation::Linear, Interpolation::CatmullRom] {
            let t = target(&raw, &mids);
            let fit = fit(&t, interp, 1e-3).unwrap();
            assert!(
                fit.frames.len() < 120,
                "{interp:?} kept {}",
                fit.frames.len()
            );
            assert_eq!(fit.insert_order.len(), fit.frames.len());
            let c = Curve::new(
                interp,
                false,
                fit.frames.clone(),
                fit.frames.iter().map(|&f| raw[f as usize]).collect(),
            );
            for (f, r) in raw.iter().enumerate() {
                assert!((c.sample(f as f32) - *r).length() <= 1e-3 + 1e-6);
            }
        }
    }

    #[test]
    fn recorded_insertions_fit_looser_tolerances_like_a_fresh_fit() {
        let raw = wave(200);
        let mids = midpoints(&raw);
        for interp in [Interpolation::Linear, Interpolation::CatmullRom] {
            let t = target(&raw, &mids);
            let recorded = Insertions::record_through(&t, interp, 1e-4);
            for tolerance in [1e-6, 1e-5, 1e-4, 3e-4, 1e-3, 1e-2, 1.0] {
                match recorded.fit(tolerance) {
                    Ok(f) => assert_eq!(f, fit(&t, interp, tolerance), "{interp:?} {tolerance}"),
                    Err(Finer) => assert!(tolerance < 1e-4),
                }
            }
        }
    }

    #[test]
    fn a_recording_stopped_where_the_fit_must_give_up_answers_like_a_full_one() {
        let raw = wave(120);
        // Midpoints off the curve between samples: some keys next to each other miss them.
        let mids: Vec<Vec4> = midpoints(&raw)
            .iter()
            .enumerate()
            .map(|(f, m)| *m + Vec4::new(2e-3 * ((f * 37 % 11) as f32 / 11.0), 0.0, 0.0, 0.0))
            .collect();
        let t = target(&raw, &mids);
        let (mut doomed, mut continued, mut after_stop) = (0, 0, 0);
        for interp in [Interpolation::Linear, Interpolation::CatmullRom] {
            for tolerance in [1e-4, 3e-4, 1e-3, 1.5e-3, 2e-3] {
                let full = Insertions::record_through(&t, interp, tolerance);
                let stopped = Insertions::record(&t, interp, tolerance);
                if let Some(Step::Doomed(e)) = stopped.steps.last() {
                    assert!(*e > tolerance);
                    assert!(stopped.steps.len() < full.steps.len());
                    doomed += 1;
                }
                assert_eq!(stopped.prefix(tolerance), full.prefix(tolerance));
                // Continued where a tolerance asked (looser and finer, as relaxation and
                // repair ask), the recording answers like the full one and its insertions
                // are the full one's.
                let mut r = stopped;
                for query in [2.0, 1e4, 1.0, 4.0, 1.5, 1e2].map(|x| x * tolerance) {
                    if r.prefix(query).is_err() {
                        // From a stop within the tolerance, the segments it kept.
                        if let Some(Step::Stop(_)) = r.steps.last() {
                            let keys = r.fit_of(r.steps.len() - 1).frames;
                            let mut dev = Deviations::with_capacity(false, 2 * raw.len());
                            let fresh: Vec<(f32, f32)> = (0..keys.len() - 1)
                                .map(|s| segment_error(&t, interp, &keys, s, &mut dev))
                                .collect();
                            assert_eq!(r.stopped_segments, fresh, "{interp:?} {tolerance}");
                            after_stop += 1;
                        }
                        r = r.continue_to(&t, interp, query);
                        continued += 1;
                    }
                    assert_eq!(r.prefix(query), full.prefix(query), "{interp:?} {query}");
                    let inserted = r.steps.len() - 1;
                    assert_eq!(r.steps[..inserted], full.steps[..inserted]);
                }
            }
        }
        assert!(doomed >= 4, "{doomed} recordings stopped early");
        assert!(continued >= 4, "{continued} recordings continued");
        assert!(after_stop >= 2, "{after_stop} continued after a stop");
    }

    /// The first point with the largest [`distance`], as a plain scan finds it.
    fn scan(is_rotation: bool, points: &[(Vec4, Vec4)]) -> (f32, f32) {
        let mut worst = (0.0f32, -1.0);
        for (i, &(a, b)) in points.iter().enumerate() {
            let e = distance(is_rotation, a, b);
            if e > worst.0 {
                worst = (e, i as f32);
            }
        }
        worst
    }

    fn deviations(is_rotation: bool, points: &[(Vec4, Vec4)]) -> (f32, f32) {
        let mut dev = Deviations::with_capacity(is_rotation, points.len());
        for (i, &(a, b)) in points.iter().enumerate() {
            dev.push(a, b, i as f32);
        }
        dev.worst(-1.0)
    }

    #[test]
    fn deviations_find_the_first_largest_distance_like_a_scan() {
        let q = |angle: f32| Vec4::from(Quat::from_rotation_y(angle));
        let v = |x: f32| Vec4::new(x, 0.0, 0.0, 0.0);
        let base = Vec4::from(Quat::from_rotation_x(0.3));
        let cases: Vec<(bool, Vec<(Vec4, Vec4)>)> = vec![
            // Ties, tiny angles, a flipped hemisphere, and angles past the clamp of asin.
            (
                true,
                vec![(q(0.0), q(1e-6)), (q(0.0), q(2e-6)), (q(0.0), -q(2e-6))],
            ),
            (true, vec![(base, base), (base, -base)]),
            (
                true,
                (0..50).map(|i| (q(0.0), q(i as f32 * 0.07))).collect(),
            ),
            (true, vec![(q(0.0), 2.0 * q(3.0)), (q(0.0), 3.0 * q(3.1))]),
            (
                false,
                vec![(v(0.0), v(1e-3)), (v(0.0), v(-1e-3)), (v(1.0), v(1.0))],
            ),
            (
                false,
                (0..50)
                    .map(|i| (v(0.0), v((i as f32 * 0.37).sin())))
                    .collect(),
            ),
            (false, vec![]),
        ];
        for (is_rotation, points) in cases {
            assert_eq!(
                deviations(is_rotation, &points),
                scan(is_rotation, &points),
                "{points:?}"
            );
        }
    }

    #[test]
    fn catmull_rom_needs_fewer_keys_on_smooth_motion() {
        let raw = wave(240);
        let t = Target {
            raw: &raw,
            mids: None,
            key_values: &raw,
            is_rotation: false,
        };
        let l = fit(&t, Interpolation::Linear, 1e-3).unwrap().frames.len();
        let c = fit(&t, Interpolation::CatmullRom, 1e-3)
            .unwrap()
            .frames
            .len();
        assert!(c < l / 2, "catmull-rom {c} vs linear {l}");
    }
}
