//! The marker distances the metric is made of: a joint's three markers, a socket's origin and
//! markers, and a joint's error with the sockets hanging from it.

use glam::{DAffine3, DVec3};

use super::limits::{JointLimits, SocketMarker};
use super::report::exceeds;

/// The largest distance between the three markers `d * e_k` carried by `a` and by `b`
/// (computed in double precision, like `animeval.py`).
#[inline]
pub fn joint_error(a: &DAffine3, b: &DAffine3, d: f32) -> f32 {
    joint_error_squared(a, b, d).sqrt() as f32
}

/// The square of [`joint_error`] before its root and rounding to `f32`.
#[inline]
pub fn joint_error_squared(a: &DAffine3, b: &DAffine3, d: f32) -> f64 {
    let d = d as f64;
    let dt: DVec3 = a.translation - b.translation;
    let m = a.matrix3 - b.matrix3;
    let ex = (m.x_axis * d + dt).length_squared();
    let ey = (m.y_axis * d + dt).length_squared();
    let ez = (m.z_axis * d + dt).length_squared();
    ex.max(ey).max(ez)
}

/// Whether joint `j`'s error between `a` and `b` is within `tolerance`: exactly
/// `!exceeds(marker_error(limits, j, a, b), tolerance)`, without the square root and its
/// rounding where the square decides ([`SquareTest`]; elsewhere, and for a joint with
/// sockets, the error is computed).
#[inline]
pub fn marker_within(
    limits: &JointLimits,
    j: usize,
    a: &DAffine3,
    b: &DAffine3,
    tolerance: f32,
) -> bool {
    if !limits.evaluated[j] {
        return true;
    }
    let Some(test) = SquareTest::new(limits, j, tolerance) else {
        return !exceeds(marker_error(limits, j, a, b), tolerance);
    };
    test.within(joint_error_squared(a, b, limits.local_marker(j)))
}

/// The test of [`marker_within`] by the square of a joint's error, its thresholds computed
/// once: for an evaluated joint without sockets and a positive, finite tolerance.
///
/// The error is `round_f32(√s)` of the largest squared marker distance `s` (`√` correctly
/// rounded); for a positive finite tolerance `t` it exceeds `t` exactly when `√s` lies above
/// the midpoint `m` between `t` and the next `f32` (at `m` itself, as the tie rounds).
/// `s < m²(1 − 10⁻¹²)` puts `√s` below `m(1 − 4·10⁻¹³)`, which the root's rounding (a relative
/// 2⁻⁵³) cannot lift to `m`: within. `s > m²(1 + 10⁻¹²)` likewise puts it above: not within.
/// (`m²` is exact to 2⁻⁵³ relative, inside the margin; a NaN square decides neither.)
#[derive(Clone, Copy, Debug)]
pub struct SquareTest {
    /// `s` below this: within.
    below: f64,
    /// `s` above this: not within.
    above: f64,
    /// Between the two, the rounded root decides against it.
    tolerance: f32,
}

impl SquareTest {
    /// The test of joint `j` at `tolerance`, or `None` where only the error decides (a joint
    /// with sockets; a tolerance that is not positive and finite).
    #[inline]
    pub fn new(limits: &JointLimits, j: usize, tolerance: f32) -> Option<Self> {
        let by_square = limits.sockets[j].is_empty() && tolerance > 0.0 && tolerance < f32::MAX;
        if !by_square {
            return None;
        }
        let next = f32::from_bits(tolerance.to_bits() + 1);
        let mid = (tolerance as f64 + next as f64) * 0.5;
        let square = mid * mid;
        Some(Self {
            below: square * (1.0 - 1e-12),
            above: square * (1.0 + 1e-12),
            tolerance,
        })
    }

    /// Whether the error whose square is `s` is within the tolerance: by the square outside
    /// the band around the threshold, by `!exceeds(√s as f32, tolerance)` inside it (and for
    /// a NaN).
    #[inline]
    pub fn within(&self, s: f64) -> bool {
        if s < self.below {
            true
        } else if s > self.above {
            false
        } else {
            !exceeds(s.sqrt() as f32, self.tolerance)
        }
    }
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

/// What [`marker_error`] reads of joint `j`'s limits, looked up once for a loop over many
/// positions of the same joint: [`JointMarkers::error`] is `marker_error` to the bit.
#[derive(Clone, Copy, Debug)]
pub enum JointMarkers {
    /// Not evaluated: its error is 0.
    None,
    /// Its own three markers at this local distance, no sockets.
    Own(f32),
    /// Its markers and sockets: measured by [`marker_error`] itself.
    WithSockets(usize),
}

impl JointMarkers {
    /// Joint `j`'s markers under `limits`.
    pub fn of(limits: &JointLimits, j: usize) -> Self {
        if !limits.evaluated[j] {
            Self::None
        } else if limits.sockets[j].is_empty() {
            Self::Own(limits.local_marker(j))
        } else {
            Self::WithSockets(j)
        }
    }

    /// [`marker_error`] of this joint between `a` and `b` (`limits` those it was made of).
    #[inline]
    pub fn error(self, limits: &JointLimits, a: &DAffine3, b: &DAffine3) -> f32 {
        match self {
            Self::None => 0.0,
            Self::Own(d) => joint_error(a, b, d),
            Self::WithSockets(j) => marker_error(limits, j, a, b),
        }
    }
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
    fn joint_markers_measure_what_marker_error_measures() {
        let with_socket = JointLimits::uniform(&skeleton_with_tip(0.7), 0.03, 1e-4);
        let bare = Skeleton::new(vec![Joint::new("head", None, Transform::IDENTITY)]).unwrap();
        let plain = JointLimits::uniform(&bare, 0.05, 1e-4);
        assert!(!with_socket.sockets[0].is_empty() && plain.sockets[0].is_empty());
        let mut off = plain.clone();
        off.evaluated[0] = false;
        let a = DAffine3::from_translation(DVec3::new(0.1, -0.2, 0.3));
        for (i, limits) in [&with_socket, &plain, &off].into_iter().enumerate() {
            let m = JointMarkers::of(limits, 0);
            for k in 0..20 {
                let turn = glam::DQuat::from_rotation_z(1e-3 * k as f64);
                let shift = DVec3::new(1e-4 * k as f64, 0.0, 0.0);
                let b = DAffine3::from_rotation_translation(turn, shift)
                    * DAffine3::from_scale(DVec3::splat(1.0 + 1e-3 * k as f64));
                let (got, want) = (m.error(limits, &a, &b), marker_error(limits, 0, &a, &b));
                assert_eq!(got.to_bits(), want.to_bits(), "limits {i}, step {k}");
                assert!(i == 2 || got > 0.0, "limits {i}, step {k}");
            }
        }
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
