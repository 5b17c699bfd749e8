//! Measuring: reference object poses are computed once; a candidate is sampled, composed into
//! object space and compared marker by marker, without allocating per sample.

use glam::DAffine3;

use super::markers::{joint_error, marker_error};
use super::{ErrorReport, JointLimits};
use crate::model::{Clip, Skeleton, Transform, local_to_object_f64};

/// Anything that yields local poses at (fractional) frame positions: a raw clip, a decoder.
pub trait PoseSource {
    /// Writes every joint's local transform at `frame` (0 = first sample) into `out`.
    fn sample_local(&self, frame: f32, out: &mut [Transform]);
}

impl PoseSource for Clip {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        Clip::sample_local(self, frame, out)
    }
}

/// The largest marker distance between two single-precision object transforms (for
/// display; the metric itself composes in double precision).
#[inline]
pub fn joint_error_f32(a: &glam::Affine3A, b: &glam::Affine3A, d: f32) -> f32 {
    joint_error(&to_f64(a), &to_f64(b), d)
}

/// Widens an affine transform to double precision.
#[inline]
pub fn to_f64(a: &glam::Affine3A) -> DAffine3 {
    DAffine3 {
        matrix3: glam::DMat3::from_cols(
            a.matrix3.x_axis.as_dvec3(),
            a.matrix3.y_axis.as_dvec3(),
            a.matrix3.z_axis.as_dvec3(),
        ),
        translation: a.translation.as_dvec3(),
    }
}

/// Reference object-space poses of a clip at every sample and at inner points between
/// samples (by default the midpoint; `with_inner_points(.., 3)` gives the quarter points a
/// glTF checker such as `animeval.py --oversample 4` uses).
#[derive(Clone)]
pub struct Reference {
    pub joints: usize,
    pub frames: usize,
    /// Inner points per interval between samples.
    pub inner: usize,
    /// `frames * joints`, frame-major.
    pub at_samples: Vec<DAffine3>,
    /// `(frames - 1) * inner * joints`: interval-major, then inner point, then joint.
    pub at_midpoints: Vec<DAffine3>,
    /// Further points between samples (frame positions, each strictly inside an interval):
    /// the midpoints of an export's key intervals that the inner points miss.
    pub extra: Vec<f32>,
    /// `extra.len() * joints`: per extra point, then joint.
    pub at_extra: Vec<DAffine3>,
}

impl Reference {
    /// Evaluates `source` (usually the raw clip) at its `frames` samples and midpoints.
    pub fn new(skeleton: &Skeleton, source: &dyn PoseSource, frames: usize) -> Self {
        Self::with_inner_points(skeleton, source, frames, 1)
    }

    /// Evaluates `source` at its samples and at `inner` evenly spaced points inside each
    /// interval (`f + k / (inner + 1)`).
    pub fn with_inner_points(
        skeleton: &Skeleton,
        source: &dyn PoseSource,
        frames: usize,
        inner: usize,
    ) -> Self {
        let n = skeleton.len();
        let inner = inner.max(1);
        let mut local = vec![Transform::IDENTITY; n];
        let mut at_samples = vec![DAffine3::IDENTITY; frames * n];
        for f in 0..frames {
            source.sample_local(f as f32, &mut local);
            local_to_object_f64(skeleton, &local, &mut at_samples[f * n..(f + 1) * n]);
        }
        let mids = frames.saturating_sub(1);
        let mut at_midpoints = vec![DAffine3::IDENTITY; mids * inner * n];
        for f in 0..mids {
            for k in 0..inner {
                source.sample_local(f as f32 + Self::fraction(k, inner), &mut local);
                let at = (f * inner + k) * n;
                local_to_object_f64(skeleton, &local, &mut at_midpoints[at..at + n]);
            }
        }
        Self {
            joints: n,
            frames,
            inner,
            at_samples,
            at_midpoints,
            extra: Vec::new(),
            at_extra: Vec::new(),
        }
    }

    /// As [`Self::with_inner_points`], with `extra` points between samples as well (frame
    /// positions; those outside `(0, frames - 1)` are dropped). [`measure`] counts each in
    /// the midpoints of the interval holding it.
    pub fn with_extra_points(
        skeleton: &Skeleton,
        source: &dyn PoseSource,
        frames: usize,
        inner: usize,
        extra: &[f32],
    ) -> Self {
        let mut me = Self::with_inner_points(skeleton, source, frames, inner);
        me.add_extra_points(skeleton, source, extra);
        me
    }

    /// Adds `extra` points (see [`Self::with_extra_points`]) not already held.
    pub fn add_extra_points(
        &mut self,
        skeleton: &Skeleton,
        source: &dyn PoseSource,
        extra: &[f32],
    ) {
        let n = self.joints;
        let last = self.frames.saturating_sub(1) as f32;
        let mut local = vec![Transform::IDENTITY; n];
        for &x in extra {
            if !(x > 0.0 && x < last) || self.extra.contains(&x) {
                continue;
            }
            source.sample_local(x, &mut local);
            let at = self.at_extra.len();
            self.at_extra.resize(at + n, DAffine3::IDENTITY);
            local_to_object_f64(skeleton, &local, &mut self.at_extra[at..at + n]);
            self.extra.push(x);
        }
    }

    /// The interval (between samples `i` and `i + 1`) holding extra point `e`.
    pub fn extra_interval(&self, e: usize) -> usize {
        (self.extra[e].floor() as usize).min(self.frames.saturating_sub(2))
    }

    /// The frame positions [`measure`] evaluates, in the order of its points: every sample,
    /// then per interval its inner points.
    pub fn point_positions(&self) -> Vec<f32> {
        let mut points: Vec<f32> = (0..self.frames).map(|f| f as f32).collect();
        for f in 0..self.frames.saturating_sub(1) {
            for k in 0..self.inner {
                points.push(f as f32 + Self::fraction(k, self.inner));
            }
        }
        points.extend(&self.extra);
        points
    }

    /// Position of inner point `k` of `inner` within an interval.
    fn fraction(k: usize, inner: usize) -> f32 {
        (k + 1) as f32 / (inner + 1) as f32
    }

    /// The reference pose at sample `frame`.
    pub fn sample(&self, frame: usize) -> &[DAffine3] {
        &self.at_samples[frame * self.joints..(frame + 1) * self.joints]
    }

    /// The positions a clip is measured at with one inner point per interval: every
    /// sample, then every midpoint.
    pub fn positions(&self) -> usize {
        self.frames + self.frames.saturating_sub(1)
    }

    /// The frame of position `p` ([`Reference::positions`]): a sample, or the midpoint
    /// after sample `p - frames`.
    pub fn position_frame(&self, p: usize) -> f32 {
        if p < self.frames {
            p as f32
        } else {
            (p - self.frames) as f32 + 0.5
        }
    }

    /// The object poses at position `p` ([`Reference::positions`]; a reference with one
    /// inner point per interval).
    pub fn at_position(&self, p: usize) -> &[DAffine3] {
        debug_assert_eq!(self.inner, 1, "positions are samples and midpoints");
        let n = self.joints;
        if p < self.frames {
            self.sample(p)
        } else {
            let m = p - self.frames;
            &self.at_midpoints[m * n..(m + 1) * n]
        }
    }
}

/// Measures `candidate` against `reference` at every sample (and midpoint when asked).
pub fn measure(
    skeleton: &Skeleton,
    reference: &Reference,
    candidate: &dyn PoseSource,
    limits: &JointLimits,
    midpoints: bool,
) -> ErrorReport {
    let (errors, mid_errors) = measure_cells(skeleton, reference, candidate, limits, midpoints);
    ErrorReport::new(
        reference.joints,
        reference.frames,
        errors,
        mid_errors,
        limits,
    )
}

/// Each joint's largest error, as [`measure`]'s report holds it ([`ErrorReport::joint_max`]),
/// without the report's statistics (which sort every cell): what a floor needs.
pub fn measure_joint_max(
    skeleton: &Skeleton,
    reference: &Reference,
    candidate: &dyn PoseSource,
    limits: &JointLimits,
    midpoints: bool,
) -> Vec<f32> {
    let (errors, mid_errors) = measure_cells(skeleton, reference, candidate, limits, midpoints);
    ErrorReport::joint_max_of(reference.joints, &errors, mid_errors.as_deref())
}

/// [`measure`]'s error matrices: at the samples, and per interval the largest over its
/// inner points (when `midpoints`).
fn measure_cells(
    skeleton: &Skeleton,
    reference: &Reference,
    candidate: &dyn PoseSource,
    limits: &JointLimits,
    midpoints: bool,
) -> (Vec<f32>, Option<Vec<f32>>) {
    let n = reference.joints;
    assert_eq!(skeleton.len(), n, "reference and skeleton differ");
    assert_eq!(limits.len(), n, "limits and skeleton differ");
    let mut local = vec![Transform::IDENTITY; n];
    let mut obj = vec![DAffine3::IDENTITY; n];
    let mut errors = vec![0.0f32; reference.frames * n];
    let mut fill = |frame: f32, refs: &[DAffine3], out: &mut [f32]| {
        candidate.sample_local(frame, &mut local);
        local_to_object_f64(skeleton, &local, &mut obj);
        for j in 0..n {
            out[j] = marker_error(limits, j, &refs[j], &obj[j]);
        }
    };
    for f in 0..reference.frames {
        fill(
            f as f32,
            reference.sample(f),
            &mut errors[f * n..(f + 1) * n],
        );
    }
    let mid_errors = if midpoints {
        // Per interval, the largest error over its inner points.
        let m = reference.frames.saturating_sub(1);
        let inner = reference.inner;
        let mut e = vec![0.0f32; m * n];
        let mut point = vec![0.0f32; n];
        for f in 0..m {
            for k in 0..inner {
                let at = (f * inner + k) * n;
                let x = f as f32 + Reference::fraction(k, inner);
                fill(x, &reference.at_midpoints[at..at + n], &mut point);
                for (dst, &v) in e[f * n..(f + 1) * n].iter_mut().zip(&point) {
                    *dst = dst.max(v);
                }
            }
        }
        for (i, &x) in reference.extra.iter().enumerate() {
            let f = reference.extra_interval(i);
            fill(x, &reference.at_extra[i * n..(i + 1) * n], &mut point);
            for (dst, &v) in e[f * n..(f + 1) * n].iter_mut().zip(&point) {
                *dst = dst.max(v);
            }
        }
        Some(e)
    } else {
        None
    };
    (errors, mid_errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;
    use glam::DVec3;
    use glam::{Quat, Vec3};

    #[test]
    fn markers_include_translation_and_axes() {
        let a = DAffine3::IDENTITY;
        let b = DAffine3::from_translation(DVec3::new(0.0, 0.0, 0.5));
        assert!((joint_error(&a, &b, 3.0) - 0.5).abs() < 1e-6);
        let c = DAffine3::from_quat(glam::DQuat::from_rotation_z(std::f64::consts::PI));
        // X and Y markers flip to the other side: distance 2d.
        assert!((joint_error(&a, &c, 3.0) - 6.0).abs() < 1e-5);
    }

    #[test]
    fn identical_clips_measure_zero() {
        let s = Skeleton::new(vec![
            Joint::new("a", None, Transform::IDENTITY),
            Joint::new(
                "b",
                Some(0),
                Transform::new(Vec3::X, Quat::IDENTITY, Vec3::ONE),
            ),
        ])
        .unwrap();
        let mut clip = Clip::rest("c", &s, 30.0, 5);
        for f in 0..5 {
            clip.tracks[0].rotations[f] = Quat::from_rotation_y(f as f32 * 0.3);
        }
        let r = Reference::new(&s, &clip, 5);
        let e = measure(&s, &r, &clip, &JointLimits::uniform(&s, 0.03, 1e-4), true);
        assert_eq!(e.samples.max, 0.0);
        assert_eq!(e.midpoints.unwrap().max, 0.0);
    }
}
