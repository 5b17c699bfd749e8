//! Clip switching: a player that does not reset the pose between clips (Blender, many
//! engines) leaves every property the next clip does not key where the previous clip left
//! it. A joint whose own track was compressed for the lever arms of its clip can then carry a
//! much longer arm (RobotExpressive's Death moves the head far from the neck; Walking keys the
//! neck but not the head), and an error within tolerance in the clip alone becomes visible
//! after the switch.
//!
//! [`hold_switches`] plays every clip B after every other clip A stopped at any of its
//! samples and midpoints (not only its end: players switch whenever gameplay says so;
//! [`super::start_states`]), the original and the export alike, measures B under every rule
//! of the player, and recompresses, with tighter tolerances on the joints that miss, a clip
//! that misses its tolerance after some other clip, and a clip whose own error shows below a
//! property it leaves set for the next, until every pair holds. A pair whose proven bound
//! ([`super::switch_bound`]) holds the tolerance is not enumerated; a ratio over 1 is always
//! the enumeration's.

use super::channels::Player;
use super::clip_memo::encode_for_gltf_memo;
use super::clip_memo::{ClipMemo, MemoKey, clip_state_key, pair_key};
use super::gltf_clip::{ClipToEncode, GltfClip, GltfOptions};
use super::start_states::{AfterStops, Sampled, pair_reads};
use super::switch_bound::measure_pair;
use crate::metric::JointLimits;
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// Rounds of tightening before a clip is reported as it is.
const MAX_ROUNDS: usize = 6;

/// Per clip B and joint, the largest error / tolerance of B started while any other clip
/// was playing (stopped at any of its check points, [`super::start_states`]), over the
/// player's rules (1 = at the tolerance). `keyed[i]` says which properties clip i keys.
pub fn switch_ratios(
    skeleton: &Skeleton,
    raws: &[Clip],
    keyed: &[Vec<[bool; 3]>],
    clips: &[GltfClip],
    limits: &[JointLimits],
    player: Player,
) -> Vec<Vec<f32>> {
    switch_report(skeleton, raws, keyed, clips, limits, player).0
}

/// [`switch_ratios`], and per clip A and joint the worst ratio of any clip B on joints below
/// a property A leaves set when it stops (A's own error there is part of what B shows).
fn switch_report(
    skeleton: &Skeleton,
    raws: &[Clip],
    keyed: &[Vec<[bool; 3]>],
    clips: &[GltfClip],
    limits: &[JointLimits],
    player: Player,
) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
    let at = Inputs {
        skeleton,
        raws,
        keyed,
        clips,
        limits,
        resolved: None,
        player,
    };
    let mut pairs = Pairs::new(keyed, clips.len());
    pairs.update(&at, None, None);
    pairs.report(skeleton.len())
}

/// Which ordered pairs of clips need measuring. A clip b started after a clip a shows what a
/// left set only on the properties a keys and b does not; where b keys everything a keys
/// (clips exported with the same channels, as most libraries are) b's start overwrites the
/// whole state and the pair holds as b holds alone. Clips are grouped by the properties
/// they key, and the relation is decided once per pair of groups, so a file of 10,000 clips
/// keying the same channels costs nothing here, and its memory does not grow with the
/// square of its clips.
struct Reach {
    /// Per clip b, the clips a (in order) whose stop states b can show.
    partners: Vec<Vec<usize>>,
}

impl Reach {
    fn new(keyed: &[Vec<[bool; 3]>], clips: usize) -> Self {
        use std::collections::HashMap;
        let mut groups: HashMap<&[[bool; 3]], usize> = HashMap::new();
        let mut signatures: Vec<&[[bool; 3]]> = Vec::new();
        let mut members: Vec<Vec<usize>> = Vec::new();
        let mut group_of = Vec::with_capacity(clips);
        for i in 0..clips {
            let sig: &[[bool; 3]] = keyed.get(i).map_or(&[], |k| k.as_slice());
            let g = *groups.entry(sig).or_insert_with(|| {
                signatures.push(sig);
                members.push(Vec::new());
                signatures.len() - 1
            });
            members[g].push(i);
            group_of.push(g);
        }
        // `leaves[ga][gb]`: a clip of group ga keys a property a clip of group gb does not.
        let key = |sig: &[[bool; 3]], j: usize| sig.get(j).copied().unwrap_or([false; 3]);
        let leaves: Vec<Vec<bool>> = signatures
            .iter()
            .map(|&sa| {
                signatures
                    .iter()
                    .map(|&sb| {
                        (0..sa.len().max(sb.len()))
                            .any(|j| (0..3).any(|k| key(sa, j)[k] && !key(sb, j)[k]))
                    })
                    .collect()
            })
            .collect();
        let partners = (0..clips)
            .map(|b| {
                let gb = group_of[b];
                let mut from: Vec<usize> = (0..members.len())
                    .filter(|&ga| leaves[ga][gb])
                    .flat_map(|ga| members[ga].iter().copied())
                    .collect();
                from.sort_unstable();
                from
            })
            .collect();
        Self { partners }
    }

    /// Whether clip `i` is in any pair that needs measuring.
    fn involved(&self) -> Vec<bool> {
        let mut out: Vec<bool> = self.partners.iter().map(|p| !p.is_empty()).collect();
        for p in &self.partners {
            for &a in p {
                out[a] = true;
            }
        }
        out
    }
}

/// Every clip in a pair sampled, and every pair that needs it measured
/// ([`measure_pair`]), kept between rounds so that only the pairs of re-encoded clips are
/// measured again (and, with a memo, only the pairs it does not hold: a clip is sampled only
/// when one of its pairs is measured).
struct Pairs {
    reach: Reach,
    involved: Vec<bool>,
    /// Per clip, its samples once a pair of it was measured (dropped when it changes).
    sampled: Vec<Option<Sampled>>,
    /// Per clip b, the measure after each of `reach.partners[b]`.
    after: Vec<Vec<AfterStops>>,
    /// Pairs of a re-encoded clip kept without measuring (no joint they read moved).
    kept: usize,
    /// Pairs measured by their bound ([`measure_pair`]), and by enumeration.
    bounded: usize,
    enumerated: usize,
}

/// A clip in no pair: never read.
fn unsampled() -> Sampled {
    Sampled {
        points: 0,
        local: Vec::new(),
        local_m: Vec::new(),
        clean: Vec::new(),
        spreads: Default::default(),
    }
}

/// What [`Pairs::update`] measures clips with.
struct Inputs<'a> {
    skeleton: &'a Skeleton,
    raws: &'a [Clip],
    keyed: &'a [Vec<[bool; 3]>],
    clips: &'a [GltfClip],
    /// Per clip, the limits it is verified against as clip b.
    limits: &'a [JointLimits],
    /// The settings those limits come from (for the memo's keys; no memo without them).
    resolved: Option<&'a [Resolved]>,
    player: Player,
}

impl Pairs {
    fn new(keyed: &[Vec<[bool; 3]>], clips: usize) -> Self {
        let reach = Reach::new(keyed, clips);
        Self {
            involved: reach.involved(),
            reach,
            sampled: Vec::new(),
            after: Vec::new(),
            kept: 0,
            bounded: 0,
            enumerated: 0,
        }
    }

    /// Measures again every pair one of the clips `changed` says is in (every pair when
    /// `None`), taking from `memo` the pairs it holds and giving it the others.
    fn update(&mut self, at: &Inputs<'_>, changed: Option<&[bool]>, memo: Option<&ClipMemo>) {
        use rayon::prelude::*;
        let m = at.clips.len();
        let first = self.after.len() != m;
        let changed = |i: usize| first || changed.is_none_or(|c| c[i]);
        if first {
            self.sampled = (0..m).map(|_| None).collect();
        }
        // A changed clip whose pairs were measured is sampled again at once and compared,
        // joint by joint, with the samples they were measured from: a pair reading none of
        // its moved joints keeps its measure ([`pair_reads`]).
        let n = at.skeleton.len();
        let old: Vec<Option<Sampled>> = (0..m)
            .map(|i| {
                if changed(i) {
                    self.sampled[i]
                        .take()
                        .filter(|_| !first && self.involved[i])
                } else {
                    None
                }
            })
            .collect();
        let resampled: Vec<Option<(Sampled, Vec<bool>)>> = old
            .par_iter()
            .enumerate()
            .map(|(i, o)| {
                o.as_ref().map(|o| {
                    let s = Sampled::new(at.skeleton, &at.raws[i], &at.clips[i], at.player);
                    let moved = s.moved_joints(o, n);
                    (s, moved)
                })
            })
            .collect();
        let mut moved: Vec<Option<Vec<bool>>> = vec![None; m];
        for (i, r) in resampled.into_iter().enumerate() {
            if let Some((s, mv)) = r {
                self.sampled[i] = Some(s);
                moved[i] = Some(mv);
            }
        }
        // Whether clip i changed none of the joints `reads` says the pair reads of it.
        let still = |i: usize, reads: &[bool]| {
            !changed(i)
                || moved[i]
                    .as_ref()
                    .is_some_and(|mv| !mv.iter().zip(reads).any(|(&x, &r)| x && r))
        };
        // The pairs to measure, by clip b and slot: from the memo where it has them.
        let states: Option<Vec<MemoKey>> = memo.zip(at.resolved).map(|(_, resolved)| {
            (0..m)
                .into_par_iter()
                .map(|i| {
                    if self.involved[i] {
                        clip_state_key(
                            at.skeleton,
                            &at.raws[i],
                            &resolved[i],
                            &at.keyed[i],
                            at.player,
                            &at.clips[i],
                        )
                    } else {
                        [0; 32]
                    }
                })
                .collect()
        });
        let partners = &self.reach.partners;
        let mut found: Vec<Vec<Option<AfterStops>>> = (0..m)
            .map(|b| partners[b].iter().map(|_| None).collect())
            .collect();
        let mut todo: Vec<(usize, usize)> = Vec::new();
        for b in 0..m {
            for (slot, &a) in partners[b].iter().enumerate() {
                if !(changed(a) || changed(b)) {
                    continue;
                }
                if !first {
                    let (ra, rb) = pair_reads(at.skeleton, at.keyed, a, b);
                    if still(a, &ra) && still(b, &rb) {
                        // The same samples on every joint the measure reads: the same measure.
                        if let (Some(memo), Some(st)) = (memo, &states) {
                            memo.put_pair(pair_key(&st[a], &st[b]), &self.after[b][slot]);
                        }
                        self.kept += 1;
                        continue;
                    }
                }
                let hit = match (memo, &states) {
                    (Some(memo), Some(st)) => memo.pair(&pair_key(&st[a], &st[b])),
                    _ => None,
                };
                match hit {
                    Some(h) => found[b][slot] = Some(h),
                    None => todo.push((b, slot)),
                }
            }
        }
        // Sample the clips of the pairs left to measure (each once).
        let mut need = vec![false; m];
        for &(b, slot) in &todo {
            need[b] = true;
            need[partners[b][slot]] = true;
        }
        let fresh: Vec<Option<Sampled>> = (0..m)
            .into_par_iter()
            .map(|i| {
                (need[i] && self.sampled[i].is_none()).then(|| {
                    if self.involved[i] {
                        Sampled::new(at.skeleton, &at.raws[i], &at.clips[i], at.player)
                    } else {
                        unsampled()
                    }
                })
            })
            .collect();
        for (i, s) in fresh.into_iter().enumerate() {
            if let Some(s) = s {
                self.sampled[i] = Some(s);
            }
        }
        let sampled = &self.sampled;
        let measured: Vec<(AfterStops, bool)> = todo
            .par_iter()
            .map(|&(b, slot)| {
                let a = partners[b][slot];
                let (sa, sb) = (
                    sampled[a].as_ref().expect("sampled"),
                    sampled[b].as_ref().expect("sampled"),
                );
                measure_pair(at.skeleton, sa, sb, at.keyed, &at.limits[b], a, b)
            })
            .collect();
        for (&(b, slot), (x, bounded)) in todo.iter().zip(measured) {
            self.bounded += usize::from(bounded);
            self.enumerated += usize::from(!bounded);
            if let (Some(memo), Some(st)) = (memo, &states) {
                memo.put_pair(pair_key(&st[partners[b][slot]], &st[b]), &x);
            }
            found[b][slot] = Some(x);
        }
        if first {
            self.after = found
                .into_iter()
                .map(|row| row.into_iter().map(|x| x.expect("all measured")).collect())
                .collect();
        } else {
            for (b, row) in found.into_iter().enumerate() {
                for (slot, x) in row.into_iter().enumerate() {
                    if let Some(x) = x {
                        self.after[b][slot] = x;
                    }
                }
            }
        }
    }

    /// Per clip, the worst ratio per joint after any other clip, and the blame it carries.
    fn report(&self, n: usize) -> (Vec<Vec<f32>>, Vec<Vec<f32>>) {
        let m = self.after.len();
        let mut ratios = vec![vec![0.0f32; n]; m];
        let mut blame = vec![vec![0.0f32; n]; m];
        for (b, row) in self.after.iter().enumerate() {
            for (&a, r) in self.reach.partners[b].iter().zip(row) {
                for j in 0..n {
                    ratios[b][j] = ratios[b][j].max(r.ratio[j]);
                    blame[a][j] = blame[a][j].max(r.blame[j]);
                }
            }
        }
        (ratios, blame)
    }
}

/// Recompresses (with `encode`) every clip that misses its tolerance when played after
/// another clip, tightening the tolerance of its joints that miss by the amount they miss
/// (and a margin), until every clip holds or [`MAX_ROUNDS`] pass. Clips are verified
/// against `resolved`, and a clip is re-encoded from the limits it was encoded with,
/// `encoded_with[i]` (a tighter preset's where the export kept that clip): re-encoding it
/// from the looser `resolved` would make it worse than the clip it replaces and break the
/// pairs it held with the others. Returns the worst ratio after switching per clip.
/// With `memo`, the re-encodings at tightened tolerances and the measures of pairs whose
/// clips it has seen are taken from it (and given to it): the result is the same.
#[allow(clippy::too_many_arguments)]
pub fn hold_switches(
    skeleton: &Skeleton,
    raws: &[Clip],
    keyed: &[Vec<[bool; 3]>],
    clips: &mut [GltfClip],
    resolved: &[Resolved],
    encoded_with: &[Resolved],
    options: &GltfOptions,
    control: &crate::codec::Control,
    memo: Option<&ClipMemo>,
) -> Result<Vec<f32>, crate::codec::CodecError> {
    let limits: Vec<JointLimits> = resolved.iter().map(|r| r.limits.clone()).collect();
    let mut tightened: Vec<Resolved> = encoded_with.to_vec();
    let file = super::gltf_clip::FileKeyed::new(keyed.to_vec());
    if clips.len() < 2 {
        return Ok(vec![0.0; clips.len()]);
    }
    // What the pair measures read; each update sets the clips as they stand.
    let fixed = Inputs {
        skeleton,
        raws,
        keyed,
        clips: &[],
        limits: &limits,
        resolved: Some(resolved),
        player: options.player,
    };
    let mut pairs = Pairs::new(keyed, clips.len());
    pairs.update(&Inputs { clips, ..fixed }, None, memo);
    let (mut ratios, mut blame) = pairs.report(skeleton.len());
    for _ in 0..MAX_ROUNDS {
        // A clip is tightened where it misses after another clip, and where another clip
        // misses below a property it leaves set when stopped (its own error there shows).
        let failing: Vec<usize> = (0..clips.len())
            .filter(|&i| ratios[i].iter().chain(&blame[i]).any(|&r| r > 1.0))
            .collect();
        if failing.is_empty() {
            break;
        }
        let encoded: Vec<GltfClip> = {
            use rayon::prelude::*;
            for &i in &failing {
                for (j, (&r, &g)) in ratios[i].iter().zip(&blame[i]).enumerate() {
                    let r = r.max(g);
                    if r > 1.0 {
                        tightened[i].limits.tolerance[j] /= r * 1.25;
                    }
                }
            }
            failing
                .par_iter()
                .map(|&i| {
                    let clip = ClipToEncode {
                        skeleton,
                        raw: &raws[i],
                        settings: &tightened[i],
                        control,
                        options,
                        keyed: Some(file.of(i)),
                    };
                    encode_for_gltf_memo(memo, &clip, Some(clips[i].tolerance_factor))
                })
                .collect::<Result<_, _>>()?
        };
        let mut changed = vec![false; clips.len()];
        for (&i, c) in failing.iter().zip(encoded) {
            clips[i] = c;
            changed[i] = true;
        }
        pairs.update(&Inputs { clips, ..fixed }, Some(&changed), memo);
        (ratios, blame) = pairs.report(skeleton.len());
    }
    if std::env::var_os("SKELPACK_TRACE_PASSES").is_some() {
        eprintln!(
            "hold_switches: {} pairs of re-encoded clips kept unmeasured, {} bounded, {} enumerated",
            pairs.kept, pairs.bounded, pairs.enumerated
        );
    }
    Ok(ratios
        .iter()
        .map(|r| r.iter().copied().fold(0.0, f32::max))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::Reach;

    #[test]
    fn only_clips_that_leave_a_property_unkeyed_reach_another() {
        let (t, f) = (true, false);
        // 0 and 1 key the same; 2 keys less (a joint's rotation only); 3 keys more.
        let full = vec![[t, t, f], [f, t, f]];
        let keyed = vec![
            full.clone(),
            full.clone(),
            vec![[f, t, f], [f, t, f]],
            vec![[t, t, t], [f, t, f], [f, t, f]],
        ];
        let reach = Reach::new(&keyed, 4);
        // b = 0, 1, 2 show what 3 leaves (its scale, its third joint); 2 also what 0 and 1
        // leave (the first joint's translation); 3 keys everything the others do.
        assert_eq!(
            reach.partners,
            vec![vec![3], vec![3], vec![0, 1, 3], vec![]]
        );
        assert_eq!(reach.involved(), vec![true; 4]);
        // Ten thousand clips keying the same: no pair at all.
        let same = vec![full; 10_000];
        let reach = Reach::new(&same, same.len());
        assert!(reach.partners.iter().all(Vec::is_empty));
        assert!(!reach.involved().iter().any(|&x| x));
    }
}
