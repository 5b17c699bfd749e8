//! `skelpack inspect FILE... [--json]`: skeleton and clip facts per file.
//!
//! JSON (stable): an array with one object per file:
//! `{ file, format, joints, deforming_joints, max_depth, extent, height, size, unit,
//!    scene_units_per_metre, unit_confidence, unit_reason, meshes,
//!    socket_nodes: [ { name, joint, lever } ],
//!    root: { name, translation, rotation, scale }, tolerance, marker_offset, warnings,
//!    fbx?: { version, ascii, creator, unit_meters, axes: { right, up, front }, frame_rate,
//!            rest_pose, empty_takes, blend_channels, worst_shear },
//!    clips: [ { name, duration, sample_rate, frames, start_time, morph_weight_channels,
//!               scalar_tracks, sockets, source_channels, tracks: { animated, constant, rest },
//!               layers?: [ { name, weight, weight_is_animated, additive,
//!                            animated_properties } ],
//!               morph_weights?: [ { name, min, max } ] } ] }`
//! (`fbx`, `layers` and `morph_weights` for FBX sources only).
//! Lengths are in scene units; `tolerance` / `marker_offset` are the defaults in force.
//! A `.skp` container is read back through the validating reader ([`super::skp`]).

use std::path::PathBuf;

use serde::Serialize;

use super::skp;
use super::table::{TrackCounts, clip_header, clip_row};
use crate::codec::playback::{self, PlaybackInfo};
use crate::codec::{TrackClass, classify};
use crate::import::{self, Asset};
use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files to inspect.
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Print JSON instead of text.
    #[arg(long)]
    pub json: bool,
    /// Split a take into a clip: `NAME=SOURCE:START-END` (source frames, both included;
    /// repeatable; as the sidecar's `[takes.NAME]`).
    #[arg(long = "take", value_name = "NAME=SOURCE:START-END")]
    pub takes: Vec<String>,
}

/// One file's facts: an importable asset or a `.skp` container.
#[derive(Serialize)]
#[serde(untagged)]
enum Info {
    Asset(Box<FileInfo>),
    Skp(skp::SkpInfo),
}

#[derive(Serialize)]
struct FileInfo {
    file: String,
    format: import::SourceFormat,
    joints: usize,
    deforming_joints: usize,
    max_depth: usize,
    extent: f32,
    height: f32,
    /// The character's own size (largest side of a pose), scene units.
    size: f32,
    /// The inferred unit's name (`metre`, `inch`, `17.7 per metre`...).
    unit: String,
    scene_units_per_metre: f32,
    unit_confidence: crate::model::Confidence,
    /// Why that unit: the size it gives, and what else was close.
    unit_reason: String,
    meshes: usize,
    /// Non-joint nodes hanging from joints, measured with them: name and joint.
    socket_nodes: Vec<SocketInfo>,
    root: RootInfo,
    tolerance: f32,
    marker_offset: f32,
    warnings: Vec<String>,
    /// FBX sources: version, creator, unit and axes as declared, rest-pose source, ...
    #[serde(skip_serializing_if = "Option::is_none")]
    fbx: Option<import::fbx::FbxInfo>,
    clips: Vec<ClipInfo>,
}

#[derive(Serialize)]
struct SocketInfo {
    name: String,
    joint: String,
    /// Distance from the joint at the rest pose, scene units.
    lever: f32,
}

#[derive(Serialize)]
struct RootInfo {
    name: String,
    translation: [f32; 3],
    rotation: [f32; 4],
    scale: [f32; 3],
}

#[derive(Serialize)]
struct ClipInfo {
    name: String,
    duration: f32,
    sample_rate: f32,
    frames: usize,
    start_time: f32,
    morph_weight_channels: usize,
    /// Scalar tracks: the morph-weight channels and custom property curves.
    scalar_tracks: usize,
    /// Sockets measured with their joints (non-joint nodes hanging from joints).
    sockets: usize,
    source_channels: usize,
    tracks: TrackCounts,
    /// FBX sources: the take's animation layers, bottom first.
    #[serde(skip_serializing_if = "Option::is_none")]
    layers: Option<Vec<import::fbx::FbxLayer>>,
    /// FBX sources: every keyed blend (morph) channel with its weight range.
    #[serde(skip_serializing_if = "Option::is_none")]
    morph_weights: Option<Vec<import::fbx::MorphTrack>>,
    /// `looping`, `root_motion`, `additive` as the asset's sidecar sets them.
    #[serde(flatten)]
    playback: PlaybackInfo,
    /// The last frame returns to the first within tolerance: a loop to mark as such.
    looping_suggested: bool,
    /// A piece of a take: its source clip and frame range (both included).
    #[serde(skip_serializing_if = "Option::is_none")]
    take: Option<TakeInfo>,
}

/// Where a piece of a take comes from.
#[derive(Serialize)]
struct TakeInfo {
    source: String,
    start: u32,
    end: u32,
}

fn describe(asset: &Asset, sidecar: &Settings) -> FileInfo {
    let s = &asset.skeleton;
    let root = &s.joints[0];
    // The defaults in force; with clips, the last clip's (a clip's settings may differ).
    let defaults = Settings::default().resolve(asset, "");
    let mut tolerance = defaults.limits.tolerance.first().copied().unwrap_or(0.0);
    let mut marker_offset = defaults
        .limits
        .marker_offset
        .first()
        .copied()
        .unwrap_or(0.0);
    let clips = asset
        .clips
        .iter()
        .enumerate()
        .map(|(ci, clip)| {
            let fbx_clip = asset.fbx.as_ref().and_then(|f| f.clips.get(ci));
            let resolved = Settings::default().resolve(asset, &clip.name);
            tolerance = resolved.limits.tolerance.first().copied().unwrap_or(0.0);
            marker_offset = resolved
                .limits
                .marker_offset
                .first()
                .copied()
                .unwrap_or(0.0);
            let c = classify(s, clip, &resolved.limits);
            let own = sidecar.resolve(asset, &clip.name);
            let prepared = playback::prepare(s, clip, &own);
            ClipInfo {
                name: clip.name.clone(),
                duration: clip.duration(),
                sample_rate: clip.sample_rate,
                frames: clip.frame_count,
                start_time: clip.start_time,
                morph_weight_channels: clip.morph_weight_channels,
                scalar_tracks: clip.scalar_tracks.len(),
                sockets: resolved.limits.socket_count(),
                source_channels: clip
                    .tracks
                    .iter()
                    .map(|t| t.source_channels.iter().filter(|&&b| b).count())
                    .sum(),
                tracks: TrackCounts {
                    animated: c.count(TrackClass::Animated),
                    constant: c.count(TrackClass::Constant),
                    rest: c.count(TrackClass::Rest),
                },
                layers: fbx_clip.map(|f| f.layers.clone()),
                morph_weights: fbx_clip.map(|f| f.morphs.clone()),
                playback: PlaybackInfo::new(&prepared.playback, s),
                looping_suggested: prepared.closes,
                take: sidecar.takes.get(&clip.name).map(|t| TakeInfo {
                    source: t.source.clone(),
                    start: t.start,
                    end: t.end,
                }),
            }
        })
        .collect();
    FileInfo {
        file: asset.path.display().to_string(),
        format: asset.format,
        joints: s.len(),
        deforming_joints: s.deforming_joints().count(),
        max_depth: s.max_depth(),
        extent: asset.units.extent,
        height: asset.units.height,
        size: asset.units.size,
        unit: asset.units.unit.name(),
        scene_units_per_metre: asset.units.unit.per_metre(),
        unit_confidence: asset.units.confidence,
        unit_reason: asset.units.reason.clone(),
        meshes: asset.meshes.len(),
        socket_nodes: {
            let scale = s.rest_scales();
            s.sockets
                .iter()
                .map(|k| SocketInfo {
                    name: k.name.clone(),
                    joint: s.joints[k.joint].name.clone(),
                    lever: k.lever().length() as f32 * scale[k.joint],
                })
                .collect()
        },
        root: RootInfo {
            name: root.name.clone(),
            translation: root.rest.translation.to_array(),
            rotation: root.rest.rotation.to_array(),
            scale: root.rest.scale.to_array(),
        },
        tolerance,
        marker_offset,
        warnings: asset
            .warnings
            .iter()
            .cloned()
            .chain(Settings::default().unit_warning(asset))
            .collect(),
        fbx: asset.fbx.clone(),
        clips,
    }
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut infos = Vec::new();
    let mut failed = false;
    for f in &args.files {
        let info = if skp::is_container(f) {
            skp::describe(f).map(Info::Skp)
        } else {
            import::load(f).map_err(Into::into).and_then(|mut a| {
                // Playback flags, events and takes come from the sidecar, when there is one.
                let path = Settings::sidecar_path(f);
                let mut sidecar = if path.is_file() {
                    Settings::load(&path)?
                } else {
                    Settings::default()
                };
                super::tuning::add_takes(&mut sidecar, &args.takes)?;
                crate::settings::takes::split(&mut a, &mut sidecar)
                    .map_err(|m| anyhow::anyhow!("{}: {m}", f.display()))?;
                a.warnings.extend(sidecar.event_warnings(&a));
                Ok(Info::Asset(Box::new(describe(&a, &sidecar))))
            })
        };
        match info {
            Ok(i) => infos.push(i),
            Err(e) => {
                eprintln!("error: {e}");
                failed = true;
            }
        }
    }
    if args.json {
        println!("{}", serde_json::to_string_pretty(&infos)?);
    } else {
        for i in &infos {
            match i {
                Info::Asset(i) => print_text(i),
                Info::Skp(i) => skp::print_text(i),
            }
        }
    }
    Ok(if failed { 2 } else { 0 })
}

fn print_text(i: &FileInfo) {
    println!("{} ({:?})", i.file, i.format);
    println!(
        "  skeleton: {} joints ({} deforming), depth {}, extent {:.4}, height {:.4}, {} skinned mesh primitive(s)",
        i.joints, i.deforming_joints, i.max_depth, i.extent, i.height, i.meshes
    );
    println!(
        "  unit: {} ({:?} confidence: {})",
        i.unit, i.unit_confidence, i.unit_reason
    );
    println!(
        "  root '{}': t={:?} r={:?} s={:?}",
        i.root.name, i.root.translation, i.root.rotation, i.root.scale
    );
    println!(
        "  defaults: tolerance {} and marker offset {} (scene units)",
        i.tolerance, i.marker_offset
    );
    if !i.socket_nodes.is_empty() {
        println!(
            "  sockets: {} non-joint node(s) under joints, measured with them",
            i.socket_nodes.len()
        );
    }
    if let Some(f) = &i.fbx {
        print_fbx(f);
    }
    for w in &i.warnings {
        println!("  warning: {w}");
    }
    println!("{}", clip_header(""));
    for c in &i.clips {
        println!(
            "{}{}",
            clip_row(&c.name, c.duration, c.sample_rate, c.frames, &c.tracks),
            if c.morph_weight_channels > 0 {
                format!("  (+{} morph weight channels)", c.morph_weight_channels)
            } else {
                String::new()
            }
        );
        for l in c.layers.iter().flatten() {
            println!(
                "      layer '{}': weight {}{}, {} animated properties",
                l.name,
                l.weight,
                if l.additive { ", additive" } else { "" },
                l.animated_properties
            );
        }
        for m in c.morph_weights.iter().flatten() {
            println!("      morph weight '{}': {} to {}", m.name, m.min, m.max);
        }
    }
}

fn print_fbx(f: &import::fbx::FbxInfo) {
    println!(
        "  FBX {}{} by '{}': {} m per unit, axes right {} up {} front {}, {} fps",
        f.version,
        if f.ascii { " (ASCII)" } else { "" },
        f.creator,
        f.unit_meters,
        f.axes.right,
        f.axes.up,
        f.axes.front,
        f.frame_rate
    );
    println!(
        "  rest pose: {}; {} blend channel(s)",
        match f.rest_pose {
            import::fbx::RestSource::BindPose => "the bind pose".to_owned(),
            import::fbx::RestSource::BindPoseAndFirstFrame { first_frame } =>
                format!("the bind pose ({first_frame} joint(s) it does not list: the first frame)"),
            import::fbx::RestSource::BindPoseAndScene { scene } =>
                format!("the bind pose ({scene} joint(s) it does not list: the scene's transforms)"),
            import::fbx::RestSource::FirstFrame => "the first frame (no bind pose)".to_owned(),
            import::fbx::RestSource::SceneTransforms =>
                "the scene's node transforms (no bind pose, no take)".to_owned(),
        },
        f.blend_channels
    );
}
