//! The relax pass: loosens one track at a time where that saves bits and the contract still
//! holds, in sweeps over the tracks, one per factor of their current tolerance. [`Search`]
//! holds what relaxation and refinement share: an encoder per track keeping its fits, the
//! incremental verifier, and the re-derivation of pinned joints below a changed track.

use std::sync::Mutex;

use rayon::prelude::*;

use super::inputs::{Inputs, pinned_target};
use super::state::{State, Work, passes, total_bits, track_bits};
use crate::codec::compressed::CompressedClip;
use crate::codec::error::CodecError;
use crate::codec::reuse::Encodings;
use crate::codec::track::{TrackData, TrackEncoder, TrackInput, WidthSearch, encode_track};
use crate::codec::verify::Verifier;
use crate::model::Skeleton;

/// Tolerance factors of the relaxation sweeps with plain encodings: at every effort these
/// first, the whole relaxation at `Effort::Fast`...
pub(crate) const FAST_RELAX_FACTORS: &[f32] = &[4.0, 2.0, 1.4];
/// ...then these (the default's sweeps are `4, 2, 1.4, 1.2, 2, 1.4, 1.2`).
pub(crate) const LATER_RELAX_FACTORS: &[f32] = &[1.2, 2.0, 1.4, 1.2];
/// At `Effort::Max`, after the default's: finer steps.
pub(crate) const MAX_RELAX_FACTORS: &[f32] = &[1.4, 1.2, 1.1, 1.05];

/// A track encoder made on first use from its input and the finest tolerance it records to.
type LazyEncoder<'a> = Mutex<(TrackInput<'a>, f32, Option<TrackEncoder<'a>>)>;

/// What the relax and refine passes share.
pub(crate) struct Search<'s> {
    st: &'s State<'s>,
    memo: &'s Encodings,
    /// Each track's tolerance as relaxation starts: the finest its encoders record to.
    start: Vec<[f32; 3]>,
    /// An encoder per track that relaxation may loosen (moving joints), made on first use.
    encoders: Vec<Option<LazyEncoder<'s>>>,
    /// Joints with a pinned joint below them.
    above_pinned: Vec<bool>,
    /// Progress per sweep.
    progress_step: f32,
}

impl<'s> Search<'s> {
    /// A search starting from `work`; `sweeps` is how many sweeps the passes will make (for
    /// progress, from 0.6 to 1 over all of them).
    pub fn new(st: &'s State<'s>, memo: &'s Encodings, work: &Work, sweeps: usize) -> Self {
        let start = st.local_tolerances(&work.scale);
        let encoders = relax_encoders(&st.inputs, &st.moving, &start);
        Self {
            st,
            memo,
            start,
            encoders,
            above_pinned: pinned_ancestors(st.skeleton, &st.pinned),
            progress_step: 0.4 / sweeps.max(1) as f32,
        }
    }

    /// Track `k` of joint `j` at `s` times its base tolerance, with refined key values when
    /// `refined`.
    fn encode_at(&self, j: usize, k: usize, s: f32, refined: bool) -> TrackData {
        let st = self.st;
        let tolerance = st.base[j][k] * s;
        let samples = (!st.is_pinned(j)).then(|| (st.inputs.input(j, k), self.start[j][k]));
        let search = WidthSearch::of(st.settings.effort);
        self.memo
            .get(j, k, tolerance, (refined, search), samples, || {
                let encoder = self.encoders[3 * j + k]
                    .as_ref()
                    .expect("an encoder per relaxable track");
                let mut encoder = encoder.lock().expect("encoder lock");
                let (input, finest, made) = &mut *encoder;
                let encoder = made.get_or_insert_with(|| {
                    TrackEncoder::new(*input, st.settings.method, st.settings.bits, *finest)
                        .with_search(search)
                });
                if refined {
                    encoder.encode_refined(tolerance)
                } else {
                    encoder.encode(tolerance)
                }
            })
    }

    /// The whole clip with track `k` of joint `j` replaced and the pinned joints below it
    /// re-derived, when that saves bits and passes (a change above pinned joints moves them
    /// off their targets).
    fn repinned(
        &self,
        out: &CompressedClip,
        (j, k): (usize, usize),
        track: &TrackData,
        scale: &[[f32; 3]],
    ) -> Option<CompressedClip> {
        let st = self.st;
        if !self.above_pinned[j] {
            return None;
        }
        let mut trial = out.clone();
        trial.tracks[j][k] = track.clone();
        for p in (j + 1..st.len()).filter(|&p| st.is_pinned(p) && descends(st.skeleton, p, j)) {
            let (raw, mids) = pinned_target(st.skeleton, &st.reference, &trial, p);
            trial.tracks[p] = std::array::from_fn(|k| {
                let input = TrackInput {
                    raw: &raw[k],
                    mids: Some(&mids[k]),
                    rest: st.inputs.rest[p][k],
                    is_rotation: k == 1,
                };
                encode_track(
                    &input,
                    st.base[p][k] * scale[p][k],
                    st.settings.method,
                    st.settings.bits,
                )
            });
        }
        let smaller = total_bits(&trial) < total_bits(out);
        (smaller && passes(&st.measure(&trial, &st.held), &st.held)).then_some(trial)
    }

    /// One sweep per factor over the moving tracks, largest first: each is re-encoded at
    /// `factor` times its current tolerance (in parallel: candidates depend only on their
    /// own track), then accepted one at a time when it saves bits and `verifier` still
    /// accepts the whole clip (or the clip with pinned joints below re-derived passes).
    /// Returns how many changes were kept.
    pub fn sweeps(
        &self,
        verifier: &mut Verifier,
        work: &mut Work,
        factors: &[f32],
        refined: bool,
    ) -> Result<usize, CodecError> {
        let (st, control) = (self.st, self.st.control);
        let moving = &st.moving;
        let frames = work.out.frame_count;
        // Each track's bits, kept as tracks change (the cost model is not free).
        let mut bits = track_bits(&work.out);
        let mut relaxed = 0;
        for &factor in factors {
            // Largest tracks first (a stable sort: ties keep joint order).
            let mut order: Vec<(usize, usize, u64)> = (0..moving.len())
                .filter(|&j| moving[j])
                .flat_map(|j| (0..3).map(move |k| (j, k)))
                .map(|(j, k)| (j, k, bits[j][k]))
                .filter(|&(_, _, b)| b > 0)
                .collect();
            order.sort_by_key(|&(_, _, b)| std::cmp::Reverse(b));
            let scale = &work.scale;
            let candidates: Vec<(usize, usize, f32, TrackData, u64)> = order
                .par_iter()
                .filter_map(|&(j, k, b)| {
                    if control.is_cancelled() {
                        return None;
                    }
                    let s = scale[j][k] * factor;
                    let c = self.encode_at(j, k, s, refined);
                    let c_bits = c.cost(k == 1, frames).bits;
                    (c_bits < b).then_some((j, k, s, c, c_bits))
                })
                .collect();
            if control.is_cancelled() {
                return Err(CodecError::Cancelled);
            }
            for (j, k, s, candidate, c_bits) in candidates {
                if control.is_cancelled() {
                    return Err(CodecError::Cancelled);
                }
                // A re-derived pinned track may have become smaller than its candidate.
                if c_bits >= bits[j][k] {
                    continue;
                }
                let out = &mut work.out;
                if verifier.accept(j, k, &candidate, out.rest_value(j, k)) {
                    out.tracks[j][k] = candidate;
                    bits[j][k] = c_bits;
                } else if let Some(trial) = self.repinned(out, (j, k), &candidate, &work.scale) {
                    *out = trial;
                    verifier.reset(out);
                    bits = track_bits(out);
                } else {
                    continue;
                }
                work.scale[j][k] = s;
                relaxed += 1;
            }
            control.set_progress(control.progress() + self.progress_step);
        }
        Ok(relaxed)
    }
}

/// The relax pass: plain encodings, one sweep per factor of `factors`.
pub(crate) fn relax(
    search: &Search,
    verifier: &mut Verifier,
    work: &mut Work,
    factors: &[f32],
) -> Result<(), CodecError> {
    work.relaxed += search.sweeps(verifier, work, factors, false)?;
    Ok(())
}

/// An encoder per track that relaxation may loosen (moving), keeping its fits down to the
/// track's `start` tolerance: relaxing only loosens, so every later encoding of the track
/// reuses them. Made on first use: a recompression finds most encodings it needs already
/// done, and a track that gains bits later (a pinned joint re-derived under a relaxed
/// ancestor) still has one.
fn relax_encoders<'a>(
    inputs: &'a Inputs,
    moving: &[bool],
    start: &[[f32; 3]],
) -> Vec<Option<LazyEncoder<'a>>> {
    (0..moving.len())
        .flat_map(|j| (0..3).map(move |k| (j, k)))
        .map(|(j, k)| moving[j].then(|| Mutex::new((inputs.input(j, k), start[j][k], None))))
        .collect()
}

/// Joints with a pinned joint below them.
fn pinned_ancestors(skeleton: &Skeleton, pinned: &[bool]) -> Vec<bool> {
    let mut above = vec![false; skeleton.len()];
    for (p, _) in pinned.iter().enumerate().filter(|(_, is)| **is) {
        let mut a = skeleton.joints.get(p).and_then(|j| j.parent);
        while let Some(j) = a {
            above[j] = true;
            a = skeleton.joints[j].parent;
        }
    }
    above
}

/// True when `joint` lies below `ancestor`.
fn descends(skeleton: &Skeleton, joint: usize, ancestor: usize) -> bool {
    let mut a = skeleton.joints[joint].parent;
    while let Some(j) = a {
        if j == ancestor {
            return true;
        }
        a = skeleton.joints[j].parent;
    }
    false
}
