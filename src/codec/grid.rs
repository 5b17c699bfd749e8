//! A sample grid that follows the source between frames (issue 24 item 3).
//!
//! A clip holds its source sampled at the source's rate; where the source is CUBICSPLINE (or
//! LINEAR with keys between frames) [`Clip::sample_local`] evaluates the source's own curve
//! between frames, so every reference built from the clip measures that curve at midpoints.
//! The codec keys frames and joins them by lerp / slerp: where the curve departs from the
//! chord of the frames by more than the tolerance allows, no choice of keys on that grid can
//! hold it (InterpolationTest's "CubicSpline Translation": 15.7 mm at midpoints).
//!
//! So before the codec sees such a clip it is sampled `n` times finer (`n` a power of two):
//! the fewest `n` with which the chord of the finer samples stays within a share of each
//! curve's local budget ([`Budgets::local_tolerances`]) everywhere between them. For a
//! Hermite segment the deviation of the curve from its chord over `h` is at most
//! `h^2 / 8` times the largest norm of its second derivative there (linear in time within a
//! segment, so its largest norm is at an end: [`max_acceleration`]); for a LINEAR curve with
//! keys between frames it is the distance of each key from the chord, computed exactly.
//! Every source frame stays a frame (`n` divides the new grid); the clip's `grid` says how
//! many samples each source frame has, and `raw_bytes` counts source frames.

use std::borrow::Cow;

use glam::{Quat, Vec4};

use super::budget::Budgets;
use crate::metric::JointLimits;
use crate::model::sampling::{Interpolation, Keyframes};
use crate::model::source_curve::max_acceleration;
use crate::model::{Clip, JointTracks, Skeleton, TrackKind, Transform, slerp_shortest};

/// The finest grid: 256 samples per source frame.
pub const MAX_GRID: u32 = 256;

/// A refined clip holds at most this many joint-samples (or as many as the source clip,
/// if more): compression needs about 820 bytes a sample (docs/ROBUSTNESS.md), so 1 Mi
/// samples is about 860 MB at the peak.
pub const MAX_GRID_SAMPLES: u64 = 1 << 20;

/// Share of a curve's local budget (the budget of its joint's displacement split among its
/// three tracks) that the grid's chord may leave the curve by: the rest is the codec's.
const SHARE: f32 = 0.25;

/// A quaternion's chord is about half its rotation angle; the curve is normalized after it
/// is evaluated, which changes its second derivative by about its squared speed: half again.
const ROTATION_ALLOWANCE: f32 = 0.25;

/// How many samples per frame of `clip` the codec needs so that its frames follow every
/// source curve between them within the tolerances of `limits` (1 when the chord of the
/// frames already does, or the clip has no such curve). At most [`MAX_GRID`], and no more
/// than [`MAX_GRID_SAMPLES`] allow: where the cap is below what is needed, the report says
/// the clip misses its tolerance between frames.
pub fn multiplier(skeleton: &Skeleton, clip: &Clip, limits: &JointLimits) -> u32 {
    let joints = skeleton.len();
    if clip.between.is_empty()
        || clip.frame_count < 2
        || limits.len() != joints
        || clip.tracks.len() != joints
    {
        return 1;
    }
    let budgets = Budgets::new(skeleton, clip, limits, &vec![true; joints], &[]);
    let mut need = 1u32;
    for c in clip.between.iter() {
        if c.joint >= joints || !budgets.displacement[c.joint].is_finite() {
            continue;
        }
        let tol = budgets.local_tolerances(c.joint, 3, SHARE);
        let allow = match c.kind {
            TrackKind::Translation => tol.translation,
            TrackKind::Rotation => tol.rotation * ROTATION_ALLOWANCE,
            TrackKind::Scale => tol.scale,
        };
        need = need.max(curve_multiplier(clip, &c.keys, allow as f64));
        if need >= MAX_GRID {
            break;
        }
    }
    let mut n = need.min(MAX_GRID);
    let frames = clip.frame_count as u64 - 1;
    let cap = MAX_GRID_SAMPLES.max(joints as u64 * clip.frame_count as u64);
    while n > 1 && joints as u64 * (frames * n as u64 + 1) > cap {
        n /= 2;
    }
    n
}

/// Samples per frame `curve` needs for the chord to stay within `allow` of it (a power of
/// two; [`MAX_GRID`] when even that is not enough or `allow` is not positive).
fn curve_multiplier(clip: &Clip, curve: &Keyframes, allow: f64) -> u32 {
    if curve.times.len() < 2 || curve.interpolation == Interpolation::Step {
        return 1;
    }
    if allow.is_nan() || allow <= 0.0 {
        return MAX_GRID;
    }
    let mut need = 1u32;
    for f in 0..clip.frame_count - 1 {
        let t0 = clip.source_time(f as f64) as f64;
        let t1 = clip.source_time(f as f64 + 1.0) as f64;
        let n = match curve.interpolation {
            Interpolation::CubicSpline => {
                let a = max_acceleration(curve, t0, t1);
                let pieces = (t1 - t0) * (a / (8.0 * allow)).sqrt();
                if pieces.is_finite() {
                    (pieces.ceil().max(1.0) as u64)
                        .next_power_of_two()
                        .min(MAX_GRID as u64) as u32
                } else {
                    MAX_GRID
                }
            }
            _ => linear_pieces(curve, t0, t1, allow),
        };
        need = need.max(n);
        if need >= MAX_GRID {
            break;
        }
    }
    need
}

/// For a LINEAR curve over `[t0, t1]`: the fewest pieces (a power of two) whose chord holds
/// every key inside the interval within `allow` (the largest distance of a polyline from a
/// chord is at one of its vertices), and no more than put every key on a sample (skelpack's
/// own keys between frames are at sixteenths: at most 16).
fn linear_pieces(curve: &Keyframes, t0: f64, t1: f64, allow: f64) -> u32 {
    let inside: Vec<f32> = curve
        .times
        .iter()
        .copied()
        .filter(|&t| (t as f64) > t0 && (t as f64) < t1)
        .collect();
    if inside.is_empty() {
        return 1;
    }
    let h = t1 - t0;
    let mut n = 1u32;
    while n < MAX_GRID {
        // Once every key is a sample the chord of the samples is the polyline itself.
        let on_grid = inside.iter().all(|&t| {
            let x = (t as f64 - t0) / h * n as f64;
            (x - x.round()).abs() < 1e-3
        });
        if on_grid {
            break;
        }
        let ok = inside.iter().all(|&t| {
            let x = (t as f64 - t0) / h * n as f64;
            let k = x.floor().min(n as f64 - 1.0);
            let (a, b) = (t0 + k * h / n as f64, t0 + (k + 1.0) * h / n as f64);
            let (va, vb, v) = (
                curve.sample(a as f32),
                curve.sample(b as f32),
                curve.sample(t),
            );
            let u = (x - k) as f32;
            // The codec's chord: slerp for rotations (the shortest arc), lerp otherwise.
            let (chord, v) = if curve.is_rotation {
                let c = slerp_shortest(Quat::from_vec4(va), Quat::from_vec4(vb), u);
                let c = Vec4::from(c);
                (c, if c.dot(v) < 0.0 { -v } else { v })
            } else {
                (va.lerp(vb, u), v)
            };
            (v - chord).length() as f64 <= allow
        });
        if ok {
            break;
        }
        n *= 2;
    }
    n
}

/// `clip` sampled `n` times per frame (its source curves evaluated exactly, every other
/// track on the chord of its frames, so its motion is unchanged).
pub fn refine(clip: &Clip, n: u32) -> Clip {
    if n <= 1 || clip.frame_count < 2 {
        return clip.clone();
    }
    let frames = (clip.frame_count - 1) * n as usize + 1;
    let joints = clip.tracks.len();
    let mut tracks: Vec<JointTracks> = clip
        .tracks
        .iter()
        .map(|t| JointTracks {
            translations: Vec::with_capacity(frames),
            rotations: Vec::with_capacity(frames),
            scales: Vec::with_capacity(frames),
            source_channels: t.source_channels,
        })
        .collect();
    let mut local = vec![Transform::IDENTITY; joints];
    for i in 0..frames {
        let at = (i / n as usize) as f64 + (i % n as usize) as f64 / n as f64;
        clip.sample_local(at as f32, &mut local);
        for (t, x) in tracks.iter_mut().zip(&local) {
            t.translations.push(x.translation);
            t.rotations.push(x.rotation);
            t.scales.push(x.scale);
        }
    }
    Clip {
        name: clip.name.clone(),
        sample_rate: clip.sample_rate * n as f32,
        frame_count: frames,
        start_time: clip.start_time,
        tracks,
        morph_weight_channels: clip.morph_weight_channels,
        between: clip.between.clone(),
        grid: clip.grid.max(1) * n,
        events: clip.events.clone(),
        scalar_tracks: clip.scalar_tracks.clone(),
    }
}

/// The clip as the `.skp` codec needs it under `limits`: `clip` itself, or sampled finer
/// ([`multiplier`], [`refine`]).
pub fn for_codec<'a>(skeleton: &Skeleton, clip: &'a Clip, limits: &JointLimits) -> Cow<'a, Clip> {
    match multiplier(skeleton, clip, limits) {
        0 | 1 => Cow::Borrowed(clip),
        n => Cow::Owned(refine(clip, n)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::model::source_curve::smoothstep_clip as smoothstep;

    #[test]
    fn a_refined_grid_follows_the_curve_and_keeps_every_frame() {
        let (s, clip) = smoothstep();
        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        let n = multiplier(&s, &clip, &limits);
        assert!(n > 1 && n.is_power_of_two(), "{n}");
        let fine = refine(&clip, n);
        assert_eq!(fine.frame_count, 4 * n as usize + 1);
        assert_eq!(fine.grid, n);
        assert_eq!(fine.raw_bytes(), clip.raw_bytes());
        for f in 0..5 {
            assert_eq!(
                fine.tracks[0].translations[f * n as usize],
                clip.tracks[0].translations[f]
            );
        }
        // The chord of the fine samples stays within the share of the budget everywhere.
        let allow = 1e-4 * SHARE / 3.0;
        let curve = &clip.between[0].keys;
        let steps = 64 * 4 * n as usize;
        for k in 0..=steps {
            let x = k as f32 * fine.frame_count.saturating_sub(1) as f32 / steps as f32;
            let (i0, i1, u) = fine.neighbours(x);
            let chord = fine.tracks[0].translations[i0].lerp(fine.tracks[0].translations[i1], u);
            let e = (chord - curve.sample(x / fine.sample_rate).truncate()).length();
            assert!(e <= allow * 1.001, "{e} > {allow} at {x}");
        }
        // One step coarser would not hold it.
        assert!(n == 1 || multiplier(&s, &refine(&clip, n / 2), &limits) > 1);
        // A clip without source curves is left alone.
        let mut plain = clip.clone();
        plain.between = Default::default();
        assert_eq!(multiplier(&s, &plain, &limits), 1);
    }
}
