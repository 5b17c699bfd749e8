//! Forward playback: a [`CursorState`] keeps, per animated track, the segment playback is
//! in. In the compact layout that segment stays prepared (keys dequantized, slerp arc or
//! Hermite ends computed) with the frame where it ends: a sample inside it only evaluates
//! it, a sample past its end steps on and prepares the new segment once. The prepared
//! layout finds any frame's segment with one table read, so it samples as random access
//! does and leaves the state alone.

use crate::clip::{Clip, JointPose, Tracks, put};
use crate::curve::{Interpolation, Segment};
use crate::keys::KeyTrack;
use crate::packed::PackedBits;

/// One track's place in forward playback.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Current {
    /// The segment (index of its first key).
    pub(crate) segment: u32,
    /// Compact layout: frame of the segment's last key, or `u32::MAX` for the track's last
    /// segment (which playback never leaves); 0 before the segment is prepared.
    end: u32,
    prepared: Segment,
    /// Compact layout: the segment's end key (frame, value), the next segment's start.
    next_start: (f32, glam::Vec4),
}

impl Current {
    /// Nothing prepared yet (at frame 0).
    fn start() -> Self {
        let none = (0.0, glam::Vec4::ZERO);
        Self {
            segment: 0,
            end: 0,
            prepared: Segment::new(Interpolation::Linear, false, &[none; 4]),
            next_start: none,
        }
    }
}

/// Where forward playback of one clip stands: each animated track's current segment,
/// prepared. Its size: [`CursorState::memory_bytes`].
#[derive(Clone, Debug)]
pub struct CursorState {
    tracks: Vec<Current>,
    last_frame: f32,
}

impl CursorState {
    /// Restarts from frame 0.
    pub fn reset(&mut self) {
        self.tracks.iter_mut().for_each(|c| *c = Current::start());
        self.last_frame = 0.0;
    }

    /// Bytes this state holds.
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>() + self.tracks.len() * std::mem::size_of::<Current>()
    }
}

impl Clip {
    /// A forward-playback state for this clip, at frame 0.
    pub fn cursor_state(&self) -> CursorState {
        CursorState {
            tracks: vec![Current::start(); self.animated_tracks()],
            last_frame: 0.0,
        }
    }

    /// Forward playback: like [`Clip::sample`] and bit for bit equal to it, stepping each
    /// track on from the segment `state` holds (moving back restarts from frame 0).
    /// `state` must come from this clip's [`Clip::cursor_state`] (another clip's restarts).
    pub fn sample_forward(&self, state: &mut CursorState, frame: f32, out: &mut [JointPose]) {
        let f = self.clamp(frame);
        if state.tracks.len() != self.animated_tracks() {
            *state = self.cursor_state();
        } else if f < state.last_frame {
            state.reset();
        }
        state.last_frame = f;
        let fi = f as u32;
        match self.tracks() {
            // The prepared layout's table finds any frame's segment in one read.
            Tracks::Prepared(p) => p.sample_over(f, fi, out, self.fixed()),
            Tracks::Compact { tracks, bits } => {
                self.write_fixed(out);
                #[cfg(target_arch = "x86_64")]
                if crate::cpu::has_fma() {
                    // SAFETY: the CPU has FMA.
                    return unsafe { forward_compact_fma(tracks, bits, state, f, fi, out) };
                }
                forward_compact(tracks, bits, state, f, fi, out)
            }
        }
    }
}

/// Forward playback in the compact layout: each track's segment stays prepared in `state`
/// until playback leaves it.
#[inline(always)]
fn forward_compact(
    tracks: &[KeyTrack],
    bits: &PackedBits,
    state: &mut CursorState,
    f: f32,
    fi: u32,
    out: &mut [JointPose],
) {
    for (t, c) in tracks.iter().zip(state.tracks.iter_mut()) {
        let Some(pose) = out.get_mut(t.joint as usize) else {
            break;
        };
        if fi >= c.end {
            let s = t.step(bits, c.segment as usize, fi);
            // Moving on by one segment: its first key is the one decoded last.
            let first = (c.end != 0 && s == c.segment as usize + 1).then_some(c.next_start);
            c.segment = s as u32;
            c.end = if s + 2 < t.len() {
                t.frame(bits, s + 1)
            } else {
                u32::MAX
            };
            (c.prepared, c.next_start) = t.segment_from(bits, s, first);
        }
        put(pose, t.kind, c.prepared.eval_inline(f));
    }
}

/// [`forward_compact`] compiled with FMA instructions (the slerp's sines).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
fn forward_compact_fma(
    tracks: &[KeyTrack],
    bits: &PackedBits,
    state: &mut CursorState,
    f: f32,
    fi: u32,
    out: &mut [JointPose],
) {
    forward_compact(tracks, bits, state, f, fi, out)
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
