//! The source's own curve between a clip's frames, where it is not the chord of the frames.
//!
//! A [`super::Clip`] holds samples at a uniform rate; between two samples it is the chord
//! (lerp, slerp). That is the source's curve where the source is LINEAR with keys on frames
//! (every key on a frame: the importer's rate detection sees to it), but not where it is
//! CUBICSPLINE (the Hermite segment bulges away from the chord between frames). Such
//! channels are kept with their keys, and the clip
//! evaluates them exactly at fractional frames, so that whatever measures a clip between its
//! frames (the exporter's verifier, the metric's midpoints) measures the source's own motion.

use glam::Quat;

use super::sampling::{Interpolation, Keyframes};
use super::{TrackKind, Transform};

/// One source channel evaluated by its own sampler between frames.
#[derive(Clone, Debug, PartialEq)]
pub struct SourceCurve {
    pub joint: usize,
    pub kind: TrackKind,
    pub keys: Keyframes,
}

impl SourceCurve {
    /// Whether a channel with these keys needs its own curve between frames: CUBICSPLINE
    /// with more than one key. (A STEP source is left to the chord: no LINEAR curve can
    /// follow its jump, so the codec and the verifier measure a STEP source's motion at
    /// its frames and the chord between them; `portable` keeps STEP originals as STEP.)
    pub fn needed(keys: &Keyframes) -> bool {
        keys.interpolation == Interpolation::CubicSpline && keys.times.len() > 1
    }

    /// Sets the component this curve drives in `local` (the joint's transform) to the
    /// curve's value at source time `t` (seconds).
    pub fn apply(&self, t: f32, local: &mut Transform) {
        let v = self.keys.sample(t);
        match self.kind {
            TrackKind::Translation => local.translation = v.truncate(),
            TrackKind::Rotation => local.rotation = Quat::from_vec4(v),
            TrackKind::Scale => local.scale = v.truncate(),
        }
    }
}

/// The largest norm of the second time derivative of a CUBICSPLINE `curve` over
/// `[t0, t1]` (seconds; inside one segment or across several: each segment's part is
/// bounded at its ends, the derivative being linear in time within a segment).
pub fn max_acceleration(curve: &Keyframes, t0: f64, t1: f64) -> f64 {
    let times = &curve.times;
    let n = times.len();
    if n < 2 {
        return 0.0;
    }
    let first = times
        .partition_point(|&k| (k as f64) <= t0)
        .saturating_sub(1);
    let mut a = 0.0f64;
    for i in first.min(n - 2)..n - 1 {
        let (k0, k1) = (times[i] as f64, times[i + 1] as f64);
        if k0 >= t1 {
            break;
        }
        let dt = k1 - k0;
        if dt <= 0.0 {
            continue;
        }
        let p0 = curve.values[3 * i + 1].as_dvec4();
        let m0 = curve.values[3 * i + 2].as_dvec4() * dt;
        let p1 = curve.values[3 * (i + 1) + 1].as_dvec4();
        let m1 = curve.values[3 * (i + 1)].as_dvec4() * dt;
        let second = |u: f64| {
            (p0 * (12.0 * u - 6.0)
                + m0 * (6.0 * u - 4.0)
                + p1 * (6.0 - 12.0 * u)
                + m1 * (6.0 * u - 2.0))
                / (dt * dt)
        };
        let u0 = ((t0.max(k0) - k0) / dt).clamp(0.0, 1.0);
        let u1 = ((t1.min(k1) - k0) / dt).clamp(0.0, 1.0);
        a = a.max(second(u0).length()).max(second(u1).length());
    }
    a
}

/// A one-joint clip whose translation goes 0 -> 1 m over 1 s with zero tangents
/// (smoothstep, CUBICSPLINE), sampled at 4 fps, with that curve kept between its frames:
/// the fixture of the tests that measure a curve against the chord of its frames.
#[cfg(test)]
pub(crate) fn smoothstep_clip() -> (super::Skeleton, super::Clip) {
    use glam::Vec4;
    let s = super::Skeleton::new(vec![super::Joint::new("a", None, Transform::IDENTITY)])
        .expect("one joint");
    let z = Vec4::ZERO;
    let keys = Keyframes {
        times: vec![0.0, 1.0],
        values: vec![z, z, z, z, Vec4::X, z],
        interpolation: Interpolation::CubicSpline,
        is_rotation: false,
    };
    let mut clip = super::Clip::rest("c", &s, 4.0, 5);
    for f in 0..5 {
        clip.tracks[0].translations[f] = keys.sample(f as f32 / 4.0).truncate();
    }
    clip.between = std::sync::Arc::new(vec![SourceCurve {
        joint: 0,
        kind: TrackKind::Translation,
        keys,
    }]);
    (s, clip)
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{Vec3, Vec4};

    #[test]
    fn a_cubic_curve_is_evaluated_between_keys() {
        // 0 -> 1 with zero tangents over 1 s: smoothstep, not the chord.
        let z = Vec4::ZERO;
        let c = SourceCurve {
            joint: 0,
            kind: TrackKind::Translation,
            keys: Keyframes {
                times: vec![0.0, 1.0],
                values: vec![z, z, z, z, Vec4::X, z],
                interpolation: Interpolation::CubicSpline,
                is_rotation: false,
            },
        };
        assert!(SourceCurve::needed(&c.keys));
        let mut t = Transform::IDENTITY;
        c.apply(0.25, &mut t);
        assert!((t.translation - Vec3::X * 0.15625).length() < 1e-6);
    }
}
