//! Measuring: reference object poses are computed once; a candidate is sampled, composed into
//! object space and compared marker by marker, without allocating per sample.

use glam::{Affine3A, Vec3A};

use super::{ErrorReport, JointLimits};
use crate::model::{Clip, Skeleton, Transform, local_to_object};

/// Anything that yields local poses at (fractional) frame positions: a raw clip, a decoder.
pub trait PoseSource {
    /// Writes every joint's local transform at `frame` (0 = first sample) into `out`.
    fn sample_local(&self, frame: f32, out: &mut [Transform]);
}

impl PoseSource for Clip {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        Clip::sample_local(self, frame, out)
    }
}

/// The largest distance between the three markers `d * e_k` carried by `a` and by `b`.
#[inline]
pub fn joint_error(a: &Affine3A, b: &Affine3A, d: f32) -> f32 {
    let dt: Vec3A = a.translation - b.translation;
    let m = a.matrix3 - b.matrix3;
    let ex = (m.x_axis * d + dt).length_squared();
    let ey = (m.y_axis * d + dt).length_squared();
    let ez = (m.z_axis * d + dt).length_squared();
    ex.max(ey).max(ez).sqrt()
}

/// Reference object-space poses of a clip at every sample and every midpoint.
pub struct Reference {
    pub joints: usize,
    pub frames: usize,
    /// `frames * joints`, frame-major.
    pub at_samples: Vec<Affine3A>,
    /// `(frames - 1) * joints`, frame-major: the pose halfway between samples i and i + 1.
    pub at_midpoints: Vec<Affine3A>,
}

impl Reference {
    /// Evaluates `source` (usually the raw clip) at its `frames` samples and midpoints.
    pub fn new(skeleton: &Skeleton, source: &dyn PoseSource, frames: usize) -> Self {
        let n = skeleton.len();
        let mut local = vec![Transform::IDENTITY; n];
        let mut at_samples = vec![Affine3A::IDENTITY; frames * n];
        for f in 0..frames {
            source.sample_local(f as f32, &mut local);
            local_to_object(skeleton, &local, &mut at_samples[f * n..(f + 1) * n]);
        }
        let mids = frames.saturating_sub(1);
        let mut at_midpoints = vec![Affine3A::IDENTITY; mids * n];
        for f in 0..mids {
            source.sample_local(f as f32 + 0.5, &mut local);
            local_to_object(skeleton, &local, &mut at_midpoints[f * n..(f + 1) * n]);
        }
        Self {
            joints: n,
            frames,
            at_samples,
            at_midpoints,
        }
    }

    /// The reference pose at sample `frame`.
    pub fn sample(&self, frame: usize) -> &[Affine3A] {
        &self.at_samples[frame * self.joints..(frame + 1) * self.joints]
    }
}

/// Measures `candidate` against `reference` at every sample (and midpoint when asked).
pub fn measure(
    skeleton: &Skeleton,
    reference: &Reference,
    candidate: &dyn PoseSource,
    limits: &JointLimits,
    midpoints: bool,
) -> ErrorReport {
    let n = reference.joints;
    assert_eq!(skeleton.len(), n, "reference and skeleton differ");
    assert_eq!(limits.len(), n, "limits and skeleton differ");
    let mut local = vec![Transform::IDENTITY; n];
    let mut obj = vec![Affine3A::IDENTITY; n];
    let mut errors = vec![0.0f32; reference.frames * n];
    let mut fill = |frame: f32, refs: &[Affine3A], out: &mut [f32]| {
        candidate.sample_local(frame, &mut local);
        local_to_object(skeleton, &local, &mut obj);
        for j in 0..n {
            out[j] = if limits.evaluated[j] {
                joint_error(&refs[j], &obj[j], limits.marker_offset[j])
            } else {
                0.0
            };
        }
    };
    for f in 0..reference.frames {
        fill(
            f as f32,
            reference.sample(f),
            &mut errors[f * n..(f + 1) * n],
        );
    }
    let mid_errors = if midpoints {
        let m = reference.frames.saturating_sub(1);
        let mut e = vec![0.0f32; m * n];
        for f in 0..m {
            fill(
                f as f32 + 0.5,
                &reference.at_midpoints[f * n..(f + 1) * n],
                &mut e[f * n..(f + 1) * n],
            );
        }
        Some(e)
    } else {
        None
    };
    ErrorReport::new(n, reference.frames, errors, mid_errors, limits)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;
    use glam::{Quat, Vec3};

    #[test]
    fn markers_include_translation_and_axes() {
        let a = Affine3A::IDENTITY;
        let b = Affine3A::from_translation(Vec3::new(0.0, 0.0, 0.5));
        assert!((joint_error(&a, &b, 3.0) - 0.5).abs() < 1e-6);
        let c = Affine3A::from_quat(Quat::from_rotation_z(std::f32::consts::PI));
        // X and Y markers flip to the other side: distance 2d.
        assert!((joint_error(&a, &c, 3.0) - 6.0).abs() < 1e-5);
    }

    #[test]
    fn identical_clips_measure_zero() {
        let s = Skeleton::new(vec![
            Joint::new("a", None, Transform::IDENTITY),
            Joint::new(
                "b",
                Some(0),
                Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE),
            ),
        ])
        .unwrap();
        let mut clip = Clip::rest("c", &s, 30.0, 5);
        for f in 0..5 {
            clip.tracks[0].rotations[f] = Quat::from_rotation_y(f as f32 * 0.3);
        }
        let r = Reference::new(&s, &clip, 5);
        let e = measure(&s, &r, &clip, &JointLimits::uniform(&s, 0.03, 1e-4), true);
        assert_eq!(e.samples.max, 0.0);
        assert_eq!(e.midpoints.unwrap().max, 0.0);
    }
}
