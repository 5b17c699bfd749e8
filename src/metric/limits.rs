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
    /// Per joint, the sockets hanging from it ([`crate::model::Socket`]): their markers count
    /// as the joint's own ([`crate::metric::marker_error`]).
    pub sockets: Vec<Vec<SocketMarker>>,
}

/// A socket's markers, carried by its joint: the socket's origin and three markers at the
/// joint's marker offset along the socket's own axes, all fixed in the joint's local space.
#[derive(Clone, Debug, PartialEq)]
pub struct SocketMarker {
    /// Index into `Skeleton::sockets`.
    pub socket: usize,
    /// The socket's origin in the joint's local space (its lever).
    pub origin: glam::DVec3,
    /// The socket's axes in the joint's local space, unit length.
    pub axes: glam::DMat3,
    /// The socket's tolerance as a fraction of its joint's (1: the joint's own). A ratio, so
    /// that scaling the joints' tolerances (size budgets, guard bands, floors) scales it too.
    pub tolerance_ratio: f32,
}

impl SocketMarker {
    /// Markers for `socket` (index `index` of the skeleton's sockets), at its joint's tolerance.
    pub fn new(index: usize, socket: &crate::model::Socket) -> Self {
        let m = socket.offset.matrix3;
        let unit = |v: glam::DVec3| v.try_normalize().unwrap_or(glam::DVec3::ZERO);
        Self {
            socket: index,
            origin: socket.offset.translation,
            axes: glam::DMat3::from_cols(unit(m.x_axis), unit(m.y_axis), unit(m.z_axis)),
            tolerance_ratio: 1.0,
        }
    }

    /// How much this socket's error weighs against its joint's tolerance: the joint's
    /// tolerance over the socket's.
    #[inline]
    pub fn weight(&self) -> f32 {
        if self.tolerance_ratio > 0.0 {
            1.0 / self.tolerance_ratio
        } else {
            1.0
        }
    }
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
            sockets: Self::socket_markers(skeleton),
        }
    }

    /// Per joint, the markers of the sockets hanging from it.
    fn socket_markers(skeleton: &crate::model::Skeleton) -> Vec<Vec<SocketMarker>> {
        let mut out = vec![Vec::new(); skeleton.len()];
        for (i, s) in skeleton.sockets.iter().enumerate() {
            if let Some(list) = out.get_mut(s.joint) {
                list.push(SocketMarker::new(i, s));
            }
        }
        out
    }

    /// The number of sockets measured (those on evaluated joints).
    pub fn socket_count(&self) -> usize {
        (0..self.len())
            .filter(|&j| self.evaluated[j])
            .map(|j| self.sockets[j].len())
            .sum()
    }

    /// How far joint `j`'s farthest marker sits from it in its local axes, sockets included
    /// and weighted by their tolerances ([`SocketMarker::weight`]): the lever arm a rotation
    /// error of the joint works on, in units of its own tolerance.
    pub fn local_reach(&self, j: usize) -> f32 {
        let d = self.local_marker(j);
        self.sockets[j].iter().fold(d, |r, s| {
            let lever = s.origin.length() as f32 + d;
            r.max(lever * s.weight())
        })
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
