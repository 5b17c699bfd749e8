//! Test assets with morph-target weights: RobotExpressive with moving face weights.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use skelpack::export::gltf_doc::{GltfDoc, GltfFormat};

/// RobotExpressive with its (all-zero) face weights replaced by moving ones: per animation,
/// the three targets ramp up to 0.9, hold, and fall back, with a 1e-5 wiggle on every other
/// key (below any visible distance), at the source's own key times.
pub fn robot_with_moving_faces(dir: &Path) -> PathBuf {
    let mut doc = GltfDoc::read(&super::asset("RobotExpressive.glb")).unwrap();
    let anims: Vec<Value> = doc.array("animations").to_vec();
    for (ai, anim) in anims.iter().enumerate() {
        for c in anim["channels"].as_array().unwrap() {
            if c["target"]["path"] != "weights" {
                continue;
            }
            let si = c["sampler"].as_u64().unwrap() as usize;
            let input = anim["samplers"][si]["input"].as_u64().unwrap() as usize;
            let keys = doc.array("accessors")[input]["count"].as_u64().unwrap() as usize;
            let mut values = Vec::with_capacity(keys * 3);
            for i in 0..keys {
                let u = i as f32 / (keys - 1).max(1) as f32;
                for k in 0..3 {
                    let ramp = (4.0 * u - k as f32 * 0.5).clamp(0.0, 1.0)
                        * (4.0 * (1.0 - u)).clamp(0.0, 1.0);
                    let wiggle = if i % 2 == 0 { 1e-5 } else { 0.0 };
                    values.push(0.9 * ramp + wiggle);
                }
            }
            let output = doc.push_f32(&values, 1, "SCALAR", false, None);
            doc.array_mut("animations")[ai]["samplers"][si]["output"] = json!(output);
        }
    }
    let path = dir.join("robot_faces.glb");
    std::fs::write(&path, doc.to_bytes(GltfFormat::Binary).unwrap()).unwrap();
    path
}

/// The largest vertex displacement (per key time and midpoint of `src`, `|Δw| × reach`
/// summed over the targets) between scalar track `i` of clip `c` as the runtime decodes
/// it and its source track `src`, linear between the source's keys.
pub fn runtime_scalar_error<B: AsRef<[u8]>>(
    skp: &skelpack_runtime::Skp<B>,
    c: usize,
    i: usize,
    src: &skelpack::model::ScalarTrack,
) -> f64 {
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
    worst
}
