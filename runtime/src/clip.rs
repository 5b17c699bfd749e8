//! A clip laid out for sampling: the pose of every fixed track (rest or constant) computed
//! once, and the animated tracks in one of two layouts ([`ClipLayout`]): prepared for speed
//! (every key decoded at open, the default) or compact, close to the file's size
//! ([`crate::keys`]). Sampling writes the fixed pose and evaluates only the animated tracks
//! (the fixed pose copied first, or, in the prepared layout where no track writes the pose
//! before its rotations are mixed, after the mixes; the same values either way):
//!
//! * [`Clip::sample`] (random access): per track, one read of the segment table
//!   ([`crate::table`]: an entry per block of 4 frames, the segment of its first frame and
//!   how many segments further each other frame lies; larger blocks and a short step for
//!   tracks with few keys on long clips) gives the segment; it is evaluated (compact: its
//!   keys dequantized and the segment prepared first).
//! * [`Clip::sample_forward`] (forward playback, [`crate::cursor`]): prepared, the same;
//!   compact, per track the search steps on from the cursor's segment, which stays
//!   prepared in the cursor until playback leaves it.
//!
//! Neither allocates. The values are bit for bit those of skelpack's reference decoder.

use glam::{Quat, Vec3, Vec4};

use crate::bits::BitWriter;
use crate::events::{Crossed, EventTimes};
use crate::keys::KeyTrack;
use crate::meta::{ClipMeta, RootMotion};
use crate::motion::{Motion, MotionDelta};
use crate::packed::PackedBits;
use crate::payload::{PayloadRecord, TrackRecord};
use crate::prepared::Prepared;

/// How a clip keeps its animated tracks in memory.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum ClipLayout {
    /// Every key decoded at open and segments prepared: fastest, several times the file's
    /// size in memory (docs/RUNTIME.md).
    #[default]
    Prepared,
    /// Keys kept as compact bit records and dequantized when sampled: about the file's
    /// size in memory, slower (random access about 5x, forward playback 1.6-2.4x).
    Compact,
}

/// A clip's animated tracks in its layout.
#[derive(Clone, Debug)]
pub(crate) enum Tracks {
    Prepared(Prepared),
    Compact {
        tracks: Vec<KeyTrack>,
        bits: PackedBits,
    },
}

/// One joint's local transform: translation, rotation (unit quaternion x, y, z, w) and
/// scale, applied scale first, then rotation, then translation (glTF / ACL convention).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointPose {
    pub translation: [f32; 3],
    pub rotation: [f32; 4],
    pub scale: [f32; 3],
}

/// A clip ready to sample (see the module documentation).
#[derive(Clone, Debug)]
pub struct Clip {
    frame_count: u32,
    sample_rate: f32,
    start_time: f32,
    /// Every joint's fixed tracks; animated ones are overwritten by sampling.
    fixed: Vec<JointPose>,
    /// Animated tracks, in joint order.
    tracks: Tracks,
    /// Whether frames wrap (the clip loops) instead of clamping.
    looping: bool,
    /// Root motion, when the clip has a motion joint.
    motion: Option<Motion>,
    /// The clip's events as playback crosses them.
    events: EventTimes,
}

/// Writes one track's value into a pose the way the reference decoder does (rotations
/// normalized, vectors truncated to x, y, z).
#[inline(always)]
pub(crate) fn put(pose: &mut JointPose, kind: u8, v: Vec4) {
    match kind {
        0 => pose.translation = v.truncate().to_array(),
        1 => pose.rotation = Quat::from_vec4(v).normalize().to_array(),
        _ => pose.scale = v.truncate().to_array(),
    }
}

impl Clip {
    /// Lays out a validated payload in the prepared layout; `rest` holds each joint's rest
    /// transform.
    pub fn new(p: &PayloadRecord, rest: &[JointPose]) -> Self {
        Self::with_layout(p, rest, ClipLayout::Prepared)
    }

    /// Lays out a validated payload in `layout`; `rest` holds each joint's rest transform.
    pub fn with_layout(p: &PayloadRecord, rest: &[JointPose], layout: ClipLayout) -> Self {
        let mut fixed = rest.to_vec();
        let mut prepared = Prepared::new(p.frame_count);
        let mut tracks = Vec::new();
        let mut w = BitWriter::new();
        for (j, joint) in p.tracks.iter().enumerate() {
            for (k, t) in joint.iter().enumerate() {
                match t {
                    TrackRecord::Rest => {
                        let r = &rest[j];
                        let v = match k {
                            0 => Vec3::from_array(r.translation).extend(0.0),
                            1 => Vec4::from_array(r.rotation),
                            _ => Vec3::from_array(r.scale).extend(0.0),
                        };
                        put(&mut fixed[j], k as u8, v);
                    }
                    TrackRecord::Constant { value, .. } => put(&mut fixed[j], k as u8, *value),
                    TrackRecord::Animated(a) => match layout {
                        ClipLayout::Prepared => prepared.push_track(j, k, a),
                        ClipLayout::Compact => {
                            tracks.push(KeyTrack::write(&mut w, j, k, a, p.frame_count));
                        }
                    },
                }
            }
        }
        tracks.shrink_to_fit();
        let tracks = match layout {
            ClipLayout::Prepared => Tracks::Prepared(prepared),
            ClipLayout::Compact => Tracks::Compact {
                tracks,
                bits: PackedBits::new(w),
            },
        };
        Self {
            frame_count: p.frame_count,
            sample_rate: p.sample_rate,
            start_time: p.start_time,
            fixed,
            tracks,
            looping: false,
            motion: None,
            events: EventTimes::default(),
        }
    }

    /// This clip played as `meta` says (looping, root motion); `p` and `rest` are the
    /// payload and rest pose it was laid out from.
    pub fn with_playback(mut self, p: &PayloadRecord, rest: &[JointPose], meta: &ClipMeta) -> Self {
        self.looping = meta.looping && self.frame_count > 1;
        let times: Vec<f32> = meta.events.iter().map(|e| e.time).collect();
        self.events = EventTimes::new(&times, self.frame_count, self.sample_rate, self.looping);
        self.motion = meta.root_motion.and_then(|record| {
            let tracks = p.tracks.get(record.joint)?.clone();
            let one = PayloadRecord {
                frame_count: p.frame_count,
                sample_rate: p.sample_rate,
                start_time: p.start_time,
                tracks: vec![tracks],
            };
            let joint_clip =
                Clip::with_layout(&one, &rest[record.joint..=record.joint], self.layout());
            Some(Motion::new(joint_clip, record))
        });
        self
    }

    /// Whether the clip loops: frames beyond its last wrap to its start (frame
    /// `frame_count - 1` is frame 0 of the next cycle), and root motion accumulates.
    pub fn is_looping(&self) -> bool {
        self.looping
    }

    /// The joint whose motion is root motion, if any.
    pub fn root_motion_joint(&self) -> Option<usize> {
        self.motion.as_ref().map(|m| m.record.joint)
    }

    /// The root-motion record (motion joint, its source start, the whole-cycle delta).
    pub fn root_motion(&self) -> Option<&RootMotion> {
        self.motion.as_ref().map(|m| &m.record)
    }

    /// The motion joint's travel from frame `f0` to frame `f1` ([`crate::motion`]): across
    /// any number of loop wraps for a looping clip (frames clamp otherwise); `None` without
    /// root motion. Allocates nothing.
    pub fn root_motion_delta(&self, f0: f32, f1: f32) -> Option<MotionDelta> {
        let last = (self.frame_count - 1) as f32;
        self.motion
            .as_ref()
            .map(|m| m.delta(f0, f1, last, self.looping).to_delta())
    }

    /// The events crossed playing from frame `f0` to frame `f1`, in play order, as indices
    /// of the clip's events ([`crate::Skp::event`]): forward `[f0, f1)`, backward
    /// `(f1, f0]`, across loop wraps for a looping clip (an event at its last frame fires
    /// once per cycle); [`crate::events`] gives the rules. Allocates nothing.
    pub fn events_between(&self, f0: f32, f1: f32) -> Crossed<'_> {
        self.events.crossed(f0, f1)
    }

    /// How many events [`Clip::events_between`] yields, counted without visiting them.
    pub fn events_count_between(&self, f0: f32, f1: f32) -> u64 {
        self.events.count(f0, f1)
    }

    /// Frames stored (samples at a uniform rate); frame `frame_count - 1` ends the clip.
    pub fn frame_count(&self) -> u32 {
        self.frame_count
    }

    /// Samples per second.
    pub fn sample_rate(&self) -> f32 {
        self.sample_rate
    }

    /// Time of frame 0 in the source file, in seconds.
    pub fn start_time(&self) -> f32 {
        self.start_time
    }

    /// Length in seconds from the first frame to the last.
    pub fn duration(&self) -> f32 {
        (self.frame_count - 1) as f32 / self.sample_rate
    }

    /// Number of joints a pose holds.
    pub fn joint_count(&self) -> usize {
        self.fixed.len()
    }

    /// Number of animated tracks (the ones sampling evaluates).
    pub fn animated_tracks(&self) -> usize {
        match &self.tracks {
            Tracks::Prepared(p) => p.len(),
            Tracks::Compact { tracks, .. } => tracks.len(),
        }
    }

    /// The layout of the animated tracks.
    pub fn layout(&self) -> ClipLayout {
        match self.tracks {
            Tracks::Prepared(_) => ClipLayout::Prepared,
            Tracks::Compact { .. } => ClipLayout::Compact,
        }
    }

    /// Bytes this clip holds in memory (fixed pose, track descriptions, keys and tables),
    /// for budgets.
    pub fn memory_bytes(&self) -> usize {
        let tracks = match &self.tracks {
            Tracks::Prepared(p) => p.memory_bytes(),
            Tracks::Compact { tracks, bits } => {
                tracks.iter().map(KeyTrack::memory_bytes).sum::<usize>() + bits.len_bytes()
            }
        };
        let motion = self
            .motion
            .as_ref()
            .map_or(0, |m| m.joint_clip.memory_bytes());
        std::mem::size_of::<Self>()
            + self.fixed.len() * std::mem::size_of::<JointPose>()
            + tracks
            + motion
    }

    /// The animated tracks (for the cursor).
    pub(crate) fn tracks(&self) -> &Tracks {
        &self.tracks
    }

    /// `frame` clamped to the clip, or wrapped into `[0, frame_count - 1)` when it loops
    /// (NaN is taken as frame 0; infinities clamp).
    #[inline]
    pub(crate) fn clamp(&self, frame: f32) -> f32 {
        if frame.is_nan() {
            return 0.0;
        }
        let last = (self.frame_count - 1) as f32;
        if self.looping && frame.is_finite() && !(0.0..last).contains(&frame) {
            return frame.rem_euclid(last).clamp(0.0, last);
        }
        frame.clamp(0.0, last)
    }

    /// The fixed pose (every joint's fixed tracks; animated ones hold their rest values).
    pub(crate) fn fixed(&self) -> &[JointPose] {
        &self.fixed
    }

    /// Copies the fixed pose into `out`; returns how many joints it holds.
    #[inline]
    pub(crate) fn write_fixed(&self, out: &mut [JointPose]) -> usize {
        crate::fixed::copy_first(out, &self.fixed)
    }

    /// Random access: every joint's local transform at a fractional frame (clamped to the
    /// clip, or wrapped if it loops; NaN reads as frame 0). Fills `out[..min(out.len(), joint_count)]`.
    pub fn sample(&self, frame: f32, out: &mut [JointPose]) {
        let f = self.clamp(frame);
        // Keys sit on integer frames: `key <= f` is `key <= floor(f)`.
        let fi = f as u32;
        match &self.tracks {
            Tracks::Prepared(p) => p.sample_over(f, fi, out, &self.fixed),
            Tracks::Compact { tracks, bits } => {
                self.write_fixed(out);
                #[cfg(target_arch = "x86_64")]
                if crate::cpu::has_fma() {
                    // SAFETY: the CPU has FMA.
                    return unsafe { sample_compact_fma(tracks, bits, f, fi, out) };
                }
                sample_compact(tracks, bits, f, fi, out)
            }
        }
    }

    /// [`Clip::sample`] evaluating one animated track at a time, never four in SIMD lanes:
    /// the same values bit for bit. It is the reference the lane kernel of the prepared
    /// layout is tested against (`tests/lanes.rs`); engines call [`Clip::sample`].
    pub fn sample_one_by_one(&self, frame: f32, out: &mut [JointPose]) {
        match &self.tracks {
            Tracks::Prepared(p) => {
                let f = self.clamp(frame);
                self.write_fixed(out);
                p.sample_one_by_one(f, f as u32, out);
            }
            Tracks::Compact { .. } => self.sample(frame, out),
        }
    }
}

/// Random access in the compact layout: per track, the table's segment, the search from
/// there, the segment prepared and evaluated.
#[inline(always)]
fn sample_compact(tracks: &[KeyTrack], bits: &PackedBits, f: f32, fi: u32, out: &mut [JointPose]) {
    for t in tracks {
        let Some(pose) = out.get_mut(t.joint as usize) else {
            break;
        };
        let s = t.segment_at(bits, fi);
        put(pose, t.kind, t.segment(bits, s).eval_inline(f));
    }
}

/// [`sample_compact`] compiled with FMA instructions (the slerp's sines).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn sample_compact_fma(
    tracks: &[KeyTrack],
    bits: &PackedBits,
    f: f32,
    fi: u32,
    out: &mut [JointPose],
) {
    sample_compact(tracks, bits, f, fi, out)
}
