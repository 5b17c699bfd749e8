//! Key pruning after the layout is chosen (`GltfClip::prune_keys`): interior keys of the
//! channels keyed on their own frames are dropped where the verifier has slack, cheapest
//! first (scored by how far the segment joining a key's neighbours leaves the source), in
//! batches, each kept only if every player rule still holds and the clip costs fewer bytes.

use std::collections::HashMap;

use super::channels::{Channel, Interp, TICKS};
use super::gltf_clip::{GltfClip, GltfOptions};
use super::verify::Splits;
use crate::model::Skeleton;
use crate::settings::Resolved;

/// A key the pruning pass may drop: the channels keyed at exactly these frames (they share
/// one time accessor), the key's index, and how far the segment joining its neighbours would
/// leave the source, as a fraction of the joint's budget (the worst member).
#[derive(Clone, Debug, PartialEq)]
pub struct Removable {
    pub group: Vec<usize>,
    pub key: usize,
    pub score: f32,
}

/// Interior keys of the LINEAR channels keyed on their own frames (not the whole frame
/// grid: there a dropped key would cost a time accessor), grouped by identical key frames
/// so channels sharing a time accessor keep sharing it, scored by the largest distance
/// between the source (`raw`) and the segment that would join the key's neighbours, at the
/// frames between them: rotation angle over `angle_budget[joint]`, translation distance
/// over `move_budget[joint]` (both the joint's whole budget). Sorted by score, lowest first.
pub fn removable_keys(
    channels: &[Channel],
    raw: &crate::model::Clip,
    angle_budget: &[f32],
    move_budget: &[f32],
) -> Vec<Removable> {
    let frames = raw.frame_count;
    let mut groups: Vec<(Vec<u32>, Vec<usize>)> = Vec::new();
    for (i, c) in channels.iter().enumerate() {
        let eligible = c.interp == Interp::Linear
            && c.kind < 2
            && c.ticks.len() >= 3
            && c.ticks.len() < frames
            && c.ticks
                .iter()
                .all(|t| t % TICKS == 0 && ((t / TICKS) as usize) < frames)
            && raw.tracks.get(c.joint).is_some()
            && angle_budget.len() > c.joint
            && move_budget.len() > c.joint;
        if !eligible {
            continue;
        }
        match groups.iter_mut().find(|g| g.0 == c.ticks) {
            Some(g) => g.1.push(i),
            None => groups.push((c.ticks.clone(), vec![i])),
        }
    }
    // Shared with a channel that is not eligible: leave the group alone.
    groups.retain(|(ticks, members)| {
        channels
            .iter()
            .enumerate()
            .all(|(i, c)| &c.ticks != ticks || members.contains(&i))
    });
    let mut out = Vec::new();
    for (ticks, members) in groups {
        for key in 1..ticks.len() - 1 {
            let (f0, f1) = (ticks[key - 1] / TICKS, ticks[key + 1] / TICKS);
            let mut score = 0f32;
            for &m in &members {
                let c = &channels[m];
                let track = &raw.tracks[c.joint];
                let (p0, p1) = (c.values[key - 1], c.values[key + 1]);
                for f in f0 + 1..f1 {
                    let u = (f - f0) as f32 / (f1 - f0) as f32;
                    let s = track.at(f as usize);
                    let d = if c.kind == 1 {
                        let q = glam::Quat::from_vec4(p0)
                            .normalize()
                            .slerp(glam::Quat::from_vec4(p1).normalize(), u);
                        q.angle_between(s.rotation) / angle_budget[c.joint]
                    } else {
                        (p0.lerp(p1, u).truncate() - s.translation).length() / move_budget[c.joint]
                    };
                    score = score.max(if d.is_nan() { f32::INFINITY } else { d });
                }
            }
            out.push(Removable {
                group: members.clone(),
                key,
                score,
            });
        }
    }
    out.sort_by(|a, b| a.score.total_cmp(&b.score));
    out
}

/// The channels without the given keys (at most one of any two neighbours per group, as
/// [`removable_keys`] scored them against their current neighbours).
pub fn without_keys(channels: &[Channel], keys: &[&Removable]) -> Vec<Channel> {
    let mut out = channels.to_vec();
    let mut drop: HashMap<Vec<usize>, Vec<usize>> = HashMap::new();
    for r in keys {
        drop.entry(r.group.clone()).or_default().push(r.key);
    }
    for (group, mut keys) in drop {
        keys.sort_unstable();
        keys.reverse();
        for m in group {
            for &k in &keys {
                out[m].ticks.remove(k);
                out[m].values.remove(k);
            }
        }
    }
    out
}

/// Most verifications [`GltfClip::prune_keys`] spends on one clip (at `fast` effort,
/// [`PRUNE_FITS_FAST`]).
const PRUNE_FITS: usize = 12;
const PRUNE_FITS_FAST: usize = 3;

/// [`GltfClip::prune_keys`] stops after this many verifications in a row that kept nothing
/// (session 19: on the 11 shared sources the later ones gained at most 0.4 % of a clip's
/// animation bytes, and most gained nothing).
const PRUNE_STALL: usize = 4;

impl GltfClip {
    /// A removable key by its channels and its time (stable while other keys go).
    fn key_id(&self, r: &Removable) -> (Vec<usize>, u32) {
        (r.group.clone(), self.channels[r.group[0]].ticks[r.key])
    }

    /// Drops keys the verifier's slack allows: interior keys of channels keyed on their own
    /// frames (channels sharing key times together, so they keep sharing one time accessor),
    /// the keys whose neighbours' segment stays closest to the source first, in batches
    /// (halved when the batch does not hold). A result is kept only when every rule of the
    /// player still holds within the tolerance and it costs less (raw or stored bytes).
    /// Stops after [`PRUNE_STALL`] verifications in a row that kept nothing.
    pub fn prune_keys(
        &mut self,
        skeleton: &Skeleton,
        raw: &crate::model::Clip,
        reference: &crate::metric::Reference,
        settings: &Resolved,
        options: &GltfOptions,
    ) {
        if self.worst_ratio > 1.0 {
            return;
        }
        let limits = &settings.limits;
        // `initial_chords` is a quarter of the angle that moves the farthest marker below by
        // the whole tolerance.
        let angle_budget: Vec<f32> = super::verify::initial_chords(skeleton, limits)
            .into_iter()
            .map(|c| 4.0 * c)
            .collect();
        let move_budget = super::verify::tolerance_in_parent_space(skeleton, limits, 1.0);
        let consecutive = |cs: &[Channel]| {
            cs.iter()
                .any(|c| c.ticks.windows(2).any(|w| w[1] == w[0] + TICKS))
        };
        let had_consecutive = consecutive(&self.channels);
        let rate = self.compressed.sample_rate;
        let cost = |c: &[Channel]| match options.meshopt {
            Some(_) => super::layout::stored_bytes(c, rate),
            None => super::layout::bytes(c),
        };
        let mut batch = usize::MAX;
        let mut fits = 0;
        // Verifications since the last one that kept a result.
        let mut stalled = 0;
        // Keys that did not hold on their own (by channel group and time).
        let mut failed: Vec<(Vec<usize>, u32)> = Vec::new();
        let most = match settings.effort {
            crate::settings::Effort::Fast => PRUNE_FITS_FAST,
            _ => PRUNE_FITS,
        };
        while fits < most && stalled < PRUNE_STALL {
            let all = removable_keys(&self.channels, raw, &angle_budget, &move_budget);
            // One key of any two neighbours in a group (each was scored against its
            // neighbours), and only keys whose segment stays within the joint's budget.
            let mut picked: Vec<&Removable> = Vec::new();
            for r in all
                .iter()
                .filter(|r| r.score < 1.0 && !failed.contains(&self.key_id(r)))
            {
                if !picked
                    .iter()
                    .any(|p| p.group == r.group && p.key.abs_diff(r.key) <= 1)
                {
                    picked.push(r);
                }
            }
            if picked.is_empty() {
                break;
            }
            let n = batch.min(picked.len());
            let mut candidate = without_keys(&self.channels, &picked[..n]);
            let holds = !had_consecutive || consecutive(&candidate);
            let result = holds.then(|| {
                fits += 1;
                super::gltf_clip::fit_layout(
                    &mut candidate,
                    skeleton,
                    raw,
                    reference,
                    &self.compressed,
                    settings,
                    options,
                    Splits::WhereOver,
                    super::verify::SEARCH_ROUNDS,
                    None,
                )
            });
            let c = cost(&candidate);
            if result.is_some() {
                stalled += 1;
            }
            match result {
                Some((e, r)) if r <= 1.0 && c < self.cost => {
                    (self.channels, self.max_error, self.worst_ratio, self.cost) =
                        (candidate, e, r, c);
                    batch = n.saturating_mul(2);
                    stalled = 0;
                }
                _ if n > 1 => batch = n / 2,
                _ => failed.push(self.key_id(picked[0])),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::layout::tests::line;
    use super::*;

    #[test]
    fn removable_keys_are_scored_against_the_source_and_groups_keep_sharing() {
        use crate::model::{Clip, Joint, Skeleton, Transform};
        let skeleton = Skeleton::new(vec![Joint::new("a", None, Transform::IDENTITY)]).unwrap();
        let mut raw = Clip::rest("c", &skeleton, 30.0, 10);
        // The source: a line in x with a bump of 1 at frame 5 (between two keys).
        for f in 0..10 {
            let bump = if f == 5 { 1.0 } else { 0.0 };
            raw.tracks[0].translations[f] = glam::Vec3::new(f as f32, bump, 0.0);
        }
        let mut a = line(&[0, 2, 4, 6, 8, 9]);
        for (v, t) in a.values.iter_mut().zip(&a.ticks) {
            let f = t / TICKS;
            *v = raw.tracks[0].translations[f as usize].extend(0.0);
        }
        let b = a.clone();
        let grid = line(&(0..10).collect::<Vec<u32>>());
        let cs = vec![a, b, grid];
        let keys = removable_keys(&cs, &raw, &[1.0], &[0.5]);
        // Interior keys of the shared group only (the grid channel is not pruned), lowest
        // score first: dropping frame 2 or 8 leaves the line exactly, frame 4 or 6 leaves a
        // segment across frame 5 that misses the bump by 1, twice the budget of 0.5.
        assert!(keys.iter().all(|r| r.group == vec![0, 1]));
        let order: Vec<(usize, f32)> = keys.iter().map(|r| (r.key, r.score)).collect();
        assert_eq!(order.len(), 4);
        assert!(order[0].1 < 1e-6 && order[1].1 < 1e-6, "{order:?}");
        assert!(
            order[2..]
                .iter()
                .all(|&(k, s)| (k == 2 || k == 3) && s > 1.99),
            "{order:?}"
        );
        let pruned = without_keys(&cs, &[&keys[0]]);
        assert_eq!(
            pruned[0].ticks, pruned[1].ticks,
            "the group still shares its key times"
        );
        assert_eq!(pruned[0].ticks.len(), 5);
        assert_eq!(pruned[2], cs[2]);
    }
}
