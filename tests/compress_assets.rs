//! Every clip of every shared asset (glTF, BVH, ACL) compresses within its tolerance at every
//! raw sample and midpoint, at the `acl` and `ozz` presets; and on the long ACL regression
//! clips and the 36 glTF clips, smaller than the leading library (ACL 2.1, its defaults).

mod common;

use rayon::prelude::*;
use skelpack::codec::{self, Control};
use skelpack::import;
use skelpack::settings::{Preset, Settings};

fn check_preset(preset: Preset) {
    let failures: Vec<String> = common::all_assets()
        .par_iter()
        .flat_map(|path| {
            let asset = import::load(path).unwrap();
            let settings = Settings::from_preset(preset);
            asset
                .clips
                .iter()
                .filter_map(|clip| {
                    // Measured independently of the compressor's own report.
                    let (c, e, _) = common::compress_measured(&asset, clip, &settings);
                    let ok = e.within_tolerance()
                        && e.midpoints.is_none_or(|m| m.violations == 0)
                        && c.report.contract_met;
                    (!ok).then(|| {
                        format!(
                            "{} '{}': max {} (ratio {})",
                            path.display(),
                            clip.name,
                            e.samples.max,
                            e.samples.worst_ratio
                        )
                    })
                })
                .collect::<Vec<_>>()
        })
        .collect();
    assert!(failures.is_empty(), "{preset:?}: {failures:#?}");
}

#[test]
fn every_clip_within_tolerance_at_acl_preset() {
    check_preset(Preset::Acl);
}

#[test]
fn every_clip_within_tolerance_at_ozz_preset() {
    check_preset(Preset::Ozz);
}

fn payload(file: &str) -> u64 {
    let asset = import::load(&common::asset(file)).unwrap();
    let settings = Settings::from_preset(Preset::Acl);
    asset
        .clips
        .par_iter()
        .map(|clip| {
            let c = common::compress(&asset, clip, &settings);
            assert!(c.report.contract_met, "{file} '{}'", clip.name);
            c.report.payload_bytes
        })
        .sum()
}

#[test]
fn smaller_than_acl_on_its_long_regression_clips() {
    // ACL 2.1 defaults (0.01 cm at 3 cm markers), figures from issue 3.
    for (file, acl) in [
        ("acl/104_30.acl.sjson", 24_377),
        ("acl/13_07.acl.sjson", 17_917),
        ("acl/49_15.acl.sjson", 12_122),
        ("acl/81_18.acl.sjson", 18_863),
    ] {
        let ours = payload(file);
        assert!(ours < acl, "{file}: {ours} B vs ACL {acl} B");
    }
}

#[test]
fn smaller_than_acl_on_the_36_gltf_clips() {
    let files = [
        "CesiumMan.glb",
        "Fox.glb",
        "RiggedFigure.glb",
        "RiggedSimple.glb",
        "SimpleSkin.gltf",
        "KayKit_Med_General.glb",
        "RobotExpressive.glb",
    ];
    let total: u64 = files.iter().map(|f| payload(f)).sum();
    assert!(total < 111_550, "{total} B vs ACL 111,550 B");
}

#[test]
fn report_lists_every_kept_key_in_insertion_order() {
    let asset = import::load(&common::asset("CesiumMan.glb")).unwrap();
    let clip = &asset.clips[0];
    let c = codec::compress(
        &asset.skeleton,
        clip,
        &Settings::from_preset(Preset::Acl).resolve(&asset, &clip.name),
        &Control::new(),
    )
    .unwrap();
    let mut animated = 0;
    for (t, r) in c.tracks.iter().flatten().zip(&c.report.tracks) {
        if let codec::TrackData::Animated(a) = t {
            animated += 1;
            assert_eq!(r.insert_order, a.insert_order);
            assert_eq!(
                r.insert_order[..2],
                [0, clip.frame_count as u32 - 1],
                "end keys first"
            );
            let mut sorted = r.insert_order.clone();
            sorted.sort_unstable();
            assert_eq!(sorted, a.curve.frames, "a permutation of the kept keys");
        }
    }
    assert!(animated > 0);

    // Per joint, the tracks' keys and bits add up to the clip's.
    let costs = c.report.joint_costs(&asset.skeleton);
    assert_eq!(
        costs.iter().map(|j| j.keys).sum::<usize>(),
        c.report.keys_kept
    );
    assert_eq!(
        costs.iter().map(|j| j.animated_tracks).sum::<usize>(),
        animated
    );
    let bits: u64 = costs.iter().map(|j| j.bits).sum();
    assert!(bits > 0 && bits.div_ceil(8) <= c.report.payload_bytes);
    for (j, cost) in costs.iter().enumerate() {
        let tracks: u64 = c
            .report
            .tracks
            .iter()
            .filter(|t| t.joint == asset.skeleton.joints[j].name)
            .map(|t| t.bits)
            .sum();
        assert_eq!(cost.bits, tracks);
    }
}
