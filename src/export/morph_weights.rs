//! Morph-target weight channels (glTF `weights`) as scalar tracks, compressed under the same
//! visual contract as the joints: a weight's error is `|Δw| × r`, `r` the target's largest
//! vertex offset in the scene (its POSITION deltas' bounds times the mesh's scale at the rest
//! pose, an upper bound), and the errors of one channel's targets add up (they move the same
//! vertices). Targets without geometry are held to an explicit weight tolerance (settings'
//! `weight_tolerance`, default 0: only exact reductions).
//!
//! A LINEAR channel keeps a subset of its keys, their values as stored: between the source's
//! keys both curves are linear, so the error is largest at a source key, and every source key
//! (and the midpoints, to be safe) is measured before the channel is replaced. A constant
//! channel keeps one key. STEP, CUBICSPLINE and quantized channels are carried over as they are.

use serde_json::{Value, json};

use super::GltfDoc;
use super::morph_reach::{floats, target_reach};

/// What a channel's weights may change by.
#[derive(Clone, Copy, Debug)]
pub struct ScalarLimits {
    /// Largest vertex displacement, scene units (the joints' tolerance).
    pub tolerance: f32,
    /// Largest weight change of a target without geometry.
    pub weight_tolerance: f32,
}

/// One written weights channel.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ScalarTrackExport {
    /// The node's name (or `node N`).
    pub node: String,
    /// Morph targets (weights per key).
    pub targets: usize,
    pub source_keys: usize,
    pub keys: usize,
    /// Largest vertex displacement the kept keys cause, scene units, at every source key
    /// and midpoint.
    pub max_error: f32,
}

/// Every weights channel of one animation.
#[derive(Clone, Debug, Default, serde::Serialize)]
pub struct ScalarTracks {
    /// Weights channels in the animation (each drives all the targets of one mesh).
    pub count: usize,
    /// Those written with fewer keys; the rest are carried over unchanged.
    pub compressed: Vec<ScalarTrackExport>,
    /// The largest error among them, scene units.
    pub max_error: f32,
}

/// Compresses every `weights` channel of animation `index` in place (each repointed to a
/// new sampler where it gets smaller), and says what was done.
pub fn compress_animation(doc: &mut GltfDoc, index: usize, limits: ScalarLimits) -> ScalarTracks {
    let mut out = ScalarTracks::default();
    let anim = doc.array("animations")[index].clone();
    let (Some(channels), Some(samplers)) = (
        anim.get("channels").and_then(Value::as_array),
        anim.get("samplers").and_then(Value::as_array),
    ) else {
        return out;
    };
    let mut samplers = samplers.clone();
    let mut channels = channels.clone();
    for ch in &mut channels {
        let target = ch.get("target");
        if target.and_then(|t| t.get("path")).and_then(Value::as_str) != Some("weights") {
            continue;
        }
        out.count += 1;
        let node = target.and_then(|t| t.get("node")).and_then(Value::as_u64);
        let sampler = ch
            .get("sampler")
            .and_then(Value::as_u64)
            .and_then(|s| samplers.get(s as usize));
        let (Some(node), Some(sampler)) = (node, sampler) else {
            continue;
        };
        if let Some((smaller, written)) = compress_channel(doc, sampler, node as usize, limits) {
            ch["sampler"] = json!(samplers.len());
            samplers.push(smaller);
            out.max_error = out.max_error.max(written.max_error);
            out.compressed.push(written);
        }
    }
    if !out.compressed.is_empty() {
        // Samplers no channel uses any more are dropped (glTF allows them; players load them).
        let used: std::collections::BTreeSet<u64> = channels
            .iter()
            .filter_map(|c| c.get("sampler").and_then(Value::as_u64))
            .collect();
        let remap: std::collections::HashMap<u64, usize> =
            used.iter().enumerate().map(|(k, &s)| (s, k)).collect();
        for c in &mut channels {
            if let Some(s) = c.get("sampler").and_then(Value::as_u64) {
                c["sampler"] = json!(remap[&s]);
            }
        }
        let samplers: Vec<Value> = used.iter().map(|&s| samplers[s as usize].clone()).collect();
        let a = &mut doc.array_mut("animations")[index];
        a["channels"] = Value::Array(channels);
        a["samplers"] = Value::Array(samplers);
    }
    out
}

/// Compresses the LINEAR weights sampler of `node` within `limits`: the new sampler (its
/// accessors pushed to `doc`) and what was written, or `None` to carry the channel over
/// (another interpolation, a quantized accessor, nothing to gain, no bound on its reach).
pub fn compress_channel(
    doc: &mut GltfDoc,
    sampler: &Value,
    node: usize,
    limits: ScalarLimits,
) -> Option<(Value, ScalarTrackExport)> {
    let linear = sampler
        .get("interpolation")
        .and_then(Value::as_str)
        .is_none_or(|i| i == "LINEAR");
    if !linear {
        return None;
    }
    let times = floats(doc, sampler.get("input")?.as_u64()? as usize)?;
    let values = floats(doc, sampler.get("output")?.as_u64()? as usize)?;
    let reach = target_reach(doc, node)?;
    let targets = reach.len();
    if times.len() < 2 || targets == 0 || values.len() != times.len() * targets {
        return None;
    }
    let allowed = Allowed::new(&reach, limits);
    let kept = reduce(&times, &values, targets, &allowed);
    if kept.len() >= times.len() {
        return None;
    }
    let error = max_error(&times, &values, targets, &kept, &allowed);
    if !error.within {
        return None;
    }
    let t: Vec<f32> = kept.iter().map(|&k| times[k]).collect();
    let v: Vec<f32> = kept
        .iter()
        .flat_map(|&k| values[k * targets..(k + 1) * targets].iter().copied())
        .collect();
    let input = doc.push_f32(&t, 1, "SCALAR", true, None);
    let output = doc.push_f32(&v, 1, "SCALAR", false, None);
    let name = doc.array("nodes")[node]
        .get("name")
        .and_then(Value::as_str)
        .map_or_else(|| format!("node {node}"), str::to_owned);
    Some((
        json!({ "input": input, "output": output, "interpolation": "LINEAR" }),
        ScalarTrackExport {
            node: name,
            targets,
            source_keys: times.len(),
            keys: kept.len(),
            max_error: error.displacement as f32,
        },
    ))
}

/// Per target: the scene distance one unit of weight moves a vertex at most (`reach`), or,
/// for a target without geometry, none (held to the weight tolerance).
struct Allowed {
    reach: Vec<f64>,
    /// Vertex displacement allowed, with a guard for the player's float arithmetic.
    tolerance: f64,
    weight_tolerance: f64,
}

impl Allowed {
    /// The player's float evaluation of the kept keys may differ from this f64 one by a few
    /// ulps of the weights; 0.1 % of the tolerance is kept back for it.
    const GUARD: f64 = 1e-3;

    fn new(reach: &[f64], limits: ScalarLimits) -> Self {
        Self {
            reach: reach.to_vec(),
            tolerance: limits.tolerance as f64 * (1.0 - Self::GUARD),
            weight_tolerance: limits.weight_tolerance as f64,
        }
    }

    /// The displacement a difference of `delta` per target causes, and whether every target
    /// without geometry stays within the weight tolerance.
    fn measure(&self, delta: impl Iterator<Item = f64>) -> (f64, bool) {
        let mut d = 0.0;
        let mut ok = true;
        for (x, &r) in delta.zip(&self.reach) {
            if r > 0.0 {
                d += x.abs() * r;
            } else {
                ok &= x.abs() <= self.weight_tolerance;
            }
        }
        (d, ok)
    }

    fn holds(&self, (d, ok): (f64, bool)) -> bool {
        ok && d <= self.tolerance
    }
}

/// The kept keys' values interpolated at `t` (kept keys `a` < `b` around it).
fn between(
    times: &[f32],
    values: &[f32],
    targets: usize,
    a: usize,
    b: usize,
    t: f64,
    k: usize,
) -> f64 {
    let (ta, tb) = (times[a] as f64, times[b] as f64);
    let u = if tb > ta { (t - ta) / (tb - ta) } else { 0.0 };
    let (va, vb) = (
        values[a * targets + k] as f64,
        values[b * targets + k] as f64,
    );
    va + (vb - va) * u
}

/// Greedy key reduction: the first and last key (one key when every key holds the same
/// weights), then the worst source key of any segment that breaks the limits, until none does.
fn reduce(times: &[f32], values: &[f32], targets: usize, allowed: &Allowed) -> Vec<usize> {
    let n = times.len();
    let row = |i: usize| &values[i * targets..(i + 1) * targets];
    let constant = (1..n).all(|i| {
        let d = row(i).iter().zip(row(0)).map(|(&a, &b)| (a - b) as f64);
        allowed.holds(allowed.measure(d))
    });
    if constant {
        return vec![0];
    }
    let mut kept = vec![0, n - 1];
    loop {
        let mut added = Vec::new();
        for w in kept.windows(2) {
            let (a, b) = (w[0], w[1]);
            let mut worst: Option<(usize, f64)> = None;
            for i in a + 1..b {
                let t = times[i] as f64;
                let e = allowed.measure(
                    (0..targets)
                        .map(|k| between(times, values, targets, a, b, t, k) - row(i)[k] as f64),
                );
                if !allowed.holds(e) {
                    let score = if e.1 { e.0 } else { f64::INFINITY };
                    if worst.is_none_or(|(_, s)| score > s) {
                        worst = Some((i, score));
                    }
                }
            }
            if let Some((i, _)) = worst {
                added.push(i);
            }
        }
        if added.is_empty() {
            return kept;
        }
        kept.extend(added);
        kept.sort_unstable();
    }
}

struct Measured {
    displacement: f64,
    within: bool,
}

/// The kept keys against the source at every source key and midpoint (the source is linear
/// between its keys; one kept key holds its value throughout).
fn max_error(
    times: &[f32],
    values: &[f32],
    targets: usize,
    kept: &[usize],
    allowed: &Allowed,
) -> Measured {
    let source = |t: f64, k: usize| -> f64 {
        let i = times
            .partition_point(|&x| (x as f64) <= t)
            .clamp(1, times.len() - 1);
        between(
            times,
            values,
            targets,
            i - 1,
            i,
            t.clamp(times[0] as f64, times[times.len() - 1] as f64),
            k,
        )
    };
    let written = |t: f64, k: usize| -> f64 {
        if kept.len() == 1 {
            return values[kept[0] * targets + k] as f64;
        }
        let j = kept
            .partition_point(|&x| (times[x] as f64) <= t)
            .clamp(1, kept.len() - 1);
        let (a, b) = (kept[j - 1], kept[j]);
        between(
            times,
            values,
            targets,
            a,
            b,
            t.clamp(times[a] as f64, times[b] as f64),
            k,
        )
    };
    let mut worst = Measured {
        displacement: 0.0,
        within: true,
    };
    for i in 0..times.len() {
        let mut points = vec![times[i] as f64];
        if i + 1 < times.len() {
            points.push((times[i] as f64 + times[i + 1] as f64) / 2.0);
        }
        for t in points {
            let e = allowed.measure((0..targets).map(|k| written(t, k) - source(t, k)));
            worst.displacement = worst.displacement.max(e.0);
            worst.within &= allowed.holds(e);
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn allowed(reach: &[f64], tolerance: f32) -> Allowed {
        Allowed::new(
            reach,
            ScalarLimits {
                tolerance,
                weight_tolerance: 0.0,
            },
        )
    }

    #[test]
    fn constant_weights_keep_one_key() {
        let times = [0.0, 0.5, 1.0, 1.5];
        let values = [0.2, 0.0, 0.2, 0.0, 0.2, 0.0, 0.2, 0.0];
        let a = allowed(&[0.01, 0.01], 1e-4);
        let kept = reduce(&times, &values, 2, &a);
        assert_eq!(kept, vec![0]);
        assert!(max_error(&times, &values, 2, &kept, &a).within);
    }

    #[test]
    fn a_ramp_keeps_its_ends_and_a_bump_its_peak() {
        let times: Vec<f32> = (0..11).map(|i| i as f32 / 10.0).collect();
        let ramp: Vec<f32> = (0..11).map(|i| i as f32 / 10.0).collect();
        let a = allowed(&[0.01], 1e-4);
        assert_eq!(reduce(&times, &ramp, 1, &a), vec![0, 10]);
        let bump: Vec<f32> = (0..11).map(|i| if i == 5 { 1.0 } else { 0.0 }).collect();
        let kept = reduce(&times, &bump, 1, &a);
        assert_eq!(kept, vec![0, 4, 5, 6, 10]);
        assert!(max_error(&times, &bump, 1, &kept, &a).within);
        // Dropping the peak would move a vertex 1 x 0.01, far over 1e-4.
        assert!(!max_error(&times, &bump, 1, &[0, 4, 6, 10], &a).within);
    }

    #[test]
    fn a_small_wiggle_on_a_short_target_is_dropped() {
        let times: Vec<f32> = (0..5).map(|i| i as f32).collect();
        // 0.001 of weight on a target reaching 5 cm: 0.05 mm, within 0.1 mm.
        let values = [0.0, 0.001, 0.0, 0.001, 0.0];
        let a = allowed(&[0.05], 1e-4);
        assert_eq!(reduce(&times, &values, 1, &a), vec![0]);
        // A target without geometry is held exactly by default.
        let a = allowed(&[0.0], 1e-4);
        assert_eq!(reduce(&times, &values, 1, &a), vec![0, 1, 2, 3, 4]);
    }
}
