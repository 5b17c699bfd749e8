//! The repair pass: halves the tolerance of every moving track on the path from the root to
//! each violating joint, re-encodes them, and measures again, until the clip passes or
//! [`MAX_REPAIRS`] rounds are spent; what repair could not reach is then held where it is.

use rayon::prelude::*;

use super::decoded::Decoded;
use super::encode::repin;
use super::state::{State, Work, encode, passes};
use crate::codec::error::CodecError;
use crate::codec::floor::hold_to_reached;
use crate::codec::reuse::Encodings;
use crate::codec::track::TrackData;
use crate::metric::{ErrorReport, JointLimits};

/// Rounds of repair before the tolerances reached are held instead.
pub(crate) const MAX_REPAIRS: usize = 24;

/// Repairs `work` in place; may raise `st.held` to what it reached. With `decoded` (the
/// clip decoded and measured by the encode pass), each round decodes the re-encoded tracks
/// only and composes the joints below them only ([`Decoded::measure_joint_max`]: the same
/// errors as a whole measurement), and `decoded` is left holding the repaired clip.
pub(crate) fn repair(
    st: &mut State,
    work: &mut Work,
    memo: &Encodings,
    mut decoded: Option<&mut Decoded>,
) -> Result<(), CodecError> {
    let n = st.len();
    let control = st.control;
    while !passes(&work.errors, &st.held) && work.repairs < MAX_REPAIRS {
        if control.is_cancelled() {
            return Err(CodecError::Cancelled);
        }
        work.repairs += 1;
        let mut redo = vec![false; n];
        for k in violating_joints(&work.errors, &st.held) {
            let mut a = Some(k);
            while let Some(j) = a {
                redo[j] = true;
                a = st.skeleton.joints[j].parent;
            }
        }
        for (j, scale) in work.scale.iter_mut().enumerate() {
            if redo[j] && st.moving[j] {
                for s in scale {
                    *s *= 0.5;
                }
            }
        }
        let scale = &work.scale;
        let redone: Option<Vec<(usize, [TrackData; 3])>> = (0..n)
            .into_par_iter()
            .filter(|&j| redo[j] && st.moving[j])
            .map(|j| {
                (!control.is_cancelled()).then(|| {
                    let track = std::array::from_fn(|k| {
                        let at = (j, k, scale[j][k]);
                        encode(memo, st.settings, &st.base, &st.pinned, &st.inputs, at)
                    });
                    (j, track)
                })
            })
            .collect();
        let redone = redone.ok_or(CodecError::Cancelled)?;
        let changed: Vec<usize> = redone.iter().map(|(j, _)| *j).collect();
        for (j, t) in redone {
            work.out.tracks[j] = t;
        }
        repin(st, memo, &mut work.out, &work.scale);
        work.errors = match decoded.as_deref_mut() {
            Some(decoded) => {
                // Re-encoded tracks, and pinned joints' (re-derived below them).
                let pinned = (0..n).filter(|&j| st.is_pinned(j));
                for j in changed.into_iter().chain(pinned) {
                    for k in 0..3 {
                        decoded.update(&work.out, j, k);
                    }
                }
                decoded.measure_joint_max(st, &work.out);
                decoded.report(st)
            }
            None => st.measure(&work.out, &st.held),
        };
    }
    control.set_progress(0.6);
    // What repair could not reach stays where it is; every other joint keeps its tolerance.
    if !passes(&work.errors, &st.held) {
        hold_to_reached(&mut st.held, &work.errors);
        work.errors = st.measure(&work.out, &st.held);
    }
    Ok(())
}

/// Joints above their tolerance at some sample or midpoint.
pub(super) fn violating_joints(e: &ErrorReport, limits: &JointLimits) -> Vec<usize> {
    let n = e.joints;
    let mut bad = vec![false; n];
    for m in std::iter::once(&e.at_samples).chain(e.at_midpoints.as_ref()) {
        for row in m.chunks_exact(n.max(1)) {
            for j in 0..n {
                if limits.evaluated[j] && row[j] > limits.tolerance[j] {
                    bad[j] = true;
                }
            }
        }
    }
    (0..n).filter(|&j| bad[j]).collect()
}
