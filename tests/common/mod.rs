//! Shared helpers for integration tests: where the third-party assets live, writing a scene
//! and reading it back, name-mapped measurement, and the independent `animeval.py` judge.
#![allow(dead_code)]

pub mod morph;
pub mod player;

use std::path::{Path, PathBuf};
use std::process::Command;

use skelpack::import::{self, Asset};
use skelpack::metric::{JointLimits, Reference, measure};
use skelpack::model::{Clip, Skeleton};

/// `../shared/assets` beside the checkout (panics with a clear message when missing).
pub fn assets() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    assert!(
        p.is_dir(),
        "test assets not found at {} (../shared must sit beside the checkout)",
        p.display()
    );
    p
}

pub fn asset(name: &str) -> PathBuf {
    assets().join(name)
}

/// Every glTF asset in the shared folder.
pub fn gltf_assets() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(assets())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "glb" || e == "gltf"))
        .collect();
    v.sort();
    v
}

/// Every importable file (glTF, BVH, ACL clips), recursively.
pub fn all_assets() -> Vec<PathBuf> {
    skelpack::import::collect_files(&assets()).unwrap()
}

/// Writes `path`'s skeleton, clips and meshes as a new glTF scene (`ext`: glb or gltf) and
/// imports it back: (original, re-imported, the temporary folder holding it, its path).
pub fn scene_round_trip(path: &Path, ext: &str) -> (Asset, Asset, tempfile::TempDir, PathBuf) {
    let orig = import::load(path).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("out.{ext}"));
    skelpack::export::write_scene(
        &out,
        &orig.skeleton,
        &orig.clips,
        &orig.meshes,
        Some(path),
        false,
    )
    .unwrap();
    let back = import::load(&out).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    (orig, back, dir, out)
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
    // The source's own curves between frames follow their joints.
    out.between = std::sync::Arc::new(
        clip.between
            .iter()
            .filter_map(|c| {
                let joint = to.find(&from.joints[c.joint].name)?;
                Some(skelpack::model::SourceCurve { joint, ..c.clone() })
            })
            .collect(),
    );
    out.grid = clip.grid;
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
    animeval_with(original, exported, shell, &[])
}

/// [`animeval`] as players see it: physical markers, the worst of slerp, nlerp and keys as
/// stored (`--player portable`), 4x oversampling.
pub fn animeval_portable(
    original: &Path,
    exported: &Path,
    shell: f32,
) -> Option<serde_json::Value> {
    animeval_portable_at(original, exported, shell, 4)
}

/// [`animeval_portable`] at `oversample` points per key interval of the original.
pub fn animeval_portable_at(
    original: &Path,
    exported: &Path,
    shell: f32,
    oversample: u32,
) -> Option<serde_json::Value> {
    let n = oversample.to_string();
    animeval_with(
        original,
        exported,
        shell,
        &[
            "--markers",
            "physical",
            "--player",
            "portable",
            "--oversample",
            &n,
        ],
    )
}

/// Runs animeval with `extra` flags after `--json --shell SHELL`.
pub fn animeval_with(
    original: &Path,
    exported: &Path,
    shell: f32,
    extra: &[&str],
) -> Option<serde_json::Value> {
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
        .args(extra)
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

/// Compresses `clip` of `asset` with `settings` resolved for it.
pub fn compress(
    asset: &Asset,
    clip: &Clip,
    settings: &skelpack::settings::Settings,
) -> skelpack::codec::CompressedClip {
    let r = settings.resolve(asset, &clip.name);
    skelpack::codec::compress(&asset.skeleton, clip, &r, &skelpack::codec::Control::new()).unwrap()
}

/// Compresses like [`compress`], then measures the result independently of the
/// compressor's own report (samples and midpoints); returns the resolved settings too.
pub fn compress_measured(
    asset: &Asset,
    clip: &Clip,
    settings: &skelpack::settings::Settings,
) -> (
    skelpack::codec::CompressedClip,
    skelpack::metric::ErrorReport,
    skelpack::settings::Resolved,
) {
    // On the grid the `.skp` codec needs (finer where a source curve leaves the chord of its
    // frames: `codec::grid`), as `report` and `compress -o x.skp` use it.
    let r = settings.resolve(asset, &clip.name);
    let fine = skelpack::codec::grid::for_codec(&asset.skeleton, clip, &r.limits);
    let clip: &Clip = &fine;
    let c = compress(asset, clip, settings);
    let sk = &asset.skeleton;
    let e = measure(
        sk,
        &Reference::new(sk, clip, clip.frame_count),
        &c,
        &r.limits,
        true,
    );
    (c, e, r)
}

/// A copy of the glTF at `path` with the 3x3 part of node `node`'s transform (a `matrix`,
/// or `scale`) multiplied by `factor`, written as `name` into `dir`: an armature scaled the
/// way Blender files often are (0.01, 100).
pub fn scaled_node_copy(path: &Path, node: &str, factor: f64, dir: &Path, name: &str) -> PathBuf {
    use skelpack::export::{GltfDoc, GltfFormat};
    let mut doc = GltfDoc::from_bytes(path, &std::fs::read(path).unwrap()).unwrap();
    let nodes = doc.array_mut("nodes");
    let n = nodes
        .iter_mut()
        .find(|n| n["name"] == node)
        .unwrap_or_else(|| panic!("{}: no node named {node}", path.display()));
    if let Some(m) = n.get_mut("matrix").and_then(|m| m.as_array_mut()) {
        for i in [0, 1, 2, 4, 5, 6, 8, 9, 10] {
            m[i] = (m[i].as_f64().unwrap() * factor).into();
        }
    } else {
        let s = n
            .get("scale")
            .and_then(|s| s.as_array())
            .map_or(vec![1.0; 3], |s| {
                s.iter().map(|v| v.as_f64().unwrap()).collect()
            });
        n["scale"] = s.iter().map(|v| v * factor).collect::<Vec<f64>>().into();
    }
    let out = dir.join(name);
    std::fs::write(&out, doc.to_bytes(GltfFormat::Binary).unwrap()).unwrap();
    out
}

/// ACL's 13_07 as an additive clip on itself, as an SJSON file holds one: the clip's
/// tracks marked `additive_format = "additive0"` on a base clip `13_07_base` whose tracks
/// are the same (`base_tracks`).
pub fn acl_additive_13_07_sjson() -> String {
    let text = std::fs::read_to_string(asset("acl/13_07.acl.sjson")).unwrap();
    let at = text.find("\ntracks =").expect("a tracks section");
    let mut sjson = text[..at].replacen(
        "error_threshold",
        "additive_format = \"additive0\"\n\tadditive_base_name = \"13_07_base\"\n\terror_threshold",
        1,
    );
    sjson.push_str(&text[at..]);
    sjson.push_str(&text[at..].replacen("\ntracks =", "\nbase_tracks =", 1));
    sjson
}
