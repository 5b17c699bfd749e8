//! Where a player can be when a clip starts: any check point of any other clip.
//!
//! A player switching from clip A to clip B whenever gameplay says so (three.js'
//! `AnimationMixer` with a new action, Blender changing the action, an engine's state
//! machine) leaves every property B does not key where A had it at the moment of the switch:
//! A's value at that time (interpolated between A's keys) where A keys it, the rest pose
//! elsewhere. B's own keyed properties overwrite their values at once, so B's error depends
//! on the start state only through the properties A keys and B does not, and only on the
//! joints at or below one of them.
//!
//! [`after_every_stop`] enumerates the start states (not a bound): A stopped at each of its
//! samples and the midpoints between them, the original A for the original and the export
//! as played under each rule for the export; then measures B at each of its samples and
//! midpoints on the joints that state can reach. Start states that agree on those properties are measured once.
//! Properties neither clip keys are at the rest pose (a third clip's leftovers there are not
//! enumerated; see docs/EXPORT.md).

use std::collections::HashSet;

use glam::DAffine3;

use super::channels::{Played, Player, Rule};
use super::gltf_clip::GltfClip;
use super::switch_bound::PointSpreads;
use super::verify::PLAYER_GUARD;
use crate::metric::{JointLimits, PoseSource, marker_error};
use crate::model::{Clip, Skeleton, Transform, local_to_object_f64};

/// Inner points per frame interval at which a previous clip may be stopped, and at which
/// the next clip is measured from each such state: the midpoints (the quarter points of a
/// clip on its own cost four times as much here; docs/EXPORT.md).
pub const STOP_INNER: usize = 1;

/// One clip's poses at its check points (samples, then the inner points by interval): the
/// original, and the export as played under each rule of the player. Per source (original
/// first, then each rule), `points * joints`.
pub struct Sampled {
    /// Number of check points.
    pub points: usize,
    /// Local transforms.
    pub local: Vec<Vec<Transform>>,
    /// Local transforms as matrices.
    pub local_m: Vec<Vec<DAffine3>>,
    /// Object poses from a clean start (the rest pose where the clip keys nothing).
    pub clean: Vec<Vec<DAffine3>>,
    /// The clip's per-point deviations for [`super::switch_bound`], computed once per joint
    /// and kept for every pair the clip is in.
    pub spreads: PointSpreads,
}

impl Sampled {
    /// Samples `raw` and the export `gc` of it at every check point.
    pub fn new(skeleton: &Skeleton, raw: &Clip, gc: &GltfClip, player: Player) -> Self {
        let n = skeleton.len();
        let rest = skeleton.rest_pose();
        let positions = check_points(raw.frame_count);
        let sample = |source: &dyn PoseSource| {
            let mut out = vec![Transform::IDENTITY; positions.len() * n];
            for (p, &f) in positions.iter().enumerate() {
                source.sample_local(f, &mut out[p * n..(p + 1) * n]);
            }
            out
        };
        let mut local = vec![sample(raw)];
        for &rule in start_rules(player) {
            local.push(sample(&Played::with_rule(
                &rest,
                &gc.channels,
                gc.compressed.sample_rate,
                gc.compressed.frame_count,
                rule,
            )));
        }
        Self::from_local(skeleton, positions.len(), local)
    }

    /// A hand-made sampling for tests: `points` check points of an original and two played
    /// sources (0, 1, 2), every joint at its rest pose turned about z by
    /// `angle(point, joint, source)`.
    #[cfg(test)]
    pub fn about_z(
        skeleton: &Skeleton,
        points: usize,
        angle: impl Fn(usize, usize, usize) -> f32,
    ) -> Self {
        let n = skeleton.len();
        let local = (0..3)
            .map(|src| {
                (0..points * n)
                    .map(|i| {
                        let (p, j) = (i / n, i % n);
                        Transform {
                            rotation: glam::Quat::from_rotation_z(angle(p, j, src)),
                            ..skeleton.joints[j].rest
                        }
                    })
                    .collect()
            })
            .collect();
        Self::from_local(skeleton, points, local)
    }

    /// From each source's local transforms at `points` check points (`points` times the
    /// skeleton's joints each): their matrices and the object poses from a clean start.
    pub fn from_local(skeleton: &Skeleton, points: usize, local: Vec<Vec<Transform>>) -> Self {
        let n = skeleton.len();
        let local_m = local
            .iter()
            .map(|l| l.iter().map(Transform::to_daffine).collect())
            .collect();
        let clean = local
            .iter()
            .map(|l| {
                let mut out = vec![DAffine3::IDENTITY; points * n];
                for p in 0..points {
                    let at = p * n..(p + 1) * n;
                    local_to_object_f64(skeleton, &l[at.clone()], &mut out[at]);
                }
                out
            })
            .collect();
        Self {
            points,
            local,
            local_m,
            clean,
            spreads: PointSpreads::default(),
        }
    }
}

impl Sampled {
    /// Per joint, whether any of its sampled local values (any source, any check point)
    /// differs bit for bit from `other`'s; every joint when the two differ in shape.
    pub fn moved_joints(&self, other: &Sampled, n: usize) -> Vec<bool> {
        if self.points != other.points || self.local.len() != other.local.len() {
            return vec![true; n];
        }
        let bits = |t: &Transform| {
            let (tr, r, sc) = (t.translation, t.rotation, t.scale);
            [tr.x, tr.y, tr.z, r.x, r.y, r.z, r.w, sc.x, sc.y, sc.z].map(f32::to_bits)
        };
        let mut moved = vec![false; n];
        for (x, y) in self.local.iter().zip(&other.local) {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                if !moved[i % n] && bits(p) != bits(q) {
                    moved[i % n] = true;
                }
            }
        }
        moved
    }
}

/// The joints whose sampled values [`after_every_stop`] reads for clip `b` started from
/// clip `a`: of a, the joints where a keys a property b does not (the start state); of b,
/// those joints, every joint below them and every joint above them (the parents' poses the
/// affected chains hang from). A clip re-encoded with no sampled value changed on these
/// joints ([`Sampled::moved_joints`]) leaves the pair's measure exactly as it was.
pub fn pair_reads(
    skeleton: &Skeleton,
    keyed: &[Vec<[bool; 3]>],
    a: usize,
    b: usize,
) -> (Vec<bool>, Vec<bool>) {
    let n = skeleton.len();
    let key = |i: usize, j: usize| keyed[i].get(j).copied().unwrap_or([false; 3]);
    let of_a: Vec<bool> = (0..n)
        .map(|j| {
            let (ka, kb) = (key(a, j), key(b, j));
            (0..3).any(|k| ka[k] && !kb[k])
        })
        .collect();
    let set: Vec<usize> = (0..n).filter(|&j| of_a[j]).collect();
    let of_b = (0..n)
        .map(|j| {
            set.iter()
                .any(|&s| skeleton.is_ancestor_or_self(s, j) || skeleton.is_ancestor_or_self(j, s))
        })
        .collect();
    (of_a, of_b)
}

/// The rules a start state is played under: the player's, but [`Rule::RawLimit`] (a key's
/// normalized value where `Raw` shows it as stored: a stop at an instant beside a key, which
/// this enumeration of stops at samples and midpoints leaves out as it leaves out every
/// other instant between them; docs/EXPORT.md).
fn start_rules(player: Player) -> impl Iterator<Item = &'static Rule> {
    player.rules().iter().filter(|&&r| r != Rule::RawLimit)
}

/// Frame positions of a clip's check points: every sample, then [`STOP_INNER`] points
/// inside each interval (as [`crate::metric::Reference::point_positions`] orders them).
fn check_points(frames: usize) -> Vec<f32> {
    let mut out: Vec<f32> = (0..frames).map(|f| f as f32).collect();
    for f in 0..frames.saturating_sub(1) {
        for k in 1..=STOP_INNER {
            out.push(f as f32 + k as f32 / (STOP_INNER + 1) as f32);
        }
    }
    out
}

/// Clip b started from clip a stopped anywhere: per joint of b, the largest error /
/// tolerance; per joint of a whose property the start state sets, the largest such ratio on
/// a joint at or below it (where a's own error may be what b shows).
#[derive(Clone, Debug, PartialEq)]
pub struct AfterStops {
    /// Per joint of b: the largest error / tolerance over every start state of a (exact
    /// where over 1; where at most 1, possibly an upper bound from
    /// [`super::switch_bound`]).
    pub ratio: Vec<f32>,
    /// Per joint of a that the start state sets: the largest `ratio` at or below it.
    pub blame: Vec<f32>,
}

/// Per joint, the largest error / tolerance (tolerance times [`PLAYER_GUARD`]) of clip `b`
/// started from clip `a` stopped at any of its check points, over every rule: `sa` and
/// `sb` are clips a and b sampled ([`Sampled::new`]), `keyed[i]` the properties clip i
/// keys, `limits` clip b's. Zero on joints no start state of `a` reaches (their error is
/// b's own).
pub fn after_every_stop(
    skeleton: &Skeleton,
    sa: &Sampled,
    sb: &Sampled,
    keyed: &[Vec<[bool; 3]>],
    limits: &JointLimits,
    a: usize,
    b: usize,
) -> AfterStops {
    after_every_stop_within(skeleton, sa, sb, keyed, limits, a, b, None)
}

/// A bound on clip b's error / tolerance after clip a stopped at check point `t`, measured
/// at b's check point `q`, split into a's share and b's: per joint slot of
/// [`Held::affected`], at most `a[slot][t] + b[slot][q]` under every rule
/// (`super::switch_bound`).
pub struct Slack {
    /// Per affected joint, per check point of a.
    pub a: Vec<Vec<f32>>,
    /// Per affected joint, per check point of b.
    pub b: Vec<Vec<f32>>,
}

/// [`after_every_stop`], measuring at a's stop `t` and b's point `q` only the joints whose
/// `slack` bound misses the tolerance (and composing only their chains); elsewhere the
/// bound (at most 1) stands for the measure. A ratio over 1 is the enumeration's exactly; a
/// ratio of at most 1 may be the bound.
#[allow(clippy::too_many_arguments)]
pub fn after_every_stop_within(
    skeleton: &Skeleton,
    sa: &Sampled,
    sb: &Sampled,
    keyed: &[Vec<[bool; 3]>],
    limits: &JointLimits,
    a: usize,
    b: usize,
    slack: Option<&Slack>,
) -> AfterStops {
    let n = skeleton.len();
    let mut worst = vec![0.0f32; n];
    let mut blame = vec![0.0f32; n];
    let key = |i: usize, j: usize| keyed[i].get(j).copied().unwrap_or([false; 3]);
    let Held {
        from_a,
        set,
        affected,
    } = Held::new(skeleton, keyed, a, b);
    if !affected.iter().any(|&j| limits.evaluated[j]) {
        return AfterStops {
            ratio: worst,
            blame,
        };
    }
    // Each affected joint's parent: its slot among the affected, or none (then b's own pose).
    let parent_slot: Vec<Option<usize>> = affected
        .iter()
        .map(|&j| {
            skeleton.joints[j]
                .parent
                .and_then(|p| affected.binary_search(&p).ok())
        })
        .collect();
    // Whether an affected joint's local transform mixes a's values with b's keyed ones (then
    // it is built per point of b), or is b's own (a cached matrix), or a's alone with rest.
    let mixed: Vec<bool> = affected
        .iter()
        .map(|&j| {
            let kb = key(b, j);
            from_a[j].iter().any(|&x| x) && (0..3).any(|k| kb[k] && !from_a[j][k])
        })
        .collect();
    let sources = sb.local.len();
    let rest = skeleton.rest_pose();
    let tol: Vec<f64> = (0..n)
        .map(|j| f64::from((limits.tolerance[j] * PLAYER_GUARD).max(1e-12)))
        .collect();
    let mut seen: HashSet<Vec<u32>> = HashSet::new();
    let mut obj = vec![vec![DAffine3::IDENTITY; affected.len()]; sources];
    // Per source, the matrices of the joints a's state sets (where not mixed with b's keys).
    let mut own = vec![vec![DAffine3::IDENTITY; affected.len()]; sources];
    // Per affected joint at the current (t, q): measured, and composed (measured or above one).
    let b_top: Vec<f32> = slack.map_or(Vec::new(), |sl| {
        sl.b.iter()
            .map(|v| v.iter().copied().fold(0.0, f32::max))
            .collect()
    });
    let slots = affected.len();
    let mut need = vec![true; slots];
    let mut compose = vec![true; slots];
    // At the current stop: the slots whose bound may miss at some point of b (all without a
    // bound), and those with every affected joint above them (parents first).
    let mut cand: Vec<usize> = Vec::with_capacity(slots);
    let mut chains: Vec<usize> = Vec::with_capacity(slots);
    let mut on_chain = vec![false; slots];
    let mut state_key = Vec::new();
    for t in 0..sa.points {
        // The start state on the properties that matter; equal states are measured once.
        state_key.clear();
        for &j in &set {
            for src in &sa.local {
                push_bits(&mut state_key, &src[t * n + j], from_a[j]);
            }
        }
        if seen.contains(&state_key) {
            continue;
        }
        seen.insert(state_key.clone());
        // A joint whose bound holds at every point of b needs no point at this stop (its
        // ratio the bound's largest: f32 sums round monotonically, so the same value as the
        // largest over the points); a stop where every joint's does needs none.
        cand.clear();
        match slack {
            Some(sl) => {
                for (i, &j) in affected.iter().enumerate() {
                    let whole = sl.a[i][t] + b_top[i];
                    if whole > 1.0 {
                        cand.push(i);
                    } else {
                        worst[j] = worst[j].max(whole);
                    }
                }
                if cand.is_empty() {
                    continue;
                }
                need.fill(false);
            }
            None => cand.extend(0..slots),
        }
        on_chain.fill(false);
        for &i in &cand {
            let mut at = Some(i);
            while let Some(k) = at.filter(|&k| !on_chain[k]) {
                on_chain[k] = true;
                at = parent_slot[k];
            }
        }
        chains.clear();
        chains.extend((0..slots).filter(|&i| on_chain[i]));
        for (s, own) in own.iter_mut().enumerate() {
            for &i in &chains {
                let j = affected[i];
                if from_a[j].iter().any(|&x| x) && !mixed[i] {
                    let mut l = rest[j];
                    overwrite(&mut l, &sa.local[s][t * n + j], from_a[j]);
                    own[i] = l.to_daffine();
                }
            }
        }
        for q in 0..sb.points {
            if let Some(sl) = slack {
                for &i in &cand {
                    let r = sl.a[i][t] + sl.b[i][q];
                    need[i] = r > 1.0;
                    if !need[i] {
                        worst[affected[i]] = worst[affected[i]].max(r);
                    }
                }
                for &i in &chains {
                    compose[i] = need[i];
                }
                for &i in chains.iter().rev() {
                    if let (true, Some(p)) = (compose[i], parent_slot[i]) {
                        compose[p] = true;
                    }
                }
                if !cand.iter().any(|&i| need[i]) {
                    continue;
                }
            }
            for s in 0..sources {
                let out = &mut obj[s];
                for &i in &chains {
                    if !compose[i] {
                        continue;
                    }
                    let j = affected[i];
                    let m = if mixed[i] {
                        let mut l = sb.local[s][q * n + j];
                        overwrite(&mut l, &sa.local[s][t * n + j], from_a[j]);
                        l.to_daffine()
                    } else if from_a[j].iter().any(|&x| x) {
                        own[s][i]
                    } else {
                        sb.local_m[s][q * n + j]
                    };
                    out[i] = match (parent_slot[i], skeleton.joints[j].parent) {
                        (Some(p), _) => out[p] * m,
                        (None, Some(p)) => sb.clean[s][q * n + p] * m,
                        (None, None) => m,
                    };
                }
            }
            for &i in &cand {
                if !need[i] {
                    continue;
                }
                let j = affected[i];
                let mut err = 0.0f64;
                for s in 1..sources {
                    // A pose an earlier played source also reached has its error already
                    // (rules often agree: at a sample, slerp, nlerp and three.js alike).
                    let repeat = (1..s).any(|r| obj[s][i] == obj[r][i]);
                    if limits.evaluated[j] && !repeat {
                        let e = marker_error(limits, j, &obj[0][i], &obj[s][i]);
                        err = err.max(f64::from(e));
                    }
                }
                worst[j] = worst[j].max((err / tol[j]) as f32);
            }
        }
    }
    for &s in &set {
        blame[s] = affected
            .iter()
            .filter(|&&j| skeleton.is_ancestor_or_self(s, j))
            .map(|&j| worst[j])
            .fold(0.0, f32::max);
    }
    AfterStops {
        ratio: worst,
        blame,
    }
}

/// What clip a's stop state sets when clip b starts.
pub struct Held {
    /// Per joint, the properties (translation, rotation, scale) a keys and b does not.
    pub from_a: Vec<[bool; 3]>,
    /// The joints with any such property, in order.
    pub set: Vec<usize>,
    /// The joints at or below one of them, in order (parents first).
    pub affected: Vec<usize>,
}

impl Held {
    /// The start state clip `a` leaves for clip `b` (`keyed[i]`: what clip i keys).
    pub fn new(skeleton: &Skeleton, keyed: &[Vec<[bool; 3]>], a: usize, b: usize) -> Self {
        let n = skeleton.len();
        let key = |i: usize, j: usize| keyed[i].get(j).copied().unwrap_or([false; 3]);
        let from_a: Vec<[bool; 3]> = (0..n)
            .map(|j| {
                let (ka, kb) = (key(a, j), key(b, j));
                std::array::from_fn(|k| ka[k] && !kb[k])
            })
            .collect();
        let set: Vec<usize> = (0..n).filter(|&j| from_a[j].iter().any(|&x| x)).collect();
        let affected: Vec<usize> = (0..n)
            .filter(|&j| set.iter().any(|&s| skeleton.is_ancestor_or_self(s, j)))
            .collect();
        Self {
            from_a,
            set,
            affected,
        }
    }
}

/// Sets the properties `mask` selects (translation, rotation, scale) of `to` from `from`.
pub(super) fn overwrite(to: &mut Transform, from: &Transform, mask: [bool; 3]) {
    if mask[0] {
        to.translation = from.translation;
    }
    if mask[1] {
        to.rotation = from.rotation;
    }
    if mask[2] {
        to.scale = from.scale;
    }
}

/// Appends the bits of the properties `mask` selects.
fn push_bits(out: &mut Vec<u32>, t: &Transform, mask: [bool; 3]) {
    if mask[0] {
        out.extend(t.translation.to_array().map(f32::to_bits));
    }
    if mask[1] {
        out.extend(t.rotation.to_array().map(f32::to_bits));
    }
    if mask[2] {
        out.extend(t.scale.to_array().map(f32::to_bits));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;
    use glam::Vec3;

    /// 0 root; 1 below 0, 2 below 1; 3 below 0, 4 below 3.
    fn skeleton() -> Skeleton {
        let at = |x: f32| Transform {
            translation: Vec3::new(0.0, x, 0.0),
            ..Transform::IDENTITY
        };
        Skeleton::new(vec![
            Joint::new("0", None, at(0.0)),
            Joint::new("1", Some(0), at(0.3)),
            Joint::new("2", Some(1), at(0.3)),
            Joint::new("3", Some(0), at(0.2)),
            Joint::new("4", Some(3), at(0.2)),
        ])
        .unwrap()
    }

    /// A hand-made sampling: `points` check points, an original and two played sources,
    /// rotations varying with the point, source and joint (`nudge` moved on one joint).
    fn sampled(s: &Skeleton, points: usize, nudge: Option<(usize, f32)>) -> Sampled {
        Sampled::about_z(s, points, |p, j, src| {
            let angle = 0.1 * p as f32 + 0.01 * j as f32 + 0.003 * src as f32;
            match nudge {
                Some((nj, by)) if nj == j && src > 0 => angle + by,
                _ => angle,
            }
        })
    }

    #[test]
    fn a_pair_changes_only_through_the_joints_it_reads() {
        let s = skeleton();
        let (t, f) = (true, false);
        // a keys rotation on 0 and 1; b on 0, 3 and 4: a's start state sets joint 1.
        let keyed = vec![
            vec![[f, t, f], [f, t, f], [f, f, f], [f, f, f], [f, f, f]],
            vec![[f, t, f], [f, f, f], [f, f, f], [f, t, f], [f, t, f]],
        ];
        let (ra, rb) = pair_reads(&s, &keyed, 0, 1);
        assert_eq!(ra, vec![f, t, f, f, f]);
        assert_eq!(rb, vec![t, t, t, f, f]);
        // b started from a: b's 3 and 4 set, read by a at 0, 3 and 4.
        let (ra, rb) = pair_reads(&s, &keyed, 1, 0);
        assert_eq!(ra, vec![f, f, f, t, t]);
        assert_eq!(rb, vec![t, f, f, t, t]);

        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        let (sa, sb) = (sampled(&s, 4, None), sampled(&s, 3, None));
        let base = after_every_stop(&s, &sa, &sb, &keyed, &limits, 0, 1);
        assert!(base.ratio.iter().any(|&r| r > 0.0));
        for j in 0..s.len() {
            // a moved on joint j: the measure changes where the pair reads j (a mutant that
            // kept such a pair would be caught here), and is bit for bit the same elsewhere.
            let a2 = sampled(&s, 4, Some((j, 0.05)));
            let moved = a2.moved_joints(&sa, s.len());
            assert!(moved[j]);
            assert_eq!(moved.iter().filter(|&&x| x).count(), 1);
            let x = after_every_stop(&s, &a2, &sb, &keyed, &limits, 0, 1);
            let (ra, rb) = pair_reads(&s, &keyed, 0, 1);
            assert_eq!(x != base, ra[j], "a moved on {j}");
            // b moved on joint j.
            let b2 = sampled(&s, 3, Some((j, 0.05)));
            let y = after_every_stop(&s, &sa, &b2, &keyed, &limits, 0, 1);
            if !rb[j] {
                assert_eq!(y, base, "b moved on {j}, not read");
            } else if j == 1 {
                // Joint 1 is a's state on b's side: b's own value there is overwritten.
                assert_eq!(y, base);
            } else {
                assert_ne!(y, base, "b moved on {j}, read");
            }
        }
        // A different number of check points moves every joint.
        assert!(
            sampled(&s, 5, None)
                .moved_joints(&sa, s.len())
                .iter()
                .all(|&x| x)
        );
    }
}
