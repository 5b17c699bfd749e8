//! A joint's local transform: translation, unit-quaternion rotation, scale.

use glam::{Affine3A, DAffine3, DMat3, DQuat, Mat3A, Quat, Vec3, Vec3A};

/// Translation, rotation (unit quaternion) and scale, applied scale first, then rotation,
/// then translation (the glTF / ACL convention).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transform {
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
}

impl Default for Transform {
    fn default() -> Self {
        Self::IDENTITY
    }
}

impl Transform {
    pub const IDENTITY: Self = Self {
        translation: Vec3::ZERO,
        rotation: Quat::IDENTITY,
        scale: Vec3::ONE,
    };

    pub fn new(translation: Vec3, rotation: Quat, scale: Vec3) -> Self {
        Self {
            translation,
            rotation,
            scale,
        }
    }

    /// The transform as an affine matrix (non-uniform scale allowed).
    #[inline]
    pub fn to_affine(&self) -> Affine3A {
        let m = Mat3A::from_quat(self.rotation);
        Affine3A {
            matrix3: Mat3A::from_cols(
                m.x_axis * self.scale.x,
                m.y_axis * self.scale.y,
                m.z_axis * self.scale.z,
            ),
            translation: Vec3A::from(self.translation),
        }
    }

    /// The transform as a double-precision affine matrix (for the error metric, whose
    /// object-space chains must not add rounding comparable to a 0.1 mm tolerance).
    #[inline]
    pub fn to_daffine(&self) -> DAffine3 {
        let q = DQuat::from_xyzw(
            self.rotation.x as f64,
            self.rotation.y as f64,
            self.rotation.z as f64,
            self.rotation.w as f64,
        );
        let m = DMat3::from_quat(q);
        let s = self.scale.as_dvec3();
        DAffine3 {
            matrix3: DMat3::from_cols(m.x_axis * s.x, m.y_axis * s.y, m.z_axis * s.z),
            translation: self.translation.as_dvec3(),
        }
    }

    /// Interpolates translation and scale linearly and rotation by shortest-path slerp.
    pub fn interpolate(&self, other: &Self, u: f32) -> Self {
        Self {
            translation: self.translation.lerp(other.translation, u),
            rotation: slerp_shortest(self.rotation, other.rotation, u),
            scale: self.scale.lerp(other.scale, u),
        }
    }

    /// True when every component is finite.
    pub fn is_finite(&self) -> bool {
        self.translation.is_finite() && self.rotation.is_finite() && self.scale.is_finite()
    }
}

/// Spherical interpolation along the shorter arc, as glTF players do (and `animeval.py`).
#[inline]
pub fn slerp_shortest(a: Quat, b: Quat, u: f32) -> Quat {
    SlerpArc::new(a, b).at(u)
}

pub use skelpack_runtime::curve::SlerpArc;

/// Angle between two rotations in radians, precise for tiny angles (uses the chord, not
/// `acos` of the dot product, which f32 cannot resolve below ~1e-3 rad).
#[inline]
pub fn quat_angle(a: Quat, b: Quat) -> f32 {
    angle_of_chord_squared(quat_chord_squared(a, b))
}

/// The squared chord between two rotations on the shorter arc: cheap, and never smaller
/// for a pair of rotations further apart (what [`quat_angle`] takes the angle of).
#[inline]
pub fn quat_chord_squared(a: Quat, b: Quat) -> f32 {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    (a - b).length_squared()
}

/// The angle in radians of a squared chord from [`quat_chord_squared`].
#[inline]
pub fn angle_of_chord_squared(chord_squared: f32) -> f32 {
    let chord = chord_squared.sqrt();
    4.0 * (chord * 0.5).min(1.0).asin()
}

/// Normalized linear interpolation along the shorter arc (cheap; used between close keys).
#[inline]
pub fn nlerp_shortest(a: Quat, b: Quat, u: f32) -> Quat {
    let b = if a.dot(b) < 0.0 { -b } else { b };
    (a * (1.0 - u) + b * u).normalize()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn affine_matches_glam_srt() {
        let t = Transform::new(
            Vec3::new(1.0, -2.0, 3.0),
            Quat::from_euler(glam::EulerRot::XYZ, 0.3, -1.1, 2.0),
            Vec3::new(0.5, 2.0, 1.5),
        );
        let expect = Affine3A::from_scale_rotation_translation(t.scale, t.rotation, t.translation);
        assert!(t.to_affine().abs_diff_eq(expect, 1e-6));
    }

    #[test]
    fn quat_angle_resolves_tiny_angles() {
        let a = Quat::from_rotation_x(0.3);
        let b = Quat::from_rotation_x(0.3 + 1e-5);
        assert!((quat_angle(a, -b) - 1e-5).abs() < 2e-6);
        assert!((quat_angle(Quat::IDENTITY, Quat::from_rotation_y(2.0)) - 2.0).abs() < 1e-5);
    }

    #[test]
    fn slerp_takes_the_short_arc() {
        let a = Quat::from_rotation_z(0.1);
        let b = -Quat::from_rotation_z(0.3);
        let mid = slerp_shortest(a, b, 0.5);
        assert!(mid.angle_between(Quat::from_rotation_z(0.2)) < 1e-5);
    }
}
