//! `.skp` files on the command line: `inspect` and `convert` read a container back through
//! the validating reader (src/container/), so a `.skp` can be checked and turned into glTF.

use std::path::Path;

use anyhow::Context;
use serde::Serialize;

use super::table::{TrackCounts, clip_header, clip_row};
use crate::codec::TrackData;
use crate::codec::playback::PlaybackInfo;
use crate::container::{self, Container};

/// Whether `path` names a skelpack container (by its extension).
pub fn is_container(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("skp"))
}

/// Reads and validates a container; the error is one line naming the file.
pub fn read(path: &Path) -> anyhow::Result<Container> {
    container::read(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
}

/// `inspect --json` for a container (stable): `{ file, format: "skp", bytes, joints,
/// deforming_joints, max_depth, clips: [ { name, duration, sample_rate, frames, start_time,
/// keys, tracks: { animated, constant, rest }, scalar_tracks, scalar_error, looping,
/// root_motion, additive } ] }`.
#[derive(Serialize)]
pub struct SkpInfo {
    file: String,
    format: &'static str,
    bytes: u64,
    joints: usize,
    deforming_joints: usize,
    max_depth: usize,
    clips: Vec<SkpClip>,
}

#[derive(Serialize)]
struct SkpClip {
    name: String,
    duration: f32,
    sample_rate: f32,
    frames: usize,
    start_time: f32,
    /// Stored keys of the animated tracks.
    keys: usize,
    tracks: TrackCounts,
    /// Scalar tracks (morph-target weights) stored with the clip.
    scalar_tracks: usize,
    /// The largest vertex displacement (scene units) among them, as the compressor
    /// measured it; null without scalar tracks.
    scalar_error: Option<f32>,
    /// `looping`, `root_motion` (joint name or null), `additive` (mode and base, or null).
    #[serde(flatten)]
    playback: PlaybackInfo,
}

/// Facts about a container file.
pub fn describe(path: &Path) -> anyhow::Result<SkpInfo> {
    let c = read(path)?;
    let bytes = std::fs::metadata(path).map(|m| m.len()).unwrap_or(0);
    let clips = c
        .clips
        .iter()
        .map(|clip| {
            let all = || clip.tracks.iter().flatten();
            SkpClip {
                name: clip.name.clone(),
                duration: clip.frame_count.saturating_sub(1) as f32 / clip.sample_rate,
                sample_rate: clip.sample_rate,
                frames: clip.frame_count,
                start_time: clip.start_time,
                keys: all().map(TrackData::keys).filter(|&k| k > 1).sum(),
                tracks: TrackCounts {
                    animated: all()
                        .filter(|t| matches!(t, TrackData::Animated(_)))
                        .count(),
                    constant: all()
                        .filter(|t| matches!(t, TrackData::Constant { .. }))
                        .count(),
                    rest: all().filter(|t| matches!(t, TrackData::Rest)).count(),
                },
                scalar_tracks: clip.playback.scalar_tracks.len(),
                scalar_error: clip
                    .playback
                    .scalar_tracks
                    .iter()
                    .map(|t| t.max_error)
                    .reduce(f32::max),
                playback: PlaybackInfo::new(&clip.playback, &c.skeleton),
            }
        })
        .collect();
    Ok(SkpInfo {
        file: path.display().to_string(),
        format: "skp",
        bytes,
        joints: c.skeleton.len(),
        deforming_joints: c.skeleton.deforming_joints().count(),
        max_depth: c.skeleton.max_depth(),
        clips,
    })
}

/// Prints a container's facts as text.
pub fn print_text(i: &SkpInfo) {
    println!("{} (skelpack container, {} bytes)", i.file, i.bytes);
    println!(
        "  skeleton: {} joints ({} deforming), depth {}",
        i.joints, i.deforming_joints, i.max_depth
    );
    println!("{}", clip_header(&format!("{:>8}", "keys")));
    for c in &i.clips {
        let row = clip_row(&c.name, c.duration, c.sample_rate, c.frames, &c.tracks);
        println!("{row} {:>8}", c.keys);
    }
}

/// Writes a container's skeleton and decoded clips (every frame, at the clip's rate) as a
/// new glTF scene; returns (joints, clips).
pub fn convert(input: &Path, output: &Path, force: bool) -> anyhow::Result<(usize, usize)> {
    let c = read(input)?;
    let clips = c
        .clips
        .iter()
        .map(|clip| container::dense::decode_clip(&c.skeleton, clip))
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| anyhow::anyhow!("{}: {e}", input.display()))?;
    crate::export::write_scene(output, &c.skeleton, &clips, &[], Some(input), force)
        .with_context(|| format!("converting {}", input.display()))?;
    Ok((c.skeleton.len(), clips.len()))
}
