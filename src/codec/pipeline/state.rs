//! The state every pass of the pipeline reads and fills: [`State`] (the clip, its
//! reference poses and inputs, the tolerances held and each track's base tolerance; fixed
//! once the budgets pass has run, but for pinned joints' inputs and the held tolerances
//! repair may lower to what it reached) and [`Work`] (the clip being built, its tolerance
//! scales and its latest error matrix).

use std::sync::Arc;
use std::time::Instant;

use super::inputs::Inputs;
use crate::codec::compressed::CompressedClip;
use crate::codec::control::Control;
use crate::codec::playback::{Layer, Layered, Prepared};
use crate::codec::report::{ClipReport, payload_bytes};
use crate::codec::reuse::Encodings;
use crate::codec::track::{TrackData, Variant, encode_track};
use crate::codec::verify::Verifier;
use crate::metric::{ErrorReport, JointLimits, PoseSource, Reference, exceeds, measure};
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// What the passes share about one clip.
pub(crate) struct State<'a> {
    pub skeleton: &'a Skeleton,
    pub prepared: &'a Prepared<'a>,
    /// The clip as compressed (a looping clip's first frame may be appended to it).
    pub clip: &'a Clip,
    /// What players show: the clip, or an additive clip on its base.
    pub shown: &'a Clip,
    pub layer: Option<&'a Layer>,
    pub settings: &'a Resolved,
    pub control: &'a Control,
    pub started: Instant,
    /// Reference poses at every sample and midpoint, of what players show.
    pub reference: Arc<Reference>,
    /// Track values the encoders read (pinned joints' re-derived by encode and repair).
    pub inputs: Inputs,
    /// Pinned joints (none for an additive layer, whose keys are not object targets).
    pub pinned: Vec<bool>,
    /// Per joint, how many of its tracks move (a pinned joint counts one at least).
    pub moving_tracks: Vec<usize>,
    pub moving: Vec<bool>,
    /// Each joint's floor (the floors pass).
    pub floors: Vec<f32>,
    /// The tolerances held: those asked, raised to the floors (the floors pass), then to
    /// what repair reached where it could not reach more.
    pub held: JointLimits,
    /// Each track's local tolerance at scale 1 (the budgets pass).
    pub base: Vec<[f32; 3]>,
}

/// The clip under construction.
pub(crate) struct Work {
    pub out: CompressedClip,
    /// Each track's tolerance as a multiple of its base tolerance.
    pub scale: Vec<[f32; 3]>,
    /// The error matrix of `out` against the held tolerances (kept current by every pass
    /// but relaxation's, which the pipeline re-measures once at the end).
    pub errors: ErrorReport,
    pub repairs: usize,
    pub relaxed: usize,
}

impl Work {
    /// The clip and its tolerance scales as they stand.
    pub fn snapshot(&self) -> (CompressedClip, Vec<[f32; 3]>, usize) {
        (self.out.clone(), self.scale.clone(), self.relaxed)
    }

    /// Goes back to `kept` (a [`Work::snapshot`]) unless the clip is now smaller.
    /// Returns whether `kept` was taken back.
    pub fn keep_smaller(&mut self, kept: (CompressedClip, Vec<[f32; 3]>, usize)) -> bool {
        let frames = self.out.frame_count;
        let bytes = |c: &CompressedClip| payload_bytes(&c.tracks, frames);
        let back = bytes(&self.out) >= bytes(&kept.0);
        if back {
            (self.out, self.scale, self.relaxed) = kept;
        }
        back
    }
}

impl State<'_> {
    pub fn len(&self) -> usize {
        self.skeleton.len()
    }

    pub fn is_pinned(&self, j: usize) -> bool {
        self.pinned.get(j).copied().unwrap_or(false)
    }

    /// A candidate (a compressed clip, or its [`Decoded`](super::decoded::Decoded)
    /// values) measured as players show it (an additive clip on its base).
    pub fn measure(&self, candidate: &dyn PoseSource, limits: &JointLimits) -> ErrorReport {
        measure(
            self.skeleton,
            &self.reference,
            &Layered {
                additive: candidate,
                layer: self.layer,
            },
            limits,
            true,
        )
    }

    /// [`State::measure`] of the relax and refine stages' result `out` against the held
    /// tolerances: read from `verifier`'s poses when it holds that clip (its poses after the
    /// changes it accepted) and verifies every position the measure has (samples and
    /// midpoints alone), else measured whole.
    pub fn measure_result(
        &self,
        out: &CompressedClip,
        verifier: Option<&mut Verifier>,
    ) -> ErrorReport {
        match verifier {
            Some(v) if self.reference.extra.is_empty() => {
                let (at_samples, at_midpoints) = v.cells();
                ErrorReport::new(
                    self.len(),
                    self.reference.frames,
                    at_samples,
                    Some(at_midpoints),
                    &self.held,
                )
            }
            _ => self.measure(out, &self.held),
        }
    }

    /// Each track's local tolerance at `scale`.
    pub fn local_tolerances(&self, scale: &[[f32; 3]]) -> Vec<[f32; 3]> {
        (0..self.len())
            .map(|j| std::array::from_fn(|k| self.base[j][k] * scale[j][k]))
            .collect()
    }

    /// A compressed clip of `tracks`, recording the local tolerances at `scale`.
    pub fn clip_of(&self, tracks: Vec<[TrackData; 3]>, scale: &[[f32; 3]]) -> CompressedClip {
        let clip = self.clip;
        CompressedClip {
            name: clip.name.clone(),
            sample_rate: clip.sample_rate,
            frame_count: clip.frame_count,
            start_time: clip.start_time,
            rest: self.prepared.rest.clone(),
            tracks,
            local_tolerance: self.local_tolerances(scale),
            report: ClipReport::default(),
            playback: Default::default(),
        }
    }
}

/// Track `k` of joint `j` from `inputs` at `s` times its base tolerance, by the encoders
/// kept in `memo` (a pinned joint's, whose inputs vary, encoded afresh). Takes the state's
/// fields rather than the state, so repin may call it while it changes `inputs`.
pub(crate) fn encode(
    memo: &Encodings,
    settings: &Resolved,
    base: &[[f32; 3]],
    pinned: &[bool],
    inputs: &Inputs,
    (j, k, s): (usize, usize, f32),
) -> TrackData {
    let tolerance = base[j][k] * s;
    let input = inputs.input(j, k);
    let is_pinned = pinned.get(j).copied().unwrap_or(false);
    let samples = (!is_pinned).then_some((input, tolerance));
    memo.get(
        j,
        k,
        tolerance,
        Variant::plain(settings.effort),
        samples,
        || encode_track(&input, tolerance, settings.method, settings.bits),
    )
}

/// Whether every evaluated joint holds its tolerance at every sample and midpoint.
pub(crate) fn passes(e: &ErrorReport, limits: &JointLimits) -> bool {
    e.samples.violations == 0
        && e.midpoints.is_none_or(|m| m.violations == 0)
        && limits.len() == e.joints
}

/// [`passes`] from each joint's largest error alone (`ErrorReport::joint_max`): a cell
/// counts as a violation when `error / tolerance > 1`, which is monotone in the error, so
/// a joint has a violating cell exactly when its largest error is one.
pub(crate) fn passes_at_max(joint_max: &[f32], limits: &JointLimits) -> bool {
    limits.len() == joint_max.len()
        && (0..joint_max.len())
            .all(|j| !limits.evaluated[j] || !exceeds(joint_max[j], limits.tolerance[j]))
}

/// The evaluated joints over their tolerance somewhere (`repair::violating_joints`), from
/// each joint's largest error alone.
pub(crate) fn violating_at_max(joint_max: &[f32], limits: &JointLimits) -> Vec<usize> {
    (0..joint_max.len())
        .filter(|&j| limits.evaluated[j] && joint_max[j] > limits.tolerance[j])
        .collect()
}

/// Bits of every track of a clip, per joint and kind.
pub(crate) fn track_bits(clip: &CompressedClip) -> Vec<[u64; 3]> {
    let frames = clip.frame_count;
    clip.tracks
        .iter()
        .map(|t| std::array::from_fn(|k| t[k].cost(k == 1, frames).bits))
        .collect()
}

/// Bits of every track of a clip.
pub(crate) fn total_bits(clip: &CompressedClip) -> u64 {
    track_bits(clip).iter().flatten().sum()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;
    use crate::codec::pipeline::repair::violating_joints;

    /// An error cell: mostly near the tolerance (the boundary where `e / t > 1` and `e > t`
    /// could part), sometimes zero, NaN or infinite.
    fn cell() -> impl Strategy<Value = f32> {
        prop_oneof![
            8 => (0.9f32..1.1).prop_map(|x| x * 0.01),
            1 => Just(0.0f32),
            1 => Just(f32::NAN),
            1 => Just(f32::INFINITY),
            1 => Just(0.01f32),
            1 => Just(0.01f32.next_up()),
        ]
    }

    proptest! {
        /// The settle pass decides from each joint's largest error what `passes` and
        /// `violating_joints` decide from every cell.
        #[test]
        fn deciding_from_joint_maxima_is_deciding_from_every_cell(
            joints in 1usize..6,
            frames in 1usize..5,
            cells in proptest::collection::vec(cell(), 64),
            evaluated in proptest::collection::vec(any::<bool>(), 6),
            zero_tolerance in proptest::collection::vec(prop::bool::weighted(0.2), 6),
        ) {
            let n = joints;
            let mids = frames - 1;
            let at = |i: usize| cells[i % cells.len()];
            let at_samples: Vec<f32> = (0..frames * n).map(at).collect();
            let at_midpoints: Vec<f32> =
                (0..mids * n).map(|i| 0.0f32.max(at(i + frames * n))).collect();
            let limits = JointLimits {
                marker_offset: vec![1.0; n],
                tolerance: (0..n).map(|j| if zero_tolerance[j] { 0.0 } else { 0.01 }).collect(),
                evaluated: evaluated[..n].to_vec(),
                rest_scale: vec![1.0; n],
                sockets: vec![Vec::new(); n],
            };
            let report = ErrorReport::new(n, frames, at_samples, Some(at_midpoints), &limits);
            prop_assert_eq!(passes_at_max(&report.joint_max, &limits), passes(&report, &limits));
            prop_assert_eq!(
                violating_at_max(&report.joint_max, &limits),
                violating_joints(&report, &limits)
            );
        }
    }
}
