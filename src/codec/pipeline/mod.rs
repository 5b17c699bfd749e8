//! The per-clip pipeline (DESIGN §4), as a list of passes over one shared [`State`]:
//!
//! 1. [`prepare`]: the clip checked, its reference poses, its tracks in codec form;
//! 2. [`floors`]: each joint's floor and the tolerances held;
//! 3. [`budgets`]: each track's local tolerance from the hierarchical budgets;
//! 4. [`encode`](encode::encode_all): every track encoded at 4 times its budget (at its
//!    budget on a clip that pins joints), the clip measured;
//! 5. [`repair`]: tracks above violating joints tightened until every joint holds (the
//!    first pass, handed out to a caller that shows progress);
//! 6. [`relax`]: tracks loosened one at a time where that saves bits and still holds
//!    (at the default and `Effort::Max`; a second preview is handed out after its first
//!    two sweeps);
//! 7. [`refine`]: the same with refined key values; at `Effort::Fast` 6 and 7 give way to
//!    [`settle`]: every track's tolerance decided from the slack measured on the whole
//!    clip, the clip verified whole, the changes that fail taken back; then one refinement
//!    round the same way (a clip that pins joints takes 6 and 7, three sweeps and one);
//! 8. [`report`](report::finish): sizes, errors, failures, playback.
//!
//! Every pass reads what the passes before it left in the state; the encodings, floors and
//! reference poses go through a [`Memo`] so a recompression of the same clip reuses them.

mod budgets;
mod decoded;
mod encode;
mod floors;
mod inputs;
mod prepare;
mod refine;
mod relax;
mod repair;
mod report;
mod settle;
mod state;

use budgets::budgets;
use decoded::Decoded;
use floors::floors;
use prepare::prepare;
use refine::{FAST_REFINE_FACTORS, MAX_REFINE_FACTORS, REFINE_FACTORS, refine};
use relax::{
    FIRST_RELAX_FACTORS, LATER_RELAX_FACTORS, MAX_RELAX_FACTORS, PINNED_RELAX_FACTORS, Search,
    relax,
};
use repair::repair;
use settle::{GROWTH_ROUNDS, settle};
use state::{State, Work};

use super::compressed::CompressedClip;
use super::control::Control;
use super::error::{CodecError, FirstPass};
use super::playback::Prepared;
use super::reuse::Memo;
use super::verify::Verifier;
use crate::metric::ErrorReport;
use crate::model::Skeleton;
use crate::settings::{Effort, Resolved};

/// Compresses one prepared clip, taking from `memo` what an earlier compression of the same
/// clip computed wherever the inputs of a pass did not change, and leaving there what this
/// one computes; `first_pass` receives the first pass when more search follows it. Returns
/// the result with its error matrix.
pub(super) fn run(
    memo: &mut Memo,
    skeleton: &Skeleton,
    prepared: &Prepared,
    settings: &Resolved,
    control: &Control,
    first_pass: Option<FirstPass>,
) -> Result<(CompressedClip, ErrorReport), CodecError> {
    let mut t = Timer::new();
    let mut st = prepare(memo, skeleton, prepared, settings, control)?;
    t.lap("prepare");
    floors(&mut st, memo);
    t.lap("floors");
    let memo = memo.encodings();
    budgets(&mut st);
    t.lap("budgets");
    let plan = Plan::of(settings.effort, st.pinned.iter().any(|&p| p));
    // A clip the stages search is measured through its decoded tracks: repair re-decodes
    // only what it re-encodes, and settling or the verifier go on from the poses measured.
    let searches = !plan.stages.is_empty();
    let (mut work, mut decoded) = encode::encode_all(&mut st, memo, plan.start, searches)?;
    t.lap("encode");
    repair(&mut st, &mut work, memo, decoded.as_mut())?;
    t.lap("repair");
    if passes(&work, &st) {
        let mut first_pass = first_pass;
        // The repaired clip holds every tolerance already: it is on screen while the
        // search runs (after an edit, in milliseconds), replaced by each later preview.
        if !plan.stages.is_empty()
            && let Some(show) = first_pass.as_deref_mut()
        {
            report::first_pass(&st, &work, show);
        }
        if !plan.stages.is_empty() {
            let search = Search::new(&st, memo, &work, plan.sweeps());
            // Made when a stage first needs it (composing every pose): settling does not.
            let mut verifier = None;
            // Whether `work.errors` predates a relax or refine stage's changes.
            let mut stale = false;
            t.lap("search setup");
            // What the default's stages reached: a larger effort's extra stages are kept
            // only when they shrink the payload (the sweeps' cost model is per track).
            let mut reached = None;
            for (i, stage) in plan.stages.iter().enumerate() {
                if i == plan.default_stages {
                    reached = Some(work.snapshot());
                }
                match stage {
                    Stage::Relax(f) => {
                        let v =
                            verifier.get_or_insert_with(|| verifier_of(&st, &work, decoded.take()));
                        relax(&search, v, &mut work, f)?;
                        stale = true;
                    }
                    Stage::Refine(f) => {
                        let v =
                            verifier.get_or_insert_with(|| verifier_of(&st, &work, decoded.take()));
                        refine(&search, v, &mut work, f)?;
                        stale = true;
                    }
                    Stage::Settle => settle(&search, &mut work, decoded.take())?,
                }
                t.lap(stage.name());
                if plan.preview_after == Some(i)
                    && let Some(show) = first_pass.as_deref_mut()
                {
                    work.errors = st.measure_result(&work.out, verifier.as_mut());
                    report::first_pass(&st, &work, show);
                }
            }
            if let Some(reached) = reached
                && work.keep_smaller(reached)
            {
                // The verifier holds the later stages' clip, not the one taken back.
                verifier = None;
            }
            // Relaxation verifies each change incrementally: measure the result once (from
            // the verifier's poses, which are the result's).
            if stale && work.relaxed > 0 {
                work.errors = st.measure_result(&work.out, verifier.as_mut());
            }
        }
    }
    let done = report::finish(&st, work);
    t.lap("report");
    Ok(done)
}

/// One stage of the search: relax or refine sweeps at these tolerance factors, or the
/// settle pass (rounds of growth from the measured slack, then a refinement round).
enum Stage {
    Relax(&'static [f32]),
    Refine(&'static [f32]),
    Settle,
}

impl Stage {
    fn name(&self) -> &'static str {
        match self {
            Self::Relax(_) => "relax",
            Self::Refine(_) => "refine",
            Self::Settle => "settle",
        }
    }

    fn sweeps(&self) -> usize {
        match self {
            Self::Relax(f) | Self::Refine(f) => f.len(),
            Self::Settle => GROWTH_ROUNDS + 1,
        }
    }
}

/// The relax and refine stages at an effort, in order, each on what the earlier ones
/// reached. The default and `Effort::Max` begin with the same plain sweeps (×2 and ×1.4 from
/// 4 times the budgets; ×4, ×2 and ×1.4 from the budgets on a clip that pins joints, as the
/// fast effort's there); every effort hands out the repaired clip as its first pass, and the
/// default a second preview after those sweeps; a larger effort's stages begin with the
/// default's (`default_stages` of them).
struct Plan {
    /// Every track's first tolerance, as a multiple of its base (budgets) tolerance.
    start: f32,
    stages: &'static [Stage],
    default_stages: usize,
    /// The stage after which a second preview is handed out (None: only the repaired clip).
    preview_after: Option<usize>,
}

impl Plan {
    /// The stages at `effort`; `pinned` when the clip pins joints (whose re-derivation
    /// below a changed track the settle pass does not do: the fast effort sweeps instead).
    fn of(effort: Effort, pinned: bool) -> Self {
        const PINNED: Stage = Stage::Relax(PINNED_RELAX_FACTORS);
        const LATER: Stage = Stage::Relax(LATER_RELAX_FACTORS);
        const REFINE: Stage = Stage::Refine(REFINE_FACTORS);
        const MAX_RELAX: Stage = Stage::Relax(MAX_RELAX_FACTORS);
        const MAX_REFINE: Stage = Stage::Refine(MAX_REFINE_FACTORS);
        // The default's stages from tracks at 4 times their budgets, repaired: that start
        // stands for the sweep at ×4 from the budgets that began them before session 22 (19 %
        // fewer instructions on the long ACL clips, the shared assets' `.skp` 0.13 % smaller
        // in all; docs/COMPRESSION.md, "Session 22").
        const DEFAULT: &[Stage] = &[Stage::Relax(FIRST_RELAX_FACTORS), LATER, REFINE];
        const MAX: &[Stage] = &[
            Stage::Relax(FIRST_RELAX_FACTORS),
            LATER,
            REFINE,
            MAX_RELAX,
            MAX_REFINE,
        ];
        // With pinned joints, from the budgets: the three plain sweeps first.
        const DEFAULT_PINNED: &[Stage] = &[PINNED, LATER, REFINE];
        const MAX_PINNED: &[Stage] = &[PINNED, LATER, REFINE, MAX_RELAX, MAX_REFINE];
        let (start, default, max) = if pinned {
            (1.0, DEFAULT_PINNED, MAX_PINNED)
        } else {
            (START_SCALE, DEFAULT, MAX)
        };
        match effort {
            // With pinned joints: the three plain sweeps from the budgets (from the loosest
            // factor down) and one refinement sweep at 0.6 of the tolerance reached (about
            // 7 % more time, and up to 30 % smaller on short smooth clips).
            Effort::Fast if pinned => Self {
                start: 1.0,
                stages: &[PINNED, Stage::Refine(FAST_REFINE_FACTORS)],
                default_stages: 1,
                preview_after: None,
            },
            // Tracks start looser than their budgets (which split each bound along its
            // chain for the worst case: 13_07's joints reach 3-15 % of theirs) and settle
            // (the first sweep, ×4 from the budgets, kept every candidate on 13_07).
            Effort::Fast => Self {
                start: START_SCALE,
                stages: &[Stage::Settle],
                default_stages: 1,
                preview_after: None,
            },
            Effort::Default => Self {
                start,
                stages: default,
                default_stages: default.len(),
                preview_after: Some(0),
            },
            // The default's stages, then finer steps of both on what they reached.
            Effort::Max => Self {
                start,
                stages: max,
                default_stages: default.len(),
                preview_after: Some(0),
            },
        }
    }

    fn sweeps(&self) -> usize {
        self.stages.iter().map(Stage::sweeps).sum()
    }
}

/// Every track's first tolerance, as a multiple of its budget (on a clip that pins no
/// joint; 1 on one that does).
const START_SCALE: f32 = 4.0;

/// Each pass's wall time on stderr when `SKELPACK_TRACE_PASSES` is set (for profiling a
/// batch; nothing otherwise).
struct Timer(Option<std::time::Instant>);

impl Timer {
    fn new() -> Self {
        Self(std::env::var_os("SKELPACK_TRACE_PASSES").map(|_| std::time::Instant::now()))
    }

    fn lap(&mut self, pass: &str) {
        if let Some(t) = self.0.as_mut() {
            eprintln!(
                "pass {pass:>12}: {:8.2} ms",
                t.elapsed().as_secs_f64() * 1e3
            );
            *t = std::time::Instant::now();
        }
    }
}

/// The verifier the relax and refine stages test their changes with: made from the poses
/// `decoded` holds of `work.out` when the clip was measured through it (the encode and
/// repair passes), else decoded and composed afresh.
fn verifier_of<'v>(st: &'v State, work: &Work, decoded: Option<Decoded>) -> Verifier<'v> {
    match decoded {
        Some(decoded) => decoded.into_verifier(st, &work.out),
        None => Verifier::new(st.skeleton, &st.reference, &st.held, &work.out, st.layer),
    }
}

fn passes(work: &Work, st: &State) -> bool {
    state::passes(&work.errors, &st.held)
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::codec::track::TrackData;
    use crate::metric::ErrorReport;
    use crate::settings::Settings;

    /// What encoding the default character's Walk at `start` times its budgets and repairing
    /// it leaves: the tracks, the errors, the rounds of repair, and the verifier the stages
    /// would start from, as bits; with `decoded`, measured through the decoded tracks (as
    /// the pipeline does) rather than measured whole at each round.
    fn encoded_and_repaired(
        start: f32,
        decoded: bool,
    ) -> (Vec<[TrackData; 3]>, Vec<u32>, usize, Vec<u64>) {
        with_prepared("Walk", |mut st, memo| {
            floors(&mut st, memo);
            budgets(&mut st);
            encoded_and_repaired_from(st, memo.encodings(), start, decoded)
        })
    }

    /// `run` on the prepare pass's state of the default character's clip `name` (at the
    /// default settings), with the memo it was prepared through.
    pub(super) fn with_prepared<R>(name: &str, run: impl FnOnce(State, &mut Memo) -> R) -> R {
        let asset = crate::character::committed_asset();
        let skeleton = &asset.skeleton;
        let clip = asset.clips.iter().find(|c| c.name == name).unwrap();
        let settings = Settings::default().resolve(&asset, &clip.name);
        let prepared = crate::codec::playback::prepare(skeleton, clip, &settings);
        let control = Control::new();
        let mut memo = Memo::default();
        let codec = crate::codec::reuse::Codec {
            method: settings.method,
            bits: settings.bits,
        };
        memo.begin(codec, 3 * skeleton.len());
        let st = prepare(&mut memo, skeleton, &prepared, &settings, &control).unwrap();
        run(st, &mut memo)
    }

    fn encoded_and_repaired_from(
        mut st: State,
        memo: &crate::codec::reuse::Encodings,
        start: f32,
        decoded: bool,
    ) -> (Vec<[TrackData; 3]>, Vec<u32>, usize, Vec<u64>) {
        let (mut work, mut measured) = encode::encode_all(&mut st, memo, start, decoded).unwrap();
        assert_eq!(measured.is_some(), decoded);
        repair(&mut st, &mut work, memo, measured.as_mut()).unwrap();
        let errors = |e: &ErrorReport| {
            let mids = e.at_midpoints.iter().flatten();
            e.at_samples
                .iter()
                .chain(mids)
                .map(|x| x.to_bits())
                .collect()
        };
        // The report is a whole measurement's, bit for bit.
        let whole = st.measure(&work.out, &st.held);
        assert_eq!(errors(&work.errors), errors(&whole));
        let verifier = verifier_of(&st, &work, measured).state_bits();
        (
            work.out.tracks,
            errors(&work.errors),
            work.repairs,
            verifier,
        )
    }

    /// Measuring through the decoded tracks (re-decoding only what repair re-encodes) and
    /// starting the verifier from the poses measured give what measuring the clip whole at
    /// every round and decoding it afresh for the verifier give: the same repairs, tracks,
    /// errors and verifier, bit for bit.
    #[test]
    fn repair_and_the_verifier_through_the_decoded_clip_are_the_whole_measurements() {
        // At 40 times its budgets the clip needs repair; at 4 (the default's start) it may not.
        for start in [START_SCALE, 40.0] {
            let through = encoded_and_repaired(start, true);
            let whole = encoded_and_repaired(start, false);
            if start > START_SCALE {
                assert!(through.2 > 0, "no repair at x{start}");
            }
            assert_eq!(through.2, whole.2, "repair rounds at x{start}");
            assert!(through.0 == whole.0, "tracks at x{start}");
            assert_eq!(through.1, whole.1, "errors at x{start}");
            assert!(through.3 == whole.3, "verifier at x{start}");
        }
    }
}
