//! Settings sidecars: round trips (TOML and JSON), strict validation with the field path and
//! line, unknown names reported, atomic writes, and the CLI reading them.

mod common;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

use skelpack::import;
use skelpack::settings::{
    Bits, ClipSettings, EditScope, JointEdit, JointSettings, Method, Preset, Settings,
};

fn sample() -> Settings {
    let mut joints = BTreeMap::new();
    joints.insert(
        "RightHand".to_owned(),
        JointSettings {
            tolerance_mm: Some(0.05),
            marker_offset_cm: Some(10.0),
            pinned: Some(true),
        },
    );
    let mut clip_joints = BTreeMap::new();
    clip_joints.insert(
        "Head".to_owned(),
        JointSettings {
            tolerance_mm: Some(0.02),
            ..Default::default()
        },
    );
    let mut clips = BTreeMap::new();
    clips.insert(
        "Walk".to_owned(),
        ClipSettings {
            preset: Some(Preset::Ozz),
            method: Some(Method::Linear),
            bits: Some(Bits::Fixed),
            joints: clip_joints,
            ..Default::default()
        },
    );
    Settings {
        preset: Some(Preset::Acl),
        tolerance_mm: Some(0.2),
        method: Method::CatmullRom,
        joints,
        clips,
        ..Default::default()
    }
}

#[test]
fn toml_and_json_round_trip() {
    let d = tempfile::tempdir().unwrap();
    for name in ["a.skelpack.toml", "a.skelpack.json"] {
        let p = d.path().join(name);
        sample().save(&p).unwrap();
        assert_eq!(Settings::load(&p).unwrap(), sample(), "{name}");
    }
}

fn parse_err(text: &str) -> String {
    Settings::parse(text, Path::new("x.skelpack.toml"))
        .unwrap_err()
        .to_string()
}

#[test]
fn unknown_keys_are_rejected() {
    let e = parse_err("tolerance_mm = 0.1\ntolerence_cm = 3\n");
    assert!(e.contains("line 2") && e.contains("tolerence_cm"), "{e}");
    let e = parse_err("[joints.Hand]\npined = true\n");
    assert!(e.contains("pined"), "{e}");
}

#[test]
fn bad_values_name_the_field_path_and_line() {
    let e = parse_err("preset = \"acl\"\n\n[joints.\"Hand\"]\ntolerance_mm = -1\n");
    assert!(
        e.contains("joints.Hand.tolerance_mm") && e.contains("line 4"),
        "{e}"
    );
    let e = parse_err("method = \"cubic\"\n");
    assert!(e.contains("line 1") && e.contains("cubic"), "{e}");
    let e = parse_err("[clips.Walk]\nmarker_offset_cm = 0\n");
    assert!(e.contains("clips.Walk.marker_offset_cm"), "{e}");
}

#[test]
fn unknown_joint_and_clip_names_are_listed() {
    let asset = import::load(&common::asset("CesiumMan.glb")).unwrap();
    let mut s = Settings::default();
    s.joints
        .insert("NoSuchJoint".into(), JointSettings::default());
    s.clips.insert("NoSuchClip".into(), ClipSettings::default());
    let (joints, clips) = s.unknown_names(&asset.skeleton, &["animation0"]);
    assert_eq!(joints, vec!["NoSuchJoint".to_owned()]);
    assert_eq!(clips, vec!["NoSuchClip".to_owned()]);
}

#[test]
fn per_joint_values_resolve_in_scene_units() {
    let asset = import::load(&common::asset("Fox.glb")).unwrap(); // centimetres
    let mut s = Settings::from_preset(Preset::Acl);
    s.joints.insert(
        "b_Head_05".into(),
        JointSettings {
            tolerance_mm: Some(0.5),
            marker_offset_cm: Some(10.0),
            pinned: Some(true),
        },
    );
    let r = s.resolve(&asset, "Walk");
    let head = asset.skeleton.find("b_Head_05").unwrap();
    assert!(
        (r.limits.tolerance[head] - 0.05).abs() < 1e-6,
        "0.5 mm = 0.05 cm"
    );
    assert!((r.limits.marker_offset[head] - 10.0).abs() < 1e-6);
    assert!(r.pinned[head]);
    assert!(
        (r.limits.tolerance[0] - 0.01).abs() < 1e-6,
        "0.1 mm = 0.01 cm"
    );
}

#[test]
fn cli_reads_the_settings_file_and_warns_about_unknown_names() {
    let d = tempfile::tempdir().unwrap();
    let settings = d.path().join("s.toml");
    std::fs::write(
        &settings,
        "preset = \"ozz\"\n[joints.Ghost]\npinned = true\n",
    )
    .unwrap();
    let out = d.path().join("c.skp");
    let o = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args([
            "compress",
            common::asset("CesiumMan.glb").to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
            "--json",
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("Ghost"));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(json["output_bytes"].as_u64().unwrap() > 0);
    // A bad settings file is a clear error, exit 2, and writes nothing.
    std::fs::write(&settings, "tolerance_mm = \"small\"\n").unwrap();
    let out2 = d.path().join("d.skp");
    let o = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args([
            "compress",
            common::asset("CesiumMan.glb").to_str().unwrap(),
            "-o",
            out2.to_str().unwrap(),
            "--settings",
            settings.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("s.toml"));
    assert!(!out2.exists());
}

#[test]
fn marker_offsets_can_come_from_the_skinned_mesh() {
    let asset = import::load(&common::asset("CesiumMan.glb")).unwrap();
    let offsets = skelpack::settings::mesh_marker_offsets(&asset);
    let with_vertices: Vec<f32> = offsets.iter().flatten().copied().collect();
    assert!(
        with_vertices.len() >= 15,
        "most of the 19 joints move vertices: {offsets:?}"
    );
    // CesiumMan is 1.2 m tall: every influenced vertex lies within a metre of its joint.
    assert!(
        with_vertices.iter().all(|&d| d > 0.0 && d < 1.0),
        "{with_vertices:?}"
    );
    let s = Settings {
        markers_from_mesh: true,
        ..Settings::from_preset(Preset::Acl)
    };
    let r = s.resolve(&asset, "animation0");
    let j = offsets.iter().position(|o| o.is_some()).unwrap();
    assert_eq!(r.limits.marker_offset[j], offsets[j].unwrap());
}

#[test]
fn joint_edits_go_where_the_clip_takes_its_value_from() {
    let asset = import::load(&common::asset("CesiumMan.glb")).unwrap();
    let clip = asset.clips[0].name.clone();
    let sk = &asset.skeleton;
    let names: Vec<&str> = sk
        .deforming_joints()
        .take(3)
        .map(|j| sk.joints[j].name.as_str())
        .collect();
    let mut s = Settings::default();
    // A clip override of the first joint's tolerance takes that joint's edits.
    s.clips.entry(clip.clone()).or_default().joints.insert(
        names[0].to_owned(),
        JointSettings {
            tolerance_mm: Some(0.3),
            ..Default::default()
        },
    );
    s.edit_joints(
        &clip,
        EditScope::File,
        names.iter().copied(),
        JointEdit::ToleranceMm(0.02),
    );
    assert_eq!(s.clips[&clip].joints[names[0]].tolerance_mm, Some(0.02));
    assert!(!s.joints.contains_key(names[0]));
    assert_eq!(s.joints[names[1]].tolerance_mm, Some(0.02));
    let r = s.resolve(&asset, &clip);
    let per_mm = r.unit.per_metre() / 1000.0;
    for n in &names {
        let j = sk.find(n).unwrap();
        assert!((r.limits.tolerance[j] - 0.02 * per_mm).abs() < 1e-9);
    }

    // Pinning then unpinning leaves no file-wide entry behind; reset removes overrides.
    s.edit_joints(&clip, EditScope::File, [names[2]], JointEdit::Pinned(true));
    assert!(s.resolve(&asset, &clip).pinned[sk.find(names[2]).unwrap()]);
    s.edit_joints(&clip, EditScope::File, [names[2]], JointEdit::Pinned(false));
    assert_eq!(s.joints[names[2]].pinned, None);
    s.edit_joints(
        &clip,
        EditScope::File,
        names.iter().copied(),
        JointEdit::Reset,
    );
    assert!(s.joints.is_empty());
    assert!(
        !s.clips.contains_key(&clip),
        "an emptied clip entry is dropped"
    );
    assert_eq!(
        s.resolve(&asset, &clip),
        Settings::default().resolve(&asset, &clip)
    );
}

#[test]
fn adaptive_fill_tightens_toward_the_root() {
    let asset = import::load(&common::asset("CMU_131_01.bvh")).unwrap();
    let sk = &asset.skeleton;
    let clip = asset.clips[0].name.clone();
    let joints: Vec<usize> = sk.deforming_joints().collect();
    let mut s = Settings::default();
    s.adaptive_tolerances(sk, &clip, EditScope::File, &joints, 0.4, 0.25);
    let tol = |j: usize| s.joints[&sk.joints[j].name].tolerance_mm.unwrap();
    let heights = sk.heights();
    let tallest = joints.iter().map(|&j| heights[j]).max().unwrap();
    for &j in &joints {
        // Leaves keep the given tolerance; the tallest subtree gets it times the factor.
        if heights[j] == 0 {
            assert!((tol(j) - 0.4).abs() < 1e-6, "{}", sk.joints[j].name);
        }
        if heights[j] == tallest {
            assert!((tol(j) - 0.1).abs() < 1e-6, "{}", sk.joints[j].name);
        }
        // A parent's subtree is taller than its child's, so its tolerance is tighter.
        if let Some(p) = sk.joints[j].parent.filter(|&p| sk.joints[p].deforming) {
            assert!(tol(p) < tol(j), "{}", sk.joints[j].name);
        }
    }
    // The compressor honours them: every joint within its own (tighter) tolerance.
    let r = s.resolve(&asset, &clip);
    let c = skelpack::codec::compress(sk, &asset.clips[0], &r, &skelpack::codec::Control::new())
        .unwrap();
    assert!(c.report.contract_met, "{:?}", c.report.failures);
}

#[test]
fn clip_scope_edits_leave_other_clips_alone() {
    let asset = import::load(&common::asset("RobotExpressive.glb")).unwrap();
    let sk = &asset.skeleton;
    let (walk, run) = ("Walking", "Running");
    let head = "Head";
    let j = sk.find(head).unwrap();
    let mut s = Settings::default();
    s.edit_joints(walk, EditScope::File, [head], JointEdit::ToleranceMm(0.5));
    s.edit_joints(walk, EditScope::Clip, [head], JointEdit::ToleranceMm(0.02));
    let per_mm = |r: &skelpack::settings::Resolved| r.unit.per_metre() / 1000.0;
    let rw = s.resolve(&asset, walk);
    let rr = s.resolve(&asset, run);
    assert!((rw.limits.tolerance[j] / per_mm(&rw) - 0.02).abs() < 1e-6);
    assert!((rr.limits.tolerance[j] / per_mm(&rr) - 0.5).abs() < 1e-6);
    // A file-scope edit now goes to Walking's own override, which it uses.
    s.edit_joints(walk, EditScope::File, [head], JointEdit::ToleranceMm(0.03));
    assert_eq!(s.clips[walk].joints[head].tolerance_mm, Some(0.03));
    assert_eq!(s.joints[head].tolerance_mm, Some(0.5));
    // Resetting in the clip scope drops only the clip's override.
    s.edit_joints(walk, EditScope::Clip, [head], JointEdit::Reset);
    assert!(!s.clips.contains_key(walk));
    assert_eq!(s.joints[head].tolerance_mm, Some(0.5));
}

#[test]
fn a_per_joint_error_points_at_the_per_joint_line() {
    // A top-level key of the same name comes first; the error is the joint's.
    let text = "tolerance_mm = 0.1\nmarker_offset_cm = 3\n\n[joints.Hand]\ntolerance_mm = -0.5\n";
    let e = parse_err(text);
    assert!(
        e.contains("line 5") && e.contains("joints.Hand.tolerance_mm") && e.contains("-0.5"),
        "{e}"
    );
    // An unknown key in a joint table, also a valid top-level key.
    let e = parse_err("preset = \"acl\"\n\n[joints.Hand]\npreset = \"ozz\"\n");
    assert!(
        e.contains("line 4") && e.contains("joints.Hand") && e.contains("preset"),
        "{e}"
    );
    let e = parse_err(
        "[clips.Walk]\ntolerance_mm = 1\n[clips.Walk.joints.\"Left Hand\"]\nmarker_offset_cm = 0\n",
    );
    assert!(
        e.contains("line 4") && e.contains("clips.Walk.joints.\"Left Hand\".marker_offset_cm"),
        "{e}"
    );
}

#[test]
fn a_wrong_type_names_the_field() {
    let e = parse_err("preset = \"acl\"\nmethod = 3\n");
    assert!(e.contains("line 2") && e.contains("method:"), "{e}");
    let e = parse_err("[joints.Hand]\npinned = \"yes\"\n");
    assert!(
        e.contains("line 2") && e.contains("joints.Hand.pinned"),
        "{e}"
    );
}

#[test]
fn json_errors_give_the_line_and_the_field() {
    let e = parse_err(
        "{\n  \"tolerance_mm\": 0.1,\n  \"joints\": {\n    \"Hand\": {\n      \"tolerance_mm\": -1\n    }\n  }\n}\n",
    );
    assert!(
        e.contains("line 5") && e.contains("joints.Hand.tolerance_mm"),
        "{e}"
    );
    let e = parse_err("{\n  \"preset\": \"acl\",\n  \"method\": 3\n}\n");
    assert!(e.contains("line 3") && e.contains("method:"), "{e}");
    let e =
        parse_err("{\n  \"joints\": {\n    \"Hand\": {\n      \"pined\": true\n    }\n  }\n}\n");
    assert!(
        e.contains("line 4") && e.contains("joints.Hand") && e.contains("pined"),
        "{e}"
    );
    // One line, whatever the parser's own formatting.
    assert!(!e.contains('\n'), "{e}");
}

#[test]
fn huge_or_special_settings_files_are_refused_without_reading_them_whole() {
    // Joint tables past the size bound: refused before parsing (memory stays bounded).
    let entry = "[joints.\"Joint_0000000\"]\ntolerance_mm = 0.1\n";
    let big = entry.repeat((skelpack::settings::MAX_SETTINGS_BYTES as usize) / entry.len() + 1);
    let e = parse_err(&big);
    assert!(e.contains("larger than"), "{e}");
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("big.skelpack.toml");
    std::fs::write(&p, &big).unwrap();
    let e = Settings::load(&p).unwrap_err().to_string();
    assert!(
        e.contains("big.skelpack.toml") && e.contains("larger than"),
        "{e}"
    );
    // A FIFO would block a reader forever.
    let fifo = d.path().join("fifo.skelpack.toml");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let e = Settings::load(&fifo).unwrap_err().to_string();
    assert!(e.contains("not a regular file"), "{e}");
    // Just under the bound still parses (distinct joints).
    let n = (skelpack::settings::MAX_SETTINGS_BYTES as usize) / (entry.len() + 2);
    let text: String = (0..n)
        .map(|i| format!("[joints.\"Joint_{i:09}\"]\ntolerance_mm = 0.1\n"))
        .collect();
    assert!(text.len() as u64 <= skelpack::settings::MAX_SETTINGS_BYTES);
    let s = Settings::parse(&text, Path::new("x.toml")).unwrap();
    assert_eq!(s.joints.len(), n);
}
