//! World matrices (as ufbx evaluates them) back to skelpack's local T / R / S.
//!
//! FBX inheritance modes (Maya segment scale compensation, "no inherit scale", component-wise
//! scale) and shear under a non-uniformly scaled parent are not a plain `parent · T·R·S`
//! chain, so each joint's local transform is derived from its world matrix relative to the
//! *model's own* reconstruction of the parent's world: the joint's origin is then exact
//! whatever the parent's deviation, and its axes are as close as T / R / S can hold them.

use glam::{DAffine3, DMat3, DQuat, DVec3, Quat};

use crate::model::Transform;

/// The local transform that puts a joint's origin at `world`'s under `parent` (the model's
/// world of its parent, identity for a root), and the largest distance between one of the
/// resulting world axes and `world`'s (0 unless `world` has shear relative to `parent`).
pub(super) fn local_from_world(parent: &DAffine3, world: &DAffine3) -> (Transform, f64) {
    let local = parent.inverse() * *world;
    let (rotation, scale) = rotation_scale(local.matrix3);
    let t = Transform::new(
        local.translation.as_vec3(),
        Quat::from_xyzw(
            rotation.x as f32,
            rotation.y as f32,
            rotation.z as f32,
            rotation.w as f32,
        )
        .normalize(),
        scale.as_vec3(),
    );
    let rebuilt = parent.matrix3 * t.to_daffine().matrix3;
    let deviation = (0..3)
        .map(|c| (rebuilt.col(c) - world.matrix3.col(c)).length())
        .fold(0.0, f64::max);
    (t, deviation)
}

/// Splits a 3×3 matrix into a rotation and a per-axis scale: exact (to rounding) when the
/// columns are orthogonal; otherwise the rotation of its polar decomposition and each
/// column's length along it. A mirrored matrix (negative determinant) gets a negative X
/// scale.
pub(super) fn rotation_scale(a: DMat3) -> (DQuat, DVec3) {
    let mut s = DVec3::new(a.x_axis.length(), a.y_axis.length(), a.z_axis.length());
    if a.determinant() < 0.0 {
        s.x = -s.x;
    }
    let smallest = s.abs().min_element();
    if smallest.is_nan() || smallest <= 1e-300 || !s.is_finite() {
        return (DQuat::IDENTITY, s);
    }
    let mut r = DMat3::from_cols(a.x_axis / s.x, a.y_axis / s.y, a.z_axis / s.z);
    // Polar iteration, for axes that are not orthogonal (to rounding) already.
    let orthogonal = (r.transpose() * r - DMat3::IDENTITY)
        .to_cols_array()
        .iter()
        .all(|v| v.abs() < 1e-14);
    for _ in 0..if orthogonal { 0 } else { 32 } {
        let next = (r + r.inverse().transpose()) * 0.5;
        let step = (next - r)
            .to_cols_array()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        r = next;
        if step < 1e-15 || !step.is_finite() {
            break;
        }
    }
    let q = DQuat::from_mat3(&r).normalize();
    if !q.is_finite() {
        return (DQuat::IDENTITY, s);
    }
    let rm = DMat3::from_quat(q);
    let s = DVec3::new(
        rm.x_axis.dot(a.x_axis),
        rm.y_axis.dot(a.y_axis),
        rm.z_axis.dot(a.z_axis),
    );
    (q, s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_for_rotation_and_scale() {
        let q = DQuat::from_euler(glam::EulerRot::XYZ, 0.3, -1.2, 2.1);
        let s = DVec3::new(0.5, 2.0, 1.25);
        let world = DAffine3::from_scale_rotation_translation(s, q, DVec3::new(1.0, 2.0, 3.0));
        let parent = DAffine3::from_rotation_y(0.7) * DAffine3::from_scale(DVec3::splat(2.0));
        let (t, dev) = local_from_world(&parent, &world);
        assert!(dev < 1e-6, "{dev}");
        let rebuilt = parent * t.to_daffine();
        assert!((rebuilt.translation - world.translation).length() < 1e-5);
        assert!(rebuilt.matrix3.abs_diff_eq(world.matrix3, 1e-6));
    }

    #[test]
    fn mirrored_matrix_gets_negative_x_scale() {
        let m = DMat3::from_rotation_z(0.4) * DMat3::from_diagonal(DVec3::new(-2.0, 1.0, 1.0));
        let (q, s) = rotation_scale(m);
        assert!(s.x < 0.0);
        let back = DMat3::from_quat(q) * DMat3::from_diagonal(s);
        assert!(back.abs_diff_eq(m, 1e-9));
    }

    #[test]
    fn shear_is_reported_and_the_origin_stays_exact() {
        // A child rotated 45° that ignores its parent's (3, 1, 1) scale ("no inherit
        // scale"): relative to the parent its axes are sheared.
        let parent = DAffine3::from_scale(DVec3::new(3.0, 1.0, 1.0));
        let world = DAffine3::from_rotation_translation(
            DQuat::from_rotation_z(std::f64::consts::FRAC_PI_4),
            DVec3::new(0.5, 1.0, 0.0),
        );
        let (t, dev) = local_from_world(&parent, &world);
        assert!(dev > 0.1, "{dev}");
        let rebuilt = parent * t.to_daffine();
        assert!((rebuilt.translation - world.translation).length() < 1e-6);
    }
}
