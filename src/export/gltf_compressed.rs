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

use glam::Vec4;
use serde_json::{Map, Value, json};

use super::channels::{Channel, Interp, Player, Storage, TICKS, channels_of, tick_frame};
use super::gltf_animations::keyed_channels;
use super::gltf_doc::component;
use super::verify::Splits;
use super::{ExportError, GltfDoc, GltfFormat, compact};
use crate::codec::CompressedClip;
use crate::import::Asset;
use crate::model::Skeleton;
use crate::settings::{Effort, Method, Resolved};

/// What a glTF export targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GltfOptions {
    /// The players the export is verified for.
    pub player: Player,
    /// Drop channels that hold the rest pose even where the source animated the property
    /// (smaller, but players that keep the previous clip's value on un-keyed bones show it).
    pub drop_rest_channels: bool,
    /// Byte-compress the animation data with `EXT_meshopt_compression` (lossless), and how
    /// the uncompressed fallback is handled (see [`super::meshopt`]).
    pub meshopt: Option<super::meshopt::Fallback>,
}

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

/// Which properties of each skeleton joint (translation, rotation, scale) the source drives:
/// this clip's animation, and the file's other animations.
#[derive(Clone, Copy, Debug)]
pub struct Keyed<'a> {
    /// Driven by this clip's animation: these, and only these, get channels.
    pub clip: &'a [[bool; 3]],
    /// Driven by some other animation of the file.
    pub others: &'a [[bool; 3]],
    /// Driven by every other animation of the file (true for a single animation): a player
    /// switching from this clip never holds this clip's last key there.
    pub every_other: &'a [[bool; 3]],
}

/// The properties each animation of a file drives, and what the others drive.
#[derive(Clone, Debug)]
pub struct FileKeyed {
    clips: Vec<Vec<[bool; 3]>>,
    any_other: Vec<Vec<[bool; 3]>>,
    every_other: Vec<Vec<[bool; 3]>>,
}

impl FileKeyed {
    /// From each animation's keyed properties (see [`keyed_channels`]).
    pub fn new(clips: Vec<Vec<[bool; 3]>>) -> Self {
        let n = clips.iter().map(Vec::len).max().unwrap_or(0);
        let fold = |i: usize, all: bool| -> Vec<[bool; 3]> {
            (0..n)
                .map(|j| {
                    std::array::from_fn(|k| {
                        let mut others = clips
                            .iter()
                            .enumerate()
                            .filter(|(a, _)| *a != i)
                            .map(|(_, keyed)| keyed.get(j).is_some_and(|x| x[k]));
                        if all {
                            others.all(|x| x)
                        } else {
                            others.any(|x| x)
                        }
                    })
                })
                .collect()
        };
        let any_other = (0..clips.len()).map(|i| fold(i, false)).collect();
        let every_other = (0..clips.len()).map(|i| fold(i, true)).collect();
        Self {
            clips,
            any_other,
            every_other,
        }
    }

    /// Animation `i`'s view.
    pub fn of(&self, i: usize) -> Keyed<'_> {
        Keyed {
            clip: &self.clips[i],
            others: &self.any_other[i],
            every_other: &self.every_other[i],
        }
    }

    /// Each animation's keyed properties.
    pub fn clips(&self) -> &[Vec<[bool; 3]>] {
        &self.clips
    }
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
    /// What the layout choice minimized (see [`Self::cost`]).
    pub(super) cost: usize,
}

impl GltfClip {
    /// Prepares a compressed clip for writing, measured against `raw` with `settings` under
    /// every rule of `options.player`. `keyed` says which properties the source animations
    /// drive; `None` when unknown (then rest tracks get no channel and every other track one).
    pub fn new(
        skeleton: &Skeleton,
        raw: &crate::model::Clip,
        compressed: CompressedClip,
        settings: &Resolved,
        options: &GltfOptions,
        keyed: Option<Keyed<'_>>,
    ) -> Self {
        let mut channels = channels_of(&compressed);
        if let Some(keyed) = keyed {
            channels.retain(|c| keyed.clip.get(c.joint).is_some_and(|k| k[c.kind]));
            if !options.drop_rest_channels {
                add_rest_channels(&mut channels, skeleton, keyed);
            }
        }
        if !options.player.allows_cubic() {
            for c in channels.iter_mut() {
                *c = c.to_linear();
            }
        }
        if let Some(keyed) = keyed {
            for c in channels.iter_mut() {
                let every = keyed.every_other.get(c.joint).is_some_and(|k| k[c.kind]);
                c.held_end = !every;
            }
        }
        // Without the rate anchor as well, where the last frame stays keyed (the duration
        // holds; an importer then infers the rate from the keys as they are).
        let mut unanchored = channels.clone();
        anchor_time_grid(&mut channels, compressed.frame_count);
        let last = compressed.frame_count.saturating_sub(1) as u32 * TICKS;
        let unanchored = (unanchored != channels
            && unanchored.iter().any(|c| c.ticks.last() == Some(&last)))
        .then(|| {
            exact_end_keys(&mut unanchored, raw);
            unanchored
        });
        exact_end_keys(&mut channels, raw);
        let fit = |channels: &mut Vec<Channel>, splits: Splits| {
            fit_layout(
                channels,
                skeleton,
                raw,
                &compressed,
                settings,
                options,
                splits,
                super::verify::SEARCH_ROUNDS,
            )
        };
        // Key layout by real size: the channels as the codec keyed them, or (where cheaper)
        // at every frame on the shared grid; both verified, the smaller kept. With meshopt,
        // "smaller" is the compressed size, and every channel on the grid is tried as well.
        let rate = compressed.sample_rate;
        let cost = |c: &[Channel]| match options.meshopt {
            Some(_) => super::layout::stored_bytes(c, rate),
            None => super::layout::bytes(c),
        };
        let mut dense = channels.clone();
        let densified = super::layout::densify(&mut dense, compressed.frame_count);
        let mut all_dense = channels.clone();
        let all_densified = options.meshopt.is_some()
            && super::layout::densify_all(&mut all_dense, compressed.frame_count)
            && all_dense != dense;
        let mut source = channels.clone();
        let sourced = super::layout::source_frames(&mut source, raw, false);
        let mut dense_source = dense.clone();
        let dense_sourced = densified && super::layout::source_frames(&mut dense_source, raw, true);
        // Fitted below: the codec's keys with wide segments split first, then the others.
        // Each layout is also tried with nlerp splits only where measured over (sparse keys
        // far apart often stay within tolerance under nlerp: SimpleSkin), the codec's keys
        // also with the whole rotation budget for the first split.
        // At `fast` effort (the edit loop's export) only the codec's keys as they are and
        // the source's frames, each verified like every layout.
        let fast = settings.effort == Effort::Fast;
        let codec_keys = std::mem::take(&mut channels);
        let mut tries = vec![(codec_keys.clone(), Splits::First)];
        if !fast {
            tries.extend([
                (codec_keys.clone(), Splits::WhereOver),
                (codec_keys, Splits::WhereOverWide),
            ]);
            if let Some(keys) = unanchored {
                tries.push((keys, Splits::WhereOverWide));
            }
            if densified {
                tries.extend([(dense.clone(), Splits::WhereOver), (dense, Splits::First)]);
            }
            if all_densified {
                tries.extend([
                    (all_dense.clone(), Splits::WhereOver),
                    (all_dense, Splits::First),
                ]);
            }
        }
        if sourced {
            tries.push((source, Splits::WhereOver));
        }
        if dense_sourced && !fast {
            tries.push((dense_source, Splits::WhereOver));
        }
        // The fits are independent: run at once (a save that changed one long clip leaves
        // it alone to encode), then chosen in order, as one after the other would.
        use rayon::prelude::*;
        let fitted: Vec<(Vec<Channel>, f32, f32, usize)> = tries
            .into_par_iter()
            .map(|(mut candidate, splits)| {
                let (e, r) = fit(&mut candidate, splits);
                let c = cost(&candidate);
                (candidate, e, r, c)
            })
            .collect();
        let mut fitted = fitted.into_iter();
        let (mut channels, mut max_error, mut worst_ratio, mut best_cost) =
            fitted.next().expect("the codec's keys are always tried");
        for (candidate, e, r, c) in fitted {
            // Within tolerance beats over it; then the smaller wins among those no worse.
            let better = if (r <= 1.0) != (worst_ratio <= 1.0) {
                r <= 1.0
            } else {
                r <= worst_ratio.max(1.0) * (1.0 + 1e-4) && c < best_cost
            };
            if better {
                (channels, max_error, worst_ratio, best_cost) = (candidate, e, r, c);
            }
        }
        Self {
            compressed,
            channels,
            max_error,
            worst_ratio,
            tolerance_factor: 1.0,
            cost: best_cost,
        }
    }

    /// Bytes the channels' accessors will take (shared time accessors counted once).
    pub fn bytes(&self) -> usize {
        super::layout::bytes(&self.channels)
    }

    /// What the layout choice minimized: [`Self::bytes`], or with meshopt the estimated
    /// compressed size ([`super::layout::stored_bytes`]).
    pub fn cost(&self) -> usize {
        self.cost
    }
}

/// Verifies `channels` for the player of `options` (nlerp-safe keys, SHORT or QUATERNION
/// storage where it holds; with meshopt, translations first rounded to a power-of-two step
/// well inside the tolerance, in the parent's space: its scale divides the step). Returns
/// the largest error and the worst error / tolerance ratio. `rounds`: at most that many fits
/// with the points of the key intervals the fit's own splits make
/// ([`super::verify::fit_players`]; one while layouts are compared, more in
/// [`super::between`] at the end).
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_layout(
    channels: &mut [Channel],
    skeleton: &Skeleton,
    raw: &crate::model::Clip,
    compressed: &CompressedClip,
    settings: &Resolved,
    options: &GltfOptions,
    splits: Splits,
    rounds: usize,
) -> (f32, f32) {
    // Keys between frames where a CUBICSPLINE source bulges away from its frames' chord.
    let allowance = super::bulge::allowance(skeleton, &settings.limits);
    super::bulge::key_cubic_bulges(channels, raw, &allowance);
    if options.meshopt.is_some() {
        let step =
            super::verify::tolerance_in_parent_space(skeleton, &settings.limits, TRANSLATION_STEP);
        super::layout::round_translations(channels, &step);
    }
    super::verify::fit_players(
        channels,
        skeleton,
        raw,
        compressed.sample_rate,
        compressed.frame_count,
        settings,
        options.player,
        splits,
        options.meshopt.is_some(),
        rounds,
    )
}

pub use super::verify::PLAYER_GUARD;

/// `--meshopt` exports: translation values are rounded to a power-of-two step at most this
/// fraction of the joint's tolerance (moving it by at most ~4% of it).
pub const TRANSLATION_STEP: f32 = 1.0 / 32.0;

/// Tolerance scales tried by [`encode_for_gltf`]: a tighter codec run leaves room for SHORT
/// rotations, which halve a rotation key.
pub const TOLERANCE_FACTORS: [f32; 3] = [1.0, 0.8, 0.6];

/// [`encode_for_gltf`], taken from `memo` when it holds the same clip encoded with the
/// same settings, options and keyed channels (and recorded there when it does not).
pub(super) fn encode_for_gltf_memo(
    memo: Option<&super::clip_memo::ClipMemo>,
    skeleton: &Skeleton,
    raw: &crate::model::Clip,
    settings: &Resolved,
    control: &crate::codec::Control,
    options: &GltfOptions,
    keyed: Option<Keyed<'_>>,
) -> Result<GltfClip, crate::codec::CodecError> {
    let encode = || encode_for_gltf(skeleton, raw, settings, control, options, keyed);
    match memo {
        Some(m) => m.get_or(
            super::clip_memo::ClipMemo::key(skeleton, raw, settings, options, keyed),
            encode,
        ),
        None => encode(),
    }
}

/// Compresses `raw` for glTF: runs the codec at the user's tolerance and at tighter ones
/// ([`TOLERANCE_FACTORS`]; at `fast` effort the user's alone), prepares each for glTF and
/// keeps the smallest whose error is no worse than the first run's (which meets the
/// tolerance whenever the codec can).
pub fn encode_for_gltf(
    skeleton: &Skeleton,
    raw: &crate::model::Clip,
    settings: &Resolved,
    control: &crate::codec::Control,
    options: &GltfOptions,
    keyed: Option<Keyed<'_>>,
) -> Result<GltfClip, crate::codec::CodecError> {
    use rayon::prelude::*;
    // The factors' runs are independent: run at once (a save that changed one clip has
    // only that clip to encode, which would otherwise leave a core idle), chosen in order.
    let factors = match settings.effort {
        // The edit loop's export: the user's tolerance only.
        Effort::Fast => &TOLERANCE_FACTORS[..1],
        Effort::Default | Effort::Max => &TOLERANCE_FACTORS[..],
    };
    let candidates: Vec<Result<GltfClip, crate::codec::CodecError>> = factors
        .par_iter()
        .map(|&factor| {
            let mut tighter = settings.clone();
            for t in tighter.limits.tolerance.iter_mut() {
                *t *= factor;
            }
            if !options.player.allows_cubic()
                && matches!(tighter.method, Method::CatmullRom | Method::Auto)
            {
                // Players that ignore tangents see a cubic track's keys joined by lines.
                tighter.method = Method::Linear;
            }
            let cc = crate::codec::compress(skeleton, raw, &tighter, control)?;
            let mut candidate = GltfClip::new(skeleton, raw, cc, settings, options, keyed);
            candidate.tolerance_factor = factor;
            Ok(candidate)
        })
        .collect();
    let mut best: Option<GltfClip> = None;
    for candidate in candidates {
        let candidate = candidate?;
        best = match best {
            None => Some(candidate),
            Some(b) => {
                // A candidate within tolerance beats one that is not; among those within
                // (or, failing that, no worse), the smaller wins.
                let limit = b.worst_ratio.max(1.0) * (1.0 + 1e-4);
                let fixes = b.worst_ratio > 1.0 && candidate.worst_ratio <= 1.0;
                if fixes || (candidate.worst_ratio <= limit && candidate.cost() < b.cost()) {
                    Some(candidate)
                } else {
                    Some(b)
                }
            }
        };
    }
    let mut best = best.expect("at least one factor");
    best.prune_keys(skeleton, raw, settings, options);
    best.check_between(skeleton, raw, settings, options);
    Ok(best)
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

/// Sets the last key of every multi-key LINEAR channel to the source's own value at that
/// frame: a player switching clips holds it on nodes the next clip does not key, where the
/// codec's error compensation against this clip's parents no longer applies.
fn exact_end_keys(channels: &mut [Channel], raw: &crate::model::Clip) {
    for c in channels.iter_mut() {
        let n = c.ticks.len();
        if n < 2 || c.interp != Interp::Linear || c.ticks[n - 1] % TICKS != 0 {
            continue;
        }
        let frame = (c.ticks[n - 1] / TICKS) as usize;
        let Some(track) = raw.tracks.get(c.joint) else {
            continue;
        };
        if frame >= raw.frame_count {
            continue;
        }
        let t = track.at(frame);
        let v = match c.kind {
            0 => t.translation.extend(0.0),
            1 => {
                let q = Vec4::from(t.rotation);
                if q.dot(c.values[n - 2]) < 0.0 { -q } else { q }
            }
            _ => t.scale.extend(0.0),
        };
        c.values[n - 1] = v;
    }
}

/// One-key channels holding the rest value for every property the source animated that
/// the codec found equal to the rest pose, so that players which keep the previous clip's
/// value on un-keyed nodes still show this clip's pose. That previous clip may come from
/// another file of the same rig (libraries split across files, one clip per file), so the
/// channel is kept whether or not another animation of this file drives the property.
fn add_rest_channels(channels: &mut Vec<Channel>, skeleton: &Skeleton, keyed: Keyed<'_>) {
    let mut have = vec![[false; 3]; skeleton.len()];
    for c in channels.iter() {
        have[c.joint][c.kind] = true;
    }
    for (j, joint) in skeleton.joints.iter().enumerate() {
        for kind in 0..3 {
            let keyed_here = keyed.clip.get(j).is_some_and(|k| k[kind]);
            if !keyed_here || have[j][kind] {
                continue;
            }
            let r = joint.rest;
            let value = match kind {
                0 => r.translation.extend(0.0),
                1 => Vec4::from(r.rotation),
                _ => r.scale.extend(0.0),
            };
            channels.push(Channel {
                joint: j,
                kind,
                interp: Interp::Linear,
                ticks: vec![0],
                values: vec![value],
                tangents: vec![],
                storage: Storage::Float,
                held_end: true,
            });
        }
    }
    channels.sort_by_key(|c| (c.joint, c.kind));
}

/// Makes sure the key times let an importer recover the clip's rate and length: some
/// channel must hold two consecutive frames and some the last frame. Where none does, a
/// key is inserted that leaves the curve unchanged (a split at frame 1), or a constant
/// channel is held on a 3-key line. Never adds a channel: with none, nothing is done.
fn anchor_time_grid(channels: &mut [Channel], frame_count: usize) {
    let last = frame_count.saturating_sub(1) as u32;
    if last == 0 {
        return;
    }
    let consecutive = channels
        .iter()
        .any(|c| c.ticks.windows(2).any(|w| w[1] == w[0] + TICKS));
    let has_last = channels
        .iter()
        .any(|c| c.ticks.last() == Some(&(last * TICKS)));
    if consecutive && has_last {
        return;
    }
    let best = channels
        .iter()
        .enumerate()
        .filter(|(_, c)| c.ticks.len() >= 2)
        .max_by_key(|(_, c)| c.ticks.len())
        .map(|(i, _)| i);
    match best {
        Some(i) if !consecutive && has_last => split_at(&mut channels[i], 1),
        _ => {
            // Only constants: hold one of them on a 3-key line.
            let Some(c) = channels.iter_mut().find(|c| c.ticks.len() == 1) else {
                return;
            };
            let n = if last == 1 { 2 } else { 3 };
            c.ticks = if last == 1 {
                vec![0, TICKS]
            } else {
                vec![0, TICKS, last * TICKS]
            };
            c.values = vec![c.values[0]; n];
            c.interp = Interp::Linear;
            c.tangents.clear();
        }
    }
}

/// Inserts a key at `frame` that reproduces the curve exactly (a linear segment's point, or
/// a cubic's value and derivative).
fn split_at(c: &mut Channel, frame: u32) {
    let tick = frame * TICKS;
    let Err(pos) = c.ticks.binary_search(&tick) else {
        return;
    };
    if pos == 0 || pos == c.ticks.len() {
        return;
    }
    let (f0, f1) = (tick_frame(c.ticks[pos - 1]), tick_frame(c.ticks[pos]));
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
    c.ticks.insert(pos, tick);
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
    memo: Option<&super::clip_memo::ClipMemo>,
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
    let own_memo = super::clip_memo::ClipMemo::default();
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
                encode_for_gltf_memo(
                    memo,
                    &source.skeleton,
                    clip,
                    &limits[i],
                    &control,
                    options,
                    Some(keyed.of(i)),
                )
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

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(joint: usize, kind: usize) -> Channel {
        Channel {
            joint,
            kind,
            interp: Interp::Linear,
            ticks: vec![0],
            values: vec![Vec4::W],
            tangents: vec![],
            storage: Storage::Float,
            held_end: true,
        }
    }

    #[test]
    fn anchoring_never_adds_a_channel() {
        // A static clip: only one-key channels; one of them is held on a 3-key line.
        let mut channels = vec![constant(3, 1), constant(5, 0)];
        anchor_time_grid(&mut channels, 10);
        assert_eq!(channels.len(), 2);
        assert_eq!(channels[0].ticks, vec![0, TICKS, 9 * TICKS]);
        assert!(channels[0].values.iter().all(|&v| v == Vec4::W));
        assert_eq!((channels[1].joint, channels[1].ticks.len()), (5, 1));
        // No channel at all (the source drove nothing on the skeleton): nothing is added.
        let mut none: Vec<Channel> = Vec::new();
        anchor_time_grid(&mut none, 10);
        assert!(none.is_empty());
    }

    #[test]
    fn rest_channels_only_where_the_source_keyed() {
        let skeleton = Skeleton::new(vec![
            crate::model::Joint::new("a", None, crate::model::Transform::IDENTITY),
            crate::model::Joint::new("b", Some(0), crate::model::Transform::IDENTITY),
        ])
        .unwrap();
        // b's scale is driven by another clip, its translation only by this one: both keep
        // a rest channel (a clip of another file may drive either); a's translation, which
        // this clip does not key, gets none.
        let clip = vec![[false, true, false], [true, false, true]];
        let file = FileKeyed::new(vec![clip, vec![[false; 3], [false, false, true]]]);
        let keyed = file.of(0);
        assert_eq!(keyed.others, &[[false; 3], [false, false, true]]);
        assert_eq!(keyed.every_other, &[[false; 3], [false, false, true]]);
        let mut channels = vec![constant(0, 1)];
        add_rest_channels(&mut channels, &skeleton, keyed);
        let targets: Vec<(usize, usize)> = channels.iter().map(|c| (c.joint, c.kind)).collect();
        assert_eq!(targets, vec![(0, 1), (1, 0), (1, 2)]);
        assert!(channels[1..].iter().all(|c| c.ticks == vec![0]));
    }

    #[test]
    fn a_single_clip_keeps_rest_channels() {
        let skeleton = Skeleton::new(vec![crate::model::Joint::new(
            "a",
            None,
            crate::model::Transform::IDENTITY,
        )])
        .unwrap();
        let file = FileKeyed::new(vec![vec![[true, true, true]]]);
        let keyed = file.of(0);
        assert_eq!(
            keyed.every_other,
            &[[true; 3]],
            "no other clip holds its end"
        );
        // A clip of another file for the same rig may leave these properties elsewhere.
        let mut channels = Vec::new();
        add_rest_channels(&mut channels, &skeleton, keyed);
        let targets: Vec<(usize, usize)> = channels.iter().map(|c| (c.joint, c.kind)).collect();
        assert_eq!(targets, vec![(0, 0), (0, 1), (0, 2)]);
    }
}
