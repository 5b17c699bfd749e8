//! Each socket's own worst error over a clip, for reports: the distance its markers move
//! (not weighted by tolerances), next to the tolerance it is held to.

use glam::DAffine3;

use super::markers::socket_error;
use super::{JointLimits, PoseSource, Reference};
use crate::model::{Skeleton, Transform, local_to_object_f64};

/// One socket's worst error and its tolerance, in scene units.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SocketError {
    pub name: String,
    /// The joint carrying it.
    pub joint: String,
    /// Largest distance of its markers from the reference, at samples and inner points.
    pub max: f32,
    /// Its own tolerance, or its joint's.
    pub tolerance: f32,
}

/// Every measured socket's worst error of `candidate` against `reference` (samples and the
/// reference's inner points), in the order of `skeleton.sockets`; sockets on joints that are
/// not evaluated are left out.
pub fn socket_errors(
    skeleton: &Skeleton,
    reference: &Reference,
    candidate: &dyn PoseSource,
    limits: &JointLimits,
) -> Vec<SocketError> {
    let n = reference.joints;
    let measured: Vec<(usize, &super::SocketMarker)> = (0..n)
        .filter(|&j| limits.evaluated[j])
        .flat_map(|j| limits.sockets[j].iter().map(move |s| (j, s)))
        .collect();
    let mut max = vec![0.0f32; measured.len()];
    if measured.is_empty() {
        return Vec::new();
    }
    let mut local = vec![Transform::IDENTITY; n];
    let mut obj = vec![DAffine3::IDENTITY; n];
    for (i, &x) in reference.point_positions().iter().enumerate() {
        candidate.sample_local(x, &mut local);
        local_to_object_f64(skeleton, &local, &mut obj);
        let refs = if i < reference.frames {
            reference.sample(i)
        } else {
            let at = (i - reference.frames) * n;
            &reference.at_midpoints[at..at + n]
        };
        for (m, &(j, s)) in max.iter_mut().zip(&measured) {
            *m = m.max(socket_error(s, &refs[j], &obj[j], limits.local_marker(j)));
        }
    }
    measured
        .iter()
        .zip(max)
        .map(|(&(j, s), max)| SocketError {
            name: skeleton.sockets[s.socket].name.clone(),
            joint: skeleton.joints[j].name.clone(),
            max,
            tolerance: s.tolerance_ratio * limits.tolerance[j],
        })
        .collect()
}

/// The socket whose error is the largest share of its tolerance.
pub fn worst_socket(errors: &[SocketError]) -> Option<&SocketError> {
    errors
        .iter()
        .max_by(|a, b| (a.max / a.tolerance).total_cmp(&(b.max / b.tolerance)))
}
