//! A compressed clip's tracks decoded once at every sample and midpoint, re-decoded track by
//! track as they change: what the settle pass measures the clip through, so that a trial of
//! a few changed tracks does not decode the other tracks again. The values are the ones
//! [`CompressedClip::joint_at`] gives (the same `TrackData::sample` calls), so a measurement
//! through it is the measurement of the clip.

use glam::{Quat, Vec4};

use crate::codec::compressed::CompressedClip;
use crate::metric::PoseSource;
use crate::model::Transform;

/// Every track's values at the samples, then the midpoints.
pub(crate) struct Decoded {
    frames: usize,
    /// Per track (`3 * joint + kind`): its value at each position (one value for a track
    /// that does not move).
    values: Vec<Vec<Vec4>>,
}

impl Decoded {
    /// Decodes every track of `clip`.
    pub fn new(clip: &CompressedClip) -> Self {
        let mut me = Self {
            frames: clip.frame_count,
            values: vec![Vec::new(); 3 * clip.tracks.len()],
        };
        for j in 0..clip.tracks.len() {
            for k in 0..3 {
                me.update(clip, j, k);
            }
        }
        me
    }

    /// Decodes track `k` of joint `j` of `clip` again (after it changed).
    pub fn update(&mut self, clip: &CompressedClip, j: usize, k: usize) {
        let track = &clip.tracks[j][k];
        let rest = clip.rest_value(j, k);
        let v = &mut self.values[3 * j + k];
        v.clear();
        if track.keys() <= 1 {
            v.push(track.sample(0.0, rest));
            return;
        }
        let mids = self.frames.saturating_sub(1);
        v.extend((0..self.frames).map(|f| track.sample(f as f32, rest)));
        v.extend((0..mids).map(|f| track.sample(f as f32 + 0.5, rest)));
    }

    /// The clip as a pose source reading these values (`clip` for any other frame).
    pub fn source<'a>(&'a self, clip: &'a CompressedClip) -> DecodedSource<'a> {
        DecodedSource {
            decoded: self,
            clip,
        }
    }

    fn at(&self, track: usize, p: usize) -> Vec4 {
        let v = &self.values[track];
        if v.len() == 1 { v[0] } else { v[p] }
    }
}

/// [`Decoded`] values of a clip, read as a pose source.
pub(crate) struct DecodedSource<'a> {
    decoded: &'a Decoded,
    clip: &'a CompressedClip,
}

impl PoseSource for DecodedSource<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        let d = self.decoded;
        let f = frame.clamp(0.0, d.frames.saturating_sub(1) as f32);
        let whole = f.floor();
        let p = if f == whole {
            Some(whole as usize)
        } else if f - whole == 0.5 {
            Some(d.frames + whole as usize)
        } else {
            None
        };
        let Some(p) = p else {
            return self.clip.sample_local(frame, out);
        };
        for (j, o) in out.iter_mut().enumerate() {
            *o = Transform::new(
                d.at(3 * j, p).truncate(),
                Quat::from_vec4(d.at(3 * j + 1, p)).normalize(),
                d.at(3 * j + 2, p).truncate(),
            );
        }
    }
}
