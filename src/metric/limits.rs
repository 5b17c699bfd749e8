//! Per-joint marker offsets and tolerances: what the metric measures and against what.

/// Marker offset and tolerance for every joint of a skeleton, in scene units.
/// Joints with `evaluated == false` (helper nodes, BVH End Sites) carry no markers.
#[derive(Clone, Debug, PartialEq)]
pub struct JointLimits {
    pub marker_offset: Vec<f32>,
    pub tolerance: Vec<f32>,
    pub evaluated: Vec<bool>,
}

impl JointLimits {
    /// The same offset and tolerance on every deforming joint of `skeleton`.
    pub fn uniform(skeleton: &crate::model::Skeleton, marker_offset: f32, tolerance: f32) -> Self {
        let n = skeleton.len();
        Self {
            marker_offset: vec![marker_offset; n],
            tolerance: vec![tolerance; n],
            evaluated: skeleton.joints.iter().map(|j| j.deforming).collect(),
        }
    }

    pub fn len(&self) -> usize {
        self.tolerance.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tolerance.is_empty()
    }
}
