//! Efforts (`--effort fast|default|max`): every clip of every shared asset within tolerance
//! at samples and midpoints at each effort, measured independently of the compressor's own
//! report; `fast` no larger than ACL 2.1 on its clips and near the default everywhere; `max`
//! never larger than the default; the default's first pass is the repaired clip, then the
//! first relaxation sweeps; the fast effort's is its own repaired clip.

mod common;

use rayon::prelude::*;
use skelpack::codec::{self, Control, Recompressor};
use skelpack::import;
use skelpack::settings::{Effort, Preset, Settings};

fn at(preset: Preset, effort: Effort) -> Settings {
    Settings {
        effort,
        ..Settings::from_preset(preset)
    }
}

/// Per clip of every shared asset: (file, clip, payload bytes at `fast`, `default`, `max`),
/// each checked within tolerance.
fn payloads(preset: Preset) -> Vec<(String, String, [u64; 3])> {
    common::all_assets()
        .par_iter()
        .flat_map(|path| {
            let asset = import::load(path).unwrap();
            asset
                .clips
                .iter()
                .map(|clip| {
                    let bytes = Effort::ALL.map(|effort| {
                        let (c, e, _) =
                            common::compress_measured(&asset, clip, &at(preset, effort));
                        assert!(
                            e.within_tolerance()
                                && e.midpoints.is_none_or(|m| m.violations == 0)
                                && c.report.contract_met,
                            "{} '{}' at {effort:?}: max {} (ratio {})",
                            path.display(),
                            clip.name,
                            e.samples.max,
                            e.samples.worst_ratio
                        );
                        c.report.payload_bytes
                    });
                    (path.display().to_string(), clip.name.clone(), bytes)
                })
                .collect::<Vec<_>>()
        })
        .collect()
}

/// `fast` gives up at most this much size against the default on any clip. It skips the
/// later relaxation sweeps and all but one refinement sweep (at 0.6 of the tolerance
/// reached): ozz_robot.fbx's Take 001 at the acl preset is the farthest, 4,116 B against
/// 3,126 B (+32 %): its arm holds values for runs of frames, bit-identical since session
/// 14's FBX import takes ufbx's locals as they are, and the default's refinement sweeps at
/// ×0.8–×0.4 keep those repeats, which the value prediction codes in few bits
/// (docs/COMPRESSION.md, "Effort"). With fast's one sweep at ×1 it was 4,724 B (+51 %).
const FAST_OVER_DEFAULT: f64 = 1.5;

fn check_efforts(preset: Preset) {
    for (file, clip, [fast, default, max]) in payloads(preset) {
        assert!(
            max <= default,
            "{file} '{clip}': max {max} B > default {default} B"
        );
        assert!(
            fast as f64 <= default as f64 * FAST_OVER_DEFAULT,
            "{file} '{clip}': fast {fast} B vs default {default} B"
        );
    }
}

#[test]
fn every_effort_within_tolerance_at_acl_preset() {
    check_efforts(Preset::Acl);
}

#[test]
fn every_effort_within_tolerance_at_ozz_preset() {
    check_efforts(Preset::Ozz);
}

#[test]
fn fast_no_larger_than_acl_on_its_clips() {
    // ACL 2.1 at its defaults: `compressed_size` of `acl_compressor -acl=CLIP -stats=S`
    // (../shared/tools/acl), the same bytes issue 3's figures give for the long clips.
    for (file, acl) in [
        ("acl/09_02.acl.sjson", 3_523),
        ("acl/09_02_multi_root.acl.sjson", 3_357),
        ("acl/09_02_with_zero_scale.acl.sjson", 3_666),
        ("acl/104_30.acl.sjson", 24_377),
        ("acl/121_10.acl.sjson", 1_147),
        ("acl/13_07.acl.sjson", 17_917),
        ("acl/49_15.acl.sjson", 12_122),
        ("acl/81_18.acl.sjson", 18_863),
        ("acl/93_01_zero_range_extent.acl.sjson", 1_734),
    ] {
        let asset = import::load(&common::asset(file)).unwrap();
        let ours: u64 = asset
            .clips
            .iter()
            .map(|clip| {
                let c = common::compress(&asset, clip, &at(Preset::Acl, Effort::Fast));
                assert!(c.report.contract_met, "{file}");
                c.report.payload_bytes
            })
            .sum();
        assert!(ours <= acl, "{file}: fast {ours} B vs ACL {acl} B");
    }
}

#[test]
fn fast_smaller_than_acl_on_the_36_gltf_clips() {
    // The figure of tests/compress_assets.rs (ACL 2.1 defaults, issue 3).
    let files = [
        "CesiumMan.glb",
        "Fox.glb",
        "RiggedFigure.glb",
        "RiggedSimple.glb",
        "SimpleSkin.gltf",
        "KayKit_Med_General.glb",
        "RobotExpressive.glb",
    ];
    let total: u64 = files
        .par_iter()
        .map(|f| {
            let asset = import::load(&common::asset(f)).unwrap();
            asset
                .clips
                .iter()
                .map(|clip| {
                    let c = common::compress(&asset, clip, &at(Preset::Acl, Effort::Fast));
                    assert!(c.report.contract_met, "{f} '{}'", clip.name);
                    c.report.payload_bytes
                })
                .sum::<u64>()
        })
        .sum();
    assert!(total < 111_550, "fast: {total} B vs ACL 111,550 B");
}

#[test]
fn the_first_pass_is_the_repaired_clip_then_the_first_sweeps_at_the_default() {
    let asset = import::load(&common::asset("acl/13_07.acl.sjson")).unwrap();
    let clip = &asset.clips[0];
    let resolve = |effort| at(Preset::Acl, effort).resolve(&asset, &clip.name);
    let fast = codec::compress(
        &asset.skeleton,
        clip,
        &resolve(Effort::Fast),
        &Control::new(),
    )
    .unwrap();
    let previews = |effort| {
        let mut shown = Vec::new();
        let mut keep = |c: codec::CompressedClip, _: &_, _: &_| shown.push(c);
        let last = Recompressor::new()
            .compress_progressive(
                &asset.skeleton,
                clip,
                &resolve(effort),
                &Control::new(),
                Some(&mut keep),
            )
            .unwrap();
        (shown, last)
    };
    let (shown, default) = previews(Effort::Default);
    // The repaired clip at once (tracks at 4 times their budgets, repaired), then the first
    // two relaxation sweeps before the default searches on.
    assert_eq!(shown.len(), 2, "previews at the default effort");
    let (repaired, relaxed) = (&shown[0], &shown[1]);
    assert!(shown.iter().all(|c| c.report.contract_met));
    assert!(relaxed.report.payload_bytes < repaired.report.payload_bytes);
    // The fast effort's settled clip is no larger than that preview (on 13_07); the
    // default searches on from it.
    assert!(fast.report.payload_bytes <= relaxed.report.payload_bytes);
    assert!(default.report.payload_bytes <= relaxed.report.payload_bytes);
    assert!(fast.report.contract_met);
    // The fast effort shows its repaired clip only (its tracks start where the default's
    // do, at 4 times their budgets), and its settle pass shrinks it.
    let (shown, last) = previews(Effort::Fast);
    assert_eq!(shown.len(), 1, "previews at the fast effort");
    assert!(shown[0].report.contract_met);
    assert!(last.report.payload_bytes < shown[0].report.payload_bytes);
    assert_eq!(last.report.payload_bytes, fast.report.payload_bytes);
}

/// A compressed glTF at `fast` effort (the edit loop's export, `skelpack watch`'s first
/// write): every animation within tolerance as animeval measures it independently (the
/// portable players' rules, physical markers), on a glTF source, a BVH capture converted
/// to a scene, and the default character; and near the default effort's size.
#[test]
fn a_fast_gltf_export_holds_the_tolerance_as_animeval_measures_it() {
    let dir = tempfile::tempdir().unwrap();
    let character =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/default_character.glb");
    for src in [
        common::asset("CesiumMan.glb"),
        common::asset("pirouette.bvh"),
        character,
    ] {
        let name = src.file_stem().unwrap().to_string_lossy().into_owned();
        let export = |effort: &str| {
            let out = dir.path().join(format!("{name}_{effort}.glb"));
            let run = common::player::skelpack_ok(
                &["compress", "--effort", effort, "--json", "-o"],
                &[&out, &src],
            );
            let report: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
            (out, report)
        };
        let (fast, report) = export("fast");
        let (default, _) = export("default");
        let (fb, db) = (
            std::fs::metadata(&fast).unwrap().len() as f64,
            std::fs::metadata(&default).unwrap().len() as f64,
        );
        assert!(
            fb <= db * 1.10,
            "{name}: fast {fb} B against default {db} B"
        );
        let tolerance = report[0]["tolerance"].as_f64().unwrap();
        let shell = report[0]["marker_offset"].as_f64().unwrap() as f32;
        // A converted source's reference is its own scene (`convert`), in metres.
        let original = if src.extension().is_some_and(|e| e == "bvh") {
            let scene = dir.path().join(format!("{name}_scene.glb"));
            common::player::skelpack_ok(&["convert"], &[&src, &scene]);
            scene
        } else {
            src.clone()
        };
        let Some(eval) = common::animeval_portable(&original, &fast, shell) else {
            return;
        };
        for a in eval["animations"].as_array().unwrap() {
            let max = a["error"]["max"].as_f64().unwrap();
            assert!(
                max <= tolerance * 1.001,
                "{name} {}: {max} over {tolerance}",
                a["name"]
            );
        }
    }
}

/// The app compresses at `fast` first, then at the effort in force, on one
/// `Recompressor`: the fast effort's encoder states (recorded down to 4 times the budgets,
/// where the default records down to the budgets) leave the default's result what a fresh
/// default compression gives, track for track; and the other way round.
#[test]
fn a_default_after_a_fast_one_is_the_default_own() {
    for file in ["acl/13_07.acl.sjson", "CesiumMan.glb", "fbx/ozz_robot.fbx"] {
        let asset = import::load(&common::asset(file)).unwrap();
        let clip = &asset.clips[0];
        let resolve = |effort| at(Preset::Acl, effort).resolve(&asset, &clip.name);
        let fresh = |effort| {
            codec::compress(&asset.skeleton, clip, &resolve(effort), &Control::new()).unwrap()
        };
        for (first, then) in [
            (Effort::Fast, Effort::Default),
            (Effort::Default, Effort::Fast),
        ] {
            let mut r = Recompressor::new();
            let a = r
                .compress(&asset.skeleton, clip, &resolve(first), &Control::new())
                .unwrap();
            let b = r
                .compress(&asset.skeleton, clip, &resolve(then), &Control::new())
                .unwrap();
            let (fa, fb) = (fresh(first), fresh(then));
            assert!(a.tracks == fa.tracks, "{file}: {first:?} first");
            assert!(b.tracks == fb.tracks, "{file}: {then:?} after {first:?}");
            assert_eq!(b.report.payload_bytes, fb.report.payload_bytes, "{file}");
        }
    }
}
