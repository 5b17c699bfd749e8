//! What the camera frames: the character's extent over the clip, including its skinned mesh
//! (a head or a hat sticks out past the joints), optionally "in place" (the root's horizontal
//! travel removed, so a walk is framed on the character, not on its path).

use glam::{Affine3A, Mat4, Vec3};

use super::scene::MeshData;
use crate::model::Skeleton;

/// Vertices skinned per sampled frame at most (bounds need the outline, not every vertex).
const MAX_VERTICES_PER_FRAME: usize = 4096;

/// An axis-aligned box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounds {
    pub min: Vec3,
    pub max: Vec3,
}

impl Bounds {
    pub const EMPTY: Bounds = Bounds {
        min: Vec3::splat(f32::INFINITY),
        max: Vec3::splat(f32::NEG_INFINITY),
    };

    pub fn add(&mut self, p: Vec3) {
        if p.is_finite() {
            self.min = self.min.min(p);
            self.max = self.max.max(p);
        }
    }

    pub fn is_empty(&self) -> bool {
        self.min.x > self.max.x
    }

    pub fn size(&self) -> Vec3 {
        self.max - self.min
    }
}

/// The joint whose horizontal travel "in place" removes: the first deforming joint (joints
/// are stored parents first, so it is the shallowest one: the hips or the root bone).
pub fn root_joint(skeleton: &Skeleton) -> usize {
    skeleton.deforming_joints().next().unwrap_or(0)
}

/// The shift that keeps `root` over the origin horizontally (zero when not in place).
pub fn in_place_shift(pose: &[Affine3A], root: usize, in_place: bool) -> Vec3 {
    match pose.get(root) {
        Some(m) if in_place && Vec3::from(m.translation).is_finite() => {
            Vec3::new(-m.translation.x, 0.0, -m.translation.z)
        }
        _ => Vec3::ZERO,
    }
}

/// Adds `pose`'s deforming joints, shifted by `shift`, to `b`.
pub fn add_joints(b: &mut Bounds, skeleton: &Skeleton, pose: &[Affine3A], shift: Vec3) {
    for (j, m) in pose.iter().enumerate() {
        if skeleton.joints[j].deforming {
            b.add(Vec3::from(m.translation) + shift);
        }
    }
}

/// Adds the mesh skinned to `pose` (a subset of its vertices), shifted by `shift`, to `b`.
pub fn add_mesh(b: &mut Bounds, mesh: &MeshData, pose: &[Affine3A], shift: Vec3) {
    let mut palette = Vec::with_capacity(mesh.palette_len());
    for ibm in &mesh.inverse_bind {
        for (j, m) in ibm.iter().enumerate() {
            let joint = pose.get(j).copied().unwrap_or(Affine3A::IDENTITY);
            palette.push(Mat4::from(joint) * *m);
        }
    }
    let stride = mesh.vertices.len().div_ceil(MAX_VERTICES_PER_FRAME).max(1);
    for v in mesh.vertices.iter().step_by(stride) {
        let p = Vec3::from(v.pos);
        let mut out = Vec3::ZERO;
        for k in 0..4 {
            if v.weights[k] > 0.0 {
                let i = v.base as usize + v.joints[k] as usize;
                if let Some(m) = palette.get(i) {
                    out += m.transform_point3(p) * v.weights[k];
                }
            }
        }
        b.add(out + shift);
    }
}

/// Where the compressed copy sits beside the original, along +X: far enough that the two do
/// not overlap on screen seen from a camera turned `yaw` radians about +Y (a long body along
/// Z, like a quadruped's, covers more of the screen's width than its X extent), plus a gap.
pub fn side_offset(b: &Bounds, size: f32, yaw: f32) -> Vec3 {
    let s = b.size();
    let (sin, cos) = yaw.sin_cos();
    // The box's width on screen, over the copies' spacing on screen per unit of X.
    let on_screen = (s.x * cos.abs() + s.z * sin.abs()) / cos.abs().max(0.2);
    Vec3::X * (on_screen + 0.2 * on_screen.max(0.2 * size)).max(0.5 * size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copies_spaced_by_the_width_do_not_overlap() {
        let b = Bounds {
            min: Vec3::new(-1.5, 0.0, -0.2),
            max: Vec3::new(0.5, 1.8, 0.2),
        };
        let off = side_offset(&b, 1.8, 0.0);
        assert!(b.min.x + off.x > b.max.x, "{off}");
        assert!(off.x < 4.0 * b.size().x, "not absurdly far: {off}");
    }

    #[test]
    fn a_long_body_seen_at_an_angle_is_spaced_by_its_screen_width() {
        // A quadruped: long along Z, narrow along X.
        let b = Bounds {
            min: Vec3::new(-13.0, 0.0, -97.0),
            max: Vec3::new(13.0, 77.0, 70.0),
        };
        let yaw = 0.35f32;
        let off = side_offset(&b, 167.0, yaw);
        // Screen-right axis of a camera at `yaw`: the two boxes' projections do not meet.
        let right = Vec3::new(yaw.cos(), 0.0, -yaw.sin());
        let span = |min: Vec3, max: Vec3| {
            let xs = [min.x, max.x];
            let zs = [min.z, max.z];
            let ps: Vec<f32> = xs
                .iter()
                .flat_map(|&x| zs.iter().map(move |&z| Vec3::new(x, 0.0, z).dot(right)))
                .collect();
            (
                ps.iter().copied().fold(f32::INFINITY, f32::min),
                ps.iter().copied().fold(f32::NEG_INFINITY, f32::max),
            )
        };
        let (_, a_hi) = span(b.min, b.max);
        let (b_lo, _) = span(b.min + off, b.max + off);
        assert!(b_lo > a_hi, "{b_lo} <= {a_hi}");
    }

    #[test]
    fn in_place_cancels_the_root_horizontally_only() {
        let pose = vec![Affine3A::from_translation(Vec3::new(3.0, 1.0, -2.0))];
        let s = in_place_shift(&pose, 0, true);
        assert_eq!(s, Vec3::new(-3.0, 0.0, 2.0));
        assert_eq!(in_place_shift(&pose, 0, false), Vec3::ZERO);
    }
}
