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
        let rate = skp.clip(c).sample_rate();
        let n = src.targets;
        let source_at = |t: f32, k: usize| -> f64 {
            let j = src.times.partition_point(|&x| x <= t);
            if j == 0 || j == src.times.len() {
                return src.values[j.saturating_sub(1) * n + k] as f64;
            }
            let (a, b) = (j - 1, j);
            let u = ((t - src.times[a]) / (src.times[b] - src.times[a])) as f64;
            let (va, vb) = (src.values[a * n + k] as f64, src.values[b * n + k] as f64);
            va + (vb - va) * u
        };
        let mut worst = 0.0f64;
        let mut w = vec![0.0f32; n];
        for (k, &t) in src.times.iter().enumerate() {
            let mut points = vec![t];
            if let Some(&next) = src.times.get(k + 1) {
                points.push((t + next) / 2.0);
            }
            for t in points {
                skp.sample_scalar_track(c, i, t * rate, &mut w);
                let d: f64 = (0..n)
                    .map(|k| (w[k] as f64 - source_at(t, k)).abs() * src.reach[k] as f64)
                    .sum();
                worst = worst.max(d);
            }
        }
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
        raw += src.times.len() * 4 * (1 + n);
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
