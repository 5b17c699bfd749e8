//! The marker distances the metric is made of: a joint's three markers, a socket's origin and
//! markers, and a joint's error with the sockets hanging from it.

use glam::{DAffine3, DVec3};

use super::limits::{JointLimits, SocketMarker};

/// The largest distance between the three markers `d * e_k` carried by `a` and by `b`
/// (computed in double precision, like `animeval.py`).
#[inline]
pub fn joint_error(a: &DAffine3, b: &DAffine3, d: f32) -> f32 {
    let d = d as f64;
    let dt: DVec3 = a.translation - b.translation;
    let m = a.matrix3 - b.matrix3;
    let ex = (m.x_axis * d + dt).length_squared();
    let ey = (m.y_axis * d + dt).length_squared();
    let ez = (m.z_axis * d + dt).length_squared();
    ex.max(ey).max(ez).sqrt() as f32
}

/// The largest distance between a socket's markers carried by its joint's object transforms
/// `a` and `b`: its origin and the points `d` along its axes (`d` in the joint's local units).
#[inline]
pub fn socket_error(socket: &SocketMarker, a: &DAffine3, b: &DAffine3, d: f32) -> f32 {
    let d = d as f64;
    let dt: DVec3 = a.translation - b.translation;
    let m = a.matrix3 - b.matrix3;
    let at = |p: DVec3| (m * p + dt).length_squared();
    let o = socket.origin;
    let ax = &socket.axes;
    at(o)
        .max(at(o + ax.x_axis * d))
        .max(at(o + ax.y_axis * d))
        .max(at(o + ax.z_axis * d))
        .sqrt() as f32
}

/// Joint `j`'s error between its object transforms `a` and `b`: its own markers, and every
/// socket hanging from it weighted by [`SocketMarker::weight`] (so that "within the joint's
/// tolerance" means every socket within its own). Not evaluated: 0.
#[inline]
pub fn marker_error(limits: &JointLimits, j: usize, a: &DAffine3, b: &DAffine3) -> f32 {
    if !limits.evaluated[j] {
        return 0.0;
    }
    let d = limits.local_marker(j);
    let own = joint_error(a, b, d);
    limits.sockets[j]
        .iter()
        .fold(own, |e, s| e.max(socket_error(s, a, b, d) * s.weight()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Skeleton, Socket, Transform};

    fn skeleton_with_tip(tip: f64) -> Skeleton {
        let mut s = Skeleton::new(vec![Joint::new("head", None, Transform::IDENTITY)]).unwrap();
        s.sockets.push(Socket {
            name: "Head_end".into(),
            joint: 0,
            offset: DAffine3::from_translation(DVec3::new(0.0, tip, 0.0)),
            source_node: None,
        });
        s
    }

    #[test]
    fn a_socket_far_out_sees_a_rotation_its_joint_markers_barely_see() {
        let s = skeleton_with_tip(1.0);
        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        let a = DAffine3::IDENTITY;
        let b = DAffine3::from_quat(glam::DQuat::from_rotation_z(1e-3));
        let own = joint_error(&a, &b, 0.03);
        let with_socket = marker_error(&limits, 0, &a, &b);
        // The tip at 1 unit moves ~1e-3, the joint's markers at 3 cm ~3e-5.
        assert!((own - 3e-5).abs() < 1e-6, "{own}");
        assert!((with_socket - 1.03e-3).abs() < 2e-5, "{with_socket}");
    }

    #[test]
    fn a_tighter_socket_tolerance_weighs_its_error() {
        let s = skeleton_with_tip(1.0);
        let mut limits = JointLimits::uniform(&s, 0.03, 1e-4);
        limits.sockets[0][0].tolerance_ratio = 0.5;
        let a = DAffine3::IDENTITY;
        let b = DAffine3::from_translation(DVec3::new(1e-4, 0.0, 0.0));
        // A translation moves every marker alike: 1e-4, twice the socket's tolerance.
        assert!((marker_error(&limits, 0, &a, &b) - 2e-4).abs() < 1e-9);
        assert_eq!(limits.socket_count(), 1);
    }
}
