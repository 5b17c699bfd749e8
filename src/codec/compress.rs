//! The per-clip pipeline (DESIGN §4): budgets, per-track encoding, object-space verification,
//! repair until every joint holds its tolerance, then relaxation to shed bytes the
//! conservative budgets left on the table.

use std::sync::Mutex;
use std::time::Instant;

use glam::{DAffine3, Quat, Vec4};
use rayon::prelude::*;

use super::budget::Budgets;
use super::classify::{TrackClass, track_moves};
use super::compressed::CompressedClip;
use super::control::Control;
use super::curve::align_hemispheres;
use super::floor::{floors_of, hold_to_floors, hold_to_reached};
use super::memo::Recompressor;
use super::playback::{self, Layer, Layered};
use super::report::{ClipReport, JointFailure, TrackReport, payload_bytes, sections};
use super::track::{TrackData, TrackEncoder, TrackInput, encode_track, finest_track};
use super::verify::Verifier;
use crate::metric::{ErrorReport, JointLimits, PoseSource, Reference, measure};
use crate::model::{Clip, Skeleton, TrackKind, Transform, local_to_object_f64, slerp_shortest};
use crate::settings::Resolved;

/// Why compression stopped without a result.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("cancelled")]
    Cancelled,
    #[error("invalid clip: {0}")]
    InvalidClip(String),
}

const MAX_REPAIRS: usize = 24;
/// Tolerance factors of the relaxation passes with plain encodings.
const RELAX_FACTORS: &[f32] = &[4.0, 2.0, 1.4, 1.2, 2.0, 1.4, 1.2];
/// Then with refined key values: at the reached tolerance first.
const REFINE_FACTORS: &[f32] = &[1.0, 0.8, 0.6, 0.4, 1.4, 1.2];
/// Progress per relaxation pass: from 0.6 to 1 over all of them.
const RELAX_PROGRESS: f32 = 0.4 / (RELAX_FACTORS.len() + REFINE_FACTORS.len()) as f32;

/// Reference values of every track at frames and midpoints, in codec form.
struct Inputs {
    raw: Vec<[Vec<Vec4>; 3]>,
    mids: Vec<[Vec<Vec4>; 3]>,
    rest: Vec<[Vec4; 3]>,
}

impl Inputs {
    /// The tracks of `clip`; `rest_pose` is what a rest track decodes to per joint (the
    /// skeleton's rest pose, or an additive clip's identity).
    fn new(skeleton: &Skeleton, clip: &Clip, rest_pose: &[Transform]) -> Self {
        let mut raw = Vec::with_capacity(skeleton.len());
        let mut mids = Vec::with_capacity(skeleton.len());
        let mut rest = Vec::with_capacity(skeleton.len());
        for (t, r) in clip.tracks.iter().zip(rest_pose).take(skeleton.len()) {
            let tv: Vec<Vec4> = t.translations.iter().map(|v| v.extend(0.0)).collect();
            let mut rv: Vec<Vec4> = t
                .rotations
                .iter()
                .map(|q| Vec4::from(q.normalize()))
                .collect();
            align_hemispheres(&mut rv);
            let sv: Vec<Vec4> = t.scales.iter().map(|v| v.extend(0.0)).collect();
            let lerp_mid = |v: &[Vec4]| {
                v.windows(2)
                    .map(|w| (w[0] + w[1]) * 0.5)
                    .collect::<Vec<_>>()
            };
            let rot_mid: Vec<Vec4> = rv
                .windows(2)
                .map(|w| {
                    Vec4::from(slerp_shortest(
                        Quat::from_vec4(w[0]),
                        Quat::from_vec4(w[1]),
                        0.5,
                    ))
                })
                .collect();
            mids.push([lerp_mid(&tv), rot_mid, lerp_mid(&sv)]);
            raw.push([tv, rv, sv]);
            rest.push([
                r.translation.extend(0.0),
                Vec4::from(r.rotation),
                r.scale.extend(0.0),
            ]);
        }
        Self { raw, mids, rest }
    }

    /// Joint pinning: re-derives pinned joints' local tracks against the *decoded* parent
    /// chain of `out`, so that the ancestors' error cancels at the pinned joint. Pinned
    /// joints are processed parents-first; `reencode` is called for each right after its
    /// target changes, so pinned descendants see it.
    fn repin(
        &mut self,
        skeleton: &Skeleton,
        reference: &Reference,
        out: &mut CompressedClip,
        pinned: &[bool],
        mut reencode: impl FnMut(&Inputs, usize) -> [TrackData; 3],
    ) {
        for (j, &is_pinned) in pinned.iter().enumerate().take(skeleton.len()) {
            if !is_pinned || skeleton.joints[j].parent.is_none() {
                continue;
            }
            (self.raw[j], self.mids[j]) = pinned_target(skeleton, reference, out, j);
            out.tracks[j] = reencode(self, j);
        }
    }

    fn input(&self, j: usize, k: usize) -> TrackInput<'_> {
        TrackInput {
            raw: &self.raw[j][k],
            mids: Some(&self.mids[j][k]),
            rest: self.rest[j][k],
            is_rotation: k == 1,
        }
    }
}

/// The local track of pinned joint `j` (which has a parent) that reproduces the reference
/// in object space on top of the decoded parent chain of `out`: values at samples and at
/// midpoints, hemisphere-aligned.
fn pinned_target(
    skeleton: &Skeleton,
    reference: &Reference,
    out: &CompressedClip,
    j: usize,
) -> ([Vec<Vec4>; 3], [Vec<Vec4>; 3]) {
    let n = skeleton.len();
    let frames = reference.frames;
    let parent = skeleton.joints[j]
        .parent
        .expect("a pinned joint with a parent");
    let mut local = vec![Transform::IDENTITY; n];
    let mut obj = vec![DAffine3::IDENTITY; n];
    let mut target = |frame: f32, raw_obj: &DAffine3| -> [Vec4; 3] {
        out.sample_local(frame, &mut local);
        local_to_object_f64(skeleton, &local, &mut obj);
        let l = obj[parent].inverse() * *raw_obj;
        let (s, r, t) = l.to_scale_rotation_translation();
        [
            t.as_vec3().extend(0.0),
            Vec4::from(r.as_quat().normalize()),
            s.as_vec3().extend(0.0),
        ]
    };
    let mut raw: [Vec<Vec4>; 3] = Default::default();
    for f in 0..frames {
        let v = target(f as f32, &reference.at_samples[f * n + j]);
        for k in 0..3 {
            raw[k].push(v[k]);
        }
    }
    let mut mids: [Vec<Vec4>; 3] = Default::default();
    for f in 0..frames.saturating_sub(1) {
        let v = target(f as f32 + 0.5, &reference.at_midpoints[f * n + j]);
        for k in 0..3 {
            mids[k].push(v[k]);
        }
    }
    align_hemispheres(&mut raw[1]);
    (raw, mids)
}

/// Compresses one clip so every evaluated joint stays within its tolerance at every sample
/// and midpoint; the report says so (`contract_met`) or names the joints that cannot.
/// [`Recompressor`] compresses the same clip again under new settings faster, to the same
/// bytes.
pub fn compress(
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &Resolved,
    control: &Control,
) -> Result<CompressedClip, CodecError> {
    Recompressor::new().compress(skeleton, clip, settings, control)
}

/// Called with the first pass of a compression (every track encoded and repaired until each
/// joint holds its tolerance, before relaxation makes the clip smaller), the reference
/// poses it was measured against, and its error matrix (`metric::measure` of it, so the
/// caller need not measure it again; the statistics are against the tolerances held).
pub type FirstPass<'a> = &'a mut (dyn FnMut(CompressedClip, &Reference, &ErrorReport) + Send);

/// [`compress`], taking what `memo` holds from an earlier compression of the same clip
/// wherever the inputs of a pass did not change, and leaving there what this one computes;
/// `first_pass` receives the first pass when relaxation follows it. Returns the result with
/// its error matrix.
pub(super) fn compress_with(
    memo: &mut Recompressor,
    skeleton: &Skeleton,
    prepared: &playback::Prepared,
    settings: &Resolved,
    control: &Control,
    first_pass: Option<FirstPass>,
) -> Result<(CompressedClip, ErrorReport), CodecError> {
    let started = Instant::now();
    // The clip as compressed (a looping clip's first frame may be appended to it).
    let clip: &Clip = &prepared.clip;
    clip.validate(skeleton).map_err(CodecError::InvalidClip)?;
    if let Some(e) = &prepared.error {
        return Err(CodecError::InvalidClip(e.clone()));
    }
    // What players show: the clip, or an additive clip on its base (measured against).
    let shown: &Clip = prepared.composed.as_ref().unwrap_or(clip);
    let layer = prepared.layer.as_ref();
    if settings.limits.len() != skeleton.len() {
        return Err(CodecError::InvalidClip(
            "settings do not match the skeleton".into(),
        ));
    }
    let requested = &settings.limits;
    let n = skeleton.len();
    let frames = clip.frame_count;
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
    let reference = reference.as_ref();
    // A candidate measured as players show it (an additive clip on its base).
    let measure_shown = |candidate: &CompressedClip, limits: &JointLimits| {
        measure(
            skeleton,
            reference,
            &Layered {
                additive: candidate,
                layer,
            },
            limits,
            true,
        )
    };
    let rest_pose = &prepared.rest;
    let mut inputs = Inputs::new(skeleton, clip, rest_pose);
    // Pins re-derive local tracks from object targets: not for an additive layer's keys.
    let no_pins = vec![false; settings.pinned.len()];
    let pinned = if layer.is_some() {
        &no_pins
    } else {
        &settings.pinned
    };
    // Tracks that move share their joint's budget; a pinned joint counts as moving.
    let is_pinned = |j: usize| pinned.get(j).copied().unwrap_or(false);
    let moving_tracks: Vec<usize> = (0..n)
        .map(|j| {
            let m = (0..3)
                .filter(|&k| track_moves(&inputs.raw[j][k], inputs.rest[j][k], k == 1))
                .count();
            m.max(usize::from(is_pinned(j)))
        })
        .collect();
    let moving: Vec<bool> = moving_tracks.iter().map(|&m| m > 0).collect();
    // Tolerances below a joint's floor cannot be held: hold those joints just above it.
    let floors = memo.floors(requested, settings.bits, || {
        joint_floors(
            skeleton, clip, reference, &inputs, requested, settings, layer,
        )
    });
    let memo = memo.encodings();
    let mut held = hold_to_floors(requested, &floors);
    let budgets = Budgets::new(skeleton, shown, &held, &moving, pinned);
    let base: Vec<[f32; 3]> = (0..n)
        .map(|j| {
            let t = budgets.local_tolerances(j, moving_tracks[j], 1.0);
            [t.translation, t.rotation, t.scale]
        })
        .collect();
    let mut scale = vec![[1.0f32; 3]; n];
    let encode = |inputs: &Inputs, j: usize, k: usize, s: f32| {
        let tolerance = base[j][k] * s;
        let input = inputs.input(j, k);
        let samples = (!is_pinned(j)).then_some((input, tolerance));
        memo.get(j, k, tolerance, false, samples, || {
            encode_track(&input, tolerance, settings.method, settings.bits)
        })
    };

    // A cancelled compression stops between two joints' encodings (a newer edit waits).
    let live = || !control.is_cancelled();
    let tracks: Option<Vec<[TrackData; 3]>> = (0..n)
        .into_par_iter()
        .map(|j| live().then(|| std::array::from_fn(|k| encode(&inputs, j, k, 1.0))))
        .collect();
    let tracks = tracks.ok_or(CodecError::Cancelled)?;
    control.set_progress(0.4);

    let make = |tracks: Vec<[TrackData; 3]>, scale: &[[f32; 3]]| CompressedClip {
        name: clip.name.clone(),
        sample_rate: clip.sample_rate,
        frame_count: frames,
        start_time: clip.start_time,
        rest: rest_pose.clone(),
        tracks,
        local_tolerance: (0..n)
            .map(|j| std::array::from_fn(|k| base[j][k] * scale[j][k]))
            .collect(),
        report: ClipReport::default(),
        playback: Default::default(),
    };

    // Repair: tighten every track on the path of a violating joint.
    let mut repairs = 0;
    let mut out = make(tracks, &scale);
    let any_pinned = pinned.iter().any(|&p| p);
    if any_pinned {
        inputs.repin(skeleton, reference, &mut out, pinned, |inp, j| {
            std::array::from_fn(|k| encode(inp, j, k, scale[j][k]))
        });
    }
    let mut errors = measure_shown(&out, &held);
    while !passes(&errors, &held) && repairs < MAX_REPAIRS {
        if control.is_cancelled() {
            return Err(CodecError::Cancelled);
        }
        repairs += 1;
        let mut redo = vec![false; n];
        for k in violating_joints(&errors, &held) {
            let mut a = Some(k);
            while let Some(j) = a {
                redo[j] = true;
                a = skeleton.joints[j].parent;
            }
        }
        for j in 0..n {
            if redo[j] && moving[j] {
                for s in &mut scale[j] {
                    *s *= 0.5;
                }
            }
        }
        let redone: Option<Vec<(usize, [TrackData; 3])>> = (0..n)
            .into_par_iter()
            .filter(|&j| redo[j] && moving[j])
            .map(|j| {
                live().then(|| {
                    (
                        j,
                        std::array::from_fn(|k| encode(&inputs, j, k, scale[j][k])),
                    )
                })
            })
            .collect();
        let redone = redone.ok_or(CodecError::Cancelled)?;
        for (j, t) in redone {
            out.tracks[j] = t;
        }
        if any_pinned {
            inputs.repin(skeleton, reference, &mut out, pinned, |inp, j| {
                std::array::from_fn(|k| encode(inp, j, k, scale[j][k]))
            });
        }
        errors = measure_shown(&out, &held);
    }
    control.set_progress(0.6);
    // What repair could not reach stays where it is; every other joint keeps its tolerance.
    if !passes(&errors, &held) {
        hold_to_reached(&mut held, &errors);
        errors = measure_shown(&out, &held);
    }
    let limits = &held;

    // Relax: loosen one track at a time where that saves bits and the contract still holds.
    let mut relaxed = 0;
    if passes(&errors, limits) {
        if let Some(show) = first_pass {
            let mut first = out.clone();
            first.local_tolerance = (0..n)
                .map(|j| std::array::from_fn(|k| base[j][k] * scale[j][k]))
                .collect();
            first.report = build_report(
                skeleton,
                clip,
                &first,
                &errors,
                Tolerances {
                    requested,
                    floors: floors.clone(),
                },
                repairs,
                0,
                started,
            );
            first.playback = prepared.playback.clone();
            show(first, reference, &errors);
        }
        let mut verifier = Verifier::new(skeleton, reference, limits, &out, layer);
        // Each track's tolerance as relaxation starts: the finest its encoders record to.
        let start: Vec<[f32; 3]> = (0..n)
            .map(|j| std::array::from_fn(|k| base[j][k] * scale[j][k]))
            .collect();
        let current = |j: usize, k: usize| start[j][k];
        let encoders = relax_encoders(&inputs, &moving, current);
        let encode_at = |j: usize, k: usize, s: f32, refined: bool| {
            let tolerance = base[j][k] * s;
            let samples = (!is_pinned(j)).then(|| (inputs.input(j, k), current(j, k)));
            memo.get(j, k, tolerance, refined, samples, || {
                let encoder = encoders[3 * j + k]
                    .as_ref()
                    .expect("an encoder per relaxable track");
                let mut encoder = encoder.lock().expect("encoder lock");
                let (input, finest, made) = &mut *encoder;
                let encoder = made.get_or_insert_with(|| {
                    TrackEncoder::new(*input, settings.method, settings.bits, *finest)
                });
                if refined {
                    encoder.encode_refined(tolerance)
                } else {
                    encoder.encode(tolerance)
                }
            })
        };
        let above_pinned = pinned_ancestors(skeleton, pinned);
        // A change above pinned joints moves them off their targets: re-derive them.
        let repinned =
            |out: &CompressedClip, j: usize, k: usize, track: &TrackData, scale: &[[f32; 3]]| {
                if !above_pinned[j] {
                    return None;
                }
                let mut trial = out.clone();
                trial.tracks[j][k] = track.clone();
                for p in (j + 1..n).filter(|&p| is_pinned(p) && descends(skeleton, p, j)) {
                    let (raw, mids) = pinned_target(skeleton, reference, &trial, p);
                    trial.tracks[p] = std::array::from_fn(|k| {
                        let input = TrackInput {
                            raw: &raw[k],
                            mids: Some(&mids[k]),
                            rest: inputs.rest[p][k],
                            is_rotation: k == 1,
                        };
                        encode_track(
                            &input,
                            base[p][k] * scale[p][k],
                            settings.method,
                            settings.bits,
                        )
                    });
                }
                let smaller = total_bits(&trial) < total_bits(out);
                (smaller && passes(&measure_shown(&trial, limits), limits)).then_some(trial)
            };
        // Plain encodings first, then refined key values on top of what they reached: every
        // step is kept only if it saves bits, so refinement never grows the clip.
        for (factors, refined) in [(RELAX_FACTORS, false), (REFINE_FACTORS, true)] {
            relaxed += relax(
                &mut out,
                &mut scale,
                &moving,
                &mut verifier,
                factors,
                |j, k, s| encode_at(j, k, s, refined),
                &repinned,
                control,
            )?;
        }
        if relaxed > 0 {
            errors = measure_shown(&out, limits);
        }
    }
    out.local_tolerance = (0..n)
        .map(|j| std::array::from_fn(|k| base[j][k] * scale[j][k]))
        .collect();
    out.report = build_report(
        skeleton,
        clip,
        &out,
        &errors,
        Tolerances { requested, floors },
        repairs,
        relaxed,
        started,
    );
    out.playback = prepared.playback.clone();
    out.report.playback = playback::report(skeleton, prepared, &out, &errors);
    control.set_progress(1.0);
    Ok((out, errors))
}

/// A track encoder made on first use from its input and the finest tolerance it records to.
type LazyEncoder<'a> = Mutex<(TrackInput<'a>, f32, Option<TrackEncoder<'a>>)>;

/// An encoder per track that relaxation may loosen (moving), keeping its fits down to the
/// track's `current` tolerance: relaxing only loosens, so every later encoding of the track
/// reuses them. Made on first use: a recompression finds most encodings it needs already
/// done, and a track that gains bits later (a pinned joint re-derived under a relaxed
/// ancestor) still has one.
fn relax_encoders<'a>(
    inputs: &'a Inputs,
    moving: &[bool],
    current: impl Fn(usize, usize) -> f32,
) -> Vec<Option<LazyEncoder<'a>>> {
    (0..moving.len())
        .flat_map(|j| (0..3).map(move |k| (j, k)))
        .map(|(j, k)| {
            moving[j].then(|| {
                let input = inputs.input(j, k);
                Mutex::new((input, current(j, k), None))
            })
        })
        .collect()
}

/// The whole clip with one track changed and the pinned joints below it re-derived, when
/// that saves bits and passes: `(clip, joint, kind, track, tolerance scales)`.
type Repinned<'a> =
    dyn Fn(&CompressedClip, usize, usize, &TrackData, &[[f32; 3]]) -> Option<CompressedClip> + 'a;

/// Re-encodes tracks that move (`moving[j]`) in passes, one per factor of their current
/// tolerance, keeping each encoding that saves bits while `verifier` still accepts the clip;
/// `encode(j, k, s)` encodes track `k` of joint `j` at `s` times its base tolerance. A change
/// the verifier rejects may still be kept as `repinned(out, j, k, track, scale)` returns it:
/// the whole clip with pinned joints below re-derived. Returns how many changes were kept.
#[allow(clippy::too_many_arguments)]
fn relax(
    out: &mut CompressedClip,
    scale: &mut [[f32; 3]],
    moving: &[bool],
    verifier: &mut Verifier,
    factors: &[f32],
    encode: impl Fn(usize, usize, f32) -> TrackData + Sync,
    repinned: &Repinned,
    control: &Control,
) -> Result<usize, CodecError> {
    let frames = out.frame_count;
    // Each track's bits, kept as tracks change (the cost model is not free).
    let mut bits = track_bits(out);
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
        // Candidates depend only on each track's own data: encode them in parallel, then
        // accept them one at a time against the whole skeleton.
        let candidates: Vec<(usize, usize, f32, TrackData, u64)> = order
            .par_iter()
            .filter_map(|&(j, k, b)| {
                if control.is_cancelled() {
                    return None;
                }
                let s = scale[j][k] * factor;
                let c = encode(j, k, s);
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
            if verifier.accept(j, k, &candidate, out.rest_value(j, k)) {
                out.tracks[j][k] = candidate;
                bits[j][k] = c_bits;
            } else if let Some(trial) = repinned(out, j, k, &candidate, scale) {
                *out = trial;
                verifier.reset(out);
                bits = track_bits(out);
            } else {
                continue;
            }
            scale[j][k] = s;
            relaxed += 1;
        }
        control.set_progress(control.progress() + RELAX_PROGRESS);
    }
    Ok(relaxed)
}

/// Bits of every track of a clip, per joint and kind.
fn track_bits(clip: &CompressedClip) -> Vec<[u64; 3]> {
    let frames = clip.frame_count;
    clip.tracks
        .iter()
        .map(|t| std::array::from_fn(|k| t[k].cost(k == 1, frames).bits))
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

/// Each joint's floor: its error with every moving track at the finest encoding (every
/// sample a key, the most precise format), the others as the codec stores them.
fn joint_floors(
    skeleton: &Skeleton,
    clip: &Clip,
    reference: &Reference,
    inputs: &Inputs,
    limits: &JointLimits,
    settings: &Resolved,
    layer: Option<&Layer>,
) -> Vec<f32> {
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
    let finest = CompressedClip {
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
    };
    let shown = Layered {
        additive: &finest,
        layer,
    };
    floors_of(&measure(skeleton, reference, &shown, limits, true))
}

/// The tolerances a report is judged against: what was asked, and each joint's floor.
struct Tolerances<'a> {
    requested: &'a JointLimits,
    floors: Vec<f32>,
}

/// Bits of every track of a clip.
fn total_bits(clip: &CompressedClip) -> u64 {
    track_bits(clip).iter().flatten().sum()
}

fn passes(e: &ErrorReport, limits: &JointLimits) -> bool {
    e.samples.violations == 0
        && e.midpoints.is_none_or(|m| m.violations == 0)
        && limits.len() == e.joints
}

fn violating_joints(e: &ErrorReport, limits: &JointLimits) -> Vec<usize> {
    let n = e.joints;
    let mut bad = vec![false; n];
    for m in std::iter::once(&e.at_samples).chain(e.at_midpoints.as_ref()) {
        for row in m.chunks_exact(n.max(1)) {
            for j in 0..n {
                if limits.evaluated[j] && row[j] > limits.tolerance[j] {
                    bad[j] = true;
                }
            }
        }
    }
    (0..n).filter(|&j| bad[j]).collect()
}

#[allow(clippy::too_many_arguments)]
fn build_report(
    skeleton: &Skeleton,
    clip: &Clip,
    out: &CompressedClip,
    errors: &ErrorReport,
    tolerances: Tolerances,
    repairs: usize,
    relaxed: usize,
    started: Instant,
) -> ClipReport {
    let limits = tolerances.requested;
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
            floor: tolerances.floors[j],
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
        floors: tolerances.floors,
        failures,
        repair_iterations: repairs,
        relaxed_tracks: relaxed,
        compress_ms: started.elapsed().as_secs_f64() * 1000.0,
        playback: Default::default(),
    }
}
