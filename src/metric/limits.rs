//! Per-joint marker offsets and tolerances: what the metric measures and against what.

/// Marker offset and tolerance for every joint of a skeleton, in scene units.
/// Joints with `evaluated == false` (helper nodes, BVH End Sites) carry no markers.
///
/// Marker offsets are *physical* (DESIGN §2): a joint's markers sit `marker_offset[j]` scene
/// units from it at the rest pose, whatever scale the armature or the joint carries. In the
/// joint's own axes that is [`JointLimits::local_marker`], `marker_offset[j] / rest_scale[j]`.
#[derive(Clone, Debug, PartialEq)]
pub struct JointLimits {
    pub marker_offset: Vec<f32>,
    pub tolerance: Vec<f32>,
    pub evaluated: Vec<bool>,
    /// Each joint's uniform rest-pose scale in scene-root space ([`Skeleton::rest_scales`]).
    ///
    /// [`Skeleton::rest_scales`]: crate::model::Skeleton::rest_scales
    pub rest_scale: Vec<f32>,
}

impl JointLimits {
    /// The same offset and tolerance on every deforming joint of `skeleton`.
    pub fn uniform(skeleton: &crate::model::Skeleton, marker_offset: f32, tolerance: f32) -> Self {
        let n = skeleton.len();
        Self {
            marker_offset: vec![marker_offset; n],
            tolerance: vec![tolerance; n],
            evaluated: skeleton.joints.iter().map(|j| j.deforming).collect(),
            rest_scale: skeleton.rest_scales(),
        }
    }

    /// The marker distance along joint `j`'s local axes: its physical offset divided by the
    /// joint's rest-pose scale, so the markers sit `marker_offset[j]` from it in the scene.
    #[inline]
    pub fn local_marker(&self, j: usize) -> f32 {
        self.marker_offset[j] / self.rest_scale[j]
    }

    pub fn len(&self) -> usize {
        self.tolerance.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tolerance.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Skeleton, Transform};
    use glam::{Quat, Vec3};

    #[test]
    fn markers_are_physical_on_a_scaled_armature() {
        // An armature scaled 0.01 holding a joint scaled 2: the joint's scene scale is 0.02.
        let s = Skeleton::new(vec![
            Joint::new(
                "armature",
                None,
                Transform::new(Vec3::ZERO, Quat::IDENTITY, Vec3::splat(0.01)),
            ),
            Joint::new(
                "hand",
                Some(0),
                Transform::new(Vec3::X, Quat::IDENTITY, Vec3::splat(2.0)),
            ),
        ])
        .unwrap();
        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        assert!((limits.rest_scale[1] - 0.02).abs() < 1e-7);
        // 0.03 scene units = 1.5 units along the hand's own axes.
        assert!((limits.local_marker(1) - 1.5).abs() < 1e-5);
        assert!((limits.local_marker(0) - 3.0).abs() < 1e-5);
    }
}
