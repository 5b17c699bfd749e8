//! A compressed clip in memory: per joint, three encoded tracks; decodes any pose.

use glam::{Quat, Vec4};

use super::report::ClipReport;
use super::track::TrackData;
use crate::metric::PoseSource;
use crate::model::playback::Playback;
use crate::model::{Skeleton, TrackKind, Transform};

/// The result of compressing one clip.
#[derive(Clone, Debug)]
pub struct CompressedClip {
    pub name: String,
    pub sample_rate: f32,
    pub frame_count: usize,
    pub start_time: f32,
    /// Rest values per joint (what `TrackData::Rest` decodes to).
    pub rest: Vec<Transform>,
    /// `[joint][T, R, S]`.
    pub tracks: Vec<[TrackData; 3]>,
    /// Local tolerance each track was encoded to (radians for rotations, units otherwise).
    pub local_tolerance: Vec<[f32; 3]>,
    pub report: ClipReport,
    /// How the clip is played: looping, root motion, additive (stored in a `.skp`).
    pub playback: Playback,
}

impl CompressedClip {
    /// Decodes joint `j`'s local transform at a fractional frame.
    #[inline]
    pub fn joint_at(&self, j: usize, frame: f32) -> Transform {
        let [t, r, s] = &self.tracks[j];
        let tv = t.sample(frame, self.rest_value(j, 0));
        let rv = r.sample(frame, self.rest_value(j, 1));
        let sv = s.sample(frame, self.rest_value(j, 2));
        Transform::new(
            tv.truncate(),
            Quat::from_vec4(rv).normalize(),
            sv.truncate(),
        )
    }

    /// What track `kind` (0 translation, 1 rotation, 2 scale) of joint `j` decodes to when
    /// it is a rest track.
    #[inline]
    pub fn rest_value(&self, j: usize, kind: usize) -> Vec4 {
        let rest = &self.rest[j];
        match kind {
            0 => rest.translation.extend(0.0),
            1 => Vec4::from(rest.rotation),
            _ => rest.scale.extend(0.0),
        }
    }

    /// The encoded track of a joint.
    pub fn track(&self, joint: usize, kind: TrackKind) -> &TrackData {
        &self.tracks[joint][kind.index()]
    }

    /// Checks the clip matches a skeleton.
    pub fn matches(&self, skeleton: &Skeleton) -> bool {
        self.tracks.len() == skeleton.len()
    }
}

impl PoseSource for CompressedClip {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        let f = frame.clamp(0.0, self.frame_count.saturating_sub(1) as f32);
        for (j, o) in out.iter_mut().enumerate() {
            *o = self.joint_at(j, f);
        }
    }
}
