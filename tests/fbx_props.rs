//! Custom (user-defined) animated float properties of FBX nodes as scalar tracks (issue 26;
//! import/fbx_props.rs), held to an explicit tolerance from the settings
//! (`[curves."NODE.PROPERTY"] tolerance`), decoded by the runtime within it against ufbx's
//! own evaluation of the property. The file is a small ASCII FBX written here: one bone
//! `Hand` with a user-defined `Grip` (Number, animatable + user) keyed linearly 0 → 1 → 0.25
//! over one second at 30 fps, and a user `Label` string that is not a curve.

mod common;
use common::player::skelpack_ok;

use std::path::{Path, PathBuf};

use serde_json::Value;
use skelpack::import::{self, fbx};
use skelpack_runtime::Skp;

/// FBX time units per second.
const KTIME: i64 = 46_186_158_000;

fn write_fbx(dir: &Path) -> PathBuf {
    let text = format!(
        r#"; FBX 7.4.0 project file
FBXHeaderExtension:  {{
	FBXHeaderVersion: 1003
	FBXVersion: 7400
	Creator: "skelpack tests/fbx_props.rs"
}}
GlobalSettings:  {{
	Version: 1000
	Properties70:  {{
		P: "UpAxis", "int", "Integer", "",1
		P: "UpAxisSign", "int", "Integer", "",1
		P: "FrontAxis", "int", "Integer", "",2
		P: "FrontAxisSign", "int", "Integer", "",1
		P: "CoordAxis", "int", "Integer", "",0
		P: "CoordAxisSign", "int", "Integer", "",1
		P: "UnitScaleFactor", "double", "Number", "",100
		P: "TimeMode", "enum", "", "",6
		P: "TimeSpanStart", "KTime", "Time", "",0
		P: "TimeSpanStop", "KTime", "Time", "",{end}
	}}
}}
Objects:  {{
	NodeAttribute: 1001, "NodeAttribute::Hand", "LimbNode" {{
		TypeFlags: "Skeleton"
	}}
	Model: 1000, "Model::Hand", "LimbNode" {{
		Version: 232
		Properties70:  {{
			P: "Lcl Translation", "Lcl Translation", "", "A",0,1,0
			P: "Grip", "Number", "", "A+U",0
			P: "Label", "KString", "", "U", "left"
		}}
	}}
	AnimationStack: 2000, "AnimStack::Take 001", "" {{
		Properties70:  {{
			P: "LocalStart", "KTime", "Time", "",0
			P: "LocalStop", "KTime", "Time", "",{end}
		}}
	}}
	AnimationLayer: 2001, "AnimLayer::BaseLayer", "" {{
	}}
	AnimationCurveNode: 2002, "AnimCurveNode::Grip", "" {{
		Properties70:  {{
			P: "d|Grip", "Number", "", "A",0
		}}
	}}
	AnimationCurve: 2003, "AnimCurve::", "" {{
		Default: 0
		KeyVer: 4009
		KeyTime: *3 {{
			a: 0,{half},{end}
		}}
		KeyValueFloat: *3 {{
			a: 0,1,0.25
		}}
		KeyAttrFlags: *1 {{
			a: 4
		}}
		KeyAttrDataFloat: *4 {{
			a: 0,0,0,0
		}}
		KeyAttrRefCount: *1 {{
			a: 3
		}}
	}}
}}
Connections:  {{
	C: "OO",1000,0
	C: "OO",1001,1000
	C: "OO",2001,2000
	C: "OO",2002,2001
	C: "OP",2002,1000, "Grip"
	C: "OP",2003,2002, "d|Grip"
}}
"#,
        end = KTIME,
        half = KTIME / 2
    );
    let path = dir.join("grip.fbx");
    std::fs::write(&path, text).unwrap();
    path
}

/// ufbx's value of `Hand`'s `Grip` at frame `f` (30 fps) of the file's take.
fn ufbx_grip(scene: &ufbx::Scene, f: f64) -> f64 {
    let stack = &scene.anim_stacks[0];
    let node = scene
        .nodes
        .iter()
        .find(|n| n.element.name.as_ref() == "Hand")
        .unwrap();
    let t = stack.time_begin + f / scene.settings.frames_per_second;
    ufbx::evaluate_prop(&stack.anim, &node.element, "Grip", t)
        .value_vec4
        .x
}

/// Compresses `fbx` to a `.skp` (with `settings`, if any) and returns (kept keys, the worst
/// difference of the runtime's `Hand.Grip` from ufbx's at every frame and midpoint).
fn compress(fbx_path: &Path, dir: &Path, settings: Option<&str>) -> (usize, f64) {
    let skp_path = dir.join("grip.skp");
    let mut args = vec!["compress", "--json"];
    let settings_path = dir.join("grip.toml");
    if let Some(s) = settings {
        std::fs::write(&settings_path, s).unwrap();
        args.extend(["--settings", settings_path.to_str().unwrap()]);
    }
    args.push("-o");
    let out = skelpack_ok(&args, &[&skp_path, fbx_path]);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["clips"][0]["scalar_tracks"], 1, "{report}");
    let bytes = std::fs::read(&skp_path).unwrap();
    let skp = Skp::open(bytes.as_slice()).unwrap();
    let c = skp.find_clip("Take 001").unwrap();
    let i = skp.find_scalar_track(c, "Hand.Grip").unwrap();
    assert_eq!(skp.scalar_track(c, i), ("Hand.Grip", 1));
    let scene = fbx::load_scene(&std::fs::read(fbx_path).unwrap()).unwrap();
    let frames = skp.clip(c).frame_count() as usize;
    let mut worst = 0.0f64;
    let mut w = [0.0f32];
    for half in 0..2 * frames - 1 {
        let f = half as f64 / 2.0;
        skp.sample_scalar_track(c, i, f as f32, &mut w);
        worst = worst.max((w[0] as f64 - ufbx_grip(&scene, f)).abs());
    }
    (skp.clip_meta(c).scalar_tracks[i].keys, worst)
}

#[test]
fn a_user_property_is_a_scalar_track_as_ufbx_evaluates_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_fbx(dir.path());
    let asset = import::load(&path).unwrap();
    assert_eq!(asset.clips.len(), 1);
    let clip = &asset.clips[0];
    assert_eq!(clip.frame_count, 31);
    // The string property is not a curve; the number is, with no geometry to move.
    assert_eq!(clip.scalar_tracks.len(), 1);
    let track = &clip.scalar_tracks[0];
    assert_eq!((track.name.as_str(), track.targets), ("Hand.Grip", 1));
    assert_eq!(track.reach, [0.0]);
    let scene = fbx::load_scene(&std::fs::read(&path).unwrap()).unwrap();
    for f in 0..clip.frame_count {
        let expected = ufbx_grip(&scene, f as f64);
        assert!(
            (track.values[f] as f64 - expected).abs() < 1e-6,
            "frame {f}: {} against ufbx's {expected}",
            track.values[f]
        );
    }
    assert_eq!(track.values[15], 1.0, "the middle key");
    let out = skelpack_ok(&["inspect", "--json"], &[&path]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(info[0]["clips"][0]["scalar_tracks"], 1);
    assert_eq!(info[0]["clips"][0]["morph_weight_channels"], 0);
}

#[test]
fn the_curves_tolerance_bounds_the_decoded_property_and_buys_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = write_fbx(dir.path());
    // Without a tolerance the values are held exactly (weight_tolerance defaults to 0).
    let (exact_keys, exact_error) = compress(&path, dir.path(), None);
    assert!(exact_error < 1e-6, "{exact_error}");
    // With one, the ramp and the fall keep their three corners, within it.
    let tolerance = 1e-3;
    let (keys, error) = compress(
        &path,
        dir.path(),
        Some(&format!(
            "[curves.\"Hand.Grip\"]\ntolerance = {tolerance}\n"
        )),
    );
    println!("Hand.Grip: {exact_keys} keys held exactly, {keys} within {tolerance}");
    assert!(error <= tolerance, "{error}");
    assert!(keys <= 3, "{keys} keys for a linear 0 -> 1 -> 0.25");
    assert!(keys <= exact_keys);
    // A tolerance for a curve that does not exist changes nothing; a negative one is refused.
    let (other_keys, _) = compress(
        &path,
        dir.path(),
        Some("[curves.\"Hand.Other\"]\ntolerance = 0.5\n"),
    );
    assert_eq!(other_keys, exact_keys);
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[curves.\"Hand.Grip\"]\ntolerance = -1\n").unwrap();
    let run = common::player::skelpack(
        &["compress", "--settings", bad.to_str().unwrap(), "-o"],
        &[&dir.path().join("x.skp"), &path],
    );
    assert!(!run.status.success());
    let err = String::from_utf8_lossy(&run.stderr);
    assert!(err.contains("tolerance"), "{err}");
}

#[test]
fn ozz_robots_user_channels_are_scalar_tracks_as_ufbx_evaluates_them() {
    // ozz-animation's user-channel sample: a boolean `grasp` on the thumb and an integer
    // `lock_orientation` on the aim target, both user-defined and animated.
    let path = common::asset("fbx").join("ozz_robot.fbx");
    let asset = import::load(&path).unwrap();
    let clip = &asset.clips[0];
    let names: Vec<&str> = clip.scalar_tracks.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names.len(), 2, "{names:?}");
    assert!(names.contains(&"thumb2.grasp"), "{names:?}");
    assert!(names.contains(&"target.lock_orientation"), "{names:?}");
    let scene = fbx::load_scene(&std::fs::read(&path).unwrap()).unwrap();
    let stack = &scene.anim_stacks[0];
    for track in &clip.scalar_tracks {
        let (node, prop) = track.name.split_once('.').unwrap();
        let node = scene
            .nodes
            .iter()
            .find(|n| n.element.name.as_ref() == node)
            .unwrap();
        let mut distinct = std::collections::BTreeSet::new();
        for f in 0..clip.frame_count {
            let t = stack.time_begin + f as f64 / scene.settings.frames_per_second;
            let v = ufbx::evaluate_prop(&stack.anim, &node.element, prop, t)
                .value_vec4
                .x;
            assert_eq!(track.values[f] as f64, v, "{} frame {f}", track.name);
            distinct.insert(track.values[f].to_bits());
        }
        assert!(distinct.len() >= 2, "{}: the channel changes", track.name);
    }
    // Held exactly (no tolerance set): the runtime gives the same values at every frame.
    let dir = tempfile::tempdir().unwrap();
    let skp_path = dir.path().join("robot.skp");
    skelpack_ok(&["compress", "-o"], &[&skp_path, &path]);
    let bytes = std::fs::read(&skp_path).unwrap();
    let skp = Skp::open(bytes.as_slice()).unwrap();
    let c = skp.find_clip(&clip.name).unwrap();
    for track in &clip.scalar_tracks {
        let i = skp.find_scalar_track(c, &track.name).unwrap();
        let mut w = [0.0f32];
        for f in 0..clip.frame_count {
            skp.sample_scalar_track(c, i, f as f32, &mut w);
            assert!(
                (w[0] - track.values[f]).abs() < 1e-6,
                "{} frame {f}",
                track.name
            );
        }
        let keys = skp.clip_meta(c).scalar_tracks[i].keys;
        println!("{}: {keys} keys of {}", track.name, clip.frame_count);
        assert!(keys < clip.frame_count / 4, "{}: {keys} keys", track.name);
    }
}
