//! Pose evaluation: local transforms to object space (the scene root's frame).

use glam::{Affine3A, DAffine3};

use super::{Skeleton, Transform};

/// Local transforms of every joint.
pub type Pose = Vec<Transform>;

/// Object-space transforms of every joint.
pub type ObjectPose = Vec<Affine3A>;

/// Composes local transforms down the hierarchy into `out` (no allocation).
/// `local`, `out` and the skeleton must have the same length.
#[inline]
pub fn local_to_object(skeleton: &Skeleton, local: &[Transform], out: &mut [Affine3A]) {
    debug_assert_eq!(local.len(), skeleton.len());
    debug_assert_eq!(out.len(), skeleton.len());
    for (i, joint) in skeleton.joints.iter().enumerate() {
        let m = local[i].to_affine();
        out[i] = match joint.parent {
            Some(p) => out[p] * m,
            None => m,
        };
    }
}

/// [`local_to_object`] in double precision (used by the error metric).
#[inline]
pub fn local_to_object_f64(skeleton: &Skeleton, local: &[Transform], out: &mut [DAffine3]) {
    debug_assert_eq!(local.len(), skeleton.len());
    debug_assert_eq!(out.len(), skeleton.len());
    for (i, joint) in skeleton.joints.iter().enumerate() {
        let m = local[i].to_daffine();
        out[i] = match joint.parent {
            Some(p) => out[p] * m,
            None => m,
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;
    use glam::{Quat, Vec3};

    #[test]
    fn chain_composes_parent_first() {
        let s = Skeleton::new(vec![
            Joint::new(
                "a",
                None,
                Transform::new(
                    Vec3::X,
                    Quat::from_rotation_z(std::f32::consts::FRAC_PI_2),
                    Vec3::ONE,
                ),
            ),
            Joint::new(
                "b",
                Some(0),
                Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE),
            ),
        ])
        .unwrap();
        let mut out = vec![Affine3A::IDENTITY; 2];
        local_to_object(&s, &s.rest_pose(), &mut out);
        // b sits one unit along a's rotated X axis (world +Y) from a at (1,0,0).
        assert!((Vec3::from(out[1].translation) - Vec3::new(1.0, 1.0, 0.0)).length() < 1e-6);
    }
}
