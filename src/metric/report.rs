//! The result of a measurement: the joint x frame error matrix and its statistics.

use serde::Serialize;

use super::JointLimits;

/// Statistics over the evaluated joints of one error matrix.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct ErrorStats {
    pub max: f32,
    pub mean: f32,
    pub p99: f32,
    /// Joint and frame of the maximum (a midpoint's frame is `i + 0.5`).
    pub worst_joint: usize,
    pub worst_frame: f32,
    /// The largest `error / tolerance` ratio and how many (joint, frame) cells exceed 1.
    pub worst_ratio: f32,
    pub violations: usize,
}

/// Errors per joint per frame at the samples and, optionally, at the midpoints.
#[derive(Clone, Debug, PartialEq)]
pub struct ErrorReport {
    pub joints: usize,
    pub frames: usize,
    /// `frames * joints`, frame-major; zero for joints without markers.
    pub at_samples: Vec<f32>,
    /// `(frames - 1) * joints`, frame-major.
    pub at_midpoints: Option<Vec<f32>>,
    pub samples: ErrorStats,
    pub midpoints: Option<ErrorStats>,
    /// Per joint: the largest error over samples (and midpoints when measured).
    pub joint_max: Vec<f32>,
}

impl ErrorReport {
    pub fn new(
        joints: usize,
        frames: usize,
        at_samples: Vec<f32>,
        at_midpoints: Option<Vec<f32>>,
        limits: &JointLimits,
    ) -> Self {
        let samples = stats(joints, &at_samples, limits, 0.0);
        let midpoints = at_midpoints.as_ref().map(|m| stats(joints, m, limits, 0.5));
        let joint_max = Self::joint_max_of(joints, &at_samples, at_midpoints.as_deref());
        Self {
            joints,
            frames,
            at_samples,
            at_midpoints,
            samples,
            midpoints,
            joint_max,
        }
    }

    /// Each joint's largest error over the samples and midpoints (`frame * joints + joint`
    /// matrices), as [`ErrorReport::joint_max`] holds it: from 0, by `f32::max`.
    pub fn joint_max_of(
        joints: usize,
        at_samples: &[f32],
        at_midpoints: Option<&[f32]>,
    ) -> Vec<f32> {
        let mut joint_max = vec![0.0f32; joints];
        for m in std::iter::once(at_samples).chain(at_midpoints) {
            for row in m.chunks_exact(joints.max(1)) {
                for (jm, &e) in joint_max.iter_mut().zip(row) {
                    *jm = jm.max(e);
                }
            }
        }
        joint_max
    }

    /// The error of `joint` at sample `frame`.
    pub fn at(&self, joint: usize, frame: usize) -> f32 {
        self.at_samples[frame * self.joints + joint]
    }

    /// True when every evaluated joint is within tolerance at every sample.
    pub fn within_tolerance(&self) -> bool {
        self.samples.violations == 0
    }
}

/// `error / tolerance` (infinite for an error against a zero tolerance).
fn ratio(error: f32, tolerance: f32) -> f32 {
    if tolerance > 0.0 {
        error / tolerance
    } else if error > 0.0 {
        f32::INFINITY
    } else {
        0.0
    }
}

/// True when `error` counts as a violation of `tolerance` in [`ErrorStats::violations`]:
/// when `error / tolerance` ([`ratio`]) is over 1. Compared without the division (the
/// verifier asks this of every joint it composes): for a positive tolerance the rounded
/// quotient of two `f32` is over 1 exactly when `error > tolerance` (the next `f32` above
/// the tolerance is at least `1 + 2⁻²⁴` times it, which rounds above 1; a quotient at
/// most 1 never does), and a NaN error is over neither.
#[inline]
pub fn exceeds(error: f32, tolerance: f32) -> bool {
    if tolerance > 0.0 {
        error > tolerance
    } else {
        ratio(error, tolerance) > 1.0
    }
}

fn stats(joints: usize, m: &[f32], limits: &JointLimits, frame_offset: f32) -> ErrorStats {
    let mut s = ErrorStats::default();
    if joints == 0 || m.is_empty() {
        return s;
    }
    let mut values = Vec::with_capacity(m.len());
    let mut sum = 0.0f64;
    for (f, row) in m.chunks_exact(joints).enumerate() {
        for (j, &e) in row.iter().enumerate() {
            if !limits.evaluated[j] {
                continue;
            }
            values.push(e);
            sum += e as f64;
            if e > s.max || values.len() == 1 {
                s.max = e;
                s.worst_joint = j;
                s.worst_frame = f as f32 + frame_offset;
            }
            let ratio = ratio(e, limits.tolerance[j]);
            s.worst_ratio = s.worst_ratio.max(ratio);
            if ratio > 1.0 {
                s.violations += 1;
            }
        }
    }
    if values.is_empty() {
        return s;
    }
    s.mean = (sum / values.len() as f64) as f32;
    let k = ((values.len() - 1) as f64 * 0.99).round() as usize;
    let (_, p, _) = values.select_nth_unstable_by(k, f32::total_cmp);
    s.p99 = *p;
    s
}
