//! A container's clips decoded back to dense model clips (one sample per frame), so a `.skp`
//! can be turned into any format the exporters write. The expansion is bounded: a few bytes
//! of constant tracks may declare millions of frames.

use crate::codec::{CompressedClip, TrackData};
use crate::model::{Clip, JointTracks, Skeleton, Transform};

/// Largest decoded size of one clip, in bytes of dense samples (joints × frames × 40).
pub const MAX_DENSE_BYTES: u64 = 1 << 30;

/// Decodes every frame of `clip` (a clip of `skeleton`, as read from a container). A track
/// stored as anything but "rest" counts as a source channel.
pub fn decode_clip(skeleton: &Skeleton, clip: &CompressedClip) -> Result<Clip, String> {
    let frames = clip.frame_count;
    let bytes = frames as u64 * skeleton.len() as u64 * std::mem::size_of::<Transform>() as u64;
    if bytes > MAX_DENSE_BYTES {
        return Err(format!(
            "clip '{}' would decode to {} MiB of samples ({} joints x {frames} frames), beyond the {} MiB limit",
            clip.name,
            bytes >> 20,
            skeleton.len(),
            MAX_DENSE_BYTES >> 20
        ));
    }
    if !clip.matches(skeleton) {
        return Err(format!("clip '{}' does not match the skeleton", clip.name));
    }
    let tracks = (0..skeleton.len())
        .map(|j| {
            let mut t = JointTracks {
                translations: Vec::with_capacity(frames),
                rotations: Vec::with_capacity(frames),
                scales: Vec::with_capacity(frames),
                source_channels: clip.tracks[j]
                    .each_ref()
                    .map(|d| !matches!(d, TrackData::Rest)),
            };
            for f in 0..frames {
                let x = clip.joint_at(j, f as f32);
                t.translations.push(x.translation);
                t.rotations.push(x.rotation);
                t.scales.push(x.scale);
            }
            t
        })
        .collect();
    Ok(Clip {
        name: clip.name.clone(),
        sample_rate: clip.sample_rate,
        frame_count: frames,
        start_time: clip.start_time,
        tracks,
        morph_weight_channels: 0,
        between: Default::default(),
        grid: 1,
        events: clip.playback.events.clone(),
        scalar_tracks: Vec::new(),
    })
}
