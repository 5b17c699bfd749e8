//! Making exported channels hold in players: measures the channels the way each rule of a
//! [`Player`] evaluates them (slerp, nlerp, keys as stored) at every sample and the quarter
//! points between samples, inserts rotation keys where nlerp leaves slerp's path, and stores
//! rotations as normalized SHORT wherever the rounding keeps every joint within its limit.

use glam::{DAffine3, Quat, Vec4};

use super::channels::{Channel, CheckedSegments, Played, Player, Rule, Storage};
use super::remeasure::{Measured, Remeasure};
use crate::metric::{JointLimits, PoseSource, Reference, measure};
use crate::model::{Clip, Skeleton, Transform, local_to_object_f64};
use crate::settings::Resolved;

/// Fraction of the tolerance an exported glTF is verified against: players evaluate in
/// their own precision (animeval in f64, engines in f32), which moves far joints of a large
/// character by up to ~0.5 µm.
pub const PLAYER_GUARD: f32 = 0.99;

/// Rounds of refinement before giving up on a joint (each halves its nlerp allowance or
/// returns SHORT rotations on its chain to float).
const MAX_ROUNDS: usize = 32;

/// Where [`fit_players`] inserts nlerp-safe rotation keys.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Splits {
    /// Every segment wider than half the rotation budget allows is split first.
    First,
    /// Only chains measured over their limit are split, at half the budget, halved again
    /// while still over (a channel keyed at every frame usually needs no split at all).
    WhereOver,
    /// As `WhereOver`, but the first split allows nlerp the whole rotation budget: fewer
    /// keys where the other errors are small (SimpleSkin's 90-degree ramps need one key
    /// each, not three).
    WhereOverWide,
}

/// Fits `channels` (a clip's, at `rate` over `frames` frames) to `player`: nlerp-safe keys
/// and SHORT storage where they hold. Each joint must stay within the larger of its
/// tolerance and what the codec's own curves reach under the spec. Returns the largest error
/// over all rules and the worst error / tolerance ratio. `splits` says where rotation
/// segments are split for nlerp.
///
/// The points checked are every sample, the [`QUARTERS`] points between samples (as
/// `animeval --oversample 4` looks) and, inside every key interval shorter than a
/// frame (keys between frames: nlerp-safe splits, cubic bulges), its midpoint and the points
/// where nlerp leaves slerp most ([`super::key_points`]); when the fit adds keys whose
/// points are not yet checked and one of them is over, it runs again with them (at most
/// `rounds` fits: [`SEARCH_ROUNDS`] while layouts are compared, [`FINAL_ROUNDS`] for the
/// chosen one). `reference` is `raw`'s [`clip_reference`], built once for every fit of the
/// clip.
///
/// `carry`, where given, is a fit's measurement handed from fit to fit of the same clip:
/// the first fit starts from what it holds (an earlier fit's last measurement, see
/// [`Remeasure::resume`]: the same errors as measuring afresh), and it is left holding this
/// call's last one.
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_players(
    channels: &mut [Channel],
    skeleton: &Skeleton,
    raw: &Clip,
    reference: &Reference,
    rate: f32,
    frames: usize,
    settings: &Resolved,
    player: Player,
    splits: Splits,
    quat: bool,
    rounds: usize,
    mut carry: Option<&mut Option<Measured>>,
) -> (f32, f32) {
    let inner = QUARTERS;
    let mut limits = settings.limits.clone();
    for t in limits.tolerance.iter_mut() {
        *t *= PLAYER_GUARD;
    }
    // The first fit's nlerp-safe keys go in before the check points are chosen, so that the
    // key intervals they make are checked from the start.
    if splits == Splits::First && player.rules().contains(&Rule::Nlerp) {
        let chord = initial_chords(skeleton, &limits);
        for c in channels.iter_mut() {
            c.split_for_nlerp_at(chord[c.joint], false);
        }
    }
    let chords = initial_chords(skeleton, &limits);
    debug_assert!(reference.frames == raw.frame_count && reference.inner == inner);
    debug_assert!(
        reference.extra.is_empty(),
        "the clip's reference, without extra points"
    );
    let mut reference = reference.clone();
    reference.add_extra_points(
        skeleton,
        raw,
        &super::key_points::unchecked_points(channels, inner, &chords),
    );
    let mut round = 0;
    let mut last = carry.as_deref_mut().and_then(Option::take);
    loop {
        let (result, measured) = fit_at(
            channels, skeleton, &reference, rate, frames, settings, player, splits, quat, last,
        );
        round += 1;
        // Only the first fit resumes: a later round's channels differ from the last one's
        // on most joints (the storage returned to SHORT), where resuming costs more than
        // measuring afresh (session 26, docs/EXPORT.md).
        last = None;
        if round >= rounds {
            if let Some(slot) = carry {
                *slot = measured.if_room();
            }
            return result;
        }
        // Key intervals the fit made (splits where a joint went over): their points are
        // measured alone, and the fit runs again with them only where one is over.
        let missed: Vec<f32> = super::key_points::unchecked_points(channels, inner, &chords)
            .into_iter()
            .filter(|x| !reference.extra.contains(x))
            .collect();
        if missed.is_empty()
            || !super::key_points::over_at(
                channels, skeleton, raw, rate, frames, &limits, player, &missed,
            )
        {
            if let Some(slot) = carry {
                *slot = measured.if_room();
            }
            return result;
        }
        reference.add_extra_points(skeleton, raw, &missed);
    }
}

/// Points checked between frames: the quarter points (`animeval --oversample 4`).
pub const QUARTERS: usize = 3;

/// `raw` at its samples and [`QUARTERS`] points between them: the points every fit of the
/// clip checks before its key intervals' own ([`fit_players`] adds those to a copy). The
/// same for every fit, so built once per clip encoding.
pub fn clip_reference(skeleton: &Skeleton, raw: &Clip) -> Reference {
    Reference::with_inner_points(skeleton, raw, raw.frame_count, QUARTERS)
}

/// Fits [`fit_players`] runs while layouts are compared: one (the points of the key
/// intervals its own splits make are not checked; the chosen layout's last fit checks them).
pub const SEARCH_ROUNDS: usize = 1;

/// Fits [`fit_players`] runs on the chosen layout, with the key-interval points added
/// each time its splits made some that are over, before giving up on new ones.
pub const FINAL_ROUNDS: usize = 4;

/// [`fit_players`] at the points of `reference`, measuring from `start` (an earlier fit's
/// measurement of the clip) where given; also returns its last measurement.
#[allow(clippy::too_many_arguments)]
fn fit_at(
    channels: &mut [Channel],
    skeleton: &Skeleton,
    reference: &Reference,
    rate: f32,
    frames: usize,
    settings: &Resolved,
    player: Player,
    splits: Splits,
    quat: bool,
    start: Option<Measured>,
) -> ((f32, f32), Measured) {
    let lazy = splits != Splits::First;
    let mut limits = settings.limits.clone();
    for t in limits.tolerance.iter_mut() {
        *t *= PLAYER_GUARD;
    }
    let rest = skeleton.rest_pose();
    let rules = player.rules();
    // An earlier fit's measurement at these points, of the channels it accepted.
    let resumed = start
        .and_then(|last| {
            Remeasure::resume(
                last, skeleton, reference, &rest, rate, frames, &limits, rules,
            )
        })
        .filter(|m| m.drives_as(channels));
    let base_max = spec_joint_max(
        resumed.as_ref(),
        channels,
        skeleton,
        reference,
        &rest,
        rate,
        frames,
        &limits,
    );
    let allowed: Vec<f32> = (0..skeleton.len())
        .map(|j| limits.tolerance[j].max(base_max[j]) * (1.0 + 1e-4))
        .collect();
    let nlerp = rules.contains(&Rule::Nlerp);
    let mut chord = initial_chords(skeleton, &limits);
    let ancestry = crate::model::Ancestry::new(skeleton);
    if splits == Splits::WhereOverWide {
        for c in chord.iter_mut() {
            *c *= 2.0;
        }
    }
    // Chains split at their current chord already (the next fix halves it); the first
    // fit's split pass ran in `fit_players`.
    let mut split_yet = vec![!lazy; skeleton.len()];
    for c in channels.iter_mut() {
        if c.short_eligible(rate) {
            c.storage = Storage::Short;
        }
    }
    // Each later measurement recomputes only the joints below the channels that changed.
    let mut errors = match resumed {
        Some(mut errors) => {
            errors.update(channels);
            errors
        }
        None => Remeasure::new(
            channels, skeleton, reference, &rest, rate, frames, &limits, rules,
        ),
    };
    // Per rule, each joint's largest error (the reports are built once, at the end).
    let mut joint_max = errors.joint_max();
    for _ in 0..MAX_ROUNDS {
        let over: Vec<usize> = (0..skeleton.len())
            .filter(|&j| limits.evaluated[j] && worst(&joint_max, j) > allowed[j])
            .collect();
        if over.is_empty() {
            break;
        }
        let mut changed = false;
        let mut halved = vec![false; skeleton.len()];
        // Per channel, the key count and chord of its last chord split this round: a split
        // leaves every segment within its chord, so the same keys and chord split nothing
        // (a deep chain's ancestors are asked once per joint below them that is over).
        let mut split_with: Vec<Option<(usize, u32)>> = vec![None; channels.len()];
        // Likewise the short segments each channel was found to keep within its chord.
        let mut checked = vec![CheckedSegments::default(); channels.len()];
        for &j in &over {
            let by_rule = |r: Rule| {
                rules
                    .iter()
                    .position(|&x| x == r)
                    .map_or(0.0, |i| joint_max[i][j])
            };
            let mut fixed = false;
            if nlerp
                && by_rule(Rule::Nlerp) > allowed[j]
                && by_rule(Rule::Nlerp) > by_rule(Rule::Slerp)
            {
                // Where it is over, first: key intervals shorter than a quarter frame there
                // (which the chord splits below leave alone) are halved where nlerp leaves
                // slerp; only where none is, the chain's chord is halved everywhere.
                let over_at = errors.over_points(Rule::Nlerp, j, allowed[j]);
                for (c, checked) in channels.iter_mut().zip(checked.iter_mut()) {
                    if c.is_rotation() && ancestry.contains(c.joint, j) {
                        fixed |= c.split_short_segments_at(&over_at, chord[c.joint], checked);
                    }
                }
                for (c, done) in channels.iter_mut().zip(split_with.iter_mut()) {
                    if !fixed && c.is_rotation() && ancestry.contains(c.joint, j) {
                        if !halved[c.joint] {
                            halved[c.joint] = true;
                            if split_yet[c.joint] {
                                chord[c.joint] *= 0.5;
                            }
                            split_yet[c.joint] = true;
                        }
                        let asked = Some((c.ticks.len(), chord[c.joint].to_bits()));
                        if *done != asked {
                            fixed |= c.split_for_nlerp_at(chord[c.joint], false);
                            *done = Some((c.ticks.len(), chord[c.joint].to_bits()));
                        }
                    }
                }
            }
            if !fixed {
                for c in channels.iter_mut() {
                    if c.storage == Storage::Short && ancestry.contains(c.joint, j) {
                        c.storage = Storage::Float;
                        fixed = true;
                    }
                }
            }
            changed |= fixed;
        }
        if !changed {
            break;
        }
        errors.update(channels);
        joint_max = errors.joint_max();
    }
    if quat {
        fit_quat_filter(
            channels,
            skeleton,
            &mut errors,
            rate,
            &limits,
            &allowed,
            &joint_max,
        );
    }
    errors.update(channels);
    let reports = errors.reports();
    let max = reports
        .iter()
        .map(|e| e.samples.max.max(e.midpoints.map_or(0.0, |m| m.max)))
        .fold(0.0, f32::max);
    let ratio = reports
        .iter()
        .map(|e| {
            e.samples
                .worst_ratio
                .max(e.midpoints.map_or(0.0, |m| m.worst_ratio))
        })
        .fold(0.0, f32::max);
    ((max, ratio), errors.into_measured())
}

/// Each joint's largest error over `reference`'s points of `channels` as they are (as
/// stored) under the glTF spec (slerp): what the codec's own curves reach, which a fit
/// allows where it is over the tolerance. Read from `resumed` (an earlier fit's measurement
/// at these points) where it measures exactly these channels under [`Rule::Slerp`] (the
/// same arithmetic as [`measure`] on a [`Played`] clip, to the bit), measured otherwise.
#[allow(clippy::too_many_arguments)]
fn spec_joint_max(
    resumed: Option<&Remeasure>,
    channels: &[Channel],
    skeleton: &Skeleton,
    reference: &Reference,
    rest: &[Transform],
    rate: f32,
    frames: usize,
    limits: &JointLimits,
) -> Vec<f32> {
    let measured = || {
        let spec = Played::new(rest, channels, rate, frames);
        measure(skeleton, reference, &spec, limits, true).joint_max
    };
    let kept = resumed
        .filter(|m| m.accepted() == channels)
        .and_then(|m| m.joint_max_under(Rule::Slerp));
    match kept {
        Some(max) => {
            debug_assert_eq!(max, measured(), "the spec's errors, measured twice");
            max
        }
        None => measured(),
    }
}

/// Bits meshoptimizer's QUATERNION filter starts at when bits by lever do not hold; chains
/// over their limit get [`QUAT_STEP`] more, up to 16, then go back to SHORT.
const QUAT_START: u8 = 11;
const QUAT_STEP: u8 = 1;
/// Fewest bits any channel gets, and the shifts tried on the bits by lever (fewest first).
const QUAT_MIN: i32 = 6;
const QUAT_EXTRA: std::ops::RangeInclusive<i32> = -10..=4;
/// Measurements spent lowering single channels' bits after the shared choice holds.
const QUAT_DESCENT_MEASURES: usize = 160;

/// Per joint, the QUATERNION filter bits at which its own rounding (about 2.45 / 2^bits
/// radians at worst) moves its farthest marker below by about a quarter of that marker's
/// tolerance ([`initial_chords`] is a quarter of the rotation that moves it by the whole).
fn quat_bits_by_lever(skeleton: &Skeleton, limits: &JointLimits) -> Vec<u8> {
    initial_chords(skeleton, limits)
        .into_iter()
        .map(|chord| {
            if chord.is_finite() && chord > 0.0 {
                (2.45 / chord).log2().ceil().clamp(0.0, 16.0) as u8
            } else {
                0
            }
        })
        .collect()
}

/// `--meshopt` exports: SHORT rotations become what the QUATERNION filter decodes to, at as
/// few bits as keep every joint within its limit under every rule (chains over their limit
/// get more bits, then plain SHORT). `before` is each rule's joint maxima before; when no
/// choice holds, the channels are left as they were.
#[allow(clippy::too_many_arguments)]
fn fit_quat_filter(
    channels: &mut [Channel],
    skeleton: &Skeleton,
    errors: &mut Remeasure,
    rate: f32,
    limits: &JointLimits,
    allowed: &[f32],
    before: &[Vec<f32>],
) {
    let was: Vec<Storage> = channels.iter().map(|c| c.storage).collect();
    let over_before: Vec<bool> = (0..skeleton.len())
        .map(|j| worst(before, j) > allowed[j])
        .collect();
    let over = |joint_max: &[Vec<f32>]| -> Vec<usize> {
        (0..skeleton.len())
            .filter(|&j| limits.evaluated[j] && !over_before[j] && worst(joint_max, j) > allowed[j])
            .collect()
    };
    // Bits by lever: a joint whose farthest marker below is far (relative to its
    // tolerance) gets more bits than a leaf; all shifted together.
    let own = quat_bits_by_lever(skeleton, limits);
    let filtered = |c: &Channel| c.interp == super::channels::Interp::Linear;
    let shifted = |j: usize, extra: i32| (i32::from(own[j]) + extra).clamp(QUAT_MIN, 16) as u8;
    let measure_over = |errors: &mut Remeasure, channels: &[Channel]| {
        errors.update(channels);
        over(&errors.joint_max())
    };
    let set_bits = |channels: &mut [Channel], bits: &dyn Fn(usize) -> u8| {
        for (c, w) in channels.iter_mut().zip(&was) {
            if *w == Storage::Short && filtered(c) {
                c.storage = Storage::Quat(bits(c.joint));
            }
        }
    };
    // Chains over their limit raised a step at a time (then SHORT) until none is over.
    let settle = |errors: &mut Remeasure, channels: &mut [Channel]| -> bool {
        for _ in 0..=(16 - QUAT_MIN) as usize + 2 {
            let over = measure_over(errors, channels);
            if over.is_empty() {
                return true;
            }
            let above = crate::model::at_or_above(skeleton, &over);
            for c in channels.iter_mut() {
                if let Storage::Quat(b) = c.storage
                    && above[c.joint]
                {
                    c.storage = if b >= 16 {
                        Storage::Short
                    } else {
                        Storage::Quat(b + QUAT_STEP)
                    };
                }
            }
        }
        false
    };
    // (a) The fewest bits by lever at which every joint holds, or only the joints that do
    // not hold at the most bits are over (bisection over the shift: the error grows as bits
    // drop), then those chains raised. (b) Every channel at QUAT_START, chains raised.
    // The one that stores smaller wins.
    let (mut lo, mut hi) = (*QUAT_EXTRA.start(), *QUAT_EXTRA.end());
    set_bits(channels, &|j| shifted(j, hi));
    let stubborn = measure_over(errors, channels);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        set_bits(channels, &|j| shifted(j, mid));
        if measure_over(errors, channels)
            .iter()
            .all(|j| stubborn.contains(j))
        {
            hi = mid;
        } else {
            lo = mid;
        }
    }
    set_bits(channels, &|j| shifted(j, hi));
    set_bits(channels, &|j| shifted(j, hi));
    let by_lever = settle(errors, channels).then(|| channels.to_vec());
    set_bits(channels, &|_| QUAT_START);
    let uniform = settle(errors, channels).then(|| channels.to_vec());
    let best = [by_lever, uniform]
        .into_iter()
        .flatten()
        .min_by_key(|c| super::layout::stored_bytes(c, rate));
    if let Some(settled) = best {
        channels.clone_from_slice(&settled);
        // Then channels down a bit at a time while everything holds, leaves first, in
        // rounds (a round lowers each channel at most once) until none goes lower.
        let mut order: Vec<usize> = (0..channels.len()).collect();
        order.sort_by_key(|&i| std::cmp::Reverse(skeleton.depth_of(channels[i].joint)));
        // Each step re-measures only the lowered channel's subtree (every other joint
        // keeps its error, within its limit), stopping at the first joint over.
        let counts: Vec<bool> = (0..skeleton.len())
            .map(|j| limits.evaluated[j] && !over_before[j])
            .collect();
        errors.update(channels);
        let mut budget = QUAT_DESCENT_MEASURES;
        let mut stuck = vec![false; channels.len()];
        while budget > 0 && stuck.iter().any(|s| !s) {
            for &i in &order {
                let Storage::Quat(b) = channels[i].storage else {
                    stuck[i] = true;
                    continue;
                };
                if stuck[i] || i32::from(b) <= QUAT_MIN || budget == 0 {
                    stuck[i] = true;
                    continue;
                }
                budget -= 1;
                channels[i].storage = Storage::Quat(b - 1);
                if !errors.apply_if_holds(i, channels, allowed, &counts) {
                    channels[i].storage = Storage::Quat(b);
                    stuck[i] = true;
                }
            }
        }
        return;
    }
    // Did not settle: the SHORT layout that was verified.
    for (c, s) in channels.iter_mut().zip(was) {
        c.storage = s;
    }
}

/// Joint `j`'s largest error over the rules (`joint_max`: per rule, per joint).
fn worst(joint_max: &[Vec<f32>], j: usize) -> f32 {
    joint_max.iter().map(|m| m[j]).fold(0.0, f32::max)
}

/// Per joint, the quaternion chord by which nlerp may leave slerp's path: half of the
/// rotation that moves some marker at or below the joint by its tolerance at the rest pose
/// (a rotation of angle a moves a point at distance r by at most a * r; a quaternion chord
/// is about half the rotation angle). The fit loop halves it where that is not enough.
pub(super) fn initial_chords(skeleton: &Skeleton, limits: &JointLimits) -> Vec<f32> {
    let n = skeleton.len();
    let mut obj = vec![DAffine3::IDENTITY; n];
    local_to_object_f64(skeleton, &skeleton.rest_pose(), &mut obj);
    let scale: Vec<f64> = obj
        .iter()
        .map(|m| {
            (m.matrix3.x_axis.length() + m.matrix3.y_axis.length() + m.matrix3.z_axis.length())
                / 3.0
        })
        .collect();
    super::marker_angles::smallest_angles(skeleton, limits, &obj, &scale)
        .into_iter()
        .map(|angle| {
            // Half the budget for nlerp; the chord is about half the rotation angle.
            if angle.is_finite() {
                (0.5 * angle * 0.5) as f32
            } else {
                f32::INFINITY
            }
        })
        .collect()
}

/// Per joint, `factor` times its tolerance as a local translation error (in its parent's
/// space: the tolerance divided by [`parent_scales`]).
pub fn tolerance_in_parent_space(
    skeleton: &Skeleton,
    limits: &JointLimits,
    factor: f32,
) -> Vec<f32> {
    limits
        .tolerance
        .iter()
        .zip(parent_scales(skeleton))
        .map(|(t, s)| t * factor / s.max(f32::MIN_POSITIVE))
        .collect()
}

/// Per joint, the largest axis scale of its parent's object transform at the rest pose:
/// a local translation error `e` moves the joint by up to `e` times it (1 for a root).
pub fn parent_scales(skeleton: &Skeleton) -> Vec<f32> {
    let mut obj = vec![DAffine3::IDENTITY; skeleton.len()];
    local_to_object_f64(skeleton, &skeleton.rest_pose(), &mut obj);
    skeleton
        .joints
        .iter()
        .map(|j| {
            j.parent.map_or(1.0, |p| {
                let m = obj[p].matrix3;
                m.x_axis
                    .length()
                    .max(m.y_axis.length())
                    .max(m.z_axis.length()) as f32
            })
        })
        .collect()
}

/// A raw clip as an nlerp player plays its samples: rotations lerped on the shorter arc
/// and normalized, translation and scale lerped.
pub struct NlerpClip<'a>(pub &'a Clip);

impl PoseSource for NlerpClip<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        let clip = self.0;
        let (i0, i1, u) = clip.neighbours(frame);
        for (o, t) in out.iter_mut().zip(&clip.tracks) {
            let a = t.at(i0);
            if u <= 0.0 || i0 == i1 {
                *o = a;
                continue;
            }
            let b = t.at(i1);
            let (qa, qb) = (Vec4::from(a.rotation), Vec4::from(b.rotation));
            let qb = if qa.dot(qb) < 0.0 { -qb } else { qb };
            *o = Transform::new(
                a.translation.lerp(b.translation, u),
                Quat::from_vec4(qa.lerp(qb, u)).normalize(),
                a.scale.lerp(b.scale, u),
            );
        }
    }
}

/// Per joint, how far the source itself moves when its samples are played by nlerp
/// instead of slerp (at the quarter points between samples): error no key on the sample
/// grid can remove, so the codec's budget leaves room for it. Zero for players without
/// nlerp.
pub fn inherent_nlerp_error(
    skeleton: &Skeleton,
    raw: &Clip,
    limits: &JointLimits,
    player: Player,
) -> Vec<f32> {
    if !player.rules().contains(&Rule::Nlerp) {
        return vec![0.0; skeleton.len()];
    }
    let reference = Reference::with_inner_points(skeleton, raw, raw.frame_count, 3);
    measure(skeleton, &reference, &NlerpClip(raw), limits, true).joint_max
}
