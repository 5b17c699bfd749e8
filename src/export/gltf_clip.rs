//! One clip ready for a compressed glTF: what an export targets ([`GltfOptions`]), which
//! properties the source animations key ([`Keyed`], [`FileKeyed`]), and the clip's channels
//! encoded, laid out and verified under every rule of the target player ([`GltfClip`],
//! [`encode_for_gltf`]). The per-clip layer below the memo ([`super::clip_memo`]), the
//! clip-switch rounds ([`super::clip_switch`]) and the whole-file writer
//! ([`super::gltf_compressed`]).

use glam::Vec4;

use super::channels::{Channel, Interp, Player, Storage, TICKS, channels_of, tick_frame};
use super::remeasure::Measured;
use super::verify::Splits;
use crate::codec::CompressedClip;
use crate::metric::Reference;
use crate::model::Skeleton;
use crate::settings::{Effort, Method, Resolved};

/// What a glTF export targets.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GltfOptions {
    /// The players the export is verified for.
    pub player: Player,
    /// Drop channels that hold the rest pose even where the source animated the property
    /// (smaller, but players that keep the previous clip's value on un-keyed bones show it).
    pub drop_rest_channels: bool,
    /// Byte-compress the animation data with `EXT_meshopt_compression` (lossless), and how
    /// the uncompressed fallback is handled (see [`super::meshopt`]).
    pub meshopt: Option<super::meshopt::Fallback>,
}

/// Which properties of each skeleton joint (translation, rotation, scale) the source drives:
/// this clip's animation, and the file's other animations.
#[derive(Clone, Copy, Debug)]
pub struct Keyed<'a> {
    /// Driven by this clip's animation: these, and only these, get channels.
    pub clip: &'a [[bool; 3]],
    /// Driven by some other animation of the file.
    pub others: &'a [[bool; 3]],
    /// Driven by every other animation of the file (true for a single animation): a player
    /// switching from this clip never holds this clip's last key there.
    pub every_other: &'a [[bool; 3]],
}

/// The properties each animation of a file drives, and what the others drive.
#[derive(Clone, Debug)]
pub struct FileKeyed {
    clips: Vec<Vec<[bool; 3]>>,
    any_other: Vec<Vec<[bool; 3]>>,
    every_other: Vec<Vec<[bool; 3]>>,
}

impl FileKeyed {
    /// From each animation's keyed properties (see [`keyed_channels`]).
    pub fn new(clips: Vec<Vec<[bool; 3]>>) -> Self {
        let n = clips.iter().map(Vec::len).max().unwrap_or(0);
        let fold = |i: usize, all: bool| -> Vec<[bool; 3]> {
            (0..n)
                .map(|j| {
                    std::array::from_fn(|k| {
                        let mut others = clips
                            .iter()
                            .enumerate()
                            .filter(|(a, _)| *a != i)
                            .map(|(_, keyed)| keyed.get(j).is_some_and(|x| x[k]));
                        if all {
                            others.all(|x| x)
                        } else {
                            others.any(|x| x)
                        }
                    })
                })
                .collect()
        };
        let any_other = (0..clips.len()).map(|i| fold(i, false)).collect();
        let every_other = (0..clips.len()).map(|i| fold(i, true)).collect();
        Self {
            clips,
            any_other,
            every_other,
        }
    }

    /// Animation `i`'s view.
    pub fn of(&self, i: usize) -> Keyed<'_> {
        Keyed {
            clip: &self.clips[i],
            others: &self.any_other[i],
            every_other: &self.every_other[i],
        }
    }

    /// Each animation's keyed properties.
    pub fn clips(&self) -> &[Vec<[bool; 3]>] {
        &self.clips
    }
}

/// One clip ready for glTF: the codec's result and the channels that will be written
/// (time grid anchored, rotation storage chosen and verified).
#[derive(Clone, Debug)]
pub struct GltfClip {
    pub compressed: CompressedClip,
    pub channels: Vec<Channel>,
    /// Largest visual error of the channels as a glTF player evaluates them (samples and
    /// midpoints), and the worst error / tolerance ratio.
    pub max_error: f32,
    pub worst_ratio: f32,
    /// The tolerance scale the codec ran at (1 = the user's tolerance).
    pub tolerance_factor: f32,
    /// What the layout choice minimized (see [`Self::cost`]).
    pub(super) cost: usize,
    /// The last fit's measurement of `channels`, for the next fit to start from.
    pub(super) last_fit: LastFit,
}

/// A [`GltfClip`]'s last fit's measurement of its channels ([`Measured`]), for the next
/// fit of the clip to start from ([`GltfClip::check_between`]) instead of measuring every
/// point afresh; the same errors either way. Kept only at `fast` effort, where a clip fits
/// two layouts (each measurement holds every rule's poses at every point: tens of MB on a
/// long clip); a clone does not carry it (its next fit measures afresh).
#[derive(Default)]
pub(super) struct LastFit(pub(super) Option<Measured>);

impl Clone for LastFit {
    fn clone(&self) -> Self {
        Self(None)
    }
}

impl std::fmt::Debug for LastFit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() {
            "LastFit(Some)"
        } else {
            "LastFit(None)"
        })
    }
}

impl GltfClip {
    /// Prepares a compressed clip for writing, measured against `raw` with `settings` under
    /// every rule of `options.player`. `keyed` says which properties the source animations
    /// drive; `None` when unknown (then rest tracks get no channel and every other track one).
    /// `reference` is `raw`'s [`super::verify::clip_reference`].
    pub fn new(
        skeleton: &Skeleton,
        raw: &crate::model::Clip,
        reference: &Reference,
        compressed: CompressedClip,
        settings: &Resolved,
        options: &GltfOptions,
        keyed: Option<Keyed<'_>>,
    ) -> Self {
        let mut channels = channels_of(&compressed);
        if let Some(keyed) = keyed {
            channels.retain(|c| keyed.clip.get(c.joint).is_some_and(|k| k[c.kind]));
            if !options.drop_rest_channels {
                add_rest_channels(&mut channels, skeleton, keyed);
            }
        }
        if !options.player.allows_cubic() {
            for c in channels.iter_mut() {
                *c = c.to_linear();
            }
        }
        if let Some(keyed) = keyed {
            for c in channels.iter_mut() {
                let every = keyed.every_other.get(c.joint).is_some_and(|k| k[c.kind]);
                c.held_end = !every;
            }
        }
        // Without the rate anchor as well, where the last frame stays keyed (the duration
        // holds; an importer then infers the rate from the keys as they are).
        let mut unanchored = channels.clone();
        anchor_time_grid(&mut channels, compressed.frame_count);
        let last = compressed.frame_count.saturating_sub(1) as u32 * TICKS;
        let unanchored = (unanchored != channels
            && unanchored.iter().any(|c| c.ticks.last() == Some(&last)))
        .then(|| {
            exact_end_keys(&mut unanchored, raw);
            unanchored
        });
        exact_end_keys(&mut channels, raw);
        let fast = settings.effort == Effort::Fast;
        let fit = |channels: &mut Vec<Channel>, splits: Splits, last: &mut Option<Measured>| {
            fit_layout(
                channels,
                skeleton,
                raw,
                reference,
                &compressed,
                settings,
                options,
                splits,
                super::verify::SEARCH_ROUNDS,
                fast.then_some(last),
            )
        };
        // Key layout by real size: the channels as the codec keyed them, or (where cheaper)
        // at every frame on the shared grid; both verified, the smaller kept. With meshopt,
        // "smaller" is the compressed size, and every channel on the grid is tried as well.
        let rate = compressed.sample_rate;
        let cost = |c: &[Channel]| match options.meshopt {
            Some(_) => super::layout::stored_bytes(c, rate),
            None => super::layout::bytes(c),
        };
        let mut dense = channels.clone();
        let densified = super::layout::densify(&mut dense, compressed.frame_count);
        let mut all_dense = channels.clone();
        let all_densified = options.meshopt.is_some()
            && super::layout::densify_all(&mut all_dense, compressed.frame_count)
            && all_dense != dense;
        let mut source = channels.clone();
        let sourced = super::layout::source_frames(&mut source, raw, false);
        let mut dense_source = dense.clone();
        let dense_sourced = densified && super::layout::source_frames(&mut dense_source, raw, true);
        // Fitted below: the codec's keys with wide segments split first, then the others.
        // Each layout is also tried with nlerp splits only where measured over (sparse keys
        // far apart often stay within tolerance under nlerp: SimpleSkin), the codec's keys
        // also with the whole rotation budget for the first split.
        // At `fast` effort (the edit loop's export) only the codec's keys as they are and
        // the source's frames, each verified like every layout. At the other efforts,
        // without meshopt, two layouts are not tried (session 19, docs/EXPORT.md "Export
        // speed"): the dense channels with splits only where measured over (the same
        // channels split first are tried), and the source's frames where the source's
        // frames on the dense channels are tried; on the 11 shared sources neither was ever
        // the only smallest. With meshopt (stored bytes) they are (CesiumMan needs them).
        let every = options.meshopt.is_some();
        let codec_keys = std::mem::take(&mut channels);
        let mut tries = vec![(codec_keys.clone(), Splits::First)];
        if !fast {
            tries.extend([
                (codec_keys.clone(), Splits::WhereOver),
                (codec_keys, Splits::WhereOverWide),
            ]);
            if let Some(keys) = unanchored {
                tries.push((keys, Splits::WhereOverWide));
            }
            if densified && every {
                tries.push((dense.clone(), Splits::WhereOver));
            }
            if densified {
                tries.push((dense, Splits::First));
            }
            if all_densified {
                tries.extend([
                    (all_dense.clone(), Splits::WhereOver),
                    (all_dense, Splits::First),
                ]);
            }
        }
        let dense_sourced = dense_sourced && !fast;
        if sourced && (fast || every || !dense_sourced) {
            tries.push((source, Splits::WhereOver));
        }
        if dense_sourced {
            tries.push((dense_source, Splits::WhereOver));
        }
        // The fits are independent: run at once (a save that changed one long clip leaves
        // it alone to encode), then chosen in order, as one after the other would.
        use rayon::prelude::*;
        type Fitted = (Vec<Channel>, f32, f32, usize, Option<Measured>);
        let fitted: Vec<Fitted> = tries
            .into_par_iter()
            .map(|(mut candidate, splits)| {
                let mut last = None;
                let (e, r) = fit(&mut candidate, splits, &mut last);
                let c = cost(&candidate);
                (candidate, e, r, c, last)
            })
            .collect();
        let mut fitted = fitted.into_iter();
        let (mut channels, mut max_error, mut worst_ratio, mut best_cost, mut last) =
            fitted.next().expect("the codec's keys are always tried");
        for (candidate, e, r, c, measured) in fitted {
            // Within tolerance beats over it; then the smaller wins among those no worse.
            let better = if (r <= 1.0) != (worst_ratio <= 1.0) {
                r <= 1.0
            } else {
                r <= worst_ratio.max(1.0) * (1.0 + 1e-4) && c < best_cost
            };
            if better {
                (channels, max_error, worst_ratio, best_cost, last) =
                    (candidate, e, r, c, measured);
            }
        }
        Self {
            compressed,
            channels,
            max_error,
            worst_ratio,
            tolerance_factor: 1.0,
            cost: best_cost,
            last_fit: LastFit(last),
        }
    }

    /// Bytes the channels' accessors will take (shared time accessors counted once).
    pub fn bytes(&self) -> usize {
        super::layout::bytes(&self.channels)
    }

    /// What the layout choice minimized: [`Self::bytes`], or with meshopt the estimated
    /// compressed size ([`super::layout::stored_bytes`]).
    pub fn cost(&self) -> usize {
        self.cost
    }
}

/// Verifies `channels` for the player of `options` (nlerp-safe keys, SHORT or QUATERNION
/// storage where it holds; with meshopt, translations first rounded to a power-of-two step
/// well inside the tolerance, in the parent's space: its scale divides the step). Returns
/// the largest error and the worst error / tolerance ratio. `rounds`: at most that many fits
/// with the points of the key intervals the fit's own splits make
/// ([`super::verify::fit_players`]; one while layouts are compared, more in
/// [`super::between`] at the end). `reference` is `raw`'s [`super::verify::clip_reference`].
/// `last`: see [`super::verify::fit_players`]'s `carry`.
#[allow(clippy::too_many_arguments)]
pub(super) fn fit_layout(
    channels: &mut [Channel],
    skeleton: &Skeleton,
    raw: &crate::model::Clip,
    reference: &Reference,
    compressed: &CompressedClip,
    settings: &Resolved,
    options: &GltfOptions,
    splits: Splits,
    rounds: usize,
    last: Option<&mut Option<Measured>>,
) -> (f32, f32) {
    // Keys between frames where a CUBICSPLINE source bulges away from its frames' chord.
    let allowance = super::bulge::allowance(skeleton, &settings.limits);
    super::bulge::key_cubic_bulges(channels, raw, &allowance);
    if options.meshopt.is_some() {
        let step =
            super::verify::tolerance_in_parent_space(skeleton, &settings.limits, TRANSLATION_STEP);
        super::layout::round_translations(channels, &step);
    }
    super::verify::fit_players(
        channels,
        skeleton,
        raw,
        reference,
        compressed.sample_rate,
        compressed.frame_count,
        settings,
        options.player,
        splits,
        options.meshopt.is_some(),
        rounds,
        last,
    )
}

pub use super::verify::PLAYER_GUARD;

/// `--meshopt` exports: translation values are rounded to a power-of-two step at most this
/// fraction of the joint's tolerance (moving it by at most ~4% of it).
pub const TRANSLATION_STEP: f32 = 1.0 / 32.0;

/// Tolerance scales tried by [`encode_for_gltf`]: a tighter codec run leaves room for SHORT
/// rotations, which halve a rotation key.
pub const TOLERANCE_FACTORS: [f32; 3] = [1.0, 0.8, 0.6];

/// One clip to encode for glTF: what every encoding of it reads.
#[derive(Clone, Copy)]
pub struct ClipToEncode<'a> {
    pub skeleton: &'a Skeleton,
    pub raw: &'a crate::model::Clip,
    /// The tolerances and codec settings it is encoded and verified with.
    pub settings: &'a Resolved,
    pub control: &'a crate::codec::Control,
    pub options: &'a GltfOptions,
    /// The properties the file animates, when the clip is one of several.
    pub keyed: Option<Keyed<'a>>,
}

/// Compresses `raw` for glTF: runs the codec at the user's tolerance and at tighter ones
/// ([`TOLERANCE_FACTORS`]; at `fast` effort the user's alone), prepares each for glTF and
/// keeps the smallest whose error is no worse than the first run's (which meets the
/// tolerance whenever the codec can).
pub fn encode_for_gltf(
    skeleton: &Skeleton,
    raw: &crate::model::Clip,
    settings: &Resolved,
    control: &crate::codec::Control,
    options: &GltfOptions,
    keyed: Option<Keyed<'_>>,
) -> Result<GltfClip, crate::codec::CodecError> {
    let clip = ClipToEncode {
        skeleton,
        raw,
        settings,
        control,
        options,
        keyed,
    };
    encode_for_gltf_at(&clip, None)
}

/// [`encode_for_gltf`], running the codec only at the tolerance factor `factor` where given
/// (an earlier encoding's [`GltfClip::tolerance_factor`], for a re-encoding of the same clip
/// at tightened tolerances, [`super::clip_switch`]): one codec run and its layouts instead
/// of every factor's. Every factor is tried when that one does not hold the tolerance, and
/// every result is verified the same way.
pub fn encode_for_gltf_at(
    clip: &ClipToEncode,
    factor: Option<f32>,
) -> Result<GltfClip, crate::codec::CodecError> {
    // Every fit of every factor checks the same samples and quarter points first.
    let reference = super::verify::clip_reference(clip.skeleton, clip.raw);
    let at = |factor: f32| encode_at(clip, &reference, factor);
    let kept = factor.map(at).transpose()?.filter(|c| c.worst_ratio <= 1.0);
    let mut best = match kept {
        Some(c) => c,
        None => search_factors(clip.settings, &at)?,
    };
    let (skeleton, raw, settings, options) = (clip.skeleton, clip.raw, clip.settings, clip.options);
    best.prune_keys(skeleton, raw, &reference, settings, options);
    best.check_between(skeleton, raw, &reference, settings, options);
    Ok(best)
}

/// Every tolerance factor of the effort: the smallest encoding within tolerance (or,
/// failing that, the least over), chosen in order.
fn search_factors(
    settings: &Resolved,
    at: &(dyn Fn(f32) -> Result<GltfClip, crate::codec::CodecError> + Sync),
) -> Result<GltfClip, crate::codec::CodecError> {
    use rayon::prelude::*;
    // The factors' runs are independent: run at once (a save that changed one clip has
    // only that clip to encode, which would otherwise leave a core idle), chosen in order.
    let factors = match settings.effort {
        // The edit loop's export: the user's tolerance only.
        Effort::Fast => &TOLERANCE_FACTORS[..1],
        Effort::Default | Effort::Max => &TOLERANCE_FACTORS[..],
    };
    let candidates: Vec<Result<GltfClip, crate::codec::CodecError>> =
        factors.par_iter().map(|&factor| at(factor)).collect();
    let mut best: Option<GltfClip> = None;
    for candidate in candidates {
        let candidate = candidate?;
        best = match best {
            None => Some(candidate),
            Some(b) => {
                // A candidate within tolerance beats one that is not; among those within
                // (or, failing that, no worse), the smaller wins.
                let limit = b.worst_ratio.max(1.0) * (1.0 + 1e-4);
                let fixes = b.worst_ratio > 1.0 && candidate.worst_ratio <= 1.0;
                if fixes || (candidate.worst_ratio <= limit && candidate.cost() < b.cost()) {
                    Some(candidate)
                } else {
                    Some(b)
                }
            }
        };
    }
    Ok(best.expect("at least one factor"))
}

/// The codec at `factor` times the tolerance, prepared for glTF ([`GltfClip::new`]).
fn encode_at(
    clip: &ClipToEncode,
    reference: &Reference,
    factor: f32,
) -> Result<GltfClip, crate::codec::CodecError> {
    let ClipToEncode {
        skeleton,
        raw,
        settings,
        control,
        options,
        keyed,
    } = *clip;
    let mut tighter = settings.clone();
    for t in tighter.limits.tolerance.iter_mut() {
        *t *= factor;
    }
    if !options.player.allows_cubic() && matches!(tighter.method, Method::CatmullRom | Method::Auto)
    {
        // Players that ignore tangents see a cubic track's keys joined by lines.
        tighter.method = Method::Linear;
    }
    let cc = crate::codec::compress(skeleton, raw, &tighter, control)?;
    let mut candidate = GltfClip::new(skeleton, raw, reference, cc, settings, options, keyed);
    candidate.tolerance_factor = factor;
    Ok(candidate)
}

/// Sets the last key of every multi-key LINEAR channel to the source's own value at that
/// frame: a player switching clips holds it on nodes the next clip does not key, where the
/// codec's error compensation against this clip's parents no longer applies.
fn exact_end_keys(channels: &mut [Channel], raw: &crate::model::Clip) {
    for c in channels.iter_mut() {
        let n = c.ticks.len();
        if n < 2 || c.interp != Interp::Linear || c.ticks[n - 1] % TICKS != 0 {
            continue;
        }
        let frame = (c.ticks[n - 1] / TICKS) as usize;
        let Some(track) = raw.tracks.get(c.joint) else {
            continue;
        };
        if frame >= raw.frame_count {
            continue;
        }
        let t = track.at(frame);
        let v = match c.kind {
            0 => t.translation.extend(0.0),
            1 => {
                let q = Vec4::from(t.rotation);
                if q.dot(c.values[n - 2]) < 0.0 { -q } else { q }
            }
            _ => t.scale.extend(0.0),
        };
        c.values[n - 1] = v;
    }
}

/// One-key channels holding the rest value for every property the source animated that
/// the codec found equal to the rest pose, so that players which keep the previous clip's
/// value on un-keyed nodes still show this clip's pose. That previous clip may come from
/// another file of the same rig (libraries split across files, one clip per file), so the
/// channel is kept whether or not another animation of this file drives the property.
fn add_rest_channels(channels: &mut Vec<Channel>, skeleton: &Skeleton, keyed: Keyed<'_>) {
    let mut have = vec![[false; 3]; skeleton.len()];
    for c in channels.iter() {
        have[c.joint][c.kind] = true;
    }
    for (j, joint) in skeleton.joints.iter().enumerate() {
        for kind in 0..3 {
            let keyed_here = keyed.clip.get(j).is_some_and(|k| k[kind]);
            if !keyed_here || have[j][kind] {
                continue;
            }
            let r = joint.rest;
            let value = match kind {
                0 => r.translation.extend(0.0),
                1 => Vec4::from(r.rotation),
                _ => r.scale.extend(0.0),
            };
            channels.push(Channel {
                joint: j,
                kind,
                interp: Interp::Linear,
                ticks: vec![0],
                values: vec![value],
                tangents: vec![],
                storage: Storage::Float,
                held_end: true,
            });
        }
    }
    channels.sort_by_key(|c| (c.joint, c.kind));
}

/// Makes sure the key times let an importer recover the clip's rate and length: some
/// channel must hold two consecutive frames and some the last frame. Where none does, a
/// key is inserted that leaves the curve unchanged (a split at frame 1), or a constant
/// channel is held on a 3-key line. Never adds a channel: with none, nothing is done.
fn anchor_time_grid(channels: &mut [Channel], frame_count: usize) {
    let last = frame_count.saturating_sub(1) as u32;
    if last == 0 {
        return;
    }
    let consecutive = channels
        .iter()
        .any(|c| c.ticks.windows(2).any(|w| w[1] == w[0] + TICKS));
    let has_last = channels
        .iter()
        .any(|c| c.ticks.last() == Some(&(last * TICKS)));
    if consecutive && has_last {
        return;
    }
    let best = channels
        .iter()
        .enumerate()
        .filter(|(_, c)| c.ticks.len() >= 2)
        .max_by_key(|(_, c)| c.ticks.len())
        .map(|(i, _)| i);
    match best {
        Some(i) if !consecutive && has_last => split_at(&mut channels[i], 1),
        _ => {
            // Only constants: hold one of them on a 3-key line.
            let Some(c) = channels.iter_mut().find(|c| c.ticks.len() == 1) else {
                return;
            };
            let n = if last == 1 { 2 } else { 3 };
            c.ticks = if last == 1 {
                vec![0, TICKS]
            } else {
                vec![0, TICKS, last * TICKS]
            };
            c.values = vec![c.values[0]; n];
            c.interp = Interp::Linear;
            c.tangents.clear();
        }
    }
}

/// Inserts a key at `frame` that reproduces the curve exactly (a linear segment's point, or
/// a cubic's value and derivative).
fn split_at(c: &mut Channel, frame: u32) {
    let tick = frame * TICKS;
    let Err(pos) = c.ticks.binary_search(&tick) else {
        return;
    };
    if pos == 0 || pos == c.ticks.len() {
        return;
    }
    let (f0, f1) = (tick_frame(c.ticks[pos - 1]), tick_frame(c.ticks[pos]));
    let dt = f1 - f0;
    let u = (frame as f32 - f0) / dt;
    match c.interp {
        Interp::Linear => {
            let v = c.sample(frame as f32);
            c.values.insert(pos, v);
        }
        Interp::CubicSpline => {
            let (p0, p1) = (c.values[pos - 1], c.values[pos]);
            let (m0, m1) = (c.tangents[pos - 1] * dt, c.tangents[pos] * dt);
            let (u2, u3) = (u * u, u * u * u);
            let v = p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
                + m0 * (u3 - 2.0 * u2 + u)
                + p1 * (-2.0 * u3 + 3.0 * u2)
                + m1 * (u3 - u2);
            let d = p0 * (6.0 * u2 - 6.0 * u)
                + m0 * (3.0 * u2 - 4.0 * u + 1.0)
                + p1 * (-6.0 * u2 + 6.0 * u)
                + m1 * (3.0 * u2 - 2.0 * u);
            c.values.insert(pos, v);
            c.tangents.insert(pos, d / dt);
        }
    }
    c.ticks.insert(pos, tick);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn constant(joint: usize, kind: usize) -> Channel {
        Channel {
            joint,
            kind,
            interp: Interp::Linear,
            ticks: vec![0],
            values: vec![Vec4::W],
            tangents: vec![],
            storage: Storage::Float,
            held_end: true,
        }
    }

    #[test]
    fn anchoring_never_adds_a_channel() {
        // A static clip: only one-key channels; one of them is held on a 3-key line.
        let mut channels = vec![constant(3, 1), constant(5, 0)];
        anchor_time_grid(&mut channels, 10);
        assert_eq!(channels.len(), 2);
        assert_eq!(channels[0].ticks, vec![0, TICKS, 9 * TICKS]);
        assert!(channels[0].values.iter().all(|&v| v == Vec4::W));
        assert_eq!((channels[1].joint, channels[1].ticks.len()), (5, 1));
        // No channel at all (the source drove nothing on the skeleton): nothing is added.
        let mut none: Vec<Channel> = Vec::new();
        anchor_time_grid(&mut none, 10);
        assert!(none.is_empty());
    }

    #[test]
    fn rest_channels_only_where_the_source_keyed() {
        let skeleton = Skeleton::new(vec![
            crate::model::Joint::new("a", None, crate::model::Transform::IDENTITY),
            crate::model::Joint::new("b", Some(0), crate::model::Transform::IDENTITY),
        ])
        .unwrap();
        // b's scale is driven by another clip, its translation only by this one: both keep
        // a rest channel (a clip of another file may drive either); a's translation, which
        // this clip does not key, gets none.
        let clip = vec![[false, true, false], [true, false, true]];
        let file = FileKeyed::new(vec![clip, vec![[false; 3], [false, false, true]]]);
        let keyed = file.of(0);
        assert_eq!(keyed.others, &[[false; 3], [false, false, true]]);
        assert_eq!(keyed.every_other, &[[false; 3], [false, false, true]]);
        let mut channels = vec![constant(0, 1)];
        add_rest_channels(&mut channels, &skeleton, keyed);
        let targets: Vec<(usize, usize)> = channels.iter().map(|c| (c.joint, c.kind)).collect();
        assert_eq!(targets, vec![(0, 1), (1, 0), (1, 2)]);
        assert!(channels[1..].iter().all(|c| c.ticks == vec![0]));
    }

    #[test]
    fn a_single_clip_keeps_rest_channels() {
        let skeleton = Skeleton::new(vec![crate::model::Joint::new(
            "a",
            None,
            crate::model::Transform::IDENTITY,
        )])
        .unwrap();
        let file = FileKeyed::new(vec![vec![[true, true, true]]]);
        let keyed = file.of(0);
        assert_eq!(
            keyed.every_other,
            &[[true; 3]],
            "no other clip holds its end"
        );
        // A clip of another file for the same rig may leave these properties elsewhere.
        let mut channels = Vec::new();
        add_rest_channels(&mut channels, &skeleton, keyed);
        let targets: Vec<(usize, usize)> = channels.iter().map(|c| (c.joint, c.kind)).collect();
        assert_eq!(targets, vec![(0, 0), (0, 1), (0, 2)]);
    }
}
