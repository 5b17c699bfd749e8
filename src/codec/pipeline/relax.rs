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
use crate::codec::track::{TrackData, TrackEncoder, TrackInput, Variant, encode_track};
use crate::codec::verify::{Change, Verifier};
use crate::model::Skeleton;
use crate::settings::Effort;

/// Tolerance factors of the first relaxation sweeps with plain encodings on a clip that pins
/// joints, from tracks at their budgets (at every effort: all of `Effort::Fast`'s there)...
pub(crate) const PINNED_RELAX_FACTORS: &[f32] = &[4.0, 2.0, 1.4];
/// ...and the default's first sweeps, from tracks that start at 4 times their budgets and
/// were repaired (where the sweep at ×4 would have taken them)...
pub(crate) const FIRST_RELAX_FACTORS: &[f32] = &[2.0, 1.4];
/// ...then these (the default's sweeps are `(×4 start) 2, 1.4, 1.2, 2, 1.4, 1.2`).
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
    /// An encoder per track of a moving pinned joint, made on first use (the other tracks
    /// are encoded by the memo's kept encoders). Boxed: the other slots stay 8 bytes.
    encoders: Vec<Option<Box<LazyEncoder<'s>>>>,
    /// Joints with a pinned joint below them.
    above_pinned: Vec<bool>,
    /// Progress per sweep.
    progress_step: f32,
    /// `Effort::Fast`: candidates are tested in groups rather than one at a time, and a
    /// track is not re-encoded at a tolerance tighter than one that saved it nothing.
    quick: bool,
}

/// A track re-encoded at a looser tolerance that saves bits: track `k` of joint `j` at `s`
/// times its base tolerance.
pub(super) struct Candidate {
    pub j: usize,
    pub k: usize,
    pub s: f32,
    pub track: TrackData,
    pub bits: u64,
}

impl<'s> Search<'s> {
    /// A search starting from `work`; `sweeps` is how many sweeps the passes will make (for
    /// progress, from 0.6 to 1 over all of them).
    pub fn new(st: &'s State<'s>, memo: &'s Encodings, work: &Work, sweeps: usize) -> Self {
        let start = st.local_tolerances(&work.scale);
        let encoders = pinned_encoders(&st.inputs, &st.moving, &st.pinned, &start);
        Self {
            st,
            memo,
            start,
            encoders,
            above_pinned: pinned_ancestors(st.skeleton, &st.pinned),
            progress_step: 0.4 / sweeps.max(1) as f32,
            quick: st.settings.effort == Effort::Fast,
        }
    }

    /// The state the search runs on.
    pub(super) fn state(&self) -> &'s State<'s> {
        self.st
    }

    /// Encodings with every interpolation, refined keys when `refined`, the effort's width
    /// search.
    pub(super) fn variant(&self, refined: bool) -> Variant {
        Variant {
            refined,
            ..Variant::plain(self.st.settings.effort)
        }
    }

    /// Track `k` of joint `j` encoded at `s` times its base tolerance ([`Self::encode_at`]):
    /// a candidate when it takes fewer bits than `bits_now` over `frames`, else the
    /// `(j, k, s)` that saved nothing.
    pub(super) fn try_at(
        &self,
        (j, k, s): (usize, usize, f32),
        variant: Variant,
        frames: usize,
        bits_now: u64,
    ) -> Result<Candidate, (usize, usize, f32)> {
        let track = self.encode_at(j, k, s, variant);
        let bits = track.cost(k == 1, frames).bits;
        if bits < bits_now {
            Ok(Candidate {
                j,
                k,
                s,
                track,
                bits,
            })
        } else {
            Err((j, k, s))
        }
    }

    /// Track `k` of joint `j` at `s` times its base tolerance, encoded as `variant` says.
    pub(super) fn encode_at(&self, j: usize, k: usize, s: f32, variant: Variant) -> TrackData {
        let st = self.st;
        let tolerance = st.base[j][k] * s;
        let samples = (!st.is_pinned(j)).then(|| (st.inputs.input(j, k), self.start[j][k]));
        self.memo.get(j, k, tolerance, variant, samples, || {
            let encoder = self.encoders[3 * j + k]
                .as_ref()
                .expect("an encoder per track of a moving pinned joint");
            let mut encoder = encoder.lock().expect("encoder lock");
            let (input, finest, made) = &mut *encoder;
            let encoder = made.get_or_insert_with(|| {
                TrackEncoder::new(*input, st.settings.method, st.settings.bits, *finest)
            });
            encoder.encode_as(tolerance, variant)
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

    /// Keeps candidate `c` when it still saves bits and `verifier` accepts the clip with it
    /// (or the clip with the pinned joints below it re-derived passes).
    fn accept_one(
        &self,
        verifier: &mut Verifier,
        work: &mut Work,
        bits: &mut Vec<[u64; 3]>,
        c: &Candidate,
    ) -> bool {
        let (j, k) = (c.j, c.k);
        // A re-derived pinned track may have become smaller than its candidate.
        if c.bits >= bits[j][k] {
            return false;
        }
        let out = &mut work.out;
        if verifier.accept(j, k, &c.track, out.rest_value(j, k)) {
            out.tracks[j][k] = c.track.clone();
            bits[j][k] = c.bits;
        } else if let Some(trial) = self.repinned(out, (j, k), &c.track, &work.scale) {
            *out = trial;
            verifier.reset(out);
            *bits = track_bits(out);
        } else {
            return false;
        }
        work.scale[j][k] = c.s;
        true
    }

    /// The candidates of one sweep tested in groups: the whole group at once, and when
    /// that fails each half of it in turn, down to one candidate at a time
    /// ([`Search::accept_one`]). Most candidates of the loose first sweeps pass, and a
    /// group costs one composition of the joints it moves where one at a time costs one per
    /// candidate. A group is kept only when the whole clip with it passes, so the result
    /// holds the contract as the one-at-a-time sweep does, though which candidates it keeps
    /// may differ. Returns how many changes were kept.
    fn accept_grouped(
        &self,
        verifier: &mut Verifier,
        work: &mut Work,
        bits: &mut Vec<[u64; 3]>,
        group: &[Candidate],
    ) -> Result<usize, CodecError> {
        if self.st.control.is_cancelled() {
            return Err(CodecError::Cancelled);
        }
        let live: Vec<&Candidate> = group.iter().filter(|c| c.bits < bits[c.j][c.k]).collect();
        if live.len() <= 1 {
            return Ok(live
                .into_iter()
                .filter(|c| self.accept_one(verifier, work, bits, c))
                .count());
        }
        let changes: Vec<Change> = live
            .iter()
            .map(|c| Change {
                joint: c.j,
                kind: c.k,
                track: &c.track,
                rest: work.out.rest_value(c.j, c.k),
            })
            .collect();
        if verifier.accept_all(&changes) {
            for c in &live {
                work.out.tracks[c.j][c.k] = c.track.clone();
                bits[c.j][c.k] = c.bits;
                work.scale[c.j][c.k] = c.s;
            }
            return Ok(live.len());
        }
        let (a, b) = group.split_at(group.len() / 2);
        Ok(self.accept_grouped(verifier, work, bits, a)?
            + self.accept_grouped(verifier, work, bits, b)?)
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
        // At `Effort::Fast`: per track, the loosest tolerance of this call whose encoding
        // saved no bits. A tighter one is not tried (it would keep at least as many keys).
        let mut no_gain = vec![[0.0f32; 3]; moving.len()];
        let trace = std::env::var_os("SKELPACK_TRACE_PASSES").is_some();
        for &factor in factors {
            let started = std::time::Instant::now();
            // Largest tracks first (a stable sort: ties keep joint order).
            let mut order: Vec<(usize, usize, u64)> = (0..moving.len())
                .filter(|&j| moving[j])
                .flat_map(|j| (0..3).map(move |k| (j, k)))
                .map(|(j, k)| (j, k, bits[j][k]))
                .filter(|&(_, _, b)| b > 0)
                .collect();
            order.sort_by_key(|&(_, _, b)| std::cmp::Reverse(b));
            let scale = &work.scale;
            let tried: Vec<Result<Candidate, (usize, usize, f32)>> = order
                .par_iter()
                .filter_map(|&(j, k, b)| {
                    let s = scale[j][k] * factor;
                    if control.is_cancelled() || (self.quick && s <= no_gain[j][k]) {
                        return None;
                    }
                    Some(self.try_at((j, k, s), self.variant(refined), frames, b))
                })
                .collect();
            let mut candidates = Vec::with_capacity(tried.len());
            for t in tried {
                match t {
                    Ok(c) => candidates.push(c),
                    Err((j, k, s)) => no_gain[j][k] = no_gain[j][k].max(s),
                }
            }
            if control.is_cancelled() {
                return Err(CodecError::Cancelled);
            }
            let encoded = started.elapsed();
            let (tested, kept_before) = (candidates.len(), relaxed);
            if self.quick {
                relaxed += self.accept_grouped(verifier, work, &mut bits, &candidates)?;
            } else {
                for c in &candidates {
                    if control.is_cancelled() {
                        return Err(CodecError::Cancelled);
                    }
                    relaxed += usize::from(self.accept_one(verifier, work, &mut bits, c));
                }
            }
            if trace {
                let verified = started.elapsed() - encoded;
                eprintln!(
                    "  sweep x{factor}{}: {} tracks tried in {:.2} ms, {tested} saved bits, \
                     {} kept; verified in {:.2} ms",
                    if refined { " refined" } else { "" },
                    order.len(),
                    encoded.as_secs_f64() * 1e3,
                    relaxed - kept_before,
                    verified.as_secs_f64() * 1e3,
                );
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

/// An encoder per track of a moving pinned joint (the memo does not keep those: their
/// samples are re-derived), keeping its fits down to the track's `start` tolerance:
/// relaxing only loosens, so every later encoding of the track reuses them. Made on first
/// use: a recompression finds most encodings it needs already done, and a track that gains
/// bits later (a pinned joint re-derived under a relaxed ancestor) still has one. None for
/// the other tracks: [`Search::encode_at`] encodes them through the memo's encoders (an
/// encoder slot each was 1.5 KB of fresh memory per track, never used).
fn pinned_encoders<'a>(
    inputs: &'a Inputs,
    moving: &[bool],
    pinned: &[bool],
    start: &[[f32; 3]],
) -> Vec<Option<Box<LazyEncoder<'a>>>> {
    let kept = |j: usize| moving[j] && pinned.get(j).copied().unwrap_or(false);
    (0..moving.len())
        .flat_map(|j| (0..3).map(move |k| (j, k)))
        .map(|(j, k)| {
            kept(j).then(|| Box::new(Mutex::new((inputs.input(j, k), start[j][k], None))))
        })
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
