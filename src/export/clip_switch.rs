//! Clip switching: a player that does not reset the pose between clips (Blender, many
//! engines) leaves every property the next clip does not key where the previous clip left
//! it. A joint whose own track was compressed for the lever arms of its clip can then carry a
//! much longer arm (RobotExpressive's Death moves the head far from the neck; Walking keys the
//! neck but not the head), and an error within tolerance in the clip alone becomes visible
//! after the switch.
//!
//! [`hold_switches`] plays every clip B after every other clip A, the original and the
//! export alike, measures B under every rule of the player, and recompresses a clip that
//! misses its tolerance after some other clip with tighter tolerances on the joints that
//! miss, until it holds.

use super::channels::{Played, Player};
use super::gltf_compressed::{GltfClip, GltfOptions, encode_for_gltf};
use super::verify::PLAYER_GUARD;
use crate::metric::{JointLimits, PoseSource, Reference, measure};
use crate::model::{Clip, Skeleton, Transform};
use crate::settings::Resolved;

/// Rounds of tightening before a clip is reported as it is.
const MAX_ROUNDS: usize = 6;

/// What a clip's properties are when another clip has just ended: the previous clip's last
/// values where it keys them, the rest pose elsewhere.
fn end_pose(skeleton: &Skeleton, keyed: &[[bool; 3]], last: &[Transform]) -> Vec<Transform> {
    skeleton
        .joints
        .iter()
        .enumerate()
        .map(|(j, joint)| {
            let k = keyed.get(j).copied().unwrap_or([false; 3]);
            let mut t = joint.rest;
            if k[0] {
                t.translation = last[j].translation;
            }
            if k[1] {
                t.rotation = last[j].rotation;
            }
            if k[2] {
                t.scale = last[j].scale;
            }
            t
        })
        .collect()
}

/// A clip as played after another: its own keyed properties, the context's elsewhere.
struct InContext<'a> {
    clip: &'a dyn PoseSource,
    keyed: &'a [[bool; 3]],
    context: &'a [Transform],
}

impl PoseSource for InContext<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        self.clip.sample_local(frame, out);
        for (j, o) in out.iter_mut().enumerate() {
            let k = self.keyed.get(j).copied().unwrap_or([false; 3]);
            let c = self.context[j];
            if !k[0] {
                o.translation = c.translation;
            }
            if !k[1] {
                o.rotation = c.rotation;
            }
            if !k[2] {
                o.scale = c.scale;
            }
        }
    }
}

/// The last pose of a pose source over `frames` frames.
fn last_pose(source: &dyn PoseSource, joints: usize, frames: usize) -> Vec<Transform> {
    let mut out = vec![Transform::IDENTITY; joints];
    source.sample_local(frames.saturating_sub(1) as f32, &mut out);
    out
}

/// Per clip B and joint, the largest error / tolerance of B played after any other clip,
/// over the player's rules (1 = at the tolerance). `keyed[i]` says which properties clip i
/// keys.
pub fn switch_ratios(
    skeleton: &Skeleton,
    raws: &[Clip],
    keyed: &[Vec<[bool; 3]>],
    clips: &[GltfClip],
    limits: &[JointLimits],
    player: Player,
) -> Vec<Vec<f32>> {
    let n = skeleton.len();
    let rest: Vec<Transform> = skeleton.joints.iter().map(|j| j.rest).collect();
    // Where each clip leaves the pose: the original's last sample, the export as played.
    let ends: Vec<(Vec<Transform>, Vec<Vec<Transform>>)> = clips
        .iter()
        .zip(raws)
        .zip(keyed)
        .map(|((gc, raw), k)| {
            let original = end_pose(skeleton, k, &last_pose(raw, n, raw.frame_count));
            let exported = player
                .rules()
                .iter()
                .map(|&rule| {
                    let played = Played::with_rule(
                        &rest,
                        &gc.channels,
                        gc.compressed.sample_rate,
                        gc.compressed.frame_count,
                        rule,
                    );
                    end_pose(skeleton, k, &last_pose(&played, n, raw.frame_count))
                })
                .collect();
            (original, exported)
        })
        .collect();
    (0..clips.len())
        .map(|b| {
            let mut worst = vec![0.0f32; n];
            let raw = &raws[b];
            let gc = &clips[b];
            for a in (0..clips.len()).filter(|&a| a != b) {
                let (original_end, exported_ends) = &ends[a];
                let reference = InContext {
                    clip: raw,
                    keyed: &keyed[b],
                    context: original_end,
                };
                let reference =
                    Reference::with_inner_points(skeleton, &reference, raw.frame_count, 3);
                for (r, &rule) in player.rules().iter().enumerate() {
                    let played = Played::with_rule(
                        &exported_ends[r],
                        &gc.channels,
                        gc.compressed.sample_rate,
                        gc.compressed.frame_count,
                        rule,
                    );
                    let e = measure(skeleton, &reference, &played, &limits[b], true);
                    for (j, w) in worst.iter_mut().enumerate() {
                        if limits[b].evaluated[j] {
                            let tol = (limits[b].tolerance[j] * PLAYER_GUARD).max(1e-12);
                            *w = w.max(e.joint_max[j] / tol);
                        }
                    }
                }
            }
            worst
        })
        .collect()
}

/// Recompresses (with `encode`) every clip that misses its tolerance when played after
/// another clip, tightening the tolerance of its joints that miss by the amount they miss
/// (and a margin), until every clip holds or [`MAX_ROUNDS`] pass. Returns the worst ratio
/// after switching per clip.
#[allow(clippy::too_many_arguments)]
pub fn hold_switches(
    skeleton: &Skeleton,
    raws: &[Clip],
    keyed: &[Vec<[bool; 3]>],
    clips: &mut [GltfClip],
    resolved: &[Resolved],
    options: &GltfOptions,
    control: &crate::codec::Control,
) -> Result<Vec<f32>, crate::codec::CodecError> {
    let limits: Vec<JointLimits> = resolved.iter().map(|r| r.limits.clone()).collect();
    let mut tightened: Vec<Resolved> = resolved.to_vec();
    let file = super::gltf_compressed::FileKeyed::new(keyed.to_vec());
    let mut ratios = switch_ratios(skeleton, raws, keyed, clips, &limits, options.player);
    if clips.len() < 2 {
        return Ok(vec![0.0; clips.len()]);
    }
    for _ in 0..MAX_ROUNDS {
        let failing: Vec<usize> = (0..clips.len())
            .filter(|&b| ratios[b].iter().any(|&r| r > 1.0))
            .collect();
        if failing.is_empty() {
            break;
        }
        for &b in &failing {
            for (j, &r) in ratios[b].iter().enumerate() {
                if r > 1.0 {
                    tightened[b].limits.tolerance[j] /= r * 1.25;
                }
            }
            let keyed_b = Some(file.of(b));
            clips[b] =
                encode_for_gltf(skeleton, &raws[b], &tightened[b], control, options, keyed_b)?;
        }
        ratios = switch_ratios(skeleton, raws, keyed, clips, &limits, options.player);
    }
    Ok(ratios
        .iter()
        .map(|r| r.iter().copied().fold(0.0, f32::max))
        .collect())
}
