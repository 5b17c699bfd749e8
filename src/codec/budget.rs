//! Hierarchical error budgets: how much local error each joint's tracks may have so that
//! every marker in its subtree stays within its object-space tolerance.
//!
//! A local rotation error of θ at joint j moves a marker at distance r from j by at most
//! `2 sin(θ/2) r`; a scale error Δs by at most `Δs r`; a translation error δ by `δ` times the
//! parent's object-space scale. Errors of the joints on a path add up in the worst case, so a
//! marker's tolerance is split among the *moving* joints on its path (adaptive margins: a
//! joint with long chains below it gets a smaller share and a longer lever arm).

use glam::{Affine3A, Vec3A};

use crate::metric::JointLimits;
use crate::model::{Clip, Skeleton, Transform, local_to_object};

/// Above this many joint-to-root path steps (the sum of every joint's depth) times sampled
/// frames, lever arms are bounded through the children instead of measured marker by
/// marker: the exact walk is quadratic in depth, so its work is capped at a constant
/// (about 0.1 s; ordinary rigs take a few hundred thousand steps) and deep hierarchies stay
/// linear (a 2,800-deep chain over 20 frames took 1.7 s in this function alone).
const EXACT_REACH_MAX_STEPS: usize = 16_000_000;

/// Per joint: lever arm, parent scale and the displacement budget its tracks share.
#[derive(Clone, Debug)]
pub struct Budgets {
    /// Largest distance from the joint to any marker of itself or a descendant, over the clip.
    pub reach: Vec<f32>,
    /// Largest object-space scale of the parent (1 at roots), over the clip.
    pub parent_scale: Vec<f32>,
    /// Displacement (scene units) the joint's own local error may cause at any marker.
    pub displacement: Vec<f32>,
}

impl Budgets {
    /// Measures lever arms over `clip` and splits each marker's tolerance among the joints on
    /// its path that move (`moving[j]`), weighted equally. A pinned joint re-derives its
    /// track against the decoded ancestors, so the paths of its subtree's markers stop at it:
    /// its ancestors need not budget for them.
    pub fn new(
        skeleton: &Skeleton,
        clip: &Clip,
        limits: &JointLimits,
        moving: &[bool],
        pinned: &[bool],
    ) -> Self {
        let is_pinned = |j: usize| pinned.get(j).copied().unwrap_or(false);
        let n = skeleton.len();
        let mut reach = vec![0.0f32; n];
        let mut parent_scale = vec![1.0f32; n];
        let mut local = vec![Transform::IDENTITY; n];
        let mut obj = vec![Affine3A::IDENTITY; n];
        let step = (clip.frame_count / 256).max(1);
        // Walking every marker up to the root costs joints x depth per frame; on a
        // pathological hierarchy (a 100,000-deep chain) a bound through the children is
        // used instead: no smaller than the exact lever arm, linear in the joints.
        let mut depth = vec![0usize; n];
        for (j, joint) in skeleton.joints.iter().enumerate() {
            depth[j] = joint.parent.map_or(1, |p| depth[p] + 1);
        }
        let path_lengths: usize = depth.iter().sum();
        let sampled = clip.frame_count.div_ceil(step) + 1;
        let exact = path_lengths.saturating_mul(sampled) <= EXACT_REACH_MAX_STEPS;
        let mut frame_reach = vec![0.0f32; if exact { 0 } else { n }];
        let mut markers = Vec::new();
        for f in (0..clip.frame_count)
            .step_by(step)
            .chain(std::iter::once(clip.frame_count.saturating_sub(1)))
        {
            clip.sample_local(f as f32, &mut local);
            local_to_object(skeleton, &local, &mut obj);
            for k in 0..n {
                if !limits.evaluated[k] {
                    continue;
                }
                let m = &obj[k];
                marker_points(limits, k, m, &mut markers);
                if !exact {
                    let pk: Vec3A = m.translation;
                    frame_reach[k] = markers
                        .iter()
                        .map(|&(p, w)| (p - pk).length() * w)
                        .fold(0.0, f32::max);
                    continue;
                }
                // Walk up from k: every ancestor's lever arm covers these markers.
                let mut a = Some(k);
                while let Some(j) = a {
                    let pj: Vec3A = obj[j].translation;
                    for &(p, w) in &markers {
                        reach[j] = reach[j].max((p - pj).length() * w);
                    }
                    a = if is_pinned(j) {
                        None
                    } else {
                        skeleton.joints[j].parent
                    };
                }
            }
            if !exact {
                // Children come after their parents: fold each subtree's arm into its parent
                // (a pinned joint's markers stop at it), then keep the largest over frames.
                for j in (0..n).rev() {
                    if let Some(p) = skeleton.joints[j].parent.filter(|_| !is_pinned(j)) {
                        let arm = (obj[j].translation - obj[p].translation).length();
                        frame_reach[p] = frame_reach[p].max(arm + frame_reach[j]);
                    }
                    reach[j] = reach[j].max(frame_reach[j]);
                }
                frame_reach.iter_mut().for_each(|r| *r = 0.0);
            }
            for (j, joint) in skeleton.joints.iter().enumerate() {
                if let Some(p) = joint.parent {
                    let m = &obj[p].matrix3;
                    let s = m
                        .x_axis
                        .length()
                        .max(m.y_axis.length())
                        .max(m.z_axis.length());
                    parent_scale[j] = parent_scale[j].max(s);
                }
            }
        }
        // Moving joints on each evaluated joint's path.
        let mut moving_depth = vec![0usize; n];
        for (j, joint) in skeleton.joints.iter().enumerate() {
            let above = if is_pinned(j) {
                0
            } else {
                joint.parent.map_or(0, |p| moving_depth[p])
            };
            moving_depth[j] = above + usize::from(moving[j]);
        }
        // Each joint's share of every evaluated marker below it (up to a pinned joint, which
        // keeps its subtree's markers to itself): children first, folded into parents.
        let mut displacement = vec![f32::INFINITY; n];
        for k in (0..n).rev() {
            if limits.evaluated[k] {
                let share = limits.tolerance[k] / moving_depth[k].max(1) as f32;
                displacement[k] = displacement[k].min(share);
            }
            if let Some(p) = skeleton.joints[k].parent.filter(|_| !is_pinned(k)) {
                displacement[p] = displacement[p].min(displacement[k]);
            }
        }
        Self {
            reach,
            parent_scale,
            displacement,
        }
    }

    /// The local error allowed on a joint's rotation (radians), translation and scale when its
    /// displacement budget is split among `tracks` moving tracks.
    /// The translation tolerance that moves `joint`'s origin by at most `distance` in
    /// object space (its parent's largest scale over the clip).
    pub fn translation_tolerance(&self, joint: usize, distance: f32) -> f32 {
        distance / self.parent_scale[joint].max(1e-9)
    }

    pub fn local_tolerances(&self, joint: usize, tracks: usize, factor: f32) -> LocalTolerance {
        let e = self.displacement[joint] * factor / tracks.max(1) as f32;
        let r = self.reach[joint].max(1e-9);
        LocalTolerance {
            rotation: if e.is_finite() {
                2.0 * (e / (2.0 * r)).min(1.0).asin()
            } else {
                f32::INFINITY
            },
            translation: e / self.parent_scale[joint].max(1e-9),
            scale: e / r,
        }
    }
}

/// Joint `k`'s markers in object space (`m` its object transform), each with the weight its
/// error carries against the joint's tolerance: its three markers, then its sockets' origins
/// and markers ([`crate::metric::marker_error`]).
fn marker_points(limits: &JointLimits, k: usize, m: &Affine3A, out: &mut Vec<(Vec3A, f32)>) {
    let d = limits.local_marker(k);
    out.clear();
    for axis in [m.matrix3.x_axis, m.matrix3.y_axis, m.matrix3.z_axis] {
        out.push((m.translation + axis * d, 1.0));
    }
    for s in &limits.sockets[k] {
        let w = s.weight();
        let o = s.origin;
        let ax = &s.axes;
        for p in [
            o,
            o + ax.x_axis * d as f64,
            o + ax.y_axis * d as f64,
            o + ax.z_axis * d as f64,
        ] {
            out.push((m.transform_point3a(p.as_vec3().into()), w));
        }
    }
}

/// Local tolerances of one joint's three tracks.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LocalTolerance {
    /// Angle in radians.
    pub rotation: f32,
    /// Distance in the parent's space.
    pub translation: f32,
    /// Absolute scale-factor error.
    pub scale: f32,
}
