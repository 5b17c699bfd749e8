//! Runtime decoding. [`RuntimeClip`] keeps every animated key's value in one contiguous
//! block ordered by the frame at which forward playback first needs it (the container's
//! key-block order), plus per-track seek tables (key frames and block positions).
//!
//! * [`RuntimeClip::sample`]: random access — per track, a binary search in its key frames,
//!   then the 2-4 keys of that segment read through the seek table.
//! * [`Cursor`]: forward playback — reads the block front to back, keeping the last four keys
//!   of each track; seeking backwards restarts it.

use glam::{Quat, Vec4};

use super::curve::{Interpolation, eval_window};
use super::track::TrackData;
use super::{CompressedClip, Curve};
use crate::model::Transform;

/// The frame at which forward playback first needs key `i` of a curve.
fn need_frame(c: &Curve, i: usize) -> u32 {
    let lag = match c.interpolation {
        Interpolation::Linear => 1,
        Interpolation::CatmullRom => 2,
    };
    c.frames[i.saturating_sub(lag)]
}

#[derive(Clone, Debug)]
enum Track {
    Fixed(Vec4),
    Animated {
        interpolation: Interpolation,
        rotation: bool,
        frames: Vec<u32>,
        positions: Vec<u32>,
    },
}

/// A compressed clip laid out for fast decoding.
#[derive(Clone, Debug)]
pub struct RuntimeClip {
    pub frame_count: usize,
    pub sample_rate: f32,
    /// `[joint * 3 + T/R/S]`.
    tracks: Vec<Track>,
    /// Key values in need order.
    block: Vec<Vec4>,
    /// Per block entry: its track slot and frame.
    block_track: Vec<u32>,
    block_frame: Vec<u32>,
    block_need: Vec<u32>,
}

impl RuntimeClip {
    pub fn new(clip: &CompressedClip) -> Self {
        let mut tracks = Vec::with_capacity(clip.tracks.len() * 3);
        let mut order: Vec<(u32, u32, u32)> = Vec::new(); // (need, slot, key)
        for (j, joint) in clip.tracks.iter().enumerate() {
            let rest = &clip.rest[j];
            let rest_values = [
                rest.translation.extend(0.0),
                Vec4::from(rest.rotation),
                rest.scale.extend(0.0),
            ];
            for (k, t) in joint.iter().enumerate() {
                let slot = (j * 3 + k) as u32;
                tracks.push(match t {
                    TrackData::Rest => Track::Fixed(rest_values[k]),
                    TrackData::Constant { value, .. } => Track::Fixed(*value),
                    TrackData::Animated(a) => {
                        for i in 0..a.curve.len() {
                            order.push((need_frame(&a.curve, i), slot, i as u32));
                        }
                        Track::Animated {
                            interpolation: a.curve.interpolation,
                            rotation: a.curve.is_rotation,
                            frames: a.curve.frames.clone(),
                            positions: vec![0; a.curve.len()],
                        }
                    }
                });
            }
        }
        order.sort_unstable();
        let mut block = Vec::with_capacity(order.len());
        let (mut block_track, mut block_frame, mut block_need) =
            (Vec::new(), Vec::new(), Vec::new());
        for (pos, &(need, slot, key)) in order.iter().enumerate() {
            let (j, k) = (slot as usize / 3, slot as usize % 3);
            let TrackData::Animated(a) = &clip.tracks[j][k] else {
                unreachable!("only animated keys are ordered")
            };
            block.push(a.curve.values[key as usize]);
            block_track.push(slot);
            block_frame.push(a.curve.frames[key as usize]);
            block_need.push(need);
            if let Track::Animated { positions, .. } = &mut tracks[slot as usize] {
                positions[key as usize] = pos as u32;
            }
        }
        Self {
            frame_count: clip.frame_count,
            sample_rate: clip.sample_rate,
            tracks,
            block,
            block_track,
            block_frame,
            block_need,
        }
    }

    /// Number of joints.
    pub fn joints(&self) -> usize {
        self.tracks.len() / 3
    }

    /// Bytes of decoded key values held (for reports).
    pub fn block_len(&self) -> usize {
        self.block.len()
    }

    #[inline]
    fn eval_track(&self, t: &Track, frame: f32) -> Vec4 {
        match t {
            Track::Fixed(v) => *v,
            Track::Animated {
                interpolation,
                rotation,
                frames,
                positions,
            } => {
                let n = frames.len();
                let s = frames
                    .partition_point(|&k| (k as f32) <= frame)
                    .saturating_sub(1)
                    .min(n - 2);
                let key = |i: usize| (frames[i] as f32, self.block[positions[i] as usize]);
                let w = [
                    key(s.saturating_sub(1)),
                    key(s),
                    key(s + 1),
                    key((s + 2).min(n - 1)),
                ];
                eval_window(*interpolation, *rotation, &w, frame)
            }
        }
    }

    /// Random access: every joint's local transform at a fractional frame.
    pub fn sample(&self, frame: f32, out: &mut [Transform]) {
        let f = frame.clamp(0.0, self.frame_count.saturating_sub(1) as f32);
        for (j, o) in out.iter_mut().enumerate() {
            let t = self.eval_track(&self.tracks[3 * j], f);
            let r = self.eval_track(&self.tracks[3 * j + 1], f);
            let s = self.eval_track(&self.tracks[3 * j + 2], f);
            *o = Transform::new(t.truncate(), Quat::from_vec4(r).normalize(), s.truncate());
        }
    }

    /// A cursor for forward playback from frame 0.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor::new(self)
    }
}

/// Forward playback over a [`RuntimeClip`]: reads the key block front to back.
pub struct Cursor<'a> {
    clip: &'a RuntimeClip,
    next: usize,
    /// Per track slot: up to four most recent keys `(frame, value)`, oldest first.
    windows: Vec<[(f32, Vec4); 4]>,
    lens: Vec<u8>,
    last_frame: f32,
}

impl<'a> Cursor<'a> {
    fn new(clip: &'a RuntimeClip) -> Self {
        let n = clip.tracks.len();
        Self {
            clip,
            next: 0,
            windows: vec![[(0.0, Vec4::ZERO); 4]; n],
            lens: vec![0; n],
            last_frame: 0.0,
        }
    }

    /// Restarts from frame 0.
    pub fn reset(&mut self) {
        self.next = 0;
        self.lens.iter_mut().for_each(|l| *l = 0);
        self.last_frame = 0.0;
    }

    /// Decodes the pose at `frame`; moving forward reads on, moving back restarts.
    pub fn sample(&mut self, frame: f32, out: &mut [Transform]) {
        let c = self.clip;
        let f = frame.clamp(0.0, c.frame_count.saturating_sub(1) as f32);
        if f < self.last_frame {
            self.reset();
        }
        self.last_frame = f;
        while self.next < c.block.len() && (c.block_need[self.next] as f32) <= f {
            let slot = c.block_track[self.next] as usize;
            let entry = (c.block_frame[self.next] as f32, c.block[self.next]);
            let len = self.lens[slot] as usize;
            let w = &mut self.windows[slot];
            if len < 4 {
                w[len] = entry;
                self.lens[slot] += 1;
            } else {
                w.rotate_left(1);
                w[3] = entry;
            }
            self.next += 1;
        }
        for (j, o) in out.iter_mut().enumerate() {
            let v: [Vec4; 3] = std::array::from_fn(|k| self.eval(3 * j + k, f));
            *o = Transform::new(
                v[0].truncate(),
                Quat::from_vec4(v[1]).normalize(),
                v[2].truncate(),
            );
        }
    }

    #[inline]
    fn eval(&self, slot: usize, f: f32) -> Vec4 {
        match &self.clip.tracks[slot] {
            Track::Fixed(v) => *v,
            Track::Animated {
                interpolation,
                rotation,
                ..
            } => {
                let len = self.lens[slot] as usize;
                let w = &self.windows[slot][..len];
                // The segment starts at the last loaded key at or before f.
                let i = w
                    .iter()
                    .rposition(|k| k.0 <= f)
                    .unwrap_or(0)
                    .min(len.saturating_sub(2));
                let win = [
                    w[i.saturating_sub(1)],
                    w[i],
                    w[(i + 1).min(len - 1)],
                    w[(i + 2).min(len - 1)],
                ];
                eval_window(*interpolation, *rotation, &win, f)
            }
        }
    }
}
