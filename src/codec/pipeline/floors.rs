//! The floors pass: each joint's floor, the tightest tolerance it can reach (its error with
//! every moving track at the finest encoding), and the tolerances held: those asked,
//! raised to just above the floor where they are below it.

use glam::Quat;
use rayon::prelude::*;

use super::decoded::Decoded;
use super::state::State;
use crate::codec::classify::track_moves;
use crate::codec::compressed::CompressedClip;
use crate::codec::floor::hold_to_floors;
use crate::codec::playback::Layered;
use crate::codec::report::ClipReport;
use crate::codec::reuse::Memo;
use crate::codec::track::{TrackData, encode_track, finest_track};
use crate::metric::{PoseSource, measure_joint_max};
use crate::model::Transform;

/// Sets `st.floors` (from the memo when the markers and bit widths did not change) and
/// `st.held`.
pub(crate) fn floors(st: &mut State, memo: &mut Memo) {
    let requested = &st.settings.limits;
    let floors = memo.floors(requested, st.settings.bits, || joint_floors(st));
    st.held = hold_to_floors(requested, &floors);
    st.floors = floors;
}

/// Each joint's floor: its error with every moving track at the finest encoding (every
/// sample a key, the most precise format), the others as the codec stores them.
fn joint_floors(st: &State) -> Vec<f32> {
    let finest = finest_clip(st);
    if finest.frame_count < DECODED_FROM_FRAMES {
        return measure_finest(st, &finest);
    }
    // Read through the tracks decoded once at every sample and midpoint: the values
    // `finest` gives there, without a curve lookup per track and position.
    let decoded = Decoded::new(&finest);
    measure_finest(st, &decoded.source(&finest))
}

/// The fewest frames at which the floors are measured through the finest clip's decoded
/// tracks: below, a buffer per track costs more than the few lookups it saves (121_10, one
/// frame: 5 % more instructions at `fast`).
const DECODED_FROM_FRAMES: usize = 8;

/// The clip with every moving track at the finest encoding, the others as the codec
/// stores them.
fn finest_clip(st: &State) -> CompressedClip {
    let (skeleton, clip, inputs, settings) = (st.skeleton, st.clip, &st.inputs, st.settings);
    let tracks: Vec<[TrackData; 3]> = (0..skeleton.len())
        .into_par_iter()
        .map(|j| {
            std::array::from_fn(|k| {
                let input = inputs.input(j, k);
                if track_moves(input.raw, input.rest, k == 1) {
                    finest_track(&input, settings.bits)
                } else {
                    // Exactly at rest, or constant within 1e-7: stored as such.
                    encode_track(&input, 0.0, settings.method, settings.bits)
                }
            })
        })
        .collect();
    CompressedClip {
        name: clip.name.clone(),
        sample_rate: clip.sample_rate,
        frame_count: clip.frame_count,
        start_time: clip.start_time,
        rest: inputs
            .rest
            .iter()
            .map(|r| Transform::new(r[0].truncate(), Quat::from_vec4(r[1]), r[2].truncate()))
            .collect(),
        local_tolerance: vec![[0.0; 3]; skeleton.len()],
        tracks,
        report: ClipReport::default(),
        playback: Default::default(),
    }
}

/// Each joint's largest error at the samples and between them, `finest` shown as players
/// show it (on the additive layer's base, if any).
fn measure_finest(st: &State, finest: &dyn PoseSource) -> Vec<f32> {
    let shown = Layered {
        additive: finest,
        layer: st.layer,
    };
    measure_joint_max(
        st.skeleton,
        &st.reference,
        &shown,
        &st.settings.limits,
        true,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::pipeline::tests::with_prepared;

    /// Floors measured through the decoded finest clip are the floors of the clip itself,
    /// bit for bit, on every clip of the default character (each longer than
    /// `DECODED_FROM_FRAMES`, so measured through the decoded tracks).
    #[test]
    fn floors_through_the_decoded_clip_are_the_clips_floors() {
        for name in ["Idle", "Walk", "JumpAttack"] {
            let (through, whole) = with_prepared(name, |st, _| {
                assert!(st.clip.frame_count >= DECODED_FROM_FRAMES, "{name}");
                (joint_floors(&st), measure_finest(&st, &finest_clip(&st)))
            });
            assert!(through.iter().any(|&f| f > 0.0), "{name}: no floor above 0");
            let bits = |v: &[f32]| v.iter().map(|f| f.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&through), bits(&whole), "{name}");
        }
    }
}
