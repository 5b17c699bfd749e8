//! What the camera frames: the character's extent over the clip, including its skinned mesh
//! (a head or a hat sticks out past the joints), optionally "in place" (the body's horizontal
//! travel removed, so a walk is framed on the character, not on its path). The body is the
//! skeleton below a static root: an ACL or BVH clip often keeps its root joint still at the
//! origin while the hips walk away, and framing that root would frame the walk's whole path
//! and a stick from it to the hips ([`Body`]).

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

/// The moving body of a clip: the joint "in place" follows, and the joints left out of the
/// framing and the drawing (a static root far from the body, with the bone to it).
#[derive(Clone, Debug, PartialEq)]
pub struct Body {
    /// The shallowest deforming joint that moves (the hips), or the first deforming joint
    /// when the chain above the body does not stand still.
    pub root: usize,
    /// Per joint: a static ancestor of `root` on a chain of single children (not drawn, not
    /// framed).
    pub detached: Vec<bool>,
}

impl Body {
    /// The body of `skeleton` moving through `poses` (object space, one pose per sampled
    /// frame): from the first deforming joint, down a chain of joints that stand still and
    /// have one child each, to the first joint that moves; that chain is detached. With no
    /// moving joint at the end of such a chain, nothing is detached.
    pub fn find(skeleton: &Skeleton, poses: &[Vec<Affine3A>]) -> Body {
        let n = skeleton.len();
        let first = skeleton.deforming_joints().next().unwrap_or(0);
        let mut detached = vec![false; n];
        let children = skeleton.children();
        let mut extent = Bounds::EMPTY;
        for pose in poses {
            for m in pose {
                extent.add(Vec3::from(m.translation));
            }
        }
        // "Still": within a thousandth of everything's extent over the clip.
        let eps = 1e-3 * extent.size().max_element().max(f32::MIN_POSITIVE);
        let still = |j: usize| {
            let mut b = Bounds::EMPTY;
            for pose in poses {
                if let Some(m) = pose.get(j) {
                    b.add(Vec3::from(m.translation));
                }
            }
            b.is_empty() || b.size().max_element() <= eps
        };
        let mut chain = Vec::new();
        let mut j = first;
        while j < n && still(j) && children[j].len() == 1 {
            chain.push(j);
            j = children[j][0];
        }
        if j >= n || chain.is_empty() || still(j) {
            return Body {
                root: first.min(n.saturating_sub(1)),
                detached,
            };
        }
        for c in chain {
            detached[c] = true;
        }
        Body { root: j, detached }
    }

    /// Whether joint `j` is drawn: deforming, and not detached.
    pub fn drawn(&self, skeleton: &Skeleton, j: usize) -> bool {
        skeleton.joints[j].deforming && !self.detached.get(j).copied().unwrap_or(false)
    }
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

/// Adds `pose`'s drawn joints (deforming, not detached from `body`), shifted by `shift`,
/// to `b`.
pub fn add_joints(
    b: &mut Bounds,
    skeleton: &Skeleton,
    body: &Body,
    pose: &[Affine3A],
    shift: Vec3,
) {
    for (j, m) in pose.iter().enumerate() {
        if body.drawn(skeleton, j) {
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

    /// An ACL-like clip: a root joint still at the origin, hips walking from x = 5 to
    /// x = 15 (a body 1.8 tall, 0.4 wide), a leg below them, a spine above.
    fn walking_away_from_a_static_root() -> (Skeleton, Vec<Vec<Affine3A>>) {
        use crate::model::{Joint, Transform};
        let t = Transform::IDENTITY;
        let skeleton = Skeleton::new(vec![
            Joint::new("root", None, t),
            Joint::new("hips", Some(0), t),
            Joint::new("leg", Some(1), t),
            Joint::new("spine", Some(1), t),
        ])
        .unwrap();
        let poses = (0..=20)
            .map(|f| {
                let x = 5.0 + 0.5 * f as f32;
                [
                    Vec3::ZERO,
                    Vec3::new(x, 0.9, 0.0),
                    Vec3::new(x + 0.2, 0.0, 0.2),
                    Vec3::new(x - 0.2, 1.8, -0.2),
                ]
                .map(Affine3A::from_translation)
                .to_vec()
            })
            .collect();
        (skeleton, poses)
    }

    fn framed(skeleton: &Skeleton, poses: &[Vec<Affine3A>], in_place: bool) -> Bounds {
        let body = Body::find(skeleton, poses);
        let mut b = Bounds::EMPTY;
        for pose in poses {
            let shift = in_place_shift(pose, body.root, in_place);
            add_joints(&mut b, skeleton, &body, pose, shift);
        }
        b
    }

    #[test]
    fn a_static_root_far_from_the_body_is_left_out_of_the_framing() {
        let (skeleton, poses) = walking_away_from_a_static_root();
        let body = Body::find(&skeleton, &poses);
        assert_eq!(body.root, 1, "in place follows the hips");
        assert_eq!(body.detached, vec![true, false, false, false]);
        // In place: the body alone, 0.4 wide and 1.8 tall (before: the path from the
        // origin to x = 15, and the root's stick, 15 wide).
        let b = framed(&skeleton, &poses, true);
        assert!((b.size().x - 0.4).abs() < 1e-4, "{b:?}");
        assert!((b.size().y - 1.8).abs() < 1e-4, "{b:?}");
        // Not in place: the path the body walks, not from the origin.
        let b = framed(&skeleton, &poses, false);
        assert!(
            (b.min.x - 4.8).abs() < 1e-4 && (b.max.x - 15.2).abs() < 1e-4,
            "{b:?}"
        );
    }

    #[test]
    fn a_root_that_moves_or_a_still_clip_keeps_every_joint() {
        let (skeleton, mut poses) = walking_away_from_a_static_root();
        // Everything still: nothing to follow, nothing left out.
        let still: Vec<Vec<Affine3A>> = vec![poses[0].clone(); 5];
        let body = Body::find(&skeleton, &still);
        assert_eq!((body.root, body.detached.contains(&true)), (0, false));
        // A root that moves with the body is the body.
        for (f, pose) in poses.iter_mut().enumerate() {
            pose[0] = Affine3A::from_translation(Vec3::new(5.0 + 0.5 * f as f32, 0.0, 0.0));
        }
        let body = Body::find(&skeleton, &poses);
        assert_eq!((body.root, body.detached.contains(&true)), (0, false));
    }

    #[test]
    fn in_place_cancels_the_root_horizontally_only() {
        let pose = vec![Affine3A::from_translation(Vec3::new(3.0, 1.0, -2.0))];
        let s = in_place_shift(&pose, 0, true);
        assert_eq!(s, Vec3::new(-3.0, 0.0, 2.0));
        assert_eq!(in_place_shift(&pose, 0, false), Vec3::ZERO);
    }
}
