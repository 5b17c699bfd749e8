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
use super::gltf_doc::component;
use super::morph_reach::target_reach;

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
    /// `unorm16` (normalized unsigned 16-bit weights) or `float`.
    pub storage: &'static str,
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
    let times = doc.f32_components(sampler.get("input")?.as_u64()? as usize)?;
    let values = doc.f32_components(sampler.get("output")?.as_u64()? as usize)?;
    let reach = target_reach(doc, node)?;
    let targets = reach.len();
    if times.len() < 2 || targets == 0 || values.len() != times.len() * targets {
        return None;
    }
    let allowed = Allowed::new(&reach, limits);
    let source = Curve {
        times: &times,
        values: &values,
        targets,
    };
    // Normalized 16-bit weights where every weight lies in [0, 1] and the rounding fits
    // the tolerance, else the source's floats; the smaller of what holds.
    let quantized: Option<Vec<f32>> = values
        .iter()
        .all(|v| (0.0..=1.0).contains(v))
        .then(|| values.iter().map(|&v| to_u16(v) as f32 / 65535.0).collect());
    let source_bytes = times.len() * 4 * (1 + targets);
    let (stored, kept, error) = [quantized.as_deref(), Some(values.as_slice())]
        .into_iter()
        .flatten()
        .filter_map(|stored| {
            let written = Curve {
                values: stored,
                ..source
            };
            let kept = reduce(&source, &written, &allowed);
            let error = max_error(&source, &written, &kept, &allowed);
            let bytes = kept.len() * 4
                + (kept.len() * targets * value_bytes(&values, stored)).next_multiple_of(4);
            // One key of floats: identical constants of other clips share its accessor
            // (`share.rs` shares 4-byte elements only).
            let shareable = kept.len() == 1 && value_bytes(&values, stored) == 2;
            (error.within && bytes < source_bytes && !shareable).then_some((stored, kept, error))
        })
        .next()?;
    let t: Vec<f32> = kept.iter().map(|&k| times[k]).collect();
    let input = doc.push_f32(&t, 1, "SCALAR", true, None);
    let row = |k: usize| k * targets..(k + 1) * targets;
    let output = if value_bytes(&values, stored) == 2 {
        let v: Vec<u16> = kept
            .iter()
            .flat_map(|&k| values[row(k)].iter().map(|&w| to_u16(w)))
            .collect();
        let bytes: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let view = doc.push_view(&bytes, None);
        doc.push_accessor(view, component::U16, true, v.len(), "SCALAR", None, None)
    } else {
        let v: Vec<f32> = kept
            .iter()
            .flat_map(|&k| values[row(k)].iter().copied())
            .collect();
        doc.push_f32(&v, 1, "SCALAR", false, None)
    };
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
            storage: if value_bytes(&values, stored) == 2 {
                "unorm16"
            } else {
                "float"
            },
            max_error: error.displacement as f32,
        },
    ))
}

/// A weight stored as a normalized unsigned 16-bit value (`round(w x 65535)`).
fn to_u16(w: f32) -> u16 {
    (w.clamp(0.0, 1.0) * 65535.0).round() as u16
}

/// Bytes per weight of `stored`: 4 when it is the source's floats, 2 when quantized.
fn value_bytes(source: &[f32], stored: &[f32]) -> usize {
    if std::ptr::eq(source, stored) { 4 } else { 2 }
}

/// One channel's keys: `targets` weights per key time.
#[derive(Clone, Copy)]
struct Curve<'a> {
    times: &'a [f32],
    values: &'a [f32],
    targets: usize,
}

impl Curve<'_> {
    fn at_key(&self, i: usize, k: usize) -> f64 {
        self.values[i * self.targets + k] as f64
    }

    /// Target `k` at time `t` on the segment between keys `a` and `b` (clamped to it).
    fn between(&self, a: usize, b: usize, t: f64, k: usize) -> f64 {
        let (ta, tb) = (self.times[a] as f64, self.times[b] as f64);
        let u = if tb > ta {
            ((t - ta) / (tb - ta)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (va, vb) = (self.at_key(a, k), self.at_key(b, k));
        va + (vb - va) * u
    }

    /// Target `k` at time `t`, LINEAR through the keys listed in `keys` (clamped at the ends;
    /// one key holds its value).
    fn sample(&self, keys: &[usize], t: f64, k: usize) -> f64 {
        if keys.len() == 1 {
            return self.at_key(keys[0], k);
        }
        let j = keys
            .partition_point(|&x| (self.times[x] as f64) <= t)
            .clamp(1, keys.len() - 1);
        self.between(keys[j - 1], keys[j], t, k)
    }
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

/// Greedy key reduction of `source` stored as `written` (the same keys, values as they will
/// be stored): one key when the first holds everywhere, else the first and last and then, per
/// segment, the worst source key over the limits, until none is.
fn reduce(source: &Curve, written: &Curve, allowed: &Allowed) -> Vec<usize> {
    let n = source.times.len();
    let targets = source.targets;
    let constant = (0..n).all(|i| {
        allowed.holds(
            allowed.measure((0..targets).map(|k| written.at_key(0, k) - source.at_key(i, k))),
        )
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
                let t = source.times[i] as f64;
                let e = allowed.measure(
                    (0..targets).map(|k| written.between(a, b, t, k) - source.at_key(i, k)),
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

/// The kept keys of `written` against `source` at every source key and midpoint (both are
/// linear between the source's keys, so the largest difference is at one of its keys).
fn max_error(source: &Curve, written: &Curve, kept: &[usize], allowed: &Allowed) -> Measured {
    let all: Vec<usize> = (0..source.times.len()).collect();
    let mut worst = Measured {
        displacement: 0.0,
        within: true,
    };
    let times = source.times;
    for i in 0..times.len() {
        let mut points = vec![times[i] as f64];
        if i + 1 < times.len() {
            points.push((times[i] as f64 + times[i + 1] as f64) / 2.0);
        }
        for t in points {
            let e = allowed.measure(
                (0..source.targets).map(|k| written.sample(kept, t, k) - source.sample(&all, t, k)),
            );
            worst.displacement = worst.displacement.max(e.0);
            worst.within &= allowed.holds(e);
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve<'a>(times: &'a [f32], values: &'a [f32], targets: usize) -> Curve<'a> {
        Curve {
            times,
            values,
            targets,
        }
    }

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
        let c = curve(&times, &values, 2);
        let kept = reduce(&c, &c, &a);
        assert_eq!(kept, vec![0]);
        assert!(max_error(&c, &c, &kept, &a).within);
    }

    #[test]
    fn a_ramp_keeps_its_ends_and_a_bump_its_peak() {
        let times: Vec<f32> = (0..11).map(|i| i as f32 / 10.0).collect();
        let ramp: Vec<f32> = (0..11).map(|i| i as f32 / 10.0).collect();
        let a = allowed(&[0.01], 1e-4);
        let c = curve(&times, &ramp, 1);
        assert_eq!(reduce(&c, &c, &a), vec![0, 10]);
        let bump: Vec<f32> = (0..11).map(|i| if i == 5 { 1.0 } else { 0.0 }).collect();
        let c = curve(&times, &bump, 1);
        let kept = reduce(&c, &c, &a);
        assert_eq!(kept, vec![0, 4, 5, 6, 10]);
        assert!(max_error(&c, &c, &kept, &a).within);
        // Dropping the peak would move a vertex 1 x 0.01, far over 1e-4.
        assert!(!max_error(&c, &c, &[0, 4, 6, 10], &a).within);
    }

    #[test]
    fn a_small_wiggle_on_a_short_target_is_dropped() {
        let times: Vec<f32> = (0..5).map(|i| i as f32).collect();
        // 0.001 of weight on a target reaching 5 cm: 0.05 mm, within 0.1 mm.
        let values = [0.0, 0.001, 0.0, 0.001, 0.0];
        let c = curve(&times, &values, 1);
        let a = allowed(&[0.05], 1e-4);
        assert_eq!(reduce(&c, &c, &a), vec![0]);
        // A target without geometry is held exactly by default.
        let a = allowed(&[0.0], 1e-4);
        assert_eq!(reduce(&c, &c, &a), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn quantized_weights_count_their_rounding() {
        let times = [0.0, 1.0];
        let source = [0.3, 0.3];
        let stored: Vec<f32> = source.iter().map(|&v| to_u16(v) as f32 / 65535.0).collect();
        let (s, w) = (curve(&times, &source, 1), curve(&times, &stored, 1));
        // Rounding 0.3 to 1/65535 steps errs by under 7.7e-6: 7.7e-6 m on a 1 m target.
        let e = max_error(&s, &w, &[0], &allowed(&[1.0], 1e-4));
        assert!(
            e.within && e.displacement > 0.0 && e.displacement < 7.7e-6,
            "{}",
            e.displacement
        );
        // A 100 m target makes that 0.77 mm: over 0.1 mm.
        assert!(!max_error(&s, &w, &[0], &allowed(&[100.0], 1e-4)).within);
    }
}
