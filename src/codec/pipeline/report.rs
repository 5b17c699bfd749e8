//! The report pass: the clip's sizes, keys, errors against the tolerances asked, failures
//! and timings (`ClipReport`), and its playback part; also the report of the first pass
//! handed out before relaxation.

use super::state::{State, Work};
use crate::codec::classify::TrackClass;
use crate::codec::compressed::CompressedClip;
use crate::codec::error::FirstPass;
use crate::codec::playback;
use crate::codec::report::{ClipReport, JointFailure, TrackReport, payload_bytes, sections};
use crate::codec::track::TrackData;
use crate::metric::ErrorReport;
use crate::model::TrackKind;

/// Hands `show` the first pass (a copy of `work` as it stands), reported.
pub(crate) fn first_pass(st: &State, work: &Work, show: FirstPass) {
    let mut first = work.out.clone();
    first.local_tolerance = st.local_tolerances(&work.scale);
    first.report = clip_report(st, &first, &work.errors, work.repairs, 0);
    first.playback = st.prepared.playback.clone();
    show(first, &st.reference, &work.errors);
}

/// The finished clip with its report, and its error matrix.
pub(crate) fn finish(st: &State, work: Work) -> (CompressedClip, ErrorReport) {
    let Work {
        mut out,
        scale,
        errors,
        repairs,
        relaxed,
    } = work;
    out.local_tolerance = st.local_tolerances(&scale);
    out.report = clip_report(st, &out, &errors, repairs, relaxed);
    out.playback = st.prepared.playback.clone();
    out.report.playback = playback::report(st.skeleton, st.prepared, &out, &errors);
    st.control.set_progress(1.0);
    (out, errors)
}

/// The report of `out`, judged against the tolerances asked.
fn clip_report(
    st: &State,
    out: &CompressedClip,
    errors: &ErrorReport,
    repairs: usize,
    relaxed: usize,
) -> ClipReport {
    let (skeleton, clip) = (st.skeleton, st.clip);
    let limits = &st.settings.limits;
    let frames = clip.frame_count;
    let secs = sections(&out.tracks, frames);
    let payload = payload_bytes(&out.tracks, frames);
    let mut tracks = Vec::new();
    let mut keys_kept = 0;
    for (j, joint) in skeleton.joints.iter().enumerate() {
        for kind in TrackKind::ALL {
            let t = &out.tracks[j][kind.index()];
            let cost = t.cost(kind == TrackKind::Rotation, frames);
            keys_kept += cost.keys;
            let (class, format, interpolation) = match t {
                TrackData::Rest => (TrackClass::Rest, None, None),
                TrackData::Constant { .. } => (TrackClass::Constant, None, None),
                TrackData::Animated(a) => (
                    TrackClass::Animated,
                    Some(a.format),
                    Some(a.curve.interpolation),
                ),
            };
            tracks.push(TrackReport {
                joint: joint.name.clone(),
                kind,
                class,
                keys: cost.keys,
                bits_per_key: cost.bits_per_key,
                bits: cost.bits,
                format,
                interpolation,
                insert_order: match t {
                    TrackData::Animated(a) => a.insert_order.clone(),
                    _ => Vec::new(),
                },
            });
        }
    }
    let mids = errors.midpoints.unwrap_or_default();
    let failures = (0..skeleton.len())
        .filter(|&j| limits.evaluated[j] && errors.joint_max[j] > limits.tolerance[j])
        .map(|j| JointFailure {
            joint: skeleton.joints[j].name.clone(),
            max_error: errors.joint_max[j],
            tolerance: limits.tolerance[j],
            floor: st.floors[j],
        })
        .collect::<Vec<_>>();
    let raw = clip.raw_bytes() as u64;
    ClipReport {
        name: clip.name.clone(),
        joints: skeleton.len(),
        frames,
        sample_rate: clip.sample_rate,
        raw_bytes: raw,
        payload_bytes: payload,
        ratio: raw as f64 / payload.max(1) as f64,
        sections: secs,
        keys_kept,
        keys_raw: 3 * skeleton.len() * frames,
        tracks,
        error_samples: errors.samples,
        error_midpoints: mids,
        worst_joint: skeleton.joints[errors.samples.worst_joint.min(skeleton.len() - 1)]
            .name
            .clone(),
        worst_joint_midpoints: skeleton.joints[mids.worst_joint.min(skeleton.len() - 1)]
            .name
            .clone(),
        contract_met: failures.is_empty(),
        floors: st.floors.clone(),
        failures,
        repair_iterations: repairs,
        relaxed_tracks: relaxed,
        compress_ms: st.started.elapsed().as_secs_f64() * 1000.0,
        playback: Default::default(),
    }
}
