//! The original glTF with its animations replaced by compressed ones (issue 6).
//!
//! The JSON is edited as a `serde_json::Value`: every animation's skeleton channels are
//! rewritten from the codec's tracks (Catmull-Rom as CUBICSPLINE with the spline's exact
//! tangents, linear as LINEAR, a constant as one key, rest tracks dropped because the node's
//! rest value already holds them); morph-weight channels and channels on nodes outside the
//! skeleton are carried over unchanged. Everything else (meshes, skins, materials, textures,
//! names, extras, extensions) is left as it was. New data is appended to buffer 0; the
//! replaced data is then dropped when that is provably safe (see [`super::compact`]).
//!
//! An animation whose compressed form would not be smaller than the original's sampler data
//! is kept unchanged (zero error).
//!
//! Rotations are stored as normalized SHORT where every stored value fits and the rounding
//! keeps each joint within its tolerance, measured on what a glTF player computes; float
//! otherwise. Channels with identical key frames share one time accessor.

use std::collections::HashMap;
use std::path::Path;

use glam::Vec4;
use serde_json::{Map, Value, json};

use super::channels::{Channel, Interp, Played, Storage, channels_of, to_short};
use super::gltf_doc::component;
use super::{ExportError, GltfDoc, GltfFormat, compact};
use crate::codec::CompressedClip;
use crate::import::Asset;
use crate::metric::{Reference, measure};
use crate::model::{Skeleton, Transform};
use crate::settings::Resolved;

/// What was written for one animation.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AnimationExport {
    pub name: String,
    /// Bytes of the accessors the animation's samplers reference (count x element size,
    /// each accessor once), as `animeval.py` counts them.
    pub original_bytes: usize,
    pub exported_bytes: usize,
    pub channels: usize,
    pub cubic_channels: usize,
    pub short_rotations: usize,
    pub float_rotations: usize,
    /// Largest visual error of the exported channels (as a player evaluates them) over
    /// samples and midpoints, and the largest error / tolerance ratio.
    pub max_error: f32,
    pub worst_ratio: f32,
    /// The tolerance scale the codec ran at.
    pub tolerance_factor: f32,
    /// The original animation was smaller than the compressed one and was kept unchanged.
    pub kept_original: bool,
}

/// One clip ready for glTF: the codec's result and the channels that will be written
/// (time grid anchored, rotation storage chosen and verified).
#[derive(Clone, Debug)]
pub struct GltfClip {
    pub compressed: CompressedClip,
    pub channels: Vec<Channel>,
    /// Largest visual error of the channels as a glTF player evaluates them (samples and
    /// midpoints), and the worst error / tolerance ratio.
    pub max_error: f32,
    pub worst_ratio: f32,
    /// The tolerance scale the codec ran at (1 = the user's tolerance).
    pub tolerance_factor: f32,
}

impl GltfClip {
    /// Prepares a compressed clip for writing, measured against `raw` with `settings`.
    pub fn new(
        skeleton: &Skeleton,
        raw: &crate::model::Clip,
        compressed: CompressedClip,
        settings: &Resolved,
    ) -> Self {
        let mut channels = channels_of(&compressed);
        anchor_time_grid(&mut channels, &compressed, skeleton);
        let (max_error, worst_ratio) =
            choose_storage(&mut channels, skeleton, raw, &compressed, settings);
        Self {
            compressed,
            channels,
            max_error,
            worst_ratio,
            tolerance_factor: 1.0,
        }
    }

    /// Bytes the channels' accessors will take (shared time accessors counted once).
    pub fn bytes(&self) -> usize {
        let mut times = std::collections::HashSet::new();
        let mut total = 0;
        for c in &self.channels {
            if times.insert(&c.frames) {
                total += 4 * c.frames.len();
            }
            let per = match (c.storage, c.is_rotation()) {
                (Storage::Short, _) => 8,
                (Storage::Float, true) => 16,
                (Storage::Float, false) => 12,
            };
            let n = if c.interp == Interp::CubicSpline {
                3
            } else {
                1
            };
            total += per * n * c.frames.len();
        }
        total
    }
}

/// Fraction of the tolerance an exported glTF is verified against.
pub const PLAYER_GUARD: f32 = 0.99;

/// Tolerance scales tried by [`encode_for_gltf`]: a tighter codec run leaves room for SHORT
/// rotations, which halve a rotation key.
pub const TOLERANCE_FACTORS: [f32; 3] = [1.0, 0.8, 0.6];

/// Compresses `raw` for glTF: runs the codec at the user's tolerance and at tighter ones
/// ([`TOLERANCE_FACTORS`]), prepares each for glTF and keeps the smallest whose error is no
/// worse than the first run's (which meets the tolerance whenever the codec can).
pub fn encode_for_gltf(
    skeleton: &Skeleton,
    raw: &crate::model::Clip,
    settings: &Resolved,
    control: &crate::codec::Control,
) -> Result<GltfClip, crate::codec::CodecError> {
    let mut best: Option<GltfClip> = None;
    for factor in TOLERANCE_FACTORS {
        let mut tighter = settings.clone();
        for t in tighter.limits.tolerance.iter_mut() {
            *t *= factor;
        }
        let cc = crate::codec::compress(skeleton, raw, &tighter, control)?;
        let mut candidate = GltfClip::new(skeleton, raw, cc, settings);
        candidate.tolerance_factor = factor;
        best = match best {
            None => Some(candidate),
            Some(b) => {
                // A candidate within tolerance beats one that is not; among those within
                // (or, failing that, no worse), the smaller wins.
                let limit = b.worst_ratio.max(1.0) * (1.0 + 1e-4);
                let fixes = b.worst_ratio > 1.0 && candidate.worst_ratio <= 1.0;
                if fixes || (candidate.worst_ratio <= limit && candidate.bytes() < b.bytes()) {
                    Some(candidate)
                } else {
                    Some(b)
                }
            }
        };
    }
    Ok(best.expect("at least one factor"))
}

/// The result of [`compressed_gltf`].
#[derive(Clone, Debug)]
pub struct CompressedGltf {
    pub doc: GltfDoc,
    pub animations: Vec<AnimationExport>,
    /// Whether the replaced animation data was removed from the buffer.
    pub compacted: bool,
}

/// Replaces the animations of `original` (the file `asset` was imported from) by `clips`
/// (one per asset clip, in order; see [`GltfClip::new`] and [`encode_for_gltf`]).
pub fn compressed_gltf(
    original: &GltfDoc,
    asset: &Asset,
    clips: &[GltfClip],
) -> Result<CompressedGltf, ExportError> {
    let anim_count = original.array("animations").len();
    if clips.len() != asset.clips.len() || anim_count != clips.len() {
        return Err(ExportError::new(format!(
            "{} compressed clips for {} clips ({} animations in the file)",
            clips.len(),
            asset.clips.len(),
            anim_count
        )));
    }
    let skeleton = &asset.skeleton;
    let mut node_joint: HashMap<usize, usize> = HashMap::new();
    for (j, joint) in skeleton.joints.iter().enumerate() {
        let n = joint
            .source_node
            .ok_or_else(|| ExportError::new(format!("joint '{}' has no glTF node", joint.name)))?;
        node_joint.insert(n, j);
    }
    let mut doc = original.clone();
    let mut reports = Vec::new();
    for (i, gc) in clips.iter().enumerate() {
        let cc = &gc.compressed;
        let raw = &asset.clips[i];
        if cc.frame_count != raw.frame_count || !cc.matches(skeleton) {
            return Err(ExportError::new(format!(
                "compressed clip '{}' does not match clip '{}'",
                cc.name, raw.name
            )));
        }
        let original_bytes = sampler_bytes(&doc, i);
        let mut report = write_animation(&mut doc, i, &gc.channels, cc, skeleton, &node_joint)?;
        report.original_bytes = original_bytes;
        report.exported_bytes = sampler_bytes(&doc, i);
        report.max_error = gc.max_error;
        report.worst_ratio = gc.worst_ratio;
        report.tolerance_factor = gc.tolerance_factor;
        if report.exported_bytes >= original_bytes {
            // The source is already smaller (few keys, STEP or CUBICSPLINE): keep it as is.
            doc.array_mut("animations")[i] = original.array("animations")[i].clone();
            report.exported_bytes = original_bytes;
            report.kept_original = true;
            report.max_error = 0.0;
            report.worst_ratio = 0.0;
        }
        reports.push(report);
    }
    let compacted = compact::compact(&mut doc);
    Ok(CompressedGltf {
        doc,
        animations: reports,
        compacted,
    })
}

/// Reads `input`, replaces its animations by `clips` and writes `output` (`.glb` or
/// `.gltf`, atomically; never over `input` unless `force`).
pub fn export_gltf(
    input: &Path,
    output: &Path,
    asset: &Asset,
    clips: &[GltfClip],
    force: bool,
) -> Result<CompressedGltf, ExportError> {
    let format = GltfFormat::from_path(output)?;
    let bytes = std::fs::read(input)
        .map_err(|e| ExportError::new(format!("{}: cannot read: {e}", input.display())))?;
    let original = GltfDoc::from_bytes(input, &bytes)?;
    let out = compressed_gltf(&original, asset, clips)?;
    super::write_output(output, &out.doc.to_bytes(format)?, Some(input), force)?;
    Ok(out)
}

/// Makes sure the key times let an importer recover the clip's rate and length: some
/// channel must hold two consecutive frames and some the last frame. Where none does, a
/// key is inserted that leaves the curve unchanged (a split at frame 1).
fn anchor_time_grid(channels: &mut Vec<Channel>, cc: &CompressedClip, skeleton: &Skeleton) {
    let last = cc.frame_count.saturating_sub(1) as u32;
    if last == 0 {
        return;
    }
    let consecutive = channels
        .iter()
        .any(|c| c.frames.windows(2).any(|w| w[1] == w[0] + 1));
    let has_last = channels.iter().any(|c| c.frames.last() == Some(&last));
    if consecutive && has_last {
        return;
    }
    let best = channels
        .iter()
        .enumerate()
        .filter(|(_, c)| c.frames.len() >= 2)
        .max_by_key(|(_, c)| c.frames.len())
        .map(|(i, _)| i);
    match best {
        Some(i) if !consecutive && has_last => split_at(&mut channels[i], 1),
        _ => {
            // Only constants: hold one of them (or the root's rest rotation) on a 3-key line.
            let (joint, kind, value) = match channels.first() {
                Some(c) => (c.joint, c.kind, c.values[0]),
                None => (0, 1, Vec4::from(skeleton.joints[0].rest.rotation)),
            };
            channels.retain(|c| !(c.joint == joint && c.kind == kind));
            channels.push(Channel {
                joint,
                kind,
                interp: Interp::Linear,
                frames: if last == 1 {
                    vec![0, 1]
                } else {
                    vec![0, 1, last]
                },
                values: vec![value; if last == 1 { 2 } else { 3 }],
                tangents: vec![],
                storage: Storage::Float,
            });
        }
    }
}

/// Inserts a key at `frame` that reproduces the curve exactly (a linear segment's point, or
/// a cubic's value and derivative).
fn split_at(c: &mut Channel, frame: u32) {
    let Err(pos) = c.frames.binary_search(&frame) else {
        return;
    };
    if pos == 0 || pos == c.frames.len() {
        return;
    }
    let (f0, f1) = (c.frames[pos - 1] as f32, c.frames[pos] as f32);
    let dt = f1 - f0;
    let u = (frame as f32 - f0) / dt;
    match c.interp {
        Interp::Linear => {
            let v = c.sample(frame as f32);
            c.values.insert(pos, v);
        }
        Interp::CubicSpline => {
            let (p0, p1) = (c.values[pos - 1], c.values[pos]);
            let (m0, m1) = (c.tangents[pos - 1] * dt, c.tangents[pos] * dt);
            let (u2, u3) = (u * u, u * u * u);
            let v = p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
                + m0 * (u3 - 2.0 * u2 + u)
                + p1 * (-2.0 * u3 + 3.0 * u2)
                + m1 * (u3 - u2);
            let d = p0 * (6.0 * u2 - 6.0 * u)
                + m0 * (3.0 * u2 - 4.0 * u + 1.0)
                + p1 * (-6.0 * u2 + 6.0 * u)
                + m1 * (3.0 * u2 - 2.0 * u);
            c.values.insert(pos, v);
            c.tangents.insert(pos, d / dt);
        }
    }
    c.frames.insert(pos, frame);
}

/// Chooses SHORT or float per rotation channel: SHORT wherever it fits, then back to float
/// on the chains of joints the rounding pushes over their limit (the larger of the tolerance
/// and what the codec itself reached). Returns the final max error and worst ratio.
fn choose_storage(
    channels: &mut [Channel],
    skeleton: &Skeleton,
    raw: &crate::model::Clip,
    cc: &CompressedClip,
    settings: &Resolved,
) -> (f32, f32) {
    let rate = cc.sample_rate;
    // Verify against a 1% guard band: players evaluate the curves in their own precision
    // (animeval in f64, engines in f32), which moves far joints of a large character by
    // up to ~0.5 µm.
    let mut guarded = settings.limits.clone();
    for t in guarded.tolerance.iter_mut() {
        *t *= PLAYER_GUARD;
    }
    let limits = &guarded;
    // Quarter points between samples, as glTF checkers (animeval --oversample 4) look.
    let reference = Reference::with_inner_points(skeleton, raw, raw.frame_count, 3);
    let rest: Vec<Transform> = skeleton.joints.iter().map(|j| j.rest).collect();
    let float_only = Played::new(&rest, channels, rate, cc.frame_count);
    let base = measure(skeleton, &reference, &float_only, limits, true);
    let allowed: Vec<f32> = (0..skeleton.len())
        .map(|j| limits.tolerance[j].max(base.joint_max[j]) * (1.0 + 1e-4))
        .collect();
    for c in channels.iter_mut() {
        if c.short_eligible(rate) {
            c.storage = Storage::Short;
        }
    }
    loop {
        let played = Played::new(&rest, channels, rate, cc.frame_count);
        let e = measure(skeleton, &reference, &played, limits, true);
        let over: Vec<usize> = (0..skeleton.len())
            .filter(|&j| limits.evaluated[j] && e.joint_max[j] > allowed[j])
            .collect();
        let mut changed = false;
        for &j in &over {
            for c in channels.iter_mut() {
                if c.storage == Storage::Short && skeleton.is_ancestor_or_self(c.joint, j) {
                    c.storage = Storage::Float;
                    changed = true;
                }
            }
        }
        if over.is_empty() || !changed {
            let max = e.samples.max.max(e.midpoints.map_or(0.0, |m| m.max));
            let ratio = e
                .samples
                .worst_ratio
                .max(e.midpoints.map_or(0.0, |m| m.worst_ratio));
            return (max, ratio);
        }
    }
}

fn write_animation(
    doc: &mut GltfDoc,
    index: usize,
    channels: &[Channel],
    cc: &CompressedClip,
    skeleton: &Skeleton,
    node_joint: &HashMap<usize, usize>,
) -> Result<AnimationExport, ExportError> {
    let anim = doc.array("animations")[index].clone();
    let old_channels = anim
        .get("channels")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let old_samplers = anim
        .get("samplers")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let mut samplers: Vec<Value> = Vec::new();
    let mut out_channels: Vec<Value> = Vec::new();
    // Carried over unchanged: morph weights and nodes outside the skeleton.
    for ch in &old_channels {
        let target = ch.get("target");
        let path = target.and_then(|t| t.get("path")).and_then(Value::as_str);
        let node = target.and_then(|t| t.get("node")).and_then(Value::as_u64);
        let keep = path == Some("weights")
            || node.is_none_or(|n| !node_joint.contains_key(&(n as usize)))
            || !matches!(path, Some("translation" | "rotation" | "scale"));
        if !keep {
            continue;
        }
        let s = ch.get("sampler").and_then(Value::as_u64).ok_or_else(|| {
            ExportError::new(format!("animation {index}: a channel has no sampler"))
        })? as usize;
        let sampler = old_samplers.get(s).cloned().ok_or_else(|| {
            ExportError::new(format!(
                "animation {index}: channel sampler {s} does not exist"
            ))
        })?;
        let mut ch = ch.clone();
        ch["sampler"] = json!(samplers.len());
        samplers.push(sampler);
        out_channels.push(ch);
    }
    let rate = cc.sample_rate as f64;
    let mut times: HashMap<Vec<u32>, usize> = HashMap::new();
    let mut report = AnimationExport {
        name: cc.name.clone(),
        original_bytes: 0,
        exported_bytes: 0,
        channels: 0,
        cubic_channels: 0,
        short_rotations: 0,
        float_rotations: 0,
        max_error: 0.0,
        worst_ratio: 0.0,
        tolerance_factor: 1.0,
        kept_original: false,
    };
    for c in channels {
        let input = match times.get(&c.frames) {
            Some(&a) => a,
            None => {
                let t: Vec<f32> = c
                    .frames
                    .iter()
                    .map(|&f| (cc.start_time as f64 + f as f64 / rate) as f32)
                    .collect();
                let a = doc.push_f32(&t, 1, "SCALAR", true, None);
                times.insert(c.frames.clone(), a);
                a
            }
        };
        let out = c.output(cc.sample_rate);
        let output = match c.storage {
            Storage::Short => {
                let v: Vec<i16> = out
                    .iter()
                    .flat_map(|v| v.to_array().map(to_short))
                    .collect();
                doc.push_i16_normalized(&v, 4, "VEC4")
            }
            Storage::Float if c.is_rotation() => {
                let v: Vec<f32> = out.iter().flat_map(|v| v.to_array()).collect();
                doc.push_f32(&v, 4, "VEC4", false, None)
            }
            Storage::Float => {
                let v: Vec<f32> = out.iter().flat_map(|v| v.truncate().to_array()).collect();
                doc.push_f32(&v, 3, "VEC3", false, None)
            }
        };
        let interpolation = match c.interp {
            Interp::Linear => "LINEAR",
            Interp::CubicSpline => "CUBICSPLINE",
        };
        let node = skeleton.joints[c.joint].source_node.expect("checked above");
        let path = ["translation", "rotation", "scale"][c.kind];
        out_channels.push(json!({
            "sampler": samplers.len(),
            "target": { "node": node, "path": path },
        }));
        samplers.push(json!({ "input": input, "output": output, "interpolation": interpolation }));
        report.channels += 1;
        report.cubic_channels += usize::from(c.interp == Interp::CubicSpline);
        if c.is_rotation() {
            match c.storage {
                Storage::Short => report.short_rotations += 1,
                Storage::Float => report.float_rotations += 1,
            }
        }
    }
    let target = &mut doc.array_mut("animations")[index];
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    target["channels"] = Value::Array(out_channels);
    target["samplers"] = Value::Array(samplers);
    Ok(report)
}

/// Bytes of the accessors animation `index`'s samplers reference (each once): count x
/// element size, the way `animeval.py` counts them.
pub fn sampler_bytes(doc: &GltfDoc, index: usize) -> usize {
    let mut seen = std::collections::BTreeSet::new();
    let anim = &doc.array("animations")[index];
    for s in anim
        .get("samplers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for k in ["input", "output"] {
            if let Some(a) = s.get(k).and_then(Value::as_u64) {
                seen.insert(a as usize);
            }
        }
    }
    let accessors = doc.array("accessors");
    seen.iter()
        .filter_map(|&a| accessors.get(a))
        .map(|a| {
            let count = a.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
            let comps = match a.get("type").and_then(Value::as_str) {
                Some("SCALAR") => 1,
                Some("VEC2") => 2,
                Some("VEC3") => 3,
                Some("VEC4") | Some("MAT2") => 4,
                Some("MAT3") => 9,
                Some("MAT4") => 16,
                _ => 0,
            };
            let size = match a
                .get("componentType")
                .and_then(Value::as_u64)
                .map(|c| c as u32)
            {
                Some(component::I8) | Some(component::U8) => 1,
                Some(component::I16) | Some(component::U16) => 2,
                _ => 4,
            };
            count * comps * size
        })
        .sum()
}

/// For the CLI and the app: compresses every clip of `asset` for glTF ([`encode_for_gltf`],
/// in parallel) and writes the compressed copy of `asset.path` to `output`.
pub fn compress_to_gltf(
    asset: &Asset,
    settings: &crate::settings::Settings,
    output: &Path,
    force: bool,
) -> Result<CompressedGltf, ExportError> {
    use rayon::prelude::*;
    let control = crate::codec::Control::new();
    let clips = asset
        .clips
        .par_iter()
        .map(|clip| {
            let resolved = settings.resolve(asset, &clip.name);
            encode_for_gltf(&asset.skeleton, clip, &resolved, &control)
                .map_err(|e| ExportError::new(format!("clip '{}': {e}", clip.name)))
        })
        .collect::<Result<Vec<_>, _>>()?;
    export_gltf(&asset.path, output, asset, &clips, force)
}

/// Writes clips already compressed at the user's tolerance (no tighter re-runs, so SHORT
/// rotations are used only where the codec left room for them).
pub fn write_compressed_gltf(
    asset: &Asset,
    clips: &[CompressedClip],
    settings: &crate::settings::Settings,
    output: &Path,
    force: bool,
) -> Result<CompressedGltf, ExportError> {
    if clips.len() != asset.clips.len() {
        return Err(ExportError::new(format!(
            "{} compressed clips for {} clips",
            clips.len(),
            asset.clips.len()
        )));
    }
    let prepared: Vec<GltfClip> = clips
        .iter()
        .zip(&asset.clips)
        .map(|(cc, raw)| {
            let resolved = settings.resolve(asset, &raw.name);
            GltfClip::new(&asset.skeleton, raw, cc.clone(), &resolved)
        })
        .collect();
    export_gltf(&asset.path, output, asset, &prepared, force)
}
