//! A clip laid out for sampling: the pose of every fixed track (rest or constant) computed
//! once, and the animated tracks' keys decoded at load, each track's frames and values
//! contiguous. Sampling writes that fixed pose and then evaluates only the animated tracks:
//!
//! * [`Clip::sample`] (random access): per track, the segment table gives the segment at
//!   the start of the frame's block of [`TABLE_FRAMES`] frames; the search steps on from
//!   there over the block's remaining keys (at most `TABLE_FRAMES - 1`).
//! * [`CursorState`] (forward playback): per track, the current segment, stepped forward.
//!
//! A linear rotation's slerp arcs (angle and sine) are prepared at load; Catmull-Rom and
//! linear vector tracks keep their key values (a Catmull-Rom segment's tangents cost two
//! divisions, an arc an `acos` and a `sin`). Sampling a track is a table look-up, a few
//! steps and one evaluation.
//!
//! Neither allocates. The values are bit for bit those of skelpack's reference decoder.

use glam::{Quat, Vec3, Vec4};

use crate::curve::{Interpolation, SlerpArc, eval_hermite, hermite_ends, segment_u};
use crate::payload::{AnimatedRecord, PayloadRecord, TrackRecord};

/// One joint's local transform: translation, rotation (unit quaternion x, y, z, w) and
/// scale, applied scale first, then rotation, then translation (glTF / ACL convention).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct JointPose {
    pub translation: [f32; 3],
    pub rotation: [f32; 4],
    pub scale: [f32; 3],
}

/// Frames per entry of a track's segment table (random access starts its search there).
pub const TABLE_FRAMES: u32 = 4;

/// How an animated track's segments are evaluated, with their data prepared at load.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Shape {
    /// Vectors, linear: the key values (`values`).
    Lerp,
    /// Rotations, linear: one [`SlerpArc`] per segment (`arcs`).
    Slerp,
    /// Catmull-Rom: the key values (`values`), Hermite ends from the segment's window of
    /// four keys; rotations normalized.
    Hermite { rotation: bool },
}

/// An animated track: where its keys, prepared segments and segment table lie.
#[derive(Clone, Copy, Debug)]
struct Track {
    joint: u32,
    /// 0 translation, 1 rotation, 2 scale.
    kind: u8,
    shape: Shape,
    /// First key in `key_frames`; `len` keys.
    first_key: u32,
    len: u32,
    /// First segment in `arcs` (first key in `values`).
    first_segment: u32,
    /// First entry in `table`.
    first_entry: u32,
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
    values: Vec<Vec4>,
    arcs: Vec<SlerpArc>,
    /// Per track, per [`TABLE_FRAMES`] frames: the segment holding the block's first frame.
    table: Vec<u32>,
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
        let mut c = Self {
            frame_count: p.frame_count,
            sample_rate: p.sample_rate,
            start_time: p.start_time,
            fixed: rest.to_vec(),
            tracks: Vec::new(),
            key_frames: Vec::new(),
            values: Vec::new(),
            arcs: Vec::new(),
            table: Vec::new(),
        };
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
                        put(&mut c.fixed[j], k as u8, v);
                    }
                    TrackRecord::Constant { value, .. } => put(&mut c.fixed[j], k as u8, *value),
                    TrackRecord::Animated(a) => c.push_track(j, k, a),
                }
            }
        }
        c
    }

    /// Appends an animated track: keys, prepared segments, segment table.
    fn push_track(&mut self, joint: usize, kind: usize, a: &AnimatedRecord) {
        let rotation = kind == 1;
        let shape = match a.interpolation {
            Interpolation::Linear if rotation => Shape::Slerp,
            Interpolation::Linear => Shape::Lerp,
            Interpolation::CatmullRom => Shape::Hermite { rotation },
        };
        let n = a.frames.len();
        let first_segment = if shape == Shape::Slerp {
            let first = self.arcs.len();
            self.arcs.extend(
                a.values
                    .windows(2)
                    .map(|w| SlerpArc::new(Quat::from_vec4(w[0]), Quat::from_vec4(w[1]))),
            );
            first
        } else {
            let first = self.values.len();
            self.values.extend_from_slice(&a.values);
            first
        };
        let first_key = self.key_frames.len();
        self.key_frames.extend_from_slice(&a.frames);
        let first_entry = self.table.len();
        let mut s = 0;
        for block in 0..self.frame_count.div_ceil(TABLE_FRAMES) {
            let f = block * TABLE_FRAMES;
            while s + 2 < n && a.frames[s + 1] <= f {
                s += 1;
            }
            self.table.push(s as u32);
        }
        self.tracks.push(Track {
            joint: joint as u32,
            kind: kind as u8,
            shape,
            first_key: first_key as u32,
            len: n as u32,
            first_segment: first_segment as u32,
            first_entry: first_entry as u32,
        });
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
            + self.values.len() * std::mem::size_of::<Vec4>()
            + self.arcs.len() * std::mem::size_of::<SlerpArc>()
            + self.table.len() * 4
    }

    /// `frame` clamped to the clip (NaN is taken as frame 0).
    #[inline]
    fn clamp(&self, frame: f32) -> f32 {
        if frame.is_nan() {
            return 0.0;
        }
        frame.clamp(0.0, (self.frame_count - 1) as f32)
    }

    /// Track `t`'s key frames.
    #[inline(always)]
    fn frames(&self, t: &Track) -> &[u32] {
        let first = t.first_key as usize;
        &self.key_frames[first..first + t.len as usize]
    }

    /// The segment of `frames` holding `fi` (the last key at or before it, at most the
    /// second-to-last key), searched forward from segment `s`.
    #[inline(always)]
    fn step(frames: &[u32], mut s: usize, fi: u32) -> usize {
        while s + 2 < frames.len() && frames[s + 1] <= fi {
            s += 1;
        }
        s
    }

    /// Evaluates segment `s` of track `t` at frame `f`.
    #[inline(always)]
    fn eval(&self, t: &Track, frames: &[u32], s: usize, f: f32) -> Vec4 {
        let f0 = frames[s] as f32;
        let dt = frames[s + 1] as f32 - f0;
        let u = segment_u(f0, dt, f);
        match t.shape {
            Shape::Lerp => {
                let k = t.first_segment as usize + s;
                self.values[k].lerp(self.values[k + 1], u)
            }
            Shape::Slerp => Vec4::from(self.arcs[t.first_segment as usize + s].at(u)),
            Shape::Hermite { rotation } => {
                let first = t.first_segment as usize;
                let values = &self.values[first..first + frames.len()];
                let last = frames.len() - 1;
                let key = |i: usize| (frames[i] as f32, values[i]);
                let window = [
                    key(s.saturating_sub(1)),
                    key(s),
                    key(s + 1),
                    key((s + 2).min(last)),
                ];
                eval_hermite(&hermite_ends(rotation, &window), rotation, u)
            }
        }
    }

    /// Random access: every joint's local transform at a fractional frame (clamped to the
    /// clip; NaN reads as frame 0). Fills `out[..min(out.len(), joint_count)]`.
    pub fn sample(&self, frame: f32, out: &mut [JointPose]) {
        let f = self.clamp(frame);
        let n = out.len().min(self.fixed.len());
        out[..n].copy_from_slice(&self.fixed[..n]);
        // Keys sit on integer frames: `key <= f` is `key <= floor(f)`.
        let fi = f as u32;
        let block = (fi / TABLE_FRAMES) as usize;
        for t in &self.tracks {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let frames = self.frames(t);
            let start = self.table[t.first_entry as usize + block] as usize;
            let s = Self::step(frames, start, fi);
            put(pose, t.kind, self.eval(t, frames, s, f));
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
            let frames = self.frames(t);
            let s = Self::step(frames, *seg as usize, fi);
            *seg = s as u32;
            put(pose, t.kind, self.eval(t, frames, s, f));
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
