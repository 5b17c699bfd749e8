//! LINEAR keys for a CUBICSPLINE source between its frames (`--player portable` writes no
//! CUBICSPLINE; issue 24 item 3).
//!
//! A Hermite segment bulges away from the chord of the frames sampled on it. A channel
//! keyed only on frames then leaves the source between them by up to `h^2 / 8` times the
//! curve's largest second derivative over the interval (`h` = one frame): the deviation of
//! any C2 curve from its chord (Taylor about the point of largest deviation, where the
//! difference's first derivative is zero). A Hermite segment's second derivative is linear
//! in time, so its largest norm over an interval is at one of the interval's ends: the bound
//! is exact arithmetic, not sampling. Where it exceeds the joint's allowance, the frame
//! interval gets keys at `TICKS / n` ticks (`n` a power of two, at most [`TICKS`]) holding
//! the source's own values, `n` the fewest with `(h / n)^2 / 8 * a <= allowance`.

use glam::{Quat, Vec4};

use super::channels::{Channel, Interp, TICKS};
use crate::metric::JointLimits;
use crate::model::sampling::{Interpolation, Keyframes};
pub use crate::model::source_curve::max_acceleration;
use crate::model::{Clip, Skeleton, SourceCurve};

/// Per track kind and joint, how far a channel may leave its source's curve between keys
/// (local units): a quarter of the joint's tolerance for translations (in the parent's
/// space), the quaternion chord that moves the farthest marker below by a quarter of its
/// tolerance for rotations, and a relative scale change moving it by a quarter for scales.
pub fn allowance(skeleton: &Skeleton, limits: &JointLimits) -> [Vec<f32>; 3] {
    // `initial_chords`: a quarter of the rotation angle that moves the farthest marker by
    // its whole tolerance (a quaternion chord is half the angle).
    let chords = super::verify::initial_chords(skeleton, limits);
    [
        super::verify::tolerance_in_parent_space(skeleton, limits, 0.25),
        chords.iter().map(|c| c * 0.5).collect(),
        chords,
    ]
}

/// For rotations the bound holds for the quaternion before normalization; normalizing a
/// near-unit curve changes its second derivative by about its squared speed, so the
/// rotation allowance is halved.
const ROTATION_MARGIN: f32 = 0.5;

/// Inserts source keys into the LINEAR channels whose source is CUBICSPLINE, in every frame
/// interval where the chord bound exceeds `allowance[kind][joint]` (local units: distance,
/// quaternion components, scale). Returns whether any channel changed.
pub fn key_cubic_bulges(channels: &mut [Channel], raw: &Clip, allowance: &[Vec<f32>; 3]) -> bool {
    let mut changed = false;
    for curve in raw.between.iter() {
        if curve.keys.interpolation != Interpolation::CubicSpline {
            continue;
        }
        let kind = curve.kind.index();
        let Some(c) = channels
            .iter_mut()
            .find(|c| c.joint == curve.joint && c.kind == kind && c.interp == Interp::Linear)
        else {
            continue;
        };
        let mut allow = allowance[kind].get(curve.joint).copied().unwrap_or(0.0);
        if kind == 1 {
            allow *= ROTATION_MARGIN;
        }
        changed |= key_channel(c, curve, raw, allow);
    }
    changed
}

/// Sub-intervals a frame interval `[f, f + 1]` needs for `curve`'s chord to stay within
/// `allow` (a power of two, 1 to [`TICKS`]).
pub fn pieces(curve: &Keyframes, raw: &Clip, f: usize, allow: f32) -> u32 {
    let (t0, t1) = (
        raw.source_time(f as f64) as f64,
        raw.source_time(f as f64 + 1.0) as f64,
    );
    let a = max_acceleration(curve, t0, t1);
    let h = t1 - t0;
    if a.is_nan() || a <= 0.0 || allow.is_nan() || allow <= 0.0 {
        return if allow > 0.0 { 1 } else { TICKS };
    }
    let mut n = 1u32;
    while n < TICKS && (h / n as f64).powi(2) / 8.0 * a > allow as f64 {
        n *= 2;
    }
    n
}

/// Keys `c` from `curve` (source values) at `TICKS / n` in every frame interval that needs
/// `n > 1` pieces; the interval's end keys get source values too.
fn key_channel(c: &mut Channel, curve: &SourceCurve, raw: &Clip, allow: f32) -> bool {
    let frames = raw.frame_count;
    let mut added: Vec<u32> = Vec::new();
    for f in 0..frames.saturating_sub(1) {
        let n = pieces(&curve.keys, raw, f, allow);
        if n > 1 {
            let step = TICKS / n;
            added.extend((0..=n).map(|k| f as u32 * TICKS + k * step));
        }
    }
    if added.is_empty() {
        return false;
    }
    let mut ticks = c.ticks.clone();
    ticks.extend(&added);
    ticks.sort_unstable();
    ticks.dedup();
    added.sort_unstable();
    let mut values = Vec::with_capacity(ticks.len());
    for &t in &ticks {
        let v = if added.binary_search(&t).is_ok() || c.ticks.binary_search(&t).is_err() {
            let time = raw.source_time(t as f64 / TICKS as f64);
            curve.keys.sample(time)
        } else {
            c.values[c.ticks.binary_search(&t).expect("kept key")]
        };
        let v = match values.last() {
            Some(p) if c.kind == 1 && Vec4::dot(*p, v) < 0.0 => -v,
            _ => v,
        };
        values.push(if c.kind == 1 {
            Vec4::from(Quat::from_vec4(v).normalize())
        } else {
            v
        });
    }
    c.ticks = ticks;
    c.values = values;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shared smoothstep clip and its curve.
    fn smoothstep() -> (Clip, SourceCurve) {
        let (_, clip) = crate::model::source_curve::smoothstep_clip();
        let curve = clip.between[0].clone();
        (clip, curve)
    }

    #[test]
    fn the_bound_covers_the_largest_deviation_from_the_chord() {
        let (clip, curve) = smoothstep();
        for f in 0..4 {
            let (t0, t1) = (f as f64 / 4.0, (f + 1) as f64 / 4.0);
            let bound = (t1 - t0).powi(2) / 8.0 * max_acceleration(&curve.keys, t0, t1);
            let (a, b) = (curve.keys.sample(t0 as f32), curve.keys.sample(t1 as f32));
            let worst = (0..=256)
                .map(|k| {
                    let u = k as f32 / 256.0;
                    let t = t0 as f32 + u * 0.25;
                    (curve.keys.sample(t) - a.lerp(b, u)).length() as f64
                })
                .fold(0.0, f64::max);
            assert!(
                worst > 0.0 && worst <= bound * (1.0 + 1e-5),
                "{worst} > {bound}"
            );
        }
        assert_eq!(pieces(&curve.keys, &clip, 0, 1.0), 1);
        assert!(pieces(&curve.keys, &clip, 0, 1e-4) > 4);
    }

    #[test]
    fn keys_go_where_the_curve_bulges_and_hold_the_allowance() {
        let (clip, curve) = smoothstep();
        let mut c = Channel {
            joint: 0,
            kind: 0,
            interp: Interp::Linear,
            ticks: vec![0, 4 * TICKS],
            values: vec![Vec4::ZERO, Vec4::X],
            tangents: vec![],
            storage: super::super::channels::Storage::Float,
            held_end: false,
        };
        let allow = 2e-3;
        assert!(key_cubic_bulges(
            std::slice::from_mut(&mut c),
            &clip,
            &[vec![allow], vec![0.0], vec![0.0]]
        ));
        assert!(c.ticks.len() > 5 && c.ticks.windows(2).all(|w| w[0] < w[1]));
        // Between every pair of keys the channel stays within the allowance of the source.
        for k in 0..=4 * TICKS * 8 {
            let f = k as f32 / (TICKS * 8) as f32;
            let e = (c.sample(f) - curve.keys.sample(f / 4.0)).length();
            assert!(e <= allow, "{e} at frame {f}");
        }
    }
}
