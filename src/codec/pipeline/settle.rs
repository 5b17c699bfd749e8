//! The settle pass, `Effort::Fast`'s search: instead of sweeping every track through fixed
//! factors and verifying each candidate on its own, it decides each track's tolerance from
//! the slack measured on the whole clip, encodes once, verifies the whole clip once, and
//! takes back only the changes on the paths of the joints that fail.
//!
//! A joint's error depends only on the tracks on its path from the root, and grows about in
//! proportion to their tolerances (13_07 at the budgets' tolerances: 3–15 % of each joint's
//! bound; with its rotations at 8 times those, 23–52 %). So a track may loosen by the
//! slack of the tightest joint below it: `SAFETY / max(error / tolerance)` over its subtree
//! (at most [`MAX_GROWTH`] a round, at least the round's [`LEAST_GROWTH`]). A round
//! encodes every track that would save bits at its grown tolerance, applies them all and
//! measures the clip once (through [`Decoded`]: only the changed tracks are decoded
//! again); where joints fail, one change on each failing joint's path is taken back (the
//! one adding the most error per bit it saves) and the clip measured again, until it
//! passes (at worst every change is taken back: the clip before the round, which passed).
//! A track taken back is tried next round at most halfway (geometrically) to the tolerance
//! that failed. The last round refines: every track's keys
//! nudged off the samples at [`REFINE_FACTOR`] of the tolerance it reached.

use rayon::prelude::*;

use super::decoded::Decoded;
use super::relax::{Candidate, Search};
use super::state::{State, Work, passes_at_max, track_bits, violating_at_max};
use crate::codec::error::CodecError;
use crate::codec::track::Variant;

/// Each round of growth's least factor: a track whose subtree shows less slack than that
/// still tries it (a joint's error is mostly its own tracks' on many leaves, which its
/// ancestors' do not move).
const LEAST_GROWTH: &[f32] = &[2.0, 1.4];
/// Rounds of growth before the refinement round.
pub(crate) const GROWTH_ROUNDS: usize = LEAST_GROWTH.len();
/// The share of a joint's measured slack its tracks take in one round (errors are not
/// exactly proportional to the tolerances: some headroom keeps most changes passing).
const SAFETY: f32 = 0.8;
/// The largest growth of a track's tolerance in one round.
const MAX_GROWTH: f32 = 8.0;
/// Below this growth a track is not re-encoded (it would save next to nothing).
const MIN_GROWTH: f32 = 1.15;
/// The refinement round's tolerance, as a share of the tolerance reached (see
/// `refine::FAST_REFINE_FACTORS`, the sweep this replaces).
const REFINE_FACTOR: f32 = 0.6;

/// Settles `work` in place: [`GROWTH_ROUNDS`] rounds of growth from the measured slack,
/// then one of refinement. `work.errors` is current after it: the rounds decide from each
/// joint's largest error, and the whole report is made once, at the end. `decoded`, when
/// given, is `work.out` decoded and measured already (by the encode pass).
pub(crate) fn settle(
    search: &Search,
    work: &mut Work,
    decoded: Option<Decoded>,
) -> Result<(), CodecError> {
    let st = search.state();
    let n = st.len();
    let frames = work.out.frame_count;
    let control = st.control;
    let mut bits = track_bits(&work.out);
    let mut decoded = decoded.unwrap_or_else(|| Decoded::new(&work.out));
    // Each joint's largest error as last measured (the rounds' slack).
    let mut joint_max = work.errors.joint_max.clone();
    let mut measured = false;
    // Per track: a scale that failed (not tried again at or above it) and one that saved
    // nothing (not tried again at or below it).
    let mut ceiling = vec![[f32::INFINITY; 3]; n];
    let mut no_gain = vec![[0.0f32; 3]; n];
    let trace = std::env::var_os("SKELPACK_TRACE_PASSES").is_some();
    // The growth rounds' least factors, then the refinement round (none).
    for least in LEAST_GROWTH.iter().map(Some).chain([None]) {
        if control.is_cancelled() {
            return Err(CodecError::Cancelled);
        }
        let refined = least.is_none();
        let started = std::time::Instant::now();
        let growth = least.map(|&least| subtree_growth(st, &joint_max, least));
        let tracks: Vec<(usize, usize)> = (0..n)
            .filter(|&j| st.moving[j])
            .flat_map(|j| (0..3).map(move |k| (j, k)))
            .filter(|&(j, k)| bits[j][k] > 0)
            .collect();
        let scale = &work.scale;
        let tried: Vec<Result<Candidate, (usize, usize, f32)>> = tracks
            .par_iter()
            .filter_map(|&(j, k)| {
                let now = scale[j][k];
                let s = match &growth {
                    Some(g) => {
                        let s = (now * g[j]).min((now * ceiling[j][k]).sqrt());
                        if s < now * MIN_GROWTH || s <= no_gain[j][k] {
                            return None;
                        }
                        s
                    }
                    // Refining moves keys: a track stored as its rest value or a constant
                    // has none, and a tighter tolerance only rules out its cheaper forms.
                    None if work.out.tracks[j][k].interpolation().is_none() => return None,
                    None => now * REFINE_FACTOR,
                };
                if control.is_cancelled() {
                    return None;
                }
                // Linear wins nearly every capture track: a track is re-encoded with the
                // interpolation it has (`Variant::only`).
                let variant = Variant {
                    only: work.out.tracks[j][k].interpolation(),
                    ..search.variant(refined)
                };
                Some(search.try_at((j, k, s), variant, frames, bits[j][k]))
            })
            .collect();
        let tried_count = tried.len();
        let mut candidates = Vec::with_capacity(tried.len());
        for t in tried {
            match t {
                Ok(c) => candidates.push(c),
                Err((j, k, s)) if !refined => no_gain[j][k] = no_gain[j][k].max(s),
                Err(_) => {}
            }
        }
        if control.is_cancelled() {
            return Err(CodecError::Cancelled);
        }
        let (saved, encoded) = (candidates.len(), started.elapsed());
        let (kept, measures) = trial(st, work, &mut decoded, &mut bits, candidates, &mut ceiling);
        if measures > 0 {
            joint_max.clone_from_slice(decoded.joint_max());
            measured = true;
        }
        work.relaxed += kept;
        if trace {
            eprintln!(
                "  settle {}: {tried_count} tracks tried, {saved} saved bits in {:.2} ms, {kept} \
                 kept after {measures} measurements in {:.2} ms",
                least.map_or("refined".to_string(), |l| format!("x{l}+")),
                encoded.as_secs_f64() * 1e3,
                (started.elapsed() - encoded).as_secs_f64() * 1e3,
            );
        }
        control.set_progress(control.progress() + 0.4 / (GROWTH_ROUNDS + 1) as f32);
    }
    if measured {
        work.errors = decoded.report(st);
    }
    Ok(())
}

/// Per joint, how far its tracks may loosen: `SAFETY` over the largest share of its
/// tolerance any evaluated joint of its subtree uses, at most `MAX_GROWTH`.
fn subtree_growth(st: &State, joint_max: &[f32], least: f32) -> Vec<f32> {
    let n = st.len();
    let held = &st.held;
    let mut worst = vec![0.0f32; n];
    for k in (0..n).rev() {
        if held.evaluated[k] && held.tolerance[k] > 0.0 {
            worst[k] = worst[k].max(joint_max[k] / held.tolerance[k]);
        }
        if let Some(p) = st.skeleton.joints[k].parent {
            worst[p] = worst[p].max(worst[k]);
        }
    }
    worst
        .iter()
        .map(|&w| (SAFETY / w).clamp(least, MAX_GROWTH))
        .collect()
}

/// Applies every candidate, measures the clip, and takes back one change on the path of
/// each joint that fails, until the clip passes (at worst every change is taken back: the
/// clip as it was, which passed). A change taken back sets its track's ceiling. Leaves the last
/// measurement in `decoded`; returns how many changes were kept and how many measurements
/// that took.
fn trial(
    st: &State,
    work: &mut Work,
    decoded: &mut Decoded,
    bits: &mut [[u64; 3]],
    candidates: Vec<Candidate>,
    ceiling: &mut [[f32; 3]],
) -> (usize, usize) {
    if candidates.is_empty() {
        return (0, 0);
    }
    // Each applied change holds what it replaced: the old track, scale and bits.
    let mut applied = candidates;
    for c in &mut applied {
        std::mem::swap(&mut work.out.tracks[c.j][c.k], &mut c.track);
        std::mem::swap(&mut work.scale[c.j][c.k], &mut c.s);
        std::mem::swap(&mut bits[c.j][c.k], &mut c.bits);
        decoded.update(&work.out, c.j, c.k);
    }
    let mut measures = 0;
    loop {
        let joint_max = decoded.measure_joint_max(st, &work.out);
        measures += 1;
        if passes_at_max(joint_max, &st.held) || applied.is_empty() {
            return (applied.len(), measures);
        }
        let violating = violating_at_max(joint_max, &st.held);
        // Per failing joint, one change on its path is taken back: the one adding the most
        // error per bit it saves (the budgets give every track on a path the same share at
        // scale 1, so a track adds error about in proportion to its scale's growth).
        let mut on_joint: Vec<Vec<usize>> = vec![Vec::new(); st.len()];
        for (i, c) in applied.iter().enumerate() {
            on_joint[c.j].push(i);
        }
        let cost = |i: usize| {
            let c = &applied[i];
            let grown = work.scale[c.j][c.k] - c.s;
            let saved = c.bits.saturating_sub(bits[c.j][c.k]).max(1);
            grown / saved as f32
        };
        let mut back = vec![false; applied.len()];
        for k in violating {
            let mut worst: Option<(f32, usize)> = None;
            let mut a = Some(k);
            while let Some(j) = a {
                for &i in &on_joint[j] {
                    let e = cost(i);
                    if worst.is_none_or(|(w, _)| e > w) {
                        worst = Some((e, i));
                    }
                }
                a = st.skeleton.joints[j].parent;
            }
            if let Some((_, i)) = worst {
                back[i] = true;
            }
        }
        let mut index = 0;
        let before = applied.len();
        applied.retain_mut(|c| {
            index += 1;
            if !back[index - 1] {
                return true;
            }
            std::mem::swap(&mut work.out.tracks[c.j][c.k], &mut c.track);
            std::mem::swap(&mut work.scale[c.j][c.k], &mut c.s);
            std::mem::swap(&mut bits[c.j][c.k], &mut c.bits);
            decoded.update(&work.out, c.j, c.k);
            ceiling[c.j][c.k] = ceiling[c.j][c.k].min(c.s);
            false
        });
        // A failing joint whose path changed nothing is as it was before the round, which
        // passed: unreachable, but take everything back rather than loop.
        if applied.len() == before {
            for mut c in applied.drain(..) {
                std::mem::swap(&mut work.out.tracks[c.j][c.k], &mut c.track);
                std::mem::swap(&mut work.scale[c.j][c.k], &mut c.s);
                std::mem::swap(&mut bits[c.j][c.k], &mut c.bits);
                decoded.update(&work.out, c.j, c.k);
            }
        }
    }
}
