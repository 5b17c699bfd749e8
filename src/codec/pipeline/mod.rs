//! The per-clip pipeline (DESIGN §4), as a list of passes over one shared [`State`]:
//!
//! 1. [`prepare`]: the clip checked, its reference poses, its tracks in codec form;
//! 2. [`floors`]: each joint's floor and the tolerances held;
//! 3. [`budgets`]: each track's local tolerance from the hierarchical budgets;
//! 4. [`encode`](encode::encode_all): every track encoded, the clip measured;
//! 5. [`repair`]: tracks above violating joints tightened until every joint holds;
//!    the first pass is handed out here, before relaxation makes the clip smaller;
//! 6. [`relax`]: tracks loosened one at a time where that saves bits and still holds;
//! 7. [`refine`]: the same with refined key values;
//! 8. [`report`](report::finish): sizes, errors, failures, playback.
//!
//! Every pass reads what the passes before it left in the state; the encodings, floors and
//! reference poses go through a [`Memo`] so a recompression of the same clip reuses them.

mod budgets;
mod encode;
mod floors;
mod inputs;
mod prepare;
mod refine;
mod relax;
mod repair;
mod report;
mod state;

use budgets::budgets;
use floors::floors;
use prepare::prepare;
use refine::{REFINE_FACTORS, refine};
use relax::{RELAX_FACTORS, Search, relax};
use repair::repair;
use state::{State, Work};

use super::compressed::CompressedClip;
use super::control::Control;
use super::error::{CodecError, FirstPass};
use super::playback::Prepared;
use super::reuse::Memo;
use super::verify::Verifier;
use crate::metric::ErrorReport;
use crate::model::Skeleton;
use crate::settings::Resolved;

/// Compresses one prepared clip, taking from `memo` what an earlier compression of the same
/// clip computed wherever the inputs of a pass did not change, and leaving there what this
/// one computes; `first_pass` receives the first pass when relaxation follows it. Returns
/// the result with its error matrix.
pub(super) fn run(
    memo: &mut Memo,
    skeleton: &Skeleton,
    prepared: &Prepared,
    settings: &Resolved,
    control: &Control,
    first_pass: Option<FirstPass>,
) -> Result<(CompressedClip, ErrorReport), CodecError> {
    let mut st = prepare(memo, skeleton, prepared, settings, control)?;
    floors(&mut st, memo);
    let memo = memo.encodings();
    budgets(&mut st);
    let mut work = encode::encode_all(&mut st, memo)?;
    repair(&mut st, &mut work, memo)?;
    if passes(&work, &st) {
        if let Some(show) = first_pass {
            report::first_pass(&st, &work, show);
        }
        let sweeps = RELAX_FACTORS.len() + REFINE_FACTORS.len();
        let search = Search::new(&st, memo, &work, sweeps);
        let mut verifier = Verifier::new(skeleton, &st.reference, &st.held, &work.out, st.layer);
        relax(&search, &mut verifier, &mut work)?;
        refine(&search, &mut verifier, &mut work)?;
        // Relaxation verifies each change incrementally: measure the result once.
        if work.relaxed > 0 {
            work.errors = st.measure(&work.out, &st.held);
        }
    }
    Ok(report::finish(&st, work))
}

fn passes(work: &Work, st: &State) -> bool {
    state::passes(&work.errors, &st.held)
}
