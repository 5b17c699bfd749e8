//! Helpers for the export tests: shared assets, name-mapped measurement, animeval.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use skelpack::metric::{JointLimits, Reference, measure};
use skelpack::model::{Clip, Skeleton};

/// A file under `../shared/assets/`.
pub fn shared(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets")
        .join(name)
}

/// The shared glTF assets the export checks run on.
pub fn shared_gltf_assets() -> Vec<PathBuf> {
    [
        "CesiumMan.glb",
        "Fox.glb",
        "InterpolationTest.glb",
        "KayKit_Med_General.glb",
        "RiggedFigure.glb",
        "RiggedSimple.glb",
        "RobotExpressive.glb",
        "SimpleSkin.gltf",
    ]
    .iter()
    .map(|n| shared(n))
    .collect()
}

/// `clip` (on `from`) re-expressed on `to`, matching joints by name; joints `from` lacks
/// hold `to`'s rest pose.
pub fn remap(from: &Skeleton, clip: &Clip, to: &Skeleton) -> Clip {
    let mut out = Clip::rest(clip.name.clone(), to, clip.sample_rate, clip.frame_count);
    out.start_time = clip.start_time;
    for (j, joint) in to.joints.iter().enumerate() {
        if let Some(i) = from.find(&joint.name) {
            out.tracks[j] = clip.tracks[i].clone();
        }
    }
    out
}

/// Largest visual error (samples and midpoints) of `candidate` (on `cand_skel`) against
/// `reference` (on `skeleton`), markers at `offset` on every deforming joint of `skeleton`.
pub fn max_error(
    skeleton: &Skeleton,
    reference: &Clip,
    cand_skel: &Skeleton,
    candidate: &Clip,
    offset: f32,
) -> f32 {
    assert_eq!(
        reference.frame_count, candidate.frame_count,
        "frame counts differ"
    );
    let cand = remap(cand_skel, candidate, skeleton);
    let r = Reference::new(skeleton, reference, reference.frame_count);
    let limits = JointLimits::uniform(skeleton, offset, 1.0);
    let e = measure(skeleton, &r, &cand, &limits, true);
    e.samples.max.max(e.midpoints.map_or(0.0, |m| m.max))
}

/// Runs `animeval.py ORIGINAL EXPORTED --json --shell SHELL`; `None` (with a message) when
/// python3 or numpy is missing.
pub fn animeval(original: &Path, exported: &Path, shell: f32) -> Option<serde_json::Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/animeval.py");
    let probe = Command::new("python3")
        .args(["-c", "import numpy"])
        .output();
    if !matches!(probe, Ok(ref o) if o.status.success()) || !script.exists() {
        eprintln!("SKIPPED animeval check: python3 with numpy (or animeval.py) is not available");
        return None;
    }
    let out = Command::new("python3")
        .arg(&script)
        .arg(original)
        .arg(exported)
        .args(["--json", "--shell", &shell.to_string()])
        .output()
        .expect("run python3");
    assert!(
        out.status.success(),
        "animeval failed on {}: {}\n{}",
        exported.display(),
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    Some(serde_json::from_slice(&out.stdout).expect("animeval JSON"))
}

/// The largest `max_error` over all animations of an animeval report.
pub fn animeval_max(report: &serde_json::Value) -> f64 {
    report["animations"]
        .as_array()
        .expect("animations")
        .iter()
        .map(|a| {
            let unmatched = a["joints_unmatched"].as_array().map_or(0, Vec::len);
            assert_eq!(unmatched, 0, "animeval could not match joints: {a}");
            a["error"]["max"].as_f64().expect("error.max")
        })
        .fold(0.0, f64::max)
}
