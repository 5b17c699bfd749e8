//! Sockets (issue 26): non-joint nodes hanging from joints — RobotExpressive's 27 `*_end`
//! tips and rigid parts — are measured with their joints, so an export whose joints hold the
//! tolerance holds it at the sockets too. Checked by the library's own measurement and, on
//! the glTF export, by three.js (`tools/player/player.mjs --sockets`), which picks the
//! sockets from the original file on its own.
//!
//! Needs Node.js and `npm ci` in tools/player (see tests/real_player.rs).

mod common;
use common::player::{node_json, skelpack_ok};

use std::path::Path;

use skelpack::codec::{Control, compress};
use skelpack::import;
use skelpack::metric::{Reference, socket_errors};
use skelpack::settings::Settings;

/// RobotExpressive's non-joint nodes under joints, as the glTF file names them.
const ROBOT_SOCKETS: [&str; 27] = [
    "Foot.L",
    "Foot.L_end",
    "Torso",
    "Head",
    "Head_end",
    "Shoulder.L",
    "Arm.L",
    "Middle2.L_end",
    "Thumb2.L_end",
    "Index2.L_end",
    "Ring2.L_end",
    "Shoulder.R",
    "Arm.R",
    "Middle2.R_end",
    "Thumb2.R_end",
    "Index2.R_end",
    "Ring2.R_end",
    "Leg.L",
    "LowerLeg.L",
    "LowerLeg.L_end",
    "Leg.R",
    "LowerLeg.R",
    "LowerLeg.R_end",
    "PoleTarget.L_end",
    "Foot.R",
    "Foot.R_end",
    "PoleTarget.R_end",
];

#[test]
fn robot_expressive_has_its_27_sockets_under_their_joints() {
    let asset = import::load(&common::asset("RobotExpressive.glb")).unwrap();
    let s = &asset.skeleton;
    let names: Vec<&str> = s.sockets.iter().map(|k| k.name.as_str()).collect();
    assert_eq!(names, ROBOT_SOCKETS);
    let joint_of = |name: &str| {
        let k = s.sockets.iter().find(|k| k.name == name).unwrap();
        s.joints[k.joint].name.as_str()
    };
    assert_eq!(joint_of("Head_end"), "Head");
    assert_eq!(joint_of("Arm.L"), "UpperArm.L");
    assert_eq!(joint_of("Thumb2.R_end"), "Thumb2.R");
    // Head_end sits 1.1 cm (node units) above the head along its Y axis.
    let tip = s.sockets.iter().find(|k| k.name == "Head_end").unwrap();
    assert!((tip.lever().y - 0.01108).abs() < 1e-4, "{:?}", tip.lever());
    assert!(s.sockets.iter().all(|k| s.joints[k.joint].deforming));
}

/// Every socket of every clip, compressed to `.skp` under the acl preset with Head_end
/// given its own, tighter tolerance, within its tolerance (the library's per-socket
/// measurement of the decoded clip, at samples and midpoints).
#[test]
fn compressed_clips_hold_every_socket_and_a_sockets_own_tolerance() {
    let asset = import::load(&common::asset("RobotExpressive.glb")).unwrap();
    let settings = Settings::parse(
        "preset = \"acl\"\n[sockets.\"Head_end\"]\ntolerance_mm = 0.03\n",
        Path::new("robot.toml"),
    )
    .unwrap();
    for name in ["Jump", "Dance", "Wave"] {
        let clip = asset.clips.iter().find(|c| c.name == name).unwrap();
        let resolved = settings.resolve(&asset, name);
        assert_eq!(resolved.limits.socket_count(), 27);
        let out = compress(&asset.skeleton, clip, &resolved, &Control::new()).unwrap();
        let reference = Reference::new(&asset.skeleton, clip, clip.frame_count);
        let errors = socket_errors(&asset.skeleton, &reference, &out, &resolved.limits);
        assert_eq!(errors.len(), 27);
        for e in &errors {
            assert!(
                e.max <= e.tolerance * 1.0001,
                "{name}: socket {} on {}: {} over {}",
                e.name,
                e.joint,
                e.max,
                e.tolerance
            );
        }
        let head_end = errors.iter().find(|e| e.name == "Head_end").unwrap();
        let head = errors.iter().find(|e| e.name == "Head").unwrap();
        assert!(
            (head_end.tolerance - 0.3 * head.tolerance).abs() < 1e-9,
            "Head_end's own tolerance: {} vs the head's {}",
            head_end.tolerance,
            head.tolerance
        );
    }
}

/// RobotExpressive and its compressed glTF at the acl preset, written into `dir`.
fn robot_acl_export(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let original = common::asset("RobotExpressive.glb");
    let exported = dir.join("robot.glb");
    skelpack_ok(
        &["compress", "--preset", "acl", "-o"],
        &[&exported, &original],
    );
    (original, exported)
}

/// The glTF export of RobotExpressive (acl preset: 0.1 mm) played in three.js: every one of
/// its 27 sockets, picked from the original by the player itself, within 0.1 mm at every key
/// and midpoint, from a clean start and after every other clip stopped anywhere. Before
/// sockets were measured, Head_end and the lower-leg tips moved up to 2.2 mm in the same check.
#[test]
fn robot_expressive_export_holds_every_socket_in_three_js() {
    let dir = tempfile::tempdir().unwrap();
    let (original, exported) = robot_acl_export(dir.path());
    let r = node_json(
        "player.mjs",
        &[&original, &exported],
        &["--sockets", "--shell", "0.03", "--json"],
    );
    assert_eq!(r["measured"], "sockets");
    assert_eq!(r["joints"], 27, "{r}");
    assert_eq!(r["joints_unmatched"].as_array().unwrap().len(), 0, "{r}");
    // 0.1 mm; three.js' float32 composition adds a little (the player guard of
    // docs/EXPORT.md is 1%).
    let tolerance = 1e-4 * 1.01;
    for c in r["clips"].as_array().unwrap() {
        for which in ["clean", "after_any"] {
            let e = c[which]["max"].as_f64().unwrap();
            assert!(
                e <= tolerance,
                "{} ({which}): socket {} moved {e} in three.js",
                c["name"],
                c[which]["joint"]
            );
        }
    }
}

/// `report --json` and `inspect --json` give each clip's socket count; `report` the worst
/// socket with its error and tolerance.
#[test]
fn report_and_inspect_name_the_sockets() {
    let original = common::asset("RobotExpressive.glb");
    let out = skelpack_ok(&["inspect", "--json"], &[&original]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v[0]["socket_nodes"].as_array().unwrap().len(), 27);
    assert!(
        v[0]["clips"]
            .as_array()
            .unwrap()
            .iter()
            .all(|c| c["sockets"] == 27)
    );
    let out = skelpack_ok(&["report", "--json", "--preset", "ozz"], &[&original]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let clips = v["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 14);
    for c in clips {
        assert_eq!(c["sockets"], 27);
        assert_eq!(c["scalar_tracks"], 1, "the face's weights channel");
        let w = &c["worst_socket"];
        let (e, t) = (w["max"].as_f64().unwrap(), w["tolerance"].as_f64().unwrap());
        assert!(e <= t * 1.0001, "{}: {w}", c["report"]["name"]);
        assert!(ROBOT_SOCKETS.contains(&w["name"].as_str().unwrap()));
    }
}

/// Whether Blender runs here (Debian's `blender`; `.ci/run` installs it with python3-numpy,
/// which its glTF importer needs).
fn blender_available() -> bool {
    std::process::Command::new("blender")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// The same export played in Blender 3.4 (tests/blender/gltf_sockets.py, one Blender run over
/// both files): every joint and every one of the 27 sockets, their origins and markers 3 cm
/// along their axes, at every key time of either file and every midpoint, within 0.1 mm of
/// the original as the glTF spec plays it. Blender interpolates rotation keys per component
/// (nlerp, one of the `portable` rules), so its playback of the original itself is off the
/// spec between keys far apart (Punch's right hand by centimetres): the reference is the
/// spec's pose, set on Blender's rig by the script, not Blender's playback of the original.
#[test]
fn robot_expressive_export_holds_every_socket_in_blender() {
    if !blender_available() {
        eprintln!(
            "SKIPPED robot_expressive_export_holds_every_socket_in_blender: `blender` is not \
             installed (apt-get install blender python3-numpy; .ci/run installs them)"
        );
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (original, exported) = robot_acl_export(dir.path());
    let out = dir.path().join("blender.json");
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/blender/gltf_sockets.py");
    let run = std::process::Command::new("blender")
        .args(["-b", "--factory-startup", "-noaudio"])
        .args(["--python-exit-code", "1", "--python"])
        .arg(&script)
        .arg("--")
        .arg(&original)
        .arg(&exported)
        .arg("0.03")
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "blender failed (its glTF importer needs python3-numpy): {}{}",
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    let r: serde_json::Value = serde_json::from_slice(&std::fs::read(&out).unwrap()).unwrap();
    assert_eq!(r["fps"], 24.0);
    assert_eq!(
        r["missing"].as_array().unwrap().len(),
        0,
        "{}",
        r["missing"]
    );
    let clips = r["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 14);
    // 0.1 mm, with the 1% player guard of docs/EXPORT.md for Blender's float32 matrices.
    let tolerance = 1e-4 * 1.01;
    let mut blender_own = 0.0f64;
    for c in clips {
        let name = c["name"].as_str().unwrap();
        let points = c["points"].as_array().unwrap();
        let sockets: Vec<&str> = points
            .iter()
            .filter(|p| p["kind"] == "socket")
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(sockets.len(), 27, "{name}: {sockets:?}");
        assert!(
            sockets.iter().all(|s| ROBOT_SOCKETS.contains(s)),
            "{sockets:?}"
        );
        assert_eq!(
            points.len() - sockets.len(),
            43,
            "{name}: the armature's bones"
        );
        // Every key and midpoint: at least the source's frames and the midpoints between.
        let frames = c["times"].as_u64().unwrap().div_ceil(2);
        assert!(frames >= 11, "{name}: {} times", c["times"]);
        for p in points {
            let e = p["max"].as_f64().unwrap();
            assert!(
                e <= tolerance,
                "{name}: {} {} ({}) moved {:.4} mm in Blender at frame {}",
                p["kind"],
                p["name"],
                p["parent"],
                e * 1e3,
                p["at"]
            );
            blender_own = blender_own.max(p["original_max"].as_f64().unwrap());
        }
    }
    // The reference is the spec, not Blender's playback of the original: that one nlerps
    // RobotExpressive's keys far apart (Punch's arm turns 60 degrees in a frame).
    assert!(blender_own > 0.01, "Blender's own playback: {blender_own}");
}
