//! The prepared layout of a clip's animated tracks ([`crate::ClipLayout::Prepared`], the
//! default, made for speed): every key decoded at open, each track's frames and values
//! contiguous, a linear rotation's slerp arcs (angle and sine) prepared per segment, and a
//! segment table (the segment at every [`TABLE_FRAMES`]th frame). Sampling a track is a
//! table look-up, a few steps and one evaluation. It costs several times the file's size
//! in memory; [`crate::keys`] is the compact alternative.

use glam::{Quat, Vec4};

use crate::clip::{JointPose, put};
use crate::cursor::Current;
use crate::curve::{Interpolation, SlerpArc, eval_hermite, hermite_ends, segment_u};
use crate::keys::TABLE_FRAMES;
use crate::payload::AnimatedRecord;

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

/// A clip's animated tracks in the prepared layout (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct Prepared {
    frame_count: u32,
    tracks: Vec<Track>,
    key_frames: Vec<u32>,
    values: Vec<Vec4>,
    arcs: Vec<SlerpArc>,
    /// Per track, per [`TABLE_FRAMES`] frames: the segment holding the block's first frame.
    table: Vec<u32>,
}

impl Prepared {
    /// An empty layout for a clip of `frame_count` frames.
    pub fn new(frame_count: u32) -> Self {
        Self {
            frame_count,
            ..Self::default()
        }
    }

    /// Appends an animated track: keys, prepared segments, segment table.
    pub fn push_track(&mut self, joint: usize, kind: usize, a: &AnimatedRecord) {
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

    /// Number of animated tracks.
    pub fn len(&self) -> usize {
        self.tracks.len()
    }

    /// Bytes held (track descriptions, decoded keys, prepared arcs, tables).
    pub fn memory_bytes(&self) -> usize {
        self.tracks.len() * std::mem::size_of::<Track>()
            + self.key_frames.len() * 4
            + self.values.len() * std::mem::size_of::<Vec4>()
            + self.arcs.len() * std::mem::size_of::<SlerpArc>()
            + self.table.len() * 4
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

    /// Random access at frame `f` (clamped; `fi` its integer part): writes each animated
    /// track into `out` (which holds the fixed pose).
    pub fn sample(&self, f: f32, fi: u32, out: &mut [JointPose]) {
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

    /// Forward playback: like [`Prepared::sample`], each track stepping on from the segment
    /// in `state` (one entry per track).
    pub fn sample_forward(&self, state: &mut [Current], f: f32, fi: u32, out: &mut [JointPose]) {
        for (t, c) in self.tracks.iter().zip(state.iter_mut()) {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let frames = self.frames(t);
            let s = Self::step(frames, c.segment as usize, fi);
            c.segment = s as u32;
            put(pose, t.kind, self.eval(t, frames, s, f));
        }
    }
}
