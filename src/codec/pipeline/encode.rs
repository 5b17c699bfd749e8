//! The encode pass: every track at its base tolerance (joints in parallel), pinned joints
//! re-derived on the decoded parent chain, the whole clip measured.

use rayon::prelude::*;

use super::decoded::Decoded;
use super::state::{State, Work, encode};
use crate::codec::error::CodecError;
use crate::codec::reuse::Encodings;
use crate::codec::track::TrackData;

/// The first encoding of the clip, every track at `start` times its base tolerance,
/// measured against the held tolerances. With `decode`, the measurement is made through a
/// [`Decoded`] (the same errors as [`State::measure`]'s), returned for the passes after it
/// to go on from: repair re-decodes only the tracks it re-encodes, settle's first trial
/// composes only the joints below the changed tracks, and the relax and refine stages'
/// verifier starts from its poses instead of decoding and composing the clip again.
pub(crate) fn encode_all(
    st: &mut State,
    memo: &Encodings,
    start: f32,
    decode: bool,
) -> Result<(Work, Option<Decoded>), CodecError> {
    let n = st.len();
    let scale = vec![[start; 3]; n];
    // A cancelled compression stops between two joints' encodings (a newer edit waits).
    let control = st.control;
    let tracks: Option<Vec<[TrackData; 3]>> = (0..n)
        .into_par_iter()
        .map(|j| {
            (!control.is_cancelled()).then(|| {
                std::array::from_fn(|k| {
                    encode(
                        memo,
                        st.settings,
                        &st.base,
                        &st.pinned,
                        &st.inputs,
                        (j, k, start),
                    )
                })
            })
        })
        .collect();
    let tracks = tracks.ok_or(CodecError::Cancelled)?;
    control.set_progress(0.4);
    let mut out = st.clip_of(tracks, &scale);
    repin(st, memo, &mut out, &scale);
    let (errors, decoded) = if decode {
        let mut decoded = Decoded::new(&out);
        decoded.measure_joint_max(st, &out);
        (decoded.report(st), Some(decoded))
    } else {
        (st.measure(&out, &st.held), None)
    };
    let work = Work {
        out,
        scale,
        errors,
        repairs: 0,
        relaxed: 0,
    };
    Ok((work, decoded))
}

/// Re-derives every pinned joint's tracks on the decoded parent chain of `out` (nothing
/// when no joint is pinned).
pub(crate) fn repin(
    st: &mut State,
    memo: &Encodings,
    out: &mut crate::codec::compressed::CompressedClip,
    scale: &[[f32; 3]],
) {
    if !st.pinned.iter().any(|&p| p) {
        return;
    }
    let (settings, base, pinned) = (st.settings, &st.base, &st.pinned);
    st.inputs
        .repin(st.skeleton, &st.reference, out, pinned, |inputs, j| {
            std::array::from_fn(|k| {
                encode(memo, settings, base, pinned, inputs, (j, k, scale[j][k]))
            })
        });
}
