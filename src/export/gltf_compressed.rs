//! The original glTF with its animations replaced by compressed ones (issue 6).
//!
//! The JSON is edited as a `serde_json::Value`: every animation's skeleton channels are
//! rewritten from the codec's tracks (Catmull-Rom as CUBICSPLINE with the spline's exact
//! tangents, linear as LINEAR, a constant as one key, rest tracks as one key where the source
//! keyed the property); morph-weight channels and channels on nodes outside the
//! skeleton are carried over unchanged. Everything else (meshes, skins, materials, textures,
//! names, extras, extensions) is left as it was. New data is appended to buffer 0; the
//! replaced data is then dropped when that is provably safe (see [`super::compact`]).
//!
//! An animation whose compressed form would not be smaller than the original's sampler data
//! is kept unchanged (zero error).
//!
//! Rotations are stored as normalized SHORT where every stored value fits and the rounding
//! keeps each joint within its tolerance, measured on what players compute under every rule
//! of the target [`Player`] (slerp, nlerp, keys as stored); float otherwise. For portable
//! players rotations are LINEAR with keys inserted where nlerp would leave slerp's path.
//! A property the source animated keeps a channel (one key when it equals the rest pose,
//! unless `drop_rest_channels`); a property it did not animate gets none. Channels with identical key frames share one
//! time accessor.

use std::collections::HashMap;
use std::path::Path;

use serde_json::{Map, Value, json};

use super::channels::{Channel, Interp, Player, Storage, TICKS};
use super::clip_memo::{ClipMemo, encode_for_gltf_memo};
use super::gltf_animations::keyed_channels;
use super::gltf_clip::ClipToEncode;
pub use super::gltf_clip::{
    FileKeyed, GltfClip, GltfOptions, Keyed, PLAYER_GUARD, TOLERANCE_FACTORS, TRANSLATION_STEP,
    encode_for_gltf,
};
use super::gltf_doc::component;
use super::{ExportError, GltfDoc, GltfFormat, compact};
use crate::codec::CompressedClip;
use crate::import::Asset;
use crate::model::Skeleton;
use crate::settings::{Effort, Resolved};

/// One channel as written (for scripts: `--json`).
#[derive(Clone, Debug, serde::Serialize)]
pub struct ChannelExport {
    pub node: String,
    pub path: &'static str,
    pub interpolation: &'static str,
    pub keys: usize,
    /// `float` or `short` (normalized 16-bit rotations).
    pub storage: &'static str,
}

/// What was written for one animation.
#[derive(Clone, Debug, serde::Serialize)]
pub struct AnimationExport {
    pub name: String,
    /// The players this animation was verified for (`portable` or `gltf`).
    pub player: &'static str,
    /// The clip's tolerance and marker offset (first deforming joint), in `unit`.
    pub tolerance: f32,
    pub marker_offset: f32,
    /// The scene unit (`m` or `cm`).
    pub unit: String,
    /// Bytes of the accessors the animation's samplers reference (count x element size,
    /// each accessor once), as `animeval.py` counts them.
    pub original_bytes: usize,
    pub exported_bytes: usize,
    /// Bytes the animation's accessors take in the file: `exported_bytes` unless
    /// meshopt-compressed (then the compressed views pro-rated per accessor, as
    /// `animeval.py` reports "stored" bytes).
    pub stored_bytes: usize,
    pub channels: usize,
    pub cubic_channels: usize,
    pub short_rotations: usize,
    pub float_rotations: usize,
    /// Largest visual error of the exported channels over samples and quarter points, the
    /// worst over the player's rules (slerp, nlerp, keys as stored), and the largest
    /// error / tolerance ratio.
    pub max_error: f32,
    pub worst_ratio: f32,
    /// The tolerance scale the codec ran at.
    pub tolerance_factor: f32,
    /// The original animation was smaller than the compressed one and was kept unchanged.
    pub kept_original: bool,
    /// Channels written on skeleton nodes (carried-over channels excluded).
    pub channel_list: Vec<ChannelExport>,
    /// Morph-weight channels: how many, and those compressed ([`super::morph_weights`]).
    pub scalar_tracks: super::morph_weights::ScalarTracks,
}

/// The result of [`compressed_gltf`].
#[derive(Clone, Debug)]
pub struct CompressedGltf {
    pub doc: GltfDoc,
    pub animations: Vec<AnimationExport>,
    /// Whether the replaced animation data was removed from the buffer.
    pub compacted: bool,
    /// Non-fatal observations on writing (an image that could not be embedded).
    pub warnings: Vec<String>,
}

/// Replaces the animations of `original` (the file `asset` was imported from) by `clips`
/// (one per asset clip, in order; see [`GltfClip::new`] and [`encode_for_gltf`]).
pub fn compressed_gltf(
    original: &GltfDoc,
    asset: &Asset,
    clips: &[GltfClip],
    settings: &crate::settings::Settings,
    player: Player,
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
        if cc.playback.looping && cc.frame_count == raw.frame_count + 1 {
            return Err(ExportError::new(format!(
                "clip '{}' was compressed as a loop with its first frame appended; glTF has no \
                 loop flag: write a .skp, or compress it for glTF without `looping`",
                raw.name
            )));
        }
        if cc.frame_count != raw.frame_count || !cc.matches(skeleton) {
            return Err(ExportError::new(format!(
                "compressed clip '{}' does not match clip '{}'",
                cc.name, raw.name
            )));
        }
        let original_bytes = sampler_bytes(&doc, i);
        let resolved = settings.resolve(asset, &raw.name);
        let first = skeleton.deforming_joints().next().unwrap_or(0);
        let scalar = super::morph_weights::ScalarLimits {
            tolerance: resolved.limits.tolerance.get(first).copied().unwrap_or(0.0),
            weight_tolerance: settings.weight_tolerance.unwrap_or(0.0),
        };
        let mut report = write_animation(&mut doc, i, &gc.channels, cc, skeleton, &node_joint)?;
        report.original_bytes = original_bytes;
        report.exported_bytes = sampler_bytes(&doc, i);
        report.max_error = gc.max_error;
        report.worst_ratio = gc.worst_ratio;
        report.tolerance_factor = gc.tolerance_factor;
        report.player = player.name();
        if first < skeleton.len() {
            report.tolerance = resolved.limits.tolerance[first];
            report.marker_offset = resolved.limits.marker_offset[first];
        }
        report.unit = resolved.unit.symbol().to_string();
        // The source is already no larger (few keys, STEP or CUBICSPLINE, or an export
        // compressed again): keep it as it is where every rule of the player plays it as
        // the spec does, or where it is measured within the tolerance under every rule.
        let kept = (report.exported_bytes >= original_bytes || gc.worst_ratio > 1.0)
            .then(|| {
                if player.allows_cubic() || portable_as_is(original, i, &node_joint) {
                    Some((0.0, 0.0))
                } else {
                    super::original::verified(
                        original,
                        i,
                        skeleton,
                        raw,
                        &resolved,
                        player,
                        &node_joint,
                    )
                    .filter(|&(ratio, _)| ratio <= 1.0)
                }
            })
            .flatten();
        if let Some((ratio, max)) = kept {
            doc.array_mut("animations")[i] = original.array("animations")[i].clone();
            report.exported_bytes = original_bytes;
            report.kept_original = true;
            report.max_error = max;
            report.worst_ratio = ratio * super::verify::PLAYER_GUARD;
            report.channel_list = Vec::new();
        }
        report.scalar_tracks = super::morph_weights::compress_animation(&mut doc, i, scalar);
        if !report.scalar_tracks.compressed.is_empty() {
            report.exported_bytes = sampler_bytes(&doc, i);
        }
        // The source rate, so that skelpack reopens the export at it, and the clip's events
        // (`import::extras`).
        let anim = &mut doc.array_mut("animations")[i];
        if anim.is_object() {
            let extras = crate::import::extras::with_rate(anim.get("extras"), raw.sample_rate);
            anim["extras"] =
                crate::import::extras::with_events(extras, &cc.playback.events, raw.start_time);
        }
        report.stored_bytes = report.exported_bytes;
        reports.push(report);
    }
    if super::share::share_accessors(&mut doc) > 0 {
        for (i, r) in reports.iter_mut().enumerate() {
            if !r.kept_original {
                r.exported_bytes = sampler_bytes(&doc, i);
                r.stored_bytes = r.exported_bytes;
            }
        }
    }
    let compacted = compact::compact(&mut doc);
    Ok(CompressedGltf {
        doc,
        animations: reports,
        compacted,
        warnings: Vec::new(),
    })
}

/// Whether animation `index` of `doc` plays the same under every portable rule as under
/// the spec and holds only what the portable rules cover: no CUBICSPLINE channel on a
/// skeleton node (Blender ignores the tangents; `portable` writes LINEAR and STEP only) and
/// no LINEAR rotation there (nlerp, keys as stored); STEP channels and LINEAR translations /
/// scales evaluate alike everywhere.
fn portable_as_is(doc: &GltfDoc, index: usize, node_joint: &HashMap<usize, usize>) -> bool {
    let anim = &doc.array("animations")[index];
    let samplers = anim.get("samplers").and_then(Value::as_array);
    let channels = anim.get("channels").and_then(Value::as_array);
    channels.into_iter().flatten().all(|ch| {
        let target = ch.get("target");
        let node = target.and_then(|t| t.get("node")).and_then(Value::as_u64);
        let path = target.and_then(|t| t.get("path")).and_then(Value::as_str);
        if node.is_none_or(|n| !node_joint.contains_key(&(n as usize))) {
            return true;
        }
        let interp = ch
            .get("sampler")
            .and_then(Value::as_u64)
            .and_then(|s| samplers.and_then(|v| v.get(s as usize)))
            .and_then(|s| s.get("interpolation"))
            .and_then(Value::as_str);
        match interp {
            Some("STEP") => true,
            Some("CUBICSPLINE") => false,
            _ => path != Some("rotation"),
        }
    })
}

/// Reads `input`, replaces its animations by `clips` and writes `output` (`.glb` or
/// `.gltf`, atomically; never over `input` unless `force`).
pub fn export_gltf(
    input: &Path,
    output: &Path,
    asset: &Asset,
    clips: &[GltfClip],
    settings: &crate::settings::Settings,
    player: Player,
    force: bool,
) -> Result<CompressedGltf, ExportError> {
    let original = GltfDoc::read(input)?;
    export_doc(
        &original,
        Some(input),
        output,
        asset,
        clips,
        settings,
        &GltfOptions {
            player,
            ..GltfOptions::default()
        },
        force,
    )
}

/// Replaces the animations of `original` (the document `asset` was imported from) by
/// `clips` and writes `output`; never over `input` unless `force`.
#[allow(clippy::too_many_arguments)]
fn export_doc(
    original: &GltfDoc,
    input: Option<&Path>,
    output: &Path,
    asset: &Asset,
    clips: &[GltfClip],
    settings: &crate::settings::Settings,
    options: &GltfOptions,
    force: bool,
) -> Result<CompressedGltf, ExportError> {
    let format = GltfFormat::from_path(output)?;
    let mut out = compressed_gltf(original, asset, clips, settings, options.player)?;
    if let Some(fallback) = options.meshopt {
        out.doc = super::meshopt::compress_animation_data(&out.doc, fallback)?;
        for (i, a) in out.animations.iter_mut().enumerate() {
            a.stored_bytes = super::meshopt::stored_bytes(&out.doc, Some(i)).round() as usize;
        }
    }
    if let Some(input) = input {
        // Relative image URIs would not resolve from another folder.
        out.warnings = super::images::embed_if_moved(&mut out.doc, input, output);
    }
    super::write_output(output, &out.doc.to_bytes(format)?, input, force)?;
    Ok(out)
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
    // Carried over unchanged: morph weights (compressed afterwards, whichever animation is
    // kept: `morph_weights::compress_animation`) and nodes outside the skeleton.
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
        player: "",
        tolerance: 0.0,
        marker_offset: 0.0,
        unit: String::new(),
        channel_list: Vec::new(),
        original_bytes: 0,
        exported_bytes: 0,
        stored_bytes: 0,
        channels: 0,
        cubic_channels: 0,
        short_rotations: 0,
        float_rotations: 0,
        max_error: 0.0,
        worst_ratio: 0.0,
        tolerance_factor: 1.0,
        kept_original: false,
        scalar_tracks: Default::default(),
    };
    for c in channels {
        let input = match times.get(&c.ticks) {
            Some(&a) => a,
            None => {
                let t: Vec<f32> = c
                    .ticks
                    .iter()
                    .map(|&k| (cc.start_time as f64 + k as f64 / TICKS as f64 / rate) as f32)
                    .collect();
                let a = doc.push_f32(&t, 1, "SCALAR", true, None);
                times.insert(c.ticks.clone(), a);
                a
            }
        };
        let out = c.output(cc.sample_rate);
        let output = match c.storage {
            Storage::Short | Storage::Quat(_) => {
                doc.push_i16_normalized(&c.short_output(cc.sample_rate), 4, "VEC4")
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
        report.channel_list.push(ChannelExport {
            node: skeleton.joints[c.joint].name.clone(),
            path,
            interpolation,
            keys: c.ticks.len(),
            storage: match c.storage {
                Storage::Short => "short",
                Storage::Quat(_) => "quat",
                Storage::Float => "float",
            },
        });
        report.cubic_channels += usize::from(c.interp == Interp::CubicSpline);
        if c.is_rotation() {
            match c.storage {
                Storage::Short | Storage::Quat(_) => report.short_rotations += 1,
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
/// in parallel) and writes the compressed copy of `asset.path` to `output`. A BVH or ACL
/// source is first converted to a glTF scene in metres in memory (as `skelpack convert`
/// writes it, [`super::metres`]), keeping the tolerance and marker offsets it prescribes;
/// the report's errors are then in metres.
pub fn compress_to_gltf(
    asset: &Asset,
    settings: &crate::settings::Settings,
    output: &Path,
    options: &GltfOptions,
    force: bool,
) -> Result<CompressedGltf, ExportError> {
    compress_to_gltf_memo(asset, settings, output, options, force, None)
}

/// [`compress_to_gltf`], taking clips encoded by an earlier export of the same file from
/// `memo` (`skelpack watch`, "Export on save"); the file written is the same.
pub fn compress_to_gltf_memo(
    asset: &Asset,
    settings: &crate::settings::Settings,
    output: &Path,
    options: &GltfOptions,
    force: bool,
    memo: Option<&ClipMemo>,
) -> Result<CompressedGltf, ExportError> {
    use rayon::prelude::*;
    // The measuring buffers kept per thread live as long as this export.
    let _spares = super::remeasure::SpareRelease;
    let from_zero = super::gltf_animations::pieces_from_time_zero(asset, settings);
    let asset = from_zero.as_ref();
    let in_metres;
    let (original, converted, settings) = if super::metres::converts(asset.format) {
        // Converted in metres (glTF's unit) from the unit in force; the settings' unit
        // override, if any, was that conversion's.
        // Additive clips become the full clips players show (export/additive.rs).
        let (composed, _) = super::additive::compose_additives(asset, settings);
        let (doc, a) = convert_in_memory(&super::metres::in_metres(
            &composed,
            settings.unit_for(asset),
        ))?;
        in_metres = crate::settings::Settings {
            unit: None,
            ..settings.clone()
        };
        (doc, Some(a), &in_metres)
    } else {
        let mut doc = GltfDoc::read(&asset.path)?;
        super::gltf_animations::append_pieces(&mut doc, asset, settings)?;
        (doc, None, settings)
    };
    let source = converted.as_ref().unwrap_or(asset);
    // Without a memo from the caller, one for this export: the tighter presets' passes and
    // the clip-switch rounds meet the same encodings and pairs again.
    let own_memo = ClipMemo::default();
    let memo = Some(memo.unwrap_or(&own_memo));
    let control = crate::codec::Control::new();
    let keyed = FileKeyed::new(
        (0..source.clips.len())
            .map(|i| keyed_channels(&original, i, &source.skeleton))
            .collect(),
    );
    let resolved: Vec<Resolved> = source
        .clips
        .iter()
        .map(|c| settings.resolve(source, &c.name))
        .collect();
    let encode_all = |limits: &[Resolved]| -> Result<Vec<GltfClip>, ExportError> {
        source
            .clips
            .par_iter()
            .enumerate()
            .map(|(i, clip)| {
                let to_encode = ClipToEncode {
                    skeleton: &source.skeleton,
                    raw: clip,
                    settings: &limits[i],
                    control: &control,
                    options,
                    keyed: Some(keyed.of(i)),
                };
                encode_for_gltf_memo(memo, &to_encode, None)
                    .map_err(|e| ExportError::new(format!("clip '{}': {e}", clip.name)))
            })
            .collect()
    };
    // Every clip must also hold when played after any other without a reset of the pose.
    let switch = |clips: &mut [GltfClip], encoded_with: &[Resolved]| {
        super::clip_switch::hold_switches(
            &source.skeleton,
            &source.clips,
            keyed.clips(),
            clips,
            &resolved,
            encoded_with,
            options,
            &control,
            memo,
        )
        .map_err(|e| ExportError::new(format!("clip switching: {e}")))
    };
    let mut clips = encode_all(&resolved)?;
    let mut after_switch = switch(&mut clips, &resolved)?;
    // The limits each kept clip was encoded with (a tighter preset's where its export is
    // kept): switching re-encodes a clip from these, never from looser ones.
    let mut encoded_with = resolved.clone();
    // A looser preset never gives a larger clip than a tighter one: each tighter preset's
    // export holds the looser limits too; per clip, the smaller is kept (then switching is
    // checked again on the mix).
    let tighter: Vec<Vec<Resolved>> = source
        .clips
        .iter()
        .zip(&resolved)
        .map(|(c, r)| match r.effort {
            // The edit loop's export: the clip's own limits only.
            Effort::Fast => Vec::new(),
            Effort::Default | Effort::Max => tighter_presets(settings, source, &c.name, r),
        })
        .collect();
    for k in 0..tighter.iter().map(Vec::len).max().unwrap_or(0) {
        let limits: Vec<Resolved> = (0..clips.len())
            .map(|i| tighter[i].get(k).unwrap_or(&resolved[i]).clone())
            .collect();
        let mut other = encode_all(&limits)?;
        let other_switch = switch(&mut other, &limits)?;
        let mut changed = false;
        for i in (0..clips.len()).filter(|&i| k < tighter[i].len()) {
            let ratio = other[i].worst_ratio.max(other_switch[i]);
            if ratio <= 1.0 && other[i].cost() < clips[i].cost() {
                clips[i] = other[i].clone();
                encoded_with[i] = limits[i].clone();
                changed = true;
            }
        }
        if changed {
            after_switch = switch(&mut clips, &encoded_with)?;
        }
    }
    for (c, r) in clips.iter_mut().zip(after_switch) {
        c.worst_ratio = c.worst_ratio.max(r);
    }
    export_doc(
        &original,
        Some(&asset.path),
        output,
        source,
        &clips,
        settings,
        options,
        force,
    )
}

/// The clip's settings under each preset whose limits are strictly tighter than
/// `resolved` for every joint: a tolerance no larger, and no larger relative to the marker
/// offset (a rotation error `a` at distance `d` moves a marker at offset `m` by about
/// `a (d + m)`, so an export within `t'` at `m'` is within `t` at `m` when `t' <= t` and
/// `t' m <= t m'`).
fn tighter_presets(
    settings: &crate::settings::Settings,
    asset: &Asset,
    clip: &str,
    resolved: &Resolved,
) -> Vec<Resolved> {
    let mine = &resolved.limits;
    crate::settings::Preset::ALL
        .iter()
        .map(|&p| {
            crate::settings::Settings {
                preset: Some(p),
                ..settings.clone()
            }
            .resolve(asset, clip)
        })
        .filter(|r| {
            let l = &r.limits;
            l.tolerance != mine.tolerance
                && (0..mine.tolerance.len()).all(|j| {
                    !mine.evaluated[j]
                        || (l.evaluated[j]
                            && l.tolerance[j] <= mine.tolerance[j]
                            && l.tolerance[j] * mine.marker_offset[j]
                                <= mine.tolerance[j] * l.marker_offset[j])
                })
        })
        .collect()
}

/// A BVH or ACL asset as the glTF scene `skelpack convert` writes, and that scene
/// re-imported, carrying the source's tolerance, marker offsets and units.
fn convert_in_memory(asset: &Asset) -> Result<(GltfDoc, Asset), ExportError> {
    if asset.clips.is_empty() {
        return Err(ExportError::new(format!(
            "{}: has no clip to compress (no animation)",
            asset.path.display()
        )));
    }
    let doc = super::scene_to_gltf(&asset.skeleton, &asset.clips, &asset.meshes)?;
    let bytes = doc.to_bytes(GltfFormat::Binary)?;
    let path = asset.path.with_extension("converted.glb");
    // Named as the input: `path` is an in-memory name no one can open.
    let mut converted = crate::import::load_bytes(&path, &bytes).map_err(|e| {
        ExportError::new(format!(
            "{}: as a glTF scene it does not read back: {}",
            asset.path.display(),
            e.message
        ))
    })?;
    converted.path = asset.path.clone();
    converted.source_tolerance = asset.source_tolerance;
    converted.units = asset.units.clone();
    for joint in converted.skeleton.joints.iter_mut() {
        if let Some(j) = asset.skeleton.find(&joint.name) {
            joint.source_marker_offset = asset.skeleton.joints[j].source_marker_offset;
        }
    }
    let doc = GltfDoc::from_bytes(&path, &bytes)?;
    Ok((doc, converted))
}

/// Writes clips already compressed at the user's tolerance (no tighter re-runs, so SHORT
/// rotations are used only where the codec left room for them). Cubic tracks become dense
/// LINEAR ones unless `options.player` allows CUBICSPLINE.
pub fn write_compressed_gltf(
    asset: &Asset,
    clips: &[CompressedClip],
    settings: &crate::settings::Settings,
    output: &Path,
    options: &GltfOptions,
    force: bool,
) -> Result<CompressedGltf, ExportError> {
    if clips.len() != asset.clips.len() {
        return Err(ExportError::new(format!(
            "{} compressed clips for {} clips",
            clips.len(),
            asset.clips.len()
        )));
    }
    let original = GltfDoc::read(&asset.path)?;
    let keyed = FileKeyed::new(
        (0..asset.clips.len())
            .map(|i| keyed_channels(&original, i, &asset.skeleton))
            .collect(),
    );
    let prepared: Vec<GltfClip> = clips
        .iter()
        .zip(&asset.clips)
        .enumerate()
        .map(|(i, (cc, raw))| {
            let resolved = settings.resolve(asset, &raw.name);
            GltfClip::new(
                &asset.skeleton,
                raw,
                &super::verify::clip_reference(&asset.skeleton, raw),
                cc.clone(),
                &resolved,
                options,
                Some(keyed.of(i)),
            )
        })
        .collect();
    export_doc(
        &original,
        Some(&asset.path),
        output,
        asset,
        &prepared,
        settings,
        options,
        force,
    )
}
