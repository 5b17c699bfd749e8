//! Compressed tracks as glTF animation channels, and a player that evaluates them exactly as
//! glTF specifies (LINEAR with slerp for rotations, CUBICSPLINE Hermite then normalize), so
//! the exporter can measure what viewers will show, storage rounding included.

use glam::{Quat, Vec4};

use crate::codec::{CompressedClip, Interpolation, TrackData};
use crate::metric::PoseSource;
use crate::model::{Transform, slerp_shortest};

/// glTF sampler interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interp {
    Linear,
    CubicSpline,
}

/// How a channel's output values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    Float,
    /// Normalized signed 16-bit (rotations only; every stored value within [-1, 1]).
    Short,
}

/// One glTF channel's data: keys at clip frames, values and (cubic) tangents in value units
/// per frame, as the file will hold them after storage rounding.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    pub joint: usize,
    /// 0 translation, 1 rotation, 2 scale.
    pub kind: usize,
    pub interp: Interp,
    pub frames: Vec<u32>,
    pub values: Vec<Vec4>,
    /// Tangents (per frame) at each key, for CUBICSPLINE; in == out.
    pub tangents: Vec<Vec4>,
    pub storage: Storage,
}

impl Channel {
    /// The channel for a compressed track, or `None` for a rest track.
    pub fn from_track(joint: usize, kind: usize, track: &TrackData) -> Option<Self> {
        let (interp, frames, values, tangents) = match track {
            TrackData::Rest => return None,
            TrackData::Constant { value, .. } => (Interp::Linear, vec![0], vec![*value], vec![]),
            TrackData::Animated(a) => {
                let c = &a.curve;
                match c.interpolation {
                    Interpolation::Linear => {
                        (Interp::Linear, c.frames.clone(), c.values.clone(), vec![])
                    }
                    Interpolation::CatmullRom => (
                        Interp::CubicSpline,
                        c.frames.clone(),
                        c.values.clone(),
                        (0..c.len()).map(|i| c.tangent(i)).collect(),
                    ),
                }
            }
        };
        Some(Self {
            joint,
            kind,
            interp,
            frames,
            values,
            tangents,
            storage: Storage::Float,
        })
    }

    pub fn is_rotation(&self) -> bool {
        self.kind == 1
    }

    /// Whether every value the file would hold fits a normalized SHORT.
    pub fn short_eligible(&self, rate: f32) -> bool {
        self.is_rotation()
            && self.values.iter().all(|v| v.abs().max_element() <= 1.0)
            && self
                .tangents
                .iter()
                .all(|t| (*t * rate).abs().max_element() <= 1.0)
    }

    /// The output accessor's elements as stored: `[in, value, out]` per key for cubic.
    pub fn output(&self, rate: f32) -> Vec<Vec4> {
        match self.interp {
            Interp::Linear => self.values.clone(),
            Interp::CubicSpline => self
                .values
                .iter()
                .zip(&self.tangents)
                .flat_map(|(&v, &t)| [t * rate, v, t * rate])
                .collect(),
        }
    }

    /// This channel as a player reads it back: storage rounding applied.
    pub fn as_stored(&self, rate: f32) -> Channel {
        let mut c = self.clone();
        if self.storage == Storage::Short {
            c.values = c.values.iter().map(|&v| short_round(v)).collect();
            c.tangents = c
                .tangents
                .iter()
                .map(|&t| short_round(t * rate) / rate)
                .collect();
        }
        c
    }

    /// Evaluates at a fractional frame with glTF semantics (clamped outside the keys).
    pub fn sample(&self, frame: f32) -> Vec4 {
        let n = self.frames.len();
        let last = *self.frames.last().expect("channels have keys") as f32;
        if n == 1 || frame <= self.frames[0] as f32 {
            return self.values[0];
        }
        if frame >= last {
            return self.values[n - 1];
        }
        let i = self.frames.partition_point(|&k| (k as f32) <= frame) - 1;
        let (f0, f1) = (self.frames[i] as f32, self.frames[i + 1] as f32);
        let dt = f1 - f0;
        let u = (frame - f0) / dt;
        let (p0, p1) = (self.values[i], self.values[i + 1]);
        match self.interp {
            Interp::Linear if self.is_rotation() => {
                Vec4::from(slerp_shortest(Quat::from_vec4(p0), Quat::from_vec4(p1), u))
            }
            Interp::Linear => p0.lerp(p1, u),
            Interp::CubicSpline => {
                let v = crate::codec::curve::hermite(
                    p0,
                    self.tangents[i] * dt,
                    p1,
                    self.tangents[i + 1] * dt,
                    u,
                );
                if self.is_rotation() {
                    v.normalize_or(Vec4::W)
                } else {
                    v
                }
            }
        }
    }
}

/// Rounds each component to the nearest normalized SHORT and back.
pub fn short_round(v: Vec4) -> Vec4 {
    Vec4::from_array(v.to_array().map(|x| f32::from(to_short(x)) / 32767.0)).max(Vec4::NEG_ONE)
}

/// A component as a normalized SHORT.
pub fn to_short(x: f32) -> i16 {
    (x.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

/// Builds the channels of a compressed clip, one per non-rest track.
pub fn channels_of(clip: &CompressedClip) -> Vec<Channel> {
    let mut out = Vec::new();
    for (j, tracks) in clip.tracks.iter().enumerate() {
        for (k, t) in tracks.iter().enumerate() {
            out.extend(Channel::from_track(j, k, t));
        }
    }
    out
}

/// A clip as glTF players will evaluate the exported channels (rest where there is none).
pub struct Played<'a> {
    pub rest: &'a [Transform],
    /// Per joint, per T/R/S: the stored channel, if any.
    pub tracks: Vec<[Option<Channel>; 3]>,
    pub frame_count: usize,
}

impl<'a> Played<'a> {
    pub fn new(rest: &'a [Transform], channels: &[Channel], rate: f32, frame_count: usize) -> Self {
        let mut tracks: Vec<[Option<Channel>; 3]> = vec![[None, None, None]; rest.len()];
        for c in channels {
            tracks[c.joint][c.kind] = Some(c.as_stored(rate));
        }
        Self {
            rest,
            tracks,
            frame_count,
        }
    }
}

impl PoseSource for Played<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        let f = frame.clamp(0.0, self.frame_count.saturating_sub(1) as f32);
        for (j, o) in out.iter_mut().enumerate() {
            let rest = self.rest[j];
            let [t, r, s] = &self.tracks[j];
            *o = Transform::new(
                t.as_ref()
                    .map_or(rest.translation, |c| c.sample(f).truncate()),
                r.as_ref()
                    .map_or(rest.rotation, |c| Quat::from_vec4(c.sample(f)).normalize()),
                s.as_ref().map_or(rest.scale, |c| c.sample(f).truncate()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Curve;

    #[test]
    fn cubic_channel_matches_the_codec_curve() {
        let frames = vec![0, 4, 9, 20];
        let values: Vec<Vec4> = [0.0f32, 0.5, 0.2, 1.3]
            .iter()
            .map(|&x| Vec4::new(x, -x, 2.0 * x, 0.0))
            .collect();
        let curve = Curve::new(Interpolation::CatmullRom, false, frames, values);
        let track = TrackData::Animated(crate::codec::Animated {
            curve: curve.clone(),
            format: crate::codec::quantize::Format::SmallestThree48,
            range: Default::default(),
            codes: vec![],
            insert_order: vec![],
        });
        let ch = Channel::from_track(0, 0, &track).unwrap();
        for i in 0..=40 {
            let f = i as f32 * 0.5;
            assert!((ch.sample(f) - curve.sample(f)).length() < 1e-5, "{f}");
        }
    }

    #[test]
    fn short_rounding_is_within_half_a_step() {
        let v = Vec4::new(0.123456, -0.99999, 1.0, -1.0);
        let r = short_round(v);
        assert!((r - v).abs().max_element() <= 0.5 / 32767.0 + 1e-7);
        assert_eq!(to_short(-1.0), -32767);
    }
}
