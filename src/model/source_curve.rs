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
