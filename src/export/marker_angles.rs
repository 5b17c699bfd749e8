//! Per joint, the smallest rotation that moves some marker at or below it by that marker's
//! tolerance at the rest pose (the verifier's initial nlerp chords, `verify::initial_chords`).
//!
//! Measured marker by marker it walks every evaluated joint up to the root: joints × depth,
//! quadratic on a chain (with an ancestor test per pair it was cubic: a 2,800-deep BVH chain
//! spent minutes here). Past [`EXACT_MAX_STEPS`] path steps a bound through the children is
//! used instead, linear and never larger than the exact angle (a smaller chord is safe).

use glam::DAffine3;

use crate::metric::JointLimits;
use crate::model::Skeleton;

/// The most joint-to-root path steps measured exactly (ordinary rigs take a few thousand).
const EXACT_MAX_STEPS: usize = 4_000_000;

/// Per joint `j`: min over evaluated `k` in its subtree of `tolerance_k / reach(j, k)`, with
/// `reach` the distance from `j` to `k` plus `k`'s marker offset in the scene (`obj`: rest
/// poses in the scene, `scale`: each joint's rest scale); infinite where nothing is below.
pub(super) fn smallest_angles(
    skeleton: &Skeleton,
    limits: &JointLimits,
    obj: &[DAffine3],
    scale: &[f64],
) -> Vec<f64> {
    let n = skeleton.len();
    let mut depth = vec![0usize; n];
    for (j, joint) in skeleton.joints.iter().enumerate() {
        depth[j] = joint.parent.map_or(1, |p| depth[p] + 1);
    }
    // The farthest marker in the scene, a socket's weighted by its tolerance.
    let marker = |k: usize| {
        let m = limits.marker_offset[k] as f64;
        let sockets = limits.local_reach(k) as f64 * limits.rest_scale[k] as f64;
        m.max(m * scale[k]).max(sockets.max(sockets * scale[k]))
    };
    let steps: usize = (0..n)
        .filter(|&k| limits.evaluated[k])
        .map(|k| depth[k])
        .sum();
    let mut angle = vec![f64::INFINITY; n];
    if steps <= EXACT_MAX_STEPS {
        for k in (0..n).filter(|&k| limits.evaluated[k]) {
            let mut a = Some(k);
            while let Some(j) = a {
                let reach = (obj[k].translation - obj[j].translation).length() + marker(k);
                if reach > 0.0 {
                    angle[j] = angle[j].min(limits.tolerance[k] as f64 / reach);
                }
                a = skeleton.joints[j].parent;
            }
        }
        return angle;
    }
    // Children first: the tightest tolerance below each joint and the farthest reach (by the
    // triangle inequality through each child: never less than the exact distance).
    let mut tolerance = vec![f64::INFINITY; n];
    let mut reach = vec![0.0f64; n];
    for k in (0..n).rev() {
        if limits.evaluated[k] {
            tolerance[k] = tolerance[k].min(limits.tolerance[k] as f64);
            reach[k] = reach[k].max(marker(k));
        }
        if tolerance[k].is_finite() && reach[k] > 0.0 {
            angle[k] = tolerance[k] / reach[k];
        }
        if let Some(p) = skeleton.joints[k].parent {
            let arm = (obj[k].translation - obj[p].translation).length();
            tolerance[p] = tolerance[p].min(tolerance[k]);
            if tolerance[k].is_finite() {
                reach[p] = reach[p].max(arm + reach[k]);
            }
        }
    }
    angle
}
