//! Clip switching: every clip of a glTF export holds its tolerance when played right after
//! any other clip without a reset of the pose (properties it does not key keep the previous
//! clip's values), not only from the rest pose. RobotExpressive's Death leaves the head far
//! from the neck, which Walking keys: compressed for Walking's own lever arms, the neck
//! misses by several times the tolerance after Death.

mod common;

use skelpack::codec::Control;
use skelpack::export::channels::Played;
use skelpack::export::clip_switch::{hold_switches, switch_ratios};
use skelpack::export::start_states::{Held, Sampled, after_every_stop, after_every_stop_within};
use skelpack::export::switch_bound::pair_slack;
use skelpack::export::{
    FileKeyed, GltfClip, GltfDoc, GltfOptions, encode_for_gltf, keyed_channels,
};
use skelpack::import;
use skelpack::metric::{PoseSource, Reference, measure};
use skelpack::model::Transform;
use skelpack::settings::{Preset, Resolved, Settings};

/// RobotExpressive at the acl preset, each clip encoded for glTF on its own (before any
/// switch is checked): the asset, which properties each clip keys, each clip's resolved
/// settings and its encoding.
struct Robot {
    asset: import::Asset,
    keyed: Vec<Vec<[bool; 3]>>,
    resolved: Vec<Resolved>,
    clips: Vec<GltfClip>,
    options: GltfOptions,
    control: Control,
}

fn robot() -> Robot {
    let path = common::asset("RobotExpressive.glb");
    let asset = import::load(&path).unwrap();
    let doc = GltfDoc::from_bytes(&path, &std::fs::read(&path).unwrap()).unwrap();
    let settings = Settings::from_preset(Preset::Acl);
    let options = GltfOptions::default();
    let sk = &asset.skeleton;
    let keyed: Vec<Vec<[bool; 3]>> = (0..asset.clips.len())
        .map(|i| keyed_channels(&doc, i, sk))
        .collect();
    let resolved: Vec<Resolved> = asset
        .clips
        .iter()
        .map(|c| settings.resolve(&asset, &c.name))
        .collect();
    let file = FileKeyed::new(keyed.clone());
    let control = Control::new();
    let clips = asset
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| {
            encode_for_gltf(sk, c, &resolved[i], &control, &options, Some(file.of(i))).unwrap()
        })
        .collect();
    Robot {
        asset,
        keyed,
        resolved,
        clips,
        options,
        control,
    }
}

#[test]
fn every_clip_holds_after_every_other_clip() {
    let Robot {
        asset,
        keyed,
        resolved,
        mut clips,
        options,
        control,
    } = robot();
    let sk = &asset.skeleton;
    let limits: Vec<_> = resolved.iter().map(|r| r.limits.clone()).collect();
    let worst = |clips: &[_]| {
        switch_ratios(sk, &asset.clips, &keyed, clips, &limits, options.player)
            .iter()
            .map(|r| r.iter().copied().fold(0.0f32, f32::max))
            .fold(0.0f32, f32::max)
    };
    // Each clip alone holds, yet some clip misses after another.
    assert!(clips.iter().all(|c| c.worst_ratio <= 1.0));
    let before = worst(&clips);
    assert!(before > 1.5, "switching already held ({before})");
    let after = hold_switches(
        sk,
        &asset.clips,
        &keyed,
        &mut clips,
        &resolved,
        &resolved,
        &options,
        &control,
        None,
    )
    .unwrap();
    assert!(after.iter().all(|&r| r <= 1.0), "{after:?}");
    assert!(worst(&clips) <= 1.0);
    assert!(
        clips.iter().all(|c| c.worst_ratio <= 1.0),
        "each clip alone still holds"
    );
}

/// A clip played from a start state: its own keyed properties, the state's elsewhere.
struct FromState<'a> {
    clip: &'a dyn PoseSource,
    keyed: &'a [[bool; 3]],
    state: &'a [Transform],
}

impl PoseSource for FromState<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        self.clip.sample_local(frame, out);
        for (j, o) in out.iter_mut().enumerate() {
            let k = self.keyed[j];
            let s = self.state[j];
            if !k[0] {
                o.translation = s.translation;
            }
            if !k[1] {
                o.rotation = s.rotation;
            }
            if !k[2] {
                o.scale = s.scale;
            }
        }
    }
}

/// Issue 24 item 1: players switch clips whenever gameplay says so. Clip A is stopped at
/// 25, 50 and 75 % of its length (between frames where that falls between them), then clip B
/// plays on the same pose; the export (played under every portable rule) must stay within
/// B's tolerance of the original doing the same, at B's samples and midpoints. Measured here
/// with the plain metric, independently of `switch_ratios`.
#[test]
fn every_clip_holds_when_started_while_another_is_mid_clip() {
    let Robot {
        asset,
        keyed,
        resolved,
        mut clips,
        options,
        control,
    } = robot();
    let sk = &asset.skeleton;
    hold_switches(
        sk,
        &asset.clips,
        &keyed,
        &mut clips,
        &resolved,
        &resolved,
        &options,
        &control,
        None,
    )
    .unwrap();
    let rest: Vec<Transform> = sk.joints.iter().map(|j| j.rest).collect();
    let n = sk.len();
    let mut worst = (0.0f32, String::new());
    for (a, clip_a) in asset.clips.iter().enumerate() {
        for b in (0..asset.clips.len()).filter(|&b| b != a) {
            for stop in [0.25f32, 0.5, 0.75] {
                let t = stop * (clip_a.frame_count - 1) as f32;
                // Where A leaves each property: its value at t where it keys it, rest elsewhere.
                let state = |source: &dyn PoseSource| {
                    let mut s = vec![Transform::IDENTITY; n];
                    source.sample_local(t, &mut s);
                    for (j, x) in s.iter_mut().enumerate() {
                        let k = keyed[a][j];
                        let r = rest[j];
                        if !k[0] {
                            x.translation = r.translation;
                        }
                        if !k[1] {
                            x.rotation = r.rotation;
                        }
                        if !k[2] {
                            x.scale = r.scale;
                        }
                    }
                    s
                };
                let original_state = state(clip_a);
                let raw_b = &asset.clips[b];
                let reference = Reference::new(
                    sk,
                    &FromState {
                        clip: raw_b,
                        keyed: &keyed[b],
                        state: &original_state,
                    },
                    raw_b.frame_count,
                );
                for &rule in options.player.rules() {
                    let (ga, gb) = (&clips[a], &clips[b]);
                    let played = |gc: &GltfClip| {
                        Played::with_rule(
                            &rest,
                            &gc.channels,
                            gc.compressed.sample_rate,
                            gc.compressed.frame_count,
                            rule,
                        )
                    };
                    let export_state = state(&played(ga));
                    let played_b = played(gb);
                    let candidate = FromState {
                        clip: &played_b,
                        keyed: &keyed[b],
                        state: &export_state,
                    };
                    let e = measure(sk, &reference, &candidate, &resolved[b].limits, true);
                    for j in 0..n {
                        if !resolved[b].limits.evaluated[j] {
                            continue;
                        }
                        let ratio = e.joint_max[j] / resolved[b].limits.tolerance[j];
                        if ratio > worst.0 {
                            worst = (
                                ratio,
                                format!(
                                    "{} after {} stopped at {stop}, {:?}, {}",
                                    raw_b.name, clip_a.name, rule, sk.joints[j].name
                                ),
                            );
                        }
                    }
                }
            }
        }
    }
    eprintln!(
        "worst mid-clip switch: {:.4} x tolerance ({})",
        worst.0, worst.1
    );
    assert!(worst.0 <= 1.0, "{:.4} x tolerance: {}", worst.0, worst.1);
}

/// Sampled `s` at check points `points` only (every source).
fn at_points(s: &Sampled, n: usize, points: &[usize]) -> Sampled {
    fn pick<T: Copy>(v: &[Vec<T>], n: usize, points: &[usize]) -> Vec<Vec<T>> {
        v.iter()
            .map(|src| {
                points
                    .iter()
                    .flat_map(|&p| src[p * n..(p + 1) * n].iter().copied())
                    .collect()
            })
            .collect()
    }
    Sampled {
        points: points.len(),
        local: pick(&s.local, n, points),
        local_m: pick(&s.local_m, n, points),
        clean: pick(&s.clean, n, points),
        spreads: Default::default(),
    }
}

/// The clip-switch bound (`switch_bound`) on every ordered pair of RobotExpressive's clips
/// as encoded alone (some miss after a switch): never below the enumerated error, per joint
/// and pair, and per stop of a and point of b; a pair measured through it
/// (`after_every_stop_within`) keeps every ratio over 1 exactly and none below the
/// enumeration's.
#[test]
fn the_switch_bound_is_never_below_the_enumerated_error() {
    let Robot {
        asset,
        keyed,
        resolved,
        clips,
        options,
        ..
    } = robot();
    let sk = &asset.skeleton;
    let n = sk.len();
    let sampled: Vec<Sampled> = clips
        .iter()
        .enumerate()
        .map(|(i, c)| Sampled::new(sk, &asset.clips[i], c, options.player))
        .collect();
    let (mut covered, mut fits, mut misses, mut over) = (0, 0, 0, 0);
    for a in 0..clips.len() {
        for b in (0..clips.len()).filter(|&b| b != a) {
            let held = Held::new(sk, &keyed, a, b);
            if held.set.is_empty() {
                continue;
            }
            let limits = &resolved[b].limits;
            let (sa, sb) = (&sampled[a], &sampled[b]);
            let exact = after_every_stop(sk, sa, sb, &keyed, limits, a, b);
            let Some(slack) = pair_slack(sk, sa, sb, &keyed, limits, a, b) else {
                continue;
            };
            covered += 1;
            let top = |v: &[f32]| v.iter().copied().fold(0.0f32, f32::max);
            let mut all_fit = true;
            for (slot, &j) in held.affected.iter().enumerate() {
                let bound = top(&slack.a[slot]) + top(&slack.b[slot]);
                all_fit &= bound <= 1.0;
                assert!(
                    bound >= exact.ratio[j],
                    "{} after {}, joint {}: bound {bound} < enumerated {}",
                    asset.clips[b].name,
                    asset.clips[a].name,
                    sk.joints[j].name,
                    exact.ratio[j]
                );
            }
            if all_fit {
                fits += 1;
            } else {
                misses += 1;
            }
            let within = after_every_stop_within(sk, sa, sb, &keyed, limits, a, b, Some(&slack));
            for j in 0..n {
                assert!(within.ratio[j] >= exact.ratio[j], "joint {j}");
                if exact.ratio[j] > 1.0 {
                    over += 1;
                    assert_eq!(within.ratio[j], exact.ratio[j], "joint {j}");
                }
            }
            // Per stop and point: a's stop t and b's point q alone.
            for (t, q) in [
                (0, 0),
                (sa.points / 3, sb.points / 2),
                (sa.points - 1, sb.points - 1),
            ] {
                let (pa, pb) = (at_points(sa, n, &[t]), at_points(sb, n, &[q]));
                let one = after_every_stop(sk, &pa, &pb, &keyed, limits, a, b);
                let sl = pair_slack(sk, &pa, &pb, &keyed, limits, a, b).expect("covered");
                for (slot, &j) in held.affected.iter().enumerate() {
                    let bound = sl.a[slot][0] + sl.b[slot][0];
                    assert!(bound >= one.ratio[j], "stop {t}, point {q}, joint {j}");
                    assert!(slack.a[slot][t] >= sl.a[slot][0] * 0.999_999);
                }
            }
        }
    }
    eprintln!(
        "pairs covered {covered}: bound fits {fits}, misses {misses}; {over} joint ratios over 1"
    );
    assert!(fits > 0 && misses > 0 && over > 0, "{fits} {misses} {over}");
}
