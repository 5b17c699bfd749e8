//! Track classification: equal to the rest pose, constant, or animated — decided against the
//! local tolerance the hierarchy budget gives each track, never by a fixed epsilon.

use glam::{Quat, Vec3, Vec4};
use serde::Serialize;

use super::budget::Budgets;
use crate::metric::JointLimits;
use crate::model::{Clip, Skeleton, TrackKind, Transform, quat_angle};

/// What a track needs to be reproduced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TrackClass {
    /// Within tolerance of the skeleton's rest value at every frame: costs nothing.
    Rest,
    /// Within tolerance of one value at every frame.
    Constant,
    Animated,
}

/// The class of each of a clip's tracks, `[joint][T, R, S]`.
#[derive(Clone, Debug)]
pub struct Classification {
    pub classes: Vec<[TrackClass; 3]>,
    pub budgets: Budgets,
}

impl Classification {
    pub fn count(&self, class: TrackClass) -> usize {
        self.classes
            .iter()
            .flatten()
            .filter(|&&c| c == class)
            .count()
    }
}

/// Largest angle between any sample of `track` and `q` (radians).
pub fn max_angle(track: &[Quat], q: Quat) -> f32 {
    track.iter().map(|r| quat_angle(*r, q)).fold(0.0, f32::max)
}

/// Largest distance between any sample of `track` and `v`.
pub fn max_distance(track: &[Vec3], v: Vec3) -> f32 {
    track.iter().map(|x| x.distance(v)).fold(0.0, f32::max)
}

/// The value that best stands for a constant vector track (the midpoint of its bounding box).
pub fn constant_vec3(track: &[Vec3]) -> Vec3 {
    midrange(track.iter().copied())
}

/// The midpoint of the smallest box holding `values` ([`constant_vec3`] of a sequence).
pub fn midrange(values: impl Iterator<Item = Vec3>) -> Vec3 {
    let (lo, hi) = values.fold((Vec3::INFINITY, Vec3::NEG_INFINITY), |(l, h), v| {
        (l.min(v), h.max(v))
    });
    (lo + hi) * 0.5
}

/// The value that best stands for a constant rotation track (the normalized mean, signs aligned).
pub fn constant_quat(track: &[Quat]) -> Quat {
    let first = track[0];
    let sum = track
        .iter()
        .fold(Quat::from_xyzw(0.0, 0.0, 0.0, 0.0), |acc, q| {
            let q = if q.dot(first) < 0.0 { -*q } else { *q };
            acc + q
        });
    if sum.length() > 1e-9 {
        sum.normalize()
    } else {
        first
    }
}

/// A track "moves" when it varies at all beyond float noise (used to share budgets).
fn varies(clip: &Clip, j: usize, rest: &Transform) -> bool {
    let t = &clip.tracks[j];
    let v3 = |v: &[glam::Vec3]| v.iter().map(|x| x.extend(0.0)).collect::<Vec<_>>();
    let rot: Vec<Vec4> = t.rotations.iter().map(|q| Vec4::from(*q)).collect();
    track_moves(&v3(&t.translations), rest.translation.extend(0.0), false)
        || track_moves(&rot, Vec4::from(rest.rotation), true)
        || track_moves(&v3(&t.scales), rest.scale.extend(0.0), false)
}

/// Whether a track leaves its rest value beyond float noise: the tracks that share a
/// marker's budget (the compressor and the classifier use this one definition).
pub fn track_moves(values: &[Vec4], rest: Vec4, is_rotation: bool) -> bool {
    values
        .iter()
        .any(|v| super::fit::distance(is_rotation, *v, rest) > 1e-7)
}

/// Classifies every track of `clip` against budgets derived from `limits`.
pub fn classify(skeleton: &Skeleton, clip: &Clip, limits: &JointLimits) -> Classification {
    let moving: Vec<bool> = skeleton
        .joints
        .iter()
        .enumerate()
        .map(|(j, jt)| varies(clip, j, &jt.rest))
        .collect();
    let budgets = Budgets::new(skeleton, clip, limits, &moving, &[]);
    let classes = skeleton
        .joints
        .iter()
        .enumerate()
        .map(|(j, joint)| {
            let tol = budgets.local_tolerances(j, 3, 1.0);
            let t = &clip.tracks[j];
            let mut c = [TrackClass::Animated; 3];
            for kind in TrackKind::ALL {
                c[kind.index()] = match kind {
                    TrackKind::Translation => class_of(
                        max_distance(&t.translations, joint.rest.translation),
                        max_distance(&t.translations, constant_vec3(&t.translations)),
                        tol.translation,
                    ),
                    TrackKind::Rotation => class_of(
                        max_angle(&t.rotations, joint.rest.rotation),
                        max_angle(&t.rotations, constant_quat(&t.rotations)),
                        tol.rotation,
                    ),
                    TrackKind::Scale => class_of(
                        max_distance(&t.scales, joint.rest.scale),
                        max_distance(&t.scales, constant_vec3(&t.scales)),
                        tol.scale,
                    ),
                };
            }
            c
        })
        .collect();
    Classification { classes, budgets }
}

fn class_of(from_rest: f32, from_constant: f32, tolerance: f32) -> TrackClass {
    if from_rest <= tolerance {
        TrackClass::Rest
    } else if from_constant <= tolerance {
        TrackClass::Constant
    } else {
        TrackClass::Animated
    }
}
