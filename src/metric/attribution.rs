//! Error attribution: how much of a joint's error its own tracks cause and how much it
//! inherits from its ancestors, and which joint's tracks cause the error at one cell.
//!
//! At every sample, with `R` the raw object poses, `D` the decoded ones, `r` / `d` the raw /
//! decoded local poses and `p` the parent of joint `j`:
//! - *own* error: `d_j` over the raw parent chain, `R_p · d_j`, against `R_j`;
//! - *inherited* error: `r_j` over the decoded parent chain, `D_p · r_j`, against `R_j`.
//!
//! Both are measured on the joint's physical markers ([`JointLimits::local_marker`]), like
//! the total error. For rigid parents the total is at most own + inherited (the triangle
//! inequality on each marker).

use glam::DAffine3;

use super::{JointLimits, PoseSource, marker_error};
use crate::model::{Skeleton, Transform, local_to_object_f64};

/// Own and inherited error per joint and sample.
#[derive(Clone, Debug, PartialEq)]
pub struct Attribution {
    pub joints: usize,
    pub frames: usize,
    /// `frames * joints`, frame-major: the joint's own decoded tracks over the raw parents.
    pub own: Vec<f32>,
    /// `frames * joints`, frame-major: the raw tracks over the decoded parents.
    pub inherited: Vec<f32>,
    /// Per joint: the largest own error over the samples.
    pub own_max: Vec<f32>,
    /// Per joint: the largest inherited error over the samples.
    pub inherited_max: Vec<f32>,
    /// [`caused_ratios`], when the caller asked for them.
    pub caused: Option<Vec<f32>>,
}

impl Attribution {
    /// The own error of `joint` at sample `frame`.
    pub fn own_at(&self, joint: usize, frame: usize) -> f32 {
        self.own[frame * self.joints + joint]
    }

    /// The inherited error of `joint` at sample `frame`.
    pub fn inherited_at(&self, joint: usize, frame: usize) -> f32 {
        self.inherited[frame * self.joints + joint]
    }

    /// The (joint, frame) of the largest own error relative to tolerance among evaluated
    /// joints: the cell whose tracks most need tuning.
    pub fn worst_own(&self, limits: &JointLimits) -> Option<(usize, usize)> {
        let n = self.joints.max(1);
        let mut best: Option<(usize, usize, f32)> = None;
        for (i, &e) in self.own.iter().enumerate() {
            let j = i % n;
            if !limits.evaluated[j] {
                continue;
            }
            let r = e / limits.tolerance[j].max(f32::MIN_POSITIVE);
            if best.is_none_or(|b| r > b.2) {
                best = Some((j, i / n, r));
            }
        }
        best.map(|(j, f, _)| (j, f))
    }
}

/// Attributes the error of `decoded` against `raw` at each of `frames` samples.
pub fn attribute(
    skeleton: &Skeleton,
    raw: &dyn PoseSource,
    decoded: &dyn PoseSource,
    frames: usize,
    limits: &JointLimits,
) -> Attribution {
    let n = skeleton.len();
    assert_eq!(limits.len(), n, "limits and skeleton differ");
    let mut s = Scratch::new(n);
    let mut own = vec![0.0f32; frames * n];
    let mut inherited = vec![0.0f32; frames * n];
    for f in 0..frames {
        s.load(skeleton, raw, decoded, f as f32);
        let (o, h) = (
            &mut own[f * n..(f + 1) * n],
            &mut inherited[f * n..(f + 1) * n],
        );
        for (j, joint) in skeleton.joints.iter().enumerate() {
            if !limits.evaluated[j] {
                continue;
            }
            let (own_pose, inherited_pose) = match joint.parent {
                Some(p) => (s.raw_obj[p] * s.dec_local[j], s.dec_obj[p] * s.raw_local[j]),
                None => (s.dec_local[j], s.raw_local[j]),
            };
            o[j] = marker_error(limits, j, &s.raw_obj[j], &own_pose);
            h[j] = marker_error(limits, j, &s.raw_obj[j], &inherited_pose);
        }
    }
    let column_max = |m: &[f32]| {
        let mut out = vec![0.0f32; n];
        for row in m.chunks_exact(n.max(1)) {
            for (x, &e) in out.iter_mut().zip(row) {
                *x = x.max(e);
            }
        }
        out
    };
    Attribution {
        joints: n,
        frames,
        own_max: column_max(&own),
        inherited_max: column_max(&inherited),
        own,
        inherited,
        caused: None,
    }
}

/// One joint's share of the error at another joint's markers.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Contribution {
    /// The joint whose own tracks alone are decoded (`joint` itself or an ancestor).
    pub source: usize,
    /// The error at `joint`'s markers with only `source`'s tracks decoded.
    pub error: f32,
}

/// For `joint` at `frame`: the error each of it and its ancestors causes alone on its
/// markers (only that joint's tracks decoded, every other one raw), nearest first.
pub fn contributions(
    skeleton: &Skeleton,
    raw: &dyn PoseSource,
    decoded: &dyn PoseSource,
    limits: &JointLimits,
    joint: usize,
    frame: f32,
) -> Vec<Contribution> {
    let mut s = Scratch::new(skeleton.len());
    s.load(skeleton, raw, decoded, frame);
    let target = s.raw_obj[joint];
    let mut out = Vec::with_capacity(skeleton.depth_of(joint) + 1);
    let mut a = Some(joint);
    while let Some(src) = a {
        let parent = skeleton.joints[src].parent;
        let error = if s.dec_local[src] == s.raw_local[src] {
            0.0 // tracks decoded exactly cause nothing
        } else {
            // The source's pose with its own tracks decoded, carried down to `joint` along
            // the raw chain below it.
            let moved = match parent {
                Some(p) => s.raw_obj[p] * s.dec_local[src],
                None => s.dec_local[src],
            };
            marker_error(
                limits,
                joint,
                &target,
                &(moved * s.raw_obj[src].inverse() * target),
            )
        };
        out.push(Contribution { source: src, error });
        a = parent;
    }
    out
}

/// The joint whose own tracks cause most of `joint`'s error at `frame` (the joint itself
/// when no ancestor causes more).
pub fn responsible(
    skeleton: &Skeleton,
    raw: &dyn PoseSource,
    decoded: &dyn PoseSource,
    limits: &JointLimits,
    joint: usize,
    frame: f32,
) -> Contribution {
    contributions(skeleton, raw, decoded, limits, joint, frame)
        .into_iter()
        .fold(None::<Contribution>, |best, c| match best {
            Some(b) if b.error >= c.error => Some(b),
            _ => Some(c),
        })
        .unwrap_or(Contribution {
            source: joint,
            error: 0.0,
        })
}

/// Per joint and sample (`frames * joints`, frame-major): the largest error / tolerance its
/// own tracks cause alone ([`contributions`]) on its own markers or on any descendant's,
/// so the joints whose tracks to tune stand out even where the error shows further down the
/// chain. None when that would take more than `budget` marker evaluations (the sum over
/// evaluated joints of their depth + 1, times the frames).
pub fn caused_ratios(
    skeleton: &Skeleton,
    raw: &dyn PoseSource,
    decoded: &dyn PoseSource,
    frames: usize,
    limits: &JointLimits,
    budget: usize,
) -> Option<Vec<f32>> {
    let n = skeleton.len();
    assert_eq!(limits.len(), n, "limits and skeleton differ");
    let chain: usize = (0..n)
        .filter(|&j| limits.evaluated[j])
        .map(|j| skeleton.depth_of(j) + 1)
        .sum();
    if chain.saturating_mul(frames) > budget {
        return None;
    }
    let mut s = Scratch::new(n);
    let mut out = vec![0.0f32; frames * n];
    let mut delta = vec![DAffine3::IDENTITY; n];
    let mut exact = vec![true; n];
    for f in 0..frames {
        s.load(skeleton, raw, decoded, f as f32);
        for (a, joint) in skeleton.joints.iter().enumerate() {
            exact[a] = s.dec_local[a] == s.raw_local[a];
            if !exact[a] {
                let moved = match joint.parent {
                    Some(p) => s.raw_obj[p] * s.dec_local[a],
                    None => s.dec_local[a],
                };
                delta[a] = moved * s.raw_obj[a].inverse();
            }
        }
        let row = &mut out[f * n..(f + 1) * n];
        for d in (0..n).filter(|&d| limits.evaluated[d]) {
            let tol = limits.tolerance[d].max(f32::MIN_POSITIVE);
            let target = s.raw_obj[d];
            let mut a = Some(d);
            while let Some(x) = a {
                if !exact[x] {
                    let e = marker_error(limits, d, &target, &(delta[x] * target));
                    row[x] = row[x].max(e / tol);
                }
                a = skeleton.joints[x].parent;
            }
        }
    }
    Some(out)
}

/// Local and object poses of the raw and decoded clips at one frame.
struct Scratch {
    local: Vec<Transform>,
    raw_local: Vec<DAffine3>,
    dec_local: Vec<DAffine3>,
    raw_obj: Vec<DAffine3>,
    dec_obj: Vec<DAffine3>,
}

impl Scratch {
    fn new(n: usize) -> Self {
        Self {
            local: vec![Transform::IDENTITY; n],
            raw_local: vec![DAffine3::IDENTITY; n],
            dec_local: vec![DAffine3::IDENTITY; n],
            raw_obj: vec![DAffine3::IDENTITY; n],
            dec_obj: vec![DAffine3::IDENTITY; n],
        }
    }

    fn load(&mut self, skeleton: &Skeleton, raw: &dyn PoseSource, dec: &dyn PoseSource, f: f32) {
        raw.sample_local(f, &mut self.local);
        local_to_object_f64(skeleton, &self.local, &mut self.raw_obj);
        for (m, t) in self.raw_local.iter_mut().zip(&self.local) {
            *m = t.to_daffine();
        }
        dec.sample_local(f, &mut self.local);
        local_to_object_f64(skeleton, &self.local, &mut self.dec_obj);
        for (m, t) in self.dec_local.iter_mut().zip(&self.local) {
            *m = t.to_daffine();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metric::{Reference, measure};
    use crate::model::{Clip, Joint};
    use glam::{Quat, Vec3};
    use proptest::prelude::*;

    /// A chain root -> a -> b -> c, each 0.3 along X from its parent.
    fn chain() -> Skeleton {
        let bone = Transform::new(Vec3::new(0.3, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
        Skeleton::new(vec![
            Joint::new("root", None, Transform::IDENTITY),
            Joint::new("a", Some(0), bone),
            Joint::new("b", Some(1), bone),
            Joint::new("c", Some(2), bone),
        ])
        .unwrap()
    }

    /// A moving raw clip on the chain.
    fn raw_clip(s: &Skeleton, frames: usize) -> Clip {
        let mut clip = Clip::rest("raw", s, 30.0, frames);
        for f in 0..frames {
            for (j, t) in clip.tracks.iter_mut().enumerate() {
                t.rotations[f] = Quat::from_rotation_z(0.1 * f as f32 + 0.2 * j as f32)
                    * Quat::from_rotation_x(0.05 * j as f32);
            }
        }
        clip
    }

    fn limits(s: &Skeleton) -> JointLimits {
        JointLimits::uniform(s, 0.05, 1e-4)
    }

    #[test]
    fn a_perturbed_parent_gives_no_own_error_on_its_children() {
        let s = chain();
        let raw = raw_clip(&s, 6);
        let mut dec = raw.clone();
        for r in &mut dec.tracks[1].rotations {
            *r = Quat::from_rotation_y(0.01) * *r;
        }
        let l = limits(&s);
        let a = attribute(&s, &raw, &dec, 6, &l);
        for f in 0..6 {
            assert!(a.own_at(1, f) > 1e-4, "a's own tracks moved");
            assert_eq!(a.inherited_at(1, f), 0.0, "a's parent is raw");
            for child in [2, 3] {
                assert_eq!(a.own_at(child, f), 0.0, "child {child} has raw tracks");
                assert!(a.inherited_at(child, f) > 1e-4);
            }
            assert_eq!(a.own_at(0, f), 0.0);
            assert_eq!(a.inherited_at(0, f), 0.0);
        }
        // The error on c comes from a's tracks.
        let c = responsible(&s, &raw, &dec, &l, 3, 2.0);
        assert_eq!(c.source, 1);
        let total = measure(&s, &Reference::new(&s, &raw, 6), &dec, &l, false);
        assert!(
            (c.error - total.at(3, 2)).abs() < 1e-6,
            "only a moved: all of it"
        );
    }

    #[test]
    fn a_perturbed_leaf_has_only_own_error() {
        let s = chain();
        let raw = raw_clip(&s, 4);
        let mut dec = raw.clone();
        for t in &mut dec.tracks[3].translations {
            *t += Vec3::new(0.0, 0.002, 0.0);
        }
        let l = limits(&s);
        let a = attribute(&s, &raw, &dec, 4, &l);
        let total = measure(&s, &Reference::new(&s, &raw, 4), &dec, &l, false);
        for f in 0..4 {
            assert_eq!(a.inherited_at(3, f), 0.0);
            assert!((a.own_at(3, f) - total.at(3, f)).abs() < 1e-7);
            assert!((a.own_at(3, f) - 0.002).abs() < 1e-5);
        }
        assert_eq!(a.worst_own(&l).map(|w| w.0), Some(3));
        assert_eq!(responsible(&s, &raw, &dec, &l, 3, 1.0).source, 3);
    }

    #[test]
    fn the_bigger_cause_is_responsible() {
        let s = chain();
        let raw = raw_clip(&s, 3);
        let mut dec = raw.clone();
        // A small nudge on b and a larger rotation on the root: c's error comes from the root.
        for r in &mut dec.tracks[2].rotations {
            *r = Quat::from_rotation_y(0.001) * *r;
        }
        for r in &mut dec.tracks[0].rotations {
            *r = Quat::from_rotation_x(0.02) * *r;
        }
        let l = limits(&s);
        let parts = contributions(&s, &raw, &dec, &l, 3, 1.0);
        assert_eq!(
            parts.iter().map(|c| c.source).collect::<Vec<_>>(),
            [3, 2, 1, 0]
        );
        assert_eq!(parts[0].error, 0.0, "c's own tracks are raw");
        assert_eq!(parts[2].error, 0.0, "a's own tracks are raw");
        assert!(parts[3].error > parts[1].error && parts[1].error > 0.0);
        assert_eq!(responsible(&s, &raw, &dec, &l, 3, 1.0).source, 0);
    }

    #[test]
    fn caused_ratios_put_a_parents_error_on_the_parent() {
        let s = chain();
        let raw = raw_clip(&s, 4);
        let mut dec = raw.clone();
        for r in &mut dec.tracks[1].rotations {
            *r = Quat::from_rotation_y(0.01) * *r;
        }
        let l = limits(&s);
        let c = caused_ratios(&s, &raw, &dec, 4, &l, usize::MAX).unwrap();
        let total = measure(&s, &Reference::new(&s, &raw, 4), &dec, &l, false);
        for f in 0..4 {
            // Only a's tracks moved: the joints below it cause nothing, a causes the worst
            // ratio of its subtree (c, the farthest from it).
            for j in [0, 2, 3] {
                assert_eq!(c[f * 4 + j], 0.0);
            }
            let worst = (1..4).map(|j| total.at(j, f) / 1e-4).fold(0.0f32, f32::max);
            assert!(
                (c[f * 4 + 1] - worst).abs() <= worst * 1e-4,
                "{} vs {worst}",
                c[f * 4 + 1]
            );
        }
        assert_eq!(
            caused_ratios(&s, &raw, &dec, 4, &l, 10),
            None,
            "over budget"
        );
    }

    proptest! {
        /// With rigid poses, each marker's total error is at most own + inherited, and own
        /// and inherited are both within the total plus the other (reverse triangle).
        #[test]
        fn own_and_inherited_bound_the_total(
            angles in proptest::collection::vec(-0.05f32..0.05, 12),
            shifts in proptest::collection::vec(-0.01f32..0.01, 4),
        ) {
            let s = chain();
            let raw = raw_clip(&s, 3);
            let mut dec = raw.clone();
            for (j, t) in dec.tracks.iter_mut().enumerate() {
                for f in 0..3 {
                    let a = &angles[(j * 3 + f) % angles.len()];
                    t.rotations[f] = (Quat::from_rotation_y(*a) * t.rotations[f]).normalize();
                    t.translations[f].z += shifts[j];
                }
            }
            let l = limits(&s);
            let a = attribute(&s, &raw, &dec, 3, &l);
            let total = measure(&s, &Reference::new(&s, &raw, 3), &dec, &l, false);
            for f in 0..3 {
                for j in 0..4 {
                    let (o, h, t) = (a.own_at(j, f), a.inherited_at(j, f), total.at(j, f));
                    prop_assert!(t <= o + h + 1e-6, "joint {j} frame {f}: {t} > {o} + {h}");
                    prop_assert!(o <= t + h + 1e-6);
                    prop_assert!(h <= t + o + 1e-6);
                }
            }
        }
    }
}
