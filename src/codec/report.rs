//! What compression produced: sizes by section and track, keys, bits, errors, time.

use std::collections::HashMap;

use serde::Serialize;

use super::classify::TrackClass;
use super::predict::value_bits;
use super::quantize::Format;
use super::track::{TrackData, animated_meta_bits, constant_bits, range_bits};
use crate::metric::ErrorStats;
use crate::model::{Skeleton, TrackKind};

/// Bytes by section of the clip payload.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct Sections {
    pub rotations: u64,
    pub translations: u64,
    pub scales: u64,
    /// Range minimums and extents.
    pub ranges: u64,
    /// Key counts, gap widths and key-time gaps.
    pub tables: u64,
    /// Clip header and per-track descriptors.
    pub headers: u64,
}

/// One track's storage.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct TrackReport {
    pub joint: String,
    pub kind: TrackKind,
    pub class: TrackClass,
    pub keys: usize,
    pub bits_per_key: u32,
    pub bits: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub format: Option<Format>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub interpolation: Option<super::Interpolation>,
    /// Kept key frames in the order the fitter inserted them (the two end keys first).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub insert_order: Vec<u32>,
}

/// A joint whose tolerance could not be met, and by how much.
#[derive(Clone, Debug, Serialize, serde::Deserialize)]
pub struct JointFailure {
    pub joint: String,
    pub max_error: f32,
    pub tolerance: f32,
    /// The tightest tolerance the joint can reach (scene units): its error with every
    /// moving track at the finest encoding. A tolerance below it cannot be held.
    pub floor: f32,
}

/// What one joint's three tracks cost.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, serde::Deserialize)]
pub struct JointCost {
    /// Keys stored (a constant track counts one).
    pub keys: usize,
    /// Bits of the joint's track data (ranges, tables and key values; not the clip header).
    pub bits: u64,
    /// Tracks stored as curves.
    pub animated_tracks: usize,
}

/// The report of one compressed clip.
#[derive(Clone, Debug, Default, Serialize, serde::Deserialize)]
pub struct ClipReport {
    pub name: String,
    pub joints: usize,
    pub frames: usize,
    pub sample_rate: f32,
    /// joints x frames x 40 (10 floats per joint per frame).
    pub raw_bytes: u64,
    /// What decoding needs given the skeleton.
    pub payload_bytes: u64,
    pub ratio: f64,
    pub sections: Sections,
    pub keys_kept: usize,
    /// Keys an uncompressed clip stores: 3 tracks x joints x frames.
    pub keys_raw: usize,
    pub tracks: Vec<TrackReport>,
    pub error_samples: ErrorStats,
    pub error_midpoints: ErrorStats,
    pub worst_joint: String,
    pub worst_joint_midpoints: String,
    /// Every evaluated joint within tolerance at every sample and midpoint.
    pub contract_met: bool,
    pub failures: Vec<JointFailure>,
    /// Per joint, the tightest tolerance it can reach (scene units; see [`JointFailure`]).
    pub floors: Vec<f32>,
    pub repair_iterations: usize,
    pub relaxed_tracks: usize,
    pub compress_ms: f64,
    /// Looping, root motion and additive flags, the error across the loop wrap and the
    /// root motion's accumulated error.
    #[serde(flatten)]
    pub playback: super::playback::PlaybackReport,
}

/// Fixed clip header: frame count, rate, start time, joint count, count width, reserved,
/// metadata length, key block length (docs/FORMAT.md).
pub const CLIP_HEADER_BYTES: u64 = 24;

/// The payload's two bit streams: (metadata bits, key block bits).
pub fn payload_bits(tracks: &[[TrackData; 3]], frames: usize) -> (u64, u64) {
    let (mut meta, mut keys) = (0u64, 0u64);
    for joint in tracks {
        for (k, t) in joint.iter().enumerate() {
            meta += 2;
            match t {
                TrackData::Rest => {}
                TrackData::Constant { quantized, .. } => {
                    meta += constant_bits(k == 1, *quantized) as u64
                }
                TrackData::Animated(a) => {
                    meta += animated_meta_bits(a.format, &a.range, &a.curve.frames, frames);
                    keys += value_bits(a.format, &a.range, &a.codes, &a.curve.frames);
                }
            }
        }
    }
    (meta, keys)
}

/// Payload bytes exactly as the container lays them out.
pub fn payload_bytes(tracks: &[[TrackData; 3]], frames: usize) -> u64 {
    let (meta, keys) = payload_bits(tracks, frames);
    CLIP_HEADER_BYTES + meta.div_ceil(8) + keys.div_ceil(8)
}

/// Splits the payload into sections for reports (accounting in bits, rounded up to bytes
/// per section; their sum can exceed the payload by a few bytes of rounding).
pub fn sections(tracks: &[[TrackData; 3]], frames: usize) -> Sections {
    let mut bits = [0u64; 6];
    bits[5] = CLIP_HEADER_BYTES * 8;
    for joint in tracks {
        for kind in TrackKind::ALL {
            let t = &joint[kind.index()];
            bits[5] += 2;
            let value_bits = match t {
                TrackData::Rest => 0,
                TrackData::Constant { quantized, .. } => {
                    bits[5] += 1;
                    constant_bits(kind == TrackKind::Rotation, *quantized) as u64 - 1
                }
                TrackData::Animated(a) => {
                    let meta = animated_meta_bits(a.format, &a.range, &a.curve.frames, frames);
                    let ranges = range_bits(a.format, &a.range);
                    bits[3] += ranges;
                    bits[5] += 13;
                    bits[4] += meta - 13 - ranges;
                    value_bits(a.format, &a.range, &a.codes, &a.curve.frames)
                }
            };
            bits[kind.index()] += value_bits;
        }
    }
    let b = |x: u64| x.div_ceil(8);
    Sections {
        translations: b(bits[0]),
        rotations: b(bits[1]),
        scales: b(bits[2]),
        ranges: b(bits[3]),
        tables: b(bits[4]),
        headers: b(bits[5]),
    }
}

impl ClipReport {
    /// Per joint of `skeleton` (by name), the keys and bits of its tracks.
    pub fn joint_costs(&self, skeleton: &Skeleton) -> Vec<JointCost> {
        let index: HashMap<&str, usize> = skeleton
            .joints
            .iter()
            .enumerate()
            .map(|(i, j)| (j.name.as_str(), i))
            .collect();
        let mut out = vec![JointCost::default(); skeleton.len()];
        for t in &self.tracks {
            if let Some(&j) = index.get(t.joint.as_str()) {
                out[j].keys += t.keys;
                out[j].bits += t.bits;
                out[j].animated_tracks += usize::from(t.class == TrackClass::Animated);
            }
        }
        out
    }
}

impl Sections {
    pub fn total(&self) -> u64 {
        self.rotations + self.translations + self.scales + self.ranges + self.tables + self.headers
    }
}
