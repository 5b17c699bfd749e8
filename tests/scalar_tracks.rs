//! Morph-target weights as `.skp` scalar tracks (issue 26): compressed under the joints'
//! distance tolerance (a weight's error is |Δw| × its target's largest vertex offset),
//! decoded by the runtime within that tolerance at every source key and midpoint, smaller
//! than the source's floats, and reported by `compress --json` / `inspect --json`.

mod common;
use common::player::skelpack_ok;

use std::path::Path;

use serde_json::Value;
use skelpack::import;
use skelpack_runtime::Skp;

/// 0.1 mm (the acl preset's tolerance on RobotExpressive, in metres), with the runtime's
/// float arithmetic's guard.
const TOLERANCE: f64 = 1e-4 * 1.001;

/// Compresses `source` to a `.skp` (acl preset) and checks, per clip and scalar track, the
/// runtime's weights against the importer's source curve; returns (kept keys, source keys,
/// stored bytes, source float bytes) summed over the file.
fn compress_and_decode(source: &Path, dir: &Path) -> (usize, usize, usize, usize) {
    let skp_path = dir.join("out.skp");
    let out = skelpack_ok(
        &["compress", "--preset", "acl", "--json", "-o"],
        &[&skp_path, source],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clips = report["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 14);
    for c in clips {
        assert_eq!(c["scalar_tracks"], 1, "{}", c["name"]);
        let e = c["scalar_error"].as_f64().unwrap();
        assert!(e <= 1e-4, "{}: {e}", c["name"]);
    }
    let asset = import::load(source).unwrap();
    let bytes = std::fs::read(&skp_path).unwrap();
    let skp = Skp::open(bytes.as_slice()).unwrap();
    assert_eq!(skp.clip_count(), asset.clips.len());
    let (mut kept, mut source_keys, mut stored, mut raw) = (0, 0, 0, 0);
    for clip in &asset.clips {
        let c = skp.find_clip(&clip.name).unwrap();
        assert_eq!(clip.scalar_tracks.len(), 1, "{}", clip.name);
        assert_eq!(skp.scalar_track_count(c), 1);
        let src = &clip.scalar_tracks[0];
        let i = skp.find_scalar_track(c, &src.name).unwrap();
        assert_eq!(skp.scalar_track(c, i), (src.name.as_str(), 3));
        assert!(
            src.reach.iter().all(|&r| r > 0.0),
            "{}: every face target moves vertices: {:?}",
            clip.name,
            src.reach
        );
        let worst = common::morph::runtime_scalar_error(&skp, c, i, src);
        assert!(
            worst <= TOLERANCE,
            "{}: a vertex moves {worst} in the runtime",
            clip.name
        );
        let record = &skp.clip_meta(c).scalar_tracks[i];
        assert!(
            record.max_error as f64 <= 1e-4,
            "{}: {}",
            clip.name,
            record.max_error
        );
        kept += record.keys;
        source_keys += src.times.len();
        stored += record.times.len() + record.values.len();
        raw += src.times.len() * 4 * (1 + src.targets);
    }
    (kept, source_keys, stored, raw)
}

#[test]
fn robot_expressive_weights_decode_within_tolerance_and_are_smaller() {
    let dir = tempfile::tempdir().unwrap();
    let (kept, source, stored, raw) =
        compress_and_decode(&common::asset("RobotExpressive.glb"), dir.path());
    // Every face channel holds one set of weights: one key each.
    assert_eq!(kept, 14, "{kept} keys kept of {source}");
    assert!(stored * 10 < raw, "{stored} bytes stored, {raw} as floats");
}

#[test]
fn moving_face_weights_drop_keys_and_decode_within_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let source = common::morph::robot_with_moving_faces(dir.path());
    let (kept, source_keys, stored, raw) = compress_and_decode(&source, dir.path());
    // A ramp, a hold and a fall per clip: at least their corners.
    assert!(kept >= 14 * 3, "{kept}");
    assert!(kept * 2 < source_keys, "{kept} of {source_keys} keys kept");
    assert!(stored * 2 < raw, "{stored} bytes stored, {raw} as floats");
}

#[test]
fn inspect_counts_the_scalar_tracks_of_a_skp() {
    let dir = tempfile::tempdir().unwrap();
    let skp_path = dir.path().join("robot.skp");
    skelpack_ok(
        &["compress", "--preset", "acl", "-o"],
        &[&skp_path, &common::asset("RobotExpressive.glb")],
    );
    let out = skelpack_ok(&["inspect", "--json"], &[&skp_path]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clips = info[0]["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 14);
    for c in clips {
        assert_eq!(c["scalar_tracks"], 1, "{c}");
        let e = c["scalar_error"].as_f64().unwrap();
        assert!(e <= 1e-4, "{c}");
    }
}
