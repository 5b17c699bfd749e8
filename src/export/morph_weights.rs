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
pub use crate::codec::scalar::ScalarLimits;
use crate::codec::scalar::{Allowed, Curve, max_error, reduce, to_u16, value_bytes};

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
