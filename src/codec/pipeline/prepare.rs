//! The prepare pass: checks the clip against its settings, takes the reference poses (from
//! the memo when the clip was compressed before), converts the tracks to codec form and
//! tells which tracks move.

use std::time::Instant;

use super::inputs::Inputs;
use super::state::State;
use crate::codec::classify::track_moves;
use crate::codec::control::Control;
use crate::codec::error::CodecError;
use crate::codec::playback::{Layered, Prepared};
use crate::codec::reuse::Memo;
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// The state the other passes fill, or why the clip cannot be compressed.
pub(crate) fn prepare<'a>(
    memo: &mut Memo,
    skeleton: &'a Skeleton,
    prepared: &'a Prepared<'a>,
    settings: &'a Resolved,
    control: &'a Control,
) -> Result<State<'a>, CodecError> {
    let started = Instant::now();
    let clip: &Clip = &prepared.clip;
    clip.validate(skeleton).map_err(CodecError::InvalidClip)?;
    if let Some(e) = &prepared.error {
        return Err(CodecError::InvalidClip(e.clone()));
    }
    let shown: &Clip = prepared.composed.as_ref().unwrap_or(clip);
    let layer = prepared.layer.as_ref();
    if settings.limits.len() != skeleton.len() {
        return Err(CodecError::InvalidClip(
            "settings do not match the skeleton".into(),
        ));
    }
    let n = skeleton.len();
    control.set_progress(0.0);
    // Midpoints as players show them: the base and the layer each interpolated, then
    // composed (for a fixed base the same as interpolating `shown`).
    let reference = memo.reference(
        skeleton,
        &Layered {
            additive: clip,
            layer,
        },
        clip.frame_count,
    );
    let inputs = Inputs::new(skeleton, clip, &prepared.rest);
    // Pins re-derive local tracks from object targets: not for an additive layer's keys.
    let pinned = if layer.is_some() {
        vec![false; settings.pinned.len()]
    } else {
        settings.pinned.clone()
    };
    // Tracks that move share their joint's budget; a pinned joint counts as moving.
    let moving_tracks: Vec<usize> = (0..n)
        .map(|j| {
            let m = (0..3)
                .filter(|&k| track_moves(&inputs.raw[j][k], inputs.rest[j][k], k == 1))
                .count();
            m.max(usize::from(pinned.get(j).copied().unwrap_or(false)))
        })
        .collect();
    let moving = moving_tracks.iter().map(|&m| m > 0).collect();
    Ok(State {
        skeleton,
        prepared,
        clip,
        shown,
        layer,
        settings,
        control,
        started,
        reference,
        inputs,
        pinned,
        moving_tracks,
        moving,
        floors: Vec::new(),
        held: settings.limits.clone(),
        base: Vec::new(),
    })
}
