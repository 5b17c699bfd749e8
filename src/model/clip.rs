//! A clip: dense, uniformly sampled local tracks for every joint of a skeleton.

use glam::{Quat, Vec3};

use super::{Skeleton, Transform};

/// Which of a joint's three local tracks.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum TrackKind {
    Translation,
    Rotation,
    Scale,
}

impl TrackKind {
    pub const ALL: [TrackKind; 3] = [Self::Translation, Self::Rotation, Self::Scale];

    /// One-letter label: T, R or S.
    pub fn letter(self) -> char {
        match self {
            Self::Translation => 'T',
            Self::Rotation => 'R',
            Self::Scale => 'S',
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// The three dense tracks of one joint; every vector has `Clip::frame_count` entries.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JointTracks {
    pub translations: Vec<Vec3>,
    pub rotations: Vec<Quat>,
    pub scales: Vec<Vec3>,
    /// Whether the source file had a channel for T, R, S (others hold the rest value).
    pub source_channels: [bool; 3],
}

impl JointTracks {
    /// A track holding `rest` at every frame, with no source channels.
    pub fn constant(rest: Transform, frames: usize) -> Self {
        Self {
            translations: vec![rest.translation; frames],
            rotations: vec![rest.rotation; frames],
            scales: vec![rest.scale; frames],
            source_channels: [false; 3],
        }
    }

    /// The local transform at a frame.
    #[inline]
    pub fn at(&self, frame: usize) -> Transform {
        Transform {
            translation: self.translations[frame],
            rotation: self.rotations[frame],
            scale: self.scales[frame],
        }
    }
}

/// A clip sampled uniformly at `sample_rate`; frame `i` is at `start_time + i / sample_rate`
/// seconds of the source timeline.
#[derive(Clone, Debug, PartialEq)]
pub struct Clip {
    pub name: String,
    pub sample_rate: f32,
    pub frame_count: usize,
    /// Source time of frame 0 in seconds (glTF clips need not start at 0).
    pub start_time: f32,
    /// One entry per skeleton joint.
    pub tracks: Vec<JointTracks>,
    /// Morph-target weight channels in the source (reported and carried over, not compressed).
    pub morph_weight_channels: usize,
    /// Source channels whose curve between frames is not the chord of the frames
    /// (CUBICSPLINE, or keys between frames): [`Self::sample_local`] evaluates them exactly
    /// at fractional frames.
    pub between: std::sync::Arc<Vec<super::SourceCurve>>,
    /// Samples per source frame: 1, or more where `codec::grid` sampled the clip finer so
    /// that its frames follow [`Self::between`] curves (`raw_bytes` counts source frames).
    pub grid: u32,
    /// Events the source declares, sorted by time (seconds from frame 0).
    pub events: Vec<super::Event>,
    /// Morph-target weight curves (glTF `weights` channels, FBX blend channels), compressed
    /// into a `.skp` as scalar tracks.
    pub scalar_tracks: Vec<super::ScalarTrack>,
}

impl Clip {
    /// A clip of `frame_count` frames holding the skeleton's rest pose.
    pub fn rest(
        name: impl Into<String>,
        skeleton: &Skeleton,
        sample_rate: f32,
        frame_count: usize,
    ) -> Self {
        Self {
            name: name.into(),
            sample_rate,
            frame_count,
            start_time: 0.0,
            tracks: skeleton
                .joints
                .iter()
                .map(|j| JointTracks::constant(j.rest, frame_count))
                .collect(),
            morph_weight_channels: 0,
            between: Default::default(),
            grid: 1,
            events: Vec::new(),
            scalar_tracks: Vec::new(),
        }
    }

    /// Duration in seconds: `(frames - 1) / rate`, zero for a single frame.
    pub fn duration(&self) -> f32 {
        if self.frame_count <= 1 {
            0.0
        } else {
            (self.frame_count - 1) as f32 / self.sample_rate
        }
    }

    /// The samples around a (possibly fractional) frame position, clamped to the clip, and
    /// how far between them it lies: `(i0, i1, u)`, `i1 == i0` at the last sample.
    pub fn neighbours(&self, frame: f32) -> (usize, usize, f32) {
        let last = self.frame_count.saturating_sub(1);
        let f = frame.clamp(0.0, last as f32);
        let i0 = (f.floor() as usize).min(last);
        (i0, (i0 + 1).min(last), f - i0 as f32)
    }

    /// Samples all local transforms at a (possibly fractional) frame position, clamped to the
    /// clip, interpolating neighbouring samples (lerp, shortest-arc slerp), except for the
    /// source curves in [`Self::between`], evaluated by their own sampler between frames.
    pub fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        let (i0, i1, u) = self.neighbours(frame);
        for (o, t) in out.iter_mut().zip(&self.tracks) {
            *o = if u <= 0.0 || i0 == i1 {
                t.at(i0)
            } else {
                t.at(i0).interpolate(&t.at(i1), u)
            };
        }
        if u > 0.0 && i0 != i1 {
            let t = self.source_time(i0 as f64 + u as f64);
            for c in self.between.iter() {
                if let Some(o) = out.get_mut(c.joint) {
                    c.apply(t, o);
                }
            }
        }
    }

    /// Source time (seconds) of a (fractional) frame position, as the importer computes the
    /// frames' own times.
    pub fn source_time(&self, frame: f64) -> f32 {
        (self.start_time as f64 + frame / self.sample_rate as f64) as f32
    }

    /// Checks that every track has `frame_count` finite samples and matches the skeleton.
    pub fn validate(&self, skeleton: &Skeleton) -> Result<(), String> {
        if self.tracks.len() != skeleton.len() {
            return Err(format!(
                "clip '{}' has {} joint tracks but the skeleton has {} joints",
                self.name,
                self.tracks.len(),
                skeleton.len()
            ));
        }
        if !(self.sample_rate.is_finite() && self.sample_rate > 0.0) {
            return Err(format!(
                "clip '{}' has sample rate {}",
                self.name, self.sample_rate
            ));
        }
        for (j, t) in self.tracks.iter().enumerate() {
            let n = self.frame_count;
            if t.translations.len() != n || t.rotations.len() != n || t.scales.len() != n {
                return Err(format!(
                    "clip '{}' joint '{}': track lengths differ from {n} frames",
                    self.name, skeleton.joints[j].name
                ));
            }
            let bad = t
                .translations
                .iter()
                .position(|v| !v.is_finite())
                .map(|f| ("translation", f))
                .or_else(|| {
                    t.rotations
                        .iter()
                        .position(|q| !q.is_finite())
                        .map(|f| ("rotation", f))
                })
                .or_else(|| {
                    t.scales
                        .iter()
                        .position(|v| !v.is_finite())
                        .map(|f| ("scale", f))
                });
            if let Some((what, f)) = bad {
                return Err(format!(
                    "clip '{}' joint '{}': non-finite {what} at frame {f}",
                    self.name, skeleton.joints[j].name
                ));
            }
        }
        Ok(())
    }

    /// Raw size by the convention of the leading library: 10 floats per joint per frame.
    pub fn raw_bytes(&self) -> usize {
        let frames = match self.grid {
            0 | 1 => self.frame_count,
            g => self.frame_count.saturating_sub(1) / g as usize + 1,
        };
        self.tracks.len() * frames * 40
    }
}
