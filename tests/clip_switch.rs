//! Clip switching: every clip of a glTF export holds its tolerance when played right after
//! any other clip without a reset of the pose (properties it does not key keep the previous
//! clip's values), not only from the rest pose. RobotExpressive's Death leaves the head far
//! from the neck, which Walking keys: compressed for Walking's own lever arms, the neck
//! misses by several times the tolerance after Death.

mod common;

use skelpack::codec::Control;
use skelpack::export::clip_switch::{hold_switches, switch_ratios};
use skelpack::export::{FileKeyed, GltfDoc, GltfOptions, encode_for_gltf, keyed_channels};
use skelpack::import;
use skelpack::settings::{Preset, Resolved, Settings};

#[test]
fn every_clip_holds_after_every_other_clip() {
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
    let mut clips: Vec<_> = asset
        .clips
        .iter()
        .enumerate()
        .map(|(i, c)| {
            encode_for_gltf(sk, c, &resolved[i], &control, &options, Some(file.of(i))).unwrap()
        })
        .collect();
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
        &options,
        &control,
    )
    .unwrap();
    assert!(after.iter().all(|&r| r <= 1.0), "{after:?}");
    assert!(worst(&clips) <= 1.0);
    assert!(
        clips.iter().all(|c| c.worst_ratio <= 1.0),
        "each clip alone still holds"
    );
}
