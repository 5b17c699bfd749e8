//! The one place the app touches the codec: compresses a clip with a `codec::Recompressor`
//! (incremental after an edit of the same clip) and measures the result with the metric (the
//! joint x frame matrix the timeline and panels use).

use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::codec::Control;
use crate::codec::{CodecError, CompressedClip, JointCost, Recompressor};
use crate::metric::{self, Attribution, ErrorReport, PoseSource, Reference, measure};
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// A decoded pose source the viewport can sample (the compressed clip).
pub type SharedPoses = Arc<dyn PoseSource + Send + Sync>;

/// Sizes and counts the stats panel shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sizes {
    pub raw_bytes: usize,
    pub compressed_bytes: usize,
    pub keys_kept: usize,
    pub keys_raw: usize,
}

impl Sizes {
    pub fn ratio(&self) -> f32 {
        if self.compressed_bytes == 0 {
            0.0
        } else {
            self.raw_bytes as f32 / self.compressed_bytes as f32
        }
    }
}

/// One compressed clip and how it measures.
pub struct Compressed {
    pub poses: SharedPoses,
    /// The codec's output (exported as is).
    pub clip: Arc<CompressedClip>,
    pub errors: ErrorReport,
    pub sizes: Sizes,
    /// Per joint: keys and bits its tracks cost.
    pub joint_costs: Vec<JointCost>,
    pub elapsed: Duration,
    /// A first pass (every joint within tolerance, not yet made small): the refined result
    /// replaces it.
    pub refining: bool,
    /// False when the codec could not meet every tolerance (see `clip.report.failures`).
    pub contract_met: bool,
    /// Each joint's error split into own and inherited, and the caused ratios (computed on
    /// the worker, so the UI never waits for it on a large rig). None on a first pass: it
    /// is on screen for a moment, and computing it would delay both it and the refined
    /// result behind it.
    pub attribution: Option<Arc<Attribution>>,
}

/// Most marker evaluations the "caused" heatmap may cost (about 0.1 s on this machine);
/// a larger clip has no caused mode.
const CAUSED_BUDGET: usize = 4_000_000;

/// Why a compression produced nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Cancelled,
    Error(String),
}

/// Compresses `clip` with `settings`, reporting progress and honouring cancellation.
pub fn compress(
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &Resolved,
    control: &Control,
) -> Result<Compressed, Failure> {
    recompress(
        &mut Recompressor::new(),
        skeleton,
        clip,
        settings,
        control,
        None,
    )
}

/// [`compress`], reusing what `memo` kept from the previous compression of the same clip:
/// after a single-joint edit only the tracks whose budgets changed are encoded again.
/// `first_pass`, when given, receives the first pass, measured, as soon as it exists (every
/// joint within tolerance, before relaxation makes the clip smaller): after an edit it is
/// ready in milliseconds, so the window shows the new tolerance's result at once and the
/// refined one replaces it.
pub fn recompress(
    memo: &mut Recompressor,
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &Resolved,
    control: &Control,
    first_pass: Option<&mut (dyn FnMut(Compressed) + Send)>,
) -> Result<Compressed, Failure> {
    let start = Instant::now();
    let mut show = first_pass.map(|first_pass| {
        move |c: CompressedClip, _: &Reference, errors: &ErrorReport| {
            if !control.is_cancelled() {
                let errors = with_limits(errors, &settings.limits);
                first_pass(measured(
                    skeleton,
                    clip,
                    settings,
                    Arc::new(c),
                    errors,
                    start,
                    true,
                ));
            }
        }
    });
    let c = memo
        .compress_progressive(
            skeleton,
            clip,
            settings,
            control,
            show.as_mut().map(|s| s as crate::codec::FirstPass),
        )
        .map_err(|e| match e {
            CodecError::Cancelled => Failure::Cancelled,
            e => Failure::Error(e.to_string()),
        })?;
    if control.is_cancelled() {
        return Err(Failure::Cancelled);
    }
    let c = Arc::new(c);
    // The codec measured its result already: its matrix, judged against the tolerances
    // asked (the panels show those, not the ones held at floors).
    let errors = match memo.errors() {
        Some(e) => with_limits(&e, &settings.limits),
        None => {
            let reference = memo
                .reference_poses()
                .unwrap_or_else(|| Arc::new(Reference::new(skeleton, clip, clip.frame_count)));
            measure(skeleton, &reference, c.as_ref(), &settings.limits, true)
        }
    };
    Ok(measured(skeleton, clip, settings, c, errors, start, false))
}

/// `errors`' matrices with their statistics against `limits`.
fn with_limits(errors: &ErrorReport, limits: &crate::metric::JointLimits) -> ErrorReport {
    ErrorReport::new(
        errors.joints,
        errors.frames,
        errors.at_samples.clone(),
        errors.at_midpoints.clone(),
        limits,
    )
}

/// A compressed clip with its error matrix, sizes and (unless `refining`) attribution.
fn measured(
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &Resolved,
    c: Arc<CompressedClip>,
    errors: ErrorReport,
    start: Instant,
    refining: bool,
) -> Compressed {
    let limits = &settings.limits;
    let attribution = (!refining).then(|| {
        let mut a = metric::attribute(skeleton, clip, c.as_ref(), errors.frames, limits);
        a.caused = metric::caused_ratios(
            skeleton,
            clip,
            c.as_ref(),
            errors.frames,
            limits,
            CAUSED_BUDGET,
        );
        Arc::new(a)
    });
    let r = &c.report;
    Compressed {
        poses: c.clone(),
        sizes: Sizes {
            raw_bytes: r.raw_bytes as usize,
            compressed_bytes: r.payload_bytes as usize,
            keys_kept: r.keys_kept,
            keys_raw: r.keys_raw,
        },
        contract_met: r.contract_met,
        joint_costs: r.joint_costs(skeleton),
        clip: c,
        errors,
        elapsed: start.elapsed(),
        refining,
        attribution,
    }
}
