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
//! property it leaves set for the next, until every pair holds.

use super::channels::Player;
use super::gltf_compressed::{GltfClip, GltfOptions, encode_for_gltf};
use super::start_states::{AfterStops, Sampled, after_every_stop};
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
    let mut pairs = Pairs::default();
    pairs.update(skeleton, raws, keyed, clips, limits, player, None);
    pairs.report(skeleton.len())
}

/// Every clip sampled and every ordered pair (a, b) measured ([`after_every_stop`]), kept
/// between rounds so that only the pairs of re-encoded clips are measured again.
#[derive(Default)]
struct Pairs {
    sampled: Vec<Sampled>,
    /// `[b][a]`.
    after: Vec<Vec<AfterStops>>,
}

impl Pairs {
    /// Samples and measures again the clips `changed` says (every clip when `None`), and
    /// every pair one of them is in.
    #[allow(clippy::too_many_arguments)]
    fn update(
        &mut self,
        skeleton: &Skeleton,
        raws: &[Clip],
        keyed: &[Vec<[bool; 3]>],
        clips: &[GltfClip],
        limits: &[JointLimits],
        player: Player,
        changed: Option<&[bool]>,
    ) {
        use rayon::prelude::*;
        let n = skeleton.len();
        let changed = |i: usize| changed.is_none_or(|c| c[i]);
        let fresh: Vec<Option<Sampled>> = (0..clips.len())
            .into_par_iter()
            .map(|i| changed(i).then(|| Sampled::new(skeleton, &raws[i], &clips[i], player)))
            .collect();
        if self.sampled.len() != clips.len() {
            self.sampled = fresh.into_iter().map(|s| s.expect("all sampled")).collect();
        } else {
            for (i, s) in fresh.into_iter().enumerate() {
                if let Some(s) = s {
                    self.sampled[i] = s;
                }
            }
        }
        let sampled = &self.sampled;
        let redo: Vec<Vec<Option<AfterStops>>> = (0..clips.len())
            .into_par_iter()
            .map(|b| {
                (0..clips.len())
                    .map(|a| {
                        (changed(a) || changed(b)).then(|| {
                            if a == b {
                                AfterStops {
                                    ratio: vec![0.0; n],
                                    blame: vec![0.0; n],
                                }
                            } else {
                                after_every_stop(skeleton, sampled, keyed, &limits[b], a, b)
                            }
                        })
                    })
                    .collect()
            })
            .collect();
        if self.after.len() != clips.len() {
            self.after = redo
                .into_iter()
                .map(|row| row.into_iter().map(|x| x.expect("all measured")).collect())
                .collect();
        } else {
            for (b, row) in redo.into_iter().enumerate() {
                for (a, x) in row.into_iter().enumerate() {
                    if let Some(x) = x {
                        self.after[b][a] = x;
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
            for (a, r) in row.iter().enumerate() {
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
) -> Result<Vec<f32>, crate::codec::CodecError> {
    let limits: Vec<JointLimits> = resolved.iter().map(|r| r.limits.clone()).collect();
    let mut tightened: Vec<Resolved> = encoded_with.to_vec();
    let file = super::gltf_compressed::FileKeyed::new(keyed.to_vec());
    if clips.len() < 2 {
        return Ok(vec![0.0; clips.len()]);
    }
    let mut pairs = Pairs::default();
    pairs.update(skeleton, raws, keyed, clips, &limits, options.player, None);
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
                    let keyed_i = Some(file.of(i));
                    encode_for_gltf(skeleton, &raws[i], &tightened[i], control, options, keyed_i)
                })
                .collect::<Result<_, _>>()?
        };
        let mut changed = vec![false; clips.len()];
        for (&i, c) in failing.iter().zip(encoded) {
            clips[i] = c;
            changed[i] = true;
        }
        pairs.update(
            skeleton,
            raws,
            keyed,
            clips,
            &limits,
            options.player,
            Some(&changed),
        );
        (ratios, blame) = pairs.report(skeleton.len());
    }
    Ok(ratios
        .iter()
        .map(|r| r.iter().copied().fold(0.0, f32::max))
        .collect())
}
