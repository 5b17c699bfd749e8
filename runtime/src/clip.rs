//! A clip laid out for sampling: the pose of every fixed track (rest or constant) computed
//! once, and the animated tracks' keys decoded at load, each track's frames and values
//! contiguous. Sampling writes that fixed pose and then evaluates only the animated tracks:
//!
//! * [`Clip::sample`] (random access): per track, a binary search in its key frames.
//! * [`CursorState`] (forward playback): per track, the current segment, stepped forward.
//!
//! Neither allocates. The values are bit for bit those of skelpack's reference decoder.

use glam::{Quat, Vec3, Vec4};

use crate::curve::{Interpolation, Segment};
use crate::payload::{PayloadRecord, TrackRecord};

/// One joint's local transform: translation, rotation (unit quaternion x, y, z, w) and
/// scale, applied scale first, then rotation, then translation (glTF / ACL convention).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointPose {
    pub translation: [f32; 3],
    pub rotation: [f32; 4],
    pub scale: [f32; 3],
}

/// An animated track: where its keys lie in the clip's key arrays.
#[derive(Clone, Copy, Debug)]
struct Track {
    joint: u32,
    /// 0 translation, 1 rotation, 2 scale.
    kind: u8,
    interpolation: Interpolation,
    first: u32,
    len: u32,
}

/// A clip ready to sample (see the module documentation).
#[derive(Clone, Debug)]
pub struct Clip {
    frame_count: u32,
    sample_rate: f32,
    start_time: f32,
    /// Every joint's fixed tracks; animated ones are overwritten by sampling.
    fixed: Vec<JointPose>,
    tracks: Vec<Track>,
    key_frames: Vec<u32>,
    key_values: Vec<Vec4>,
}

/// Writes one track's value into a pose the way the reference decoder does (rotations
/// normalized, vectors truncated to x, y, z).
#[inline(always)]
fn put(pose: &mut JointPose, kind: u8, v: Vec4) {
    match kind {
        0 => pose.translation = v.truncate().to_array(),
        1 => pose.rotation = Quat::from_vec4(v).normalize().to_array(),
        _ => pose.scale = v.truncate().to_array(),
    }
}

impl Clip {
    /// Lays out a validated payload; `rest` holds each joint's rest transform.
    pub fn new(p: &PayloadRecord, rest: &[JointPose]) -> Self {
        let mut fixed = rest.to_vec();
        let mut tracks = Vec::new();
        let total: usize = p
            .tracks
            .iter()
            .flatten()
            .map(|t| match t {
                TrackRecord::Animated(a) => a.frames.len(),
                _ => 0,
            })
            .sum();
        let mut key_frames = Vec::with_capacity(total);
        let mut key_values = Vec::with_capacity(total);
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
                    TrackRecord::Animated(a) => {
                        tracks.push(Track {
                            joint: j as u32,
                            kind: k as u8,
                            interpolation: a.interpolation,
                            first: key_frames.len() as u32,
                            len: a.frames.len() as u32,
                        });
                        key_frames.extend_from_slice(&a.frames);
                        key_values.extend_from_slice(&a.values);
                    }
                }
            }
        }
        Self {
            frame_count: p.frame_count,
            sample_rate: p.sample_rate,
            start_time: p.start_time,
            fixed,
            tracks,
            key_frames,
            key_values,
        }
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
        self.tracks.len()
    }

    /// Bytes this clip holds in memory (its layout and decoded keys), for budgets.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
            + self.fixed.len() * std::mem::size_of::<JointPose>()
            + self.tracks.len() * std::mem::size_of::<Track>()
            + self.key_frames.len() * 4
            + self.key_values.len() * 16
    }

    /// `frame` clamped to the clip (NaN is taken as frame 0).
    #[inline]
    fn clamp(&self, frame: f32) -> f32 {
        if frame.is_nan() {
            return 0.0;
        }
        frame.clamp(0.0, (self.frame_count - 1) as f32)
    }

    /// Evaluates segment `s` of track `t` at frame `f`.
    #[inline(always)]
    fn eval(&self, t: &Track, s: usize, f: f32) -> Vec4 {
        let first = t.first as usize;
        let n = t.len as usize;
        let frames = &self.key_frames[first..first + n];
        let values = &self.key_values[first..first + n];
        let key = |i: usize| (frames[i] as f32, values[i]);
        let window = [
            key(s.saturating_sub(1)),
            key(s),
            key(s + 1),
            key((s + 2).min(n - 1)),
        ];
        Segment::new(t.interpolation, t.kind == 1, &window).eval(f)
    }

    /// Random access: every joint's local transform at a fractional frame (clamped to the
    /// clip). Fills `out[..min(out.len(), joint_count)]`.
    pub fn sample(&self, frame: f32, out: &mut [JointPose]) {
        let f = self.clamp(frame);
        let n = out.len().min(self.fixed.len());
        out[..n].copy_from_slice(&self.fixed[..n]);
        // Keys sit on integer frames: `key <= f` is `key <= floor(f)`.
        let fi = f as u32;
        for t in &self.tracks {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let first = t.first as usize;
            let frames = &self.key_frames[first..first + t.len as usize];
            let s = frames
                .partition_point(|&k| k <= fi)
                .saturating_sub(1)
                .min(frames.len() - 2);
            put(pose, t.kind, self.eval(t, s, f));
        }
    }

    /// A forward-playback state for this clip, at frame 0.
    pub fn cursor_state(&self) -> CursorState {
        CursorState {
            segments: vec![0; self.tracks.len()],
            last_frame: 0.0,
        }
    }

    /// Forward playback: like [`Clip::sample`], stepping each track's segment on from where
    /// `state` left it (moving back restarts from frame 0). `state` must come from this
    /// clip's [`Clip::cursor_state`].
    pub fn sample_forward(&self, state: &mut CursorState, frame: f32, out: &mut [JointPose]) {
        let f = self.clamp(frame);
        if f < state.last_frame || state.segments.len() != self.tracks.len() {
            state.segments.clear();
            state.segments.resize(self.tracks.len(), 0);
        }
        state.last_frame = f;
        let n = out.len().min(self.fixed.len());
        out[..n].copy_from_slice(&self.fixed[..n]);
        let fi = f as u32;
        for (t, seg) in self.tracks.iter().zip(state.segments.iter_mut()) {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let first = t.first as usize;
            let frames = &self.key_frames[first..first + t.len as usize];
            let mut s = *seg as usize;
            while s + 2 < frames.len() && frames[s + 1] <= fi {
                s += 1;
            }
            *seg = s as u32;
            put(pose, t.kind, self.eval(t, s, f));
        }
    }
}

/// Where forward playback of one clip stands: each animated track's current segment.
#[derive(Clone, Debug)]
pub struct CursorState {
    segments: Vec<u32>,
    last_frame: f32,
}

impl CursorState {
    /// Restarts from frame 0.
    pub fn reset(&mut self) {
        self.segments.iter_mut().for_each(|s| *s = 0);
        self.last_frame = 0.0;
    }
}

/// Forward playback over a [`Clip`] (a [`CursorState`] bound to its clip).
#[derive(Clone, Debug)]
pub struct Cursor<'a> {
    clip: &'a Clip,
    state: CursorState,
}

impl<'a> Cursor<'a> {
    /// A cursor at frame 0.
    pub fn new(clip: &'a Clip) -> Self {
        Self {
            clip,
            state: clip.cursor_state(),
        }
    }

    /// Restarts from frame 0.
    pub fn reset(&mut self) {
        self.state.reset();
    }

    /// Decodes the pose at `frame`; moving forward reads on, moving back restarts.
    pub fn sample(&mut self, frame: f32, out: &mut [JointPose]) {
        self.clip.sample_forward(&mut self.state, frame, out);
    }
}
