//! The source's own animation as a candidate for `--player portable`: kept unchanged when it
//! is no larger than the compressed one *and* verified under every rule of the player.
//!
//! Under the spec (slerp) an animation is exactly its own reference, but a portable player
//! also plays it by nlerp and with keys as stored, where a LINEAR rotation may leave its
//! slerp path. So the original is measured like any exported layout: its channels, read
//! back from the file as [`Channel`]s (LINEAR, key times on the clip's tick grid, float or
//! normalized-SHORT values as players read them), against the imported clip at samples and
//! quarter points. This is what makes re-compressing an export stable (issue 24 item 7):
//! skelpack's own export is already on its rate's tick grid, within the tolerance of itself
//! under every rule, and is kept wherever a new run would not be smaller.

use std::collections::HashMap;

use glam::Vec4;
use serde_json::Value;

use super::GltfDoc;
use super::channels::{Channel, Interp, Played, Player, Storage, TICKS};
use super::gltf_doc::component;
use crate::metric::{Reference, measure};
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// The worst error / tolerance ratio (tolerances scaled by the verifier's guard band) and
/// the largest error of animation `index` of `doc` played by `player`, against `raw` (the
/// clip imported from it); `None` when its channels are not LINEAR keys on `raw`'s tick
/// grid in float or normalized-SHORT storage (then it is not a candidate).
pub(super) fn verified(
    doc: &GltfDoc,
    index: usize,
    skeleton: &Skeleton,
    raw: &Clip,
    settings: &Resolved,
    player: Player,
    node_joint: &HashMap<usize, usize>,
) -> Option<(f32, f32)> {
    let channels = channels(doc, index, raw, node_joint)?;
    let mut limits = settings.limits.clone();
    for t in limits.tolerance.iter_mut() {
        *t *= super::verify::PLAYER_GUARD;
    }
    let reference = Reference::with_inner_points(skeleton, raw, raw.frame_count, 3);
    let rest = skeleton.rest_pose();
    let (mut ratio, mut max) = (0.0f32, 0.0f32);
    for &rule in player.rules() {
        let played = Played::with_rule(&rest, &channels, raw.sample_rate, raw.frame_count, rule);
        let e = measure(skeleton, &reference, &played, &limits, true);
        let mid = e.midpoints.as_ref();
        ratio = ratio
            .max(e.samples.worst_ratio)
            .max(mid.map_or(0.0, |m| m.worst_ratio));
        max = max.max(e.samples.max).max(mid.map_or(0.0, |m| m.max));
    }
    Some((ratio, max))
}

/// Animation `index`'s channels on skeleton nodes as [`Channel`]s (float storage holding the
/// values players read), or `None` if any is not representable.
fn channels(
    doc: &GltfDoc,
    index: usize,
    raw: &Clip,
    node_joint: &HashMap<usize, usize>,
) -> Option<Vec<Channel>> {
    let anim = doc.array("animations").get(index)?;
    let samplers = anim.get("samplers")?.as_array()?;
    let mut out = Vec::new();
    for ch in anim.get("channels")?.as_array()? {
        let target = ch.get("target")?;
        let kind = match target.get("path")?.as_str()? {
            "translation" => 0,
            "rotation" => 1,
            "scale" => 2,
            _ => continue,
        };
        let Some(&joint) = target
            .get("node")
            .and_then(Value::as_u64)
            .and_then(|n| node_joint.get(&(n as usize)))
        else {
            continue;
        };
        let sampler = samplers.get(ch.get("sampler")?.as_u64()? as usize)?;
        let interp = sampler.get("interpolation").and_then(Value::as_str);
        if interp.is_some_and(|i| i != "LINEAR") {
            return None;
        }
        let ticks = ticks(doc, sampler.get("input")?.as_u64()? as usize, raw)?;
        let width = if kind == 1 { 4 } else { 3 };
        let values = values(doc, sampler.get("output")?.as_u64()? as usize, width)?;
        if values.len() != ticks.len() {
            return None;
        }
        out.push(Channel {
            joint,
            kind,
            interp: Interp::Linear,
            ticks,
            values,
            tangents: Vec::new(),
            storage: Storage::Float,
            held_end: true,
        });
    }
    Some(out)
}

/// Accessor `ai` (float scalars) as ticks of `raw`'s frame grid, if every time is on it
/// (within a twentieth of a tick or the times' f32 precision), increasing, inside the clip.
fn ticks(doc: &GltfDoc, ai: usize, raw: &Clip) -> Option<Vec<u32>> {
    let times = floats(doc, ai, 1)?;
    let per_s = raw.sample_rate as f64 * TICKS as f64;
    let last = raw.frame_count.saturating_sub(1) as f64 * TICKS as f64;
    let mut out: Vec<u32> = Vec::with_capacity(times.len());
    for t in times {
        let k = (t as f64 - raw.start_time as f64) * per_s;
        let slack = 0.05f64.max(8.0 * (t as f64).abs() * f32::EPSILON as f64 * per_s);
        let r = k.round();
        if (k - r).abs() > slack
            || r < 0.0
            || r > last
            || out.last().is_some_and(|&p| p as f64 >= r)
        {
            return None;
        }
        out.push(r as u32);
    }
    (!out.is_empty()).then_some(out)
}

/// Accessor `ai` as `width`-wide values (float, or normalized SHORT for rotations).
fn values(doc: &GltfDoc, ai: usize, width: usize) -> Option<Vec<Vec4>> {
    let a = doc.array("accessors").get(ai)?;
    let normalized = a.get("normalized").and_then(Value::as_bool) == Some(true);
    let comp = a.get("componentType").and_then(Value::as_u64)? as u32;
    let flat: Vec<f32> = if comp == component::F32 {
        floats(doc, ai, width)?
    } else if comp == component::I16 && normalized && width == 4 {
        let bytes = doc.element_bytes(ai)?;
        bytes
            .chunks_exact(2)
            .map(|b| (i16::from_le_bytes([b[0], b[1]]) as f32 / 32767.0).max(-1.0))
            .collect()
    } else {
        return None;
    };
    Some(
        flat.chunks_exact(width)
            .map(|v| Vec4::new(v[0], v[1], v[2], v.get(3).copied().unwrap_or(0.0)))
            .collect(),
    )
}

/// Accessor `ai`'s float components, if it is a float accessor of `width` components.
fn floats(doc: &GltfDoc, ai: usize, width: usize) -> Option<Vec<f32>> {
    (doc.element_size(ai) == 4 * width)
        .then(|| doc.f32_components(ai))
        .flatten()
}
