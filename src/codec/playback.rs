//! A clip's playback prepared for compression and reported after it: seamless loops and
//! root motion (docs/COMPRESSION.md, "Loops and root motion").
//!
//! A looping clip plays its last frame and then its first. When the source's last frame
//! already returns to its first (within every joint's tolerance: a cycle exported with the
//! first frame repeated), the wrap is that shared frame. Otherwise the first frame is
//! appended as a new last frame before compression, so the segment from the last frame to
//! the first — and its midpoint — is measured like every other segment: playback across
//! the wrap holds the tolerance. With root motion, the appended frame carries the motion
//! joint one cycle on (the cycle's travel extrapolated by its last frame's step), and the
//! loop test ignores the motion joint's own travel.
//!
//! An additive clip stores its own keys, but its error is measured on what players show:
//! the base pose with the additive applied (ACL's rule), at every sample and midpoint
//! ([`Layer`], [`Layered`]; the runtime's `compose`, so measured bit for bit as applied).

use std::borrow::Cow;

use glam::{DAffine3, Quat, Vec3};
use serde::Serialize;
use skelpack_runtime::additive::{compose, identity};
use skelpack_runtime::meta::AdditiveMode;
use skelpack_runtime::motion::Rigid;

use super::compressed::CompressedClip;
use super::runtime::{to_joint_pose, to_transform};
use crate::metric::{ErrorReport, JointLimits, PoseSource, joint_error};
use crate::model::playback::{Additive, AdditiveBase, Playback, RootMotion};
use crate::model::{Clip, Skeleton, StoredScalarTrack, Transform, local_to_object_f64};
use crate::settings::Resolved;

/// Cycles over which a report states the root motion's accumulated error.
pub const ROOT_MOTION_CYCLES: u32 = 100;

/// An additive clip's base and mode: what its keys are applied on. The base is one pose
/// (the rest pose, a frame of a clip) or a clip's frames, played in sync: frame `f` of the
/// additive on frame `f` of the base (clamped to its last), interpolated between frames.
#[derive(Clone, Debug)]
pub struct Layer {
    pub mode: AdditiveMode,
    /// `[frame][joint]`: one frame for a fixed pose.
    pub base: Vec<Vec<Transform>>,
}

/// Joint `j` of `base` (`[frame][joint]`) at `frame`: clamped to its frames, interpolated
/// between two.
fn base_at(base: &[Vec<Transform>], j: usize, frame: f32) -> Transform {
    let last = base.len().saturating_sub(1);
    let f = frame.clamp(0.0, last as f32);
    let i = (f as usize).min(last);
    let u = f - i as f32;
    if u == 0.0 || i == last {
        base[i][j]
    } else {
        base[i][j].interpolate(&base[i + 1][j], u)
    }
}

/// `base ⊕ additive` for joint `j` at `frame`, `base` as [`Layer::base`] holds it (the
/// runtime's rule: what players show, and what the app draws for an additive clip).
pub fn compose_on(
    mode: AdditiveMode,
    base: &[Vec<Transform>],
    j: usize,
    frame: f32,
    additive: &Transform,
) -> Transform {
    let base = to_joint_pose(&base_at(base, j, frame));
    to_transform(&compose(&base, &to_joint_pose(additive), mode))
}

impl Layer {
    /// `base ⊕ additive` for joint `j` at `frame` (the runtime's rule, so measured as
    /// played).
    pub fn compose(&self, j: usize, frame: f32, additive: &Transform) -> Transform {
        compose_on(self.mode, &self.base, j, frame, additive)
    }

    /// Joint `j`'s decoded local transform `local` at `frame` as players show it: on
    /// `layer`'s base for an additive clip, as it is otherwise.
    pub fn shown(layer: Option<&Self>, j: usize, frame: f32, local: &Transform) -> Transform {
        match layer {
            Some(l) => l.compose(j, frame, local),
            None => *local,
        }
    }

    /// The source as players show it: every frame of `additive` on the base.
    pub fn compose_clip(&self, additive: &Clip) -> Clip {
        let mut c = additive.clone();
        for (j, t) in c.tracks.iter_mut().enumerate() {
            for f in 0..t.translations.len() {
                let x = self.compose(j, f as f32, &t.at(f));
                t.translations[f] = x.translation;
                t.rotations[f] = x.rotation;
                t.scales[f] = x.scale;
            }
        }
        c
    }
}

/// A pose source seen through an additive layer (or as it is, without one).
pub struct Layered<'a> {
    pub additive: &'a dyn PoseSource,
    pub layer: Option<&'a Layer>,
}

impl PoseSource for Layered<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        self.additive.sample_local(frame, out);
        if let Some(layer) = self.layer {
            for (j, o) in out.iter_mut().enumerate() {
                *o = layer.compose(j, frame, o);
            }
        }
    }
}

/// A clip ready for the codec: the source, or the source with its first frame appended
/// (an open loop), and the playback the compressed clip will carry.
pub struct Prepared<'a> {
    /// The keys to store (for an additive clip, its own keys).
    pub clip: Cow<'a, Clip>,
    /// An additive clip's base, and the source composed on it (what the error is measured
    /// against: ACL's rule).
    pub layer: Option<Layer>,
    pub composed: Option<Clip>,
    /// Why the clip cannot be compressed as its settings ask (an additive base the asset
    /// does not hold).
    pub error: Option<String>,
    /// What a rest track decodes to, per joint: the skeleton's rest pose, or for an
    /// additive clip the identity of its mode (docs/FORMAT.md).
    pub rest: Vec<Transform>,
    pub playback: Playback,
    /// Whether the first frame was appended to close the loop.
    pub appended: bool,
    /// Whether the source's last frame returns to its first within tolerance (a loop
    /// worth suggesting).
    pub closes: bool,
}

/// Per joint, the error between the clip's last frame and its first as the metric
/// measures it (scene units); the motion joint's own translation and rotation are taken as
/// returning (root motion travels). Empty for a clip of fewer than 2 frames.
pub fn wrap_gap(
    skeleton: &Skeleton,
    clip: &Clip,
    limits: &JointLimits,
    motion: Option<usize>,
) -> Vec<f32> {
    let n = skeleton.len();
    if clip.frame_count < 2 || clip.tracks.len() != n {
        return Vec::new();
    }
    let first: Vec<Transform> = clip.tracks.iter().map(|t| t.at(0)).collect();
    let mut last: Vec<Transform> = clip
        .tracks
        .iter()
        .map(|t| t.at(clip.frame_count - 1))
        .collect();
    if let Some(m) = motion.filter(|&m| m < n) {
        last[m].translation = first[m].translation;
        last[m].rotation = first[m].rotation;
    }
    let mut a = vec![DAffine3::IDENTITY; n];
    let mut b = vec![DAffine3::IDENTITY; n];
    local_to_object_f64(skeleton, &first, &mut a);
    local_to_object_f64(skeleton, &last, &mut b);
    (0..n)
        .map(|j| joint_error(&a[j], &b[j], limits.local_marker(j)))
        .collect()
}

/// Whether the clip's last frame returns to its first within every evaluated joint's
/// tolerance (so it can loop as it is): what `inspect` and `report` suggest as looping.
pub fn closes(
    skeleton: &Skeleton,
    clip: &Clip,
    limits: &JointLimits,
    motion: Option<usize>,
) -> bool {
    let gap = wrap_gap(skeleton, clip, limits, motion);
    !gap.is_empty()
        && gap
            .iter()
            .enumerate()
            .all(|(j, &e)| !limits.evaluated[j] || e <= limits.tolerance[j])
}

/// The motion joint's transform at `frame` as a rigid motion.
fn rigid_at(clip: &Clip, joint: usize, frame: usize) -> Rigid {
    let t = &clip.tracks[joint];
    Rigid::from_f32(t.translations[frame], t.rotations[frame])
}

/// The clip as the codec compresses it, with its playback (see the module documentation).
pub fn prepare<'a>(skeleton: &Skeleton, clip: &'a Clip, settings: &Resolved) -> Prepared<'a> {
    let frames = clip.frame_count;
    if clip.validate(skeleton).is_err() || settings.limits.len() != skeleton.len() {
        // The codec refuses it with the reason.
        return Prepared {
            clip: Cow::Borrowed(clip),
            layer: None,
            composed: None,
            error: None,
            rest: skeleton.rest_pose(),
            playback: Playback::default(),
            appended: false,
            closes: false,
        };
    }
    let motion = settings
        .root_motion
        .filter(|&m| m < skeleton.len() && clip.tracks.len() == skeleton.len() && frames > 0);
    let looping = settings.looping && frames >= 2;
    let closed = closes(skeleton, clip, &settings.limits, motion);
    let appended = looping && !closed;
    let clip: Cow<Clip> = if appended {
        let mut c = clip.clone();
        for t in &mut c.tracks {
            let first = t.at(0);
            t.translations.push(first.translation);
            t.rotations.push(first.rotation);
            t.scales.push(first.scale);
        }
        if let Some(m) = motion {
            let start = rigid_at(clip, m, 0);
            let travel = |f: usize| Rigid::travel(start, rigid_at(clip, m, f));
            let step = travel(frames - 2).inverse().then(travel(frames - 1));
            let cycle = travel(frames - 1).then(step);
            let t = &mut c.tracks[m];
            t.translations[frames] = (start.p + cycle.p).as_vec3();
            t.rotations[frames] = (cycle.r * start.r).normalize().as_quat();
        }
        c.frame_count += 1;
        Cow::Owned(c)
    } else {
        Cow::Borrowed(clip)
    };
    let root_motion = motion.map(|m| {
        let start = rigid_at(&clip, m, 0);
        let cycle = Rigid::travel(start, rigid_at(&clip, m, clip.frame_count - 1));
        RootMotion {
            joint: m,
            start_translation: start.p.as_vec3().to_array(),
            start_rotation: start.r.as_quat().to_array(),
            cycle_translation: cycle.p.as_vec3().to_array(),
            cycle_rotation: cycle.r.as_quat().to_array(),
        }
    });
    let (layer, error) = match (&settings.additive, &settings.additive_base) {
        (None, _) => (None, None),
        (Some(a), Some(base))
            if !base.is_empty() && base.iter().all(|p| p.len() == skeleton.len()) =>
        {
            (
                Some(Layer {
                    mode: a.mode,
                    base: base.clone(),
                }),
                None,
            )
        }
        (Some(a), _) => (
            None,
            Some(match &a.base {
                AdditiveBase::Clip { clip } | AdditiveBase::Frame { clip, .. } => {
                    format!("the additive base clip '{clip}' is not in the asset")
                }
                AdditiveBase::Rest => "the additive base does not match the skeleton".into(),
            }),
        ),
    };
    let composed = layer.as_ref().map(|l| l.compose_clip(&clip));
    let rest = match &layer {
        Some(l) => vec![to_transform(&identity(l.mode)); skeleton.len()],
        None => skeleton.rest_pose(),
    };
    let scalar_tracks = scalar_tracks(skeleton, &clip, settings);
    Prepared {
        clip,
        layer,
        composed,
        error,
        rest,
        playback: Playback {
            looping,
            root_motion,
            additive: settings.additive.clone(),
            events: settings.events.clone(),
            scalar_tracks,
        },
        appended,
        closes: closed,
    }
}

/// The clip's scalar tracks compressed: morph-target weights under the first deforming
/// joint's distance tolerance (what the glTF export holds them to); values that move no
/// geometry (custom properties) under the track's `[curves."NAME"] tolerance`, else
/// `weight_tolerance`.
fn scalar_tracks(skeleton: &Skeleton, clip: &Clip, settings: &Resolved) -> Vec<StoredScalarTrack> {
    clip.scalar_tracks
        .iter()
        .map(|t| super::scalar::compress(t, scalar_limits(skeleton, settings, &t.name)))
        .collect()
}

/// What scalar track `name` is held to: the first deforming joint's distance tolerance
/// (what the glTF export holds morph weights to), and for targets without geometry its
/// `[curves."NAME"] tolerance`, else the settings' weight tolerance.
pub fn scalar_limits(
    skeleton: &Skeleton,
    settings: &Resolved,
    name: &str,
) -> super::scalar::ScalarLimits {
    let first = skeleton.deforming_joints().next().unwrap_or(0);
    super::scalar::ScalarLimits {
        tolerance: settings.limits.tolerance.get(first).copied().unwrap_or(0.0),
        weight_tolerance: settings
            .curve_tolerances
            .get(name)
            .copied()
            .unwrap_or(settings.weight_tolerance),
    }
}

/// A clip's playback flags as `inspect` states them: looping, the motion joint's name,
/// the additive mode and base.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct PlaybackInfo {
    pub looping: bool,
    pub root_motion: Option<String>,
    pub additive: Option<AdditiveReport>,
    /// The clip's events: name, time (seconds from frame 0), payload.
    pub events: Vec<crate::model::Event>,
}

impl PlaybackInfo {
    pub fn new(p: &Playback, skeleton: &Skeleton) -> Self {
        Self {
            looping: p.looping,
            root_motion: p
                .root_motion
                .as_ref()
                .and_then(|m| skeleton.joints.get(m.joint))
                .map(|j| j.name.clone()),
            additive: p.additive.as_ref().map(AdditiveReport::new),
            events: p.events.clone(),
        }
    }
}

/// An additive clip's mode and base as reports state them.
#[derive(Clone, Debug, PartialEq, Serialize, serde::Deserialize)]
pub struct AdditiveReport {
    pub mode: String,
    pub base: AdditiveBase,
}

/// The root motion's error after [`ROOT_MOTION_CYCLES`] cycles (none for a clip that does
/// not loop): over the next cycle, the largest distance between where the runtime's
/// accumulated travel puts the motion joint and where the source's own cycles put it.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct RootMotionError {
    pub cycles: u32,
    /// Distance between the two positions (scene units).
    pub translation: f32,
    /// Angle between the two facings (radians).
    pub rotation: f32,
}

/// What a clip report states about playback.
#[derive(Clone, Debug, Default, PartialEq, Serialize, serde::Deserialize)]
pub struct PlaybackReport {
    pub looping: bool,
    /// The source's last frame returns to its first within tolerance: mark it looping.
    pub looping_suggested: bool,
    /// Whether the first frame was appended to close the loop (else the source's last frame
    /// returns to its first).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub loop_appended: bool,
    /// The motion joint's name.
    pub root_motion: Option<String>,
    pub additive: Option<AdditiveReport>,
    /// Looping clips: the largest joint error (scene units) across the wrap — at the last
    /// frame, the midpoint before it and the first frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wrap_error: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_motion_error: Option<RootMotionError>,
    /// Scalar tracks (morph-target weights) stored with the clip.
    #[serde(default)]
    pub scalar_tracks: usize,
    /// The largest vertex displacement (scene units) among them, at every source key and
    /// midpoint; none without scalar tracks.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scalar_error: Option<f32>,
}

impl AdditiveReport {
    pub fn new(a: &Additive) -> Self {
        Self {
            mode: a.mode.name().to_owned(),
            base: a.base.clone(),
        }
    }
}

/// The playback part of a clip's report: flags, the error across the wrap (from the error
/// matrix `errors` of the compressed clip `out`), and the root motion's accumulated error.
pub fn report(
    skeleton: &Skeleton,
    prepared: &Prepared,
    out: &CompressedClip,
    errors: &ErrorReport,
) -> PlaybackReport {
    let p = &prepared.playback;
    let n = errors.joints.max(1);
    let wrap_error = p.looping.then(|| {
        let rows = errors.at_samples.len() / n;
        let mut rows_at: Vec<&[f32]> = Vec::new();
        if rows > 0 {
            rows_at.push(&errors.at_samples[..n]);
            rows_at.push(&errors.at_samples[(rows - 1) * n..rows * n]);
        }
        if let Some(m) = &errors.at_midpoints {
            let mids = m.len() / n;
            if mids > 0 {
                rows_at.push(&m[(mids - 1) * n..mids * n]);
            }
        }
        rows_at
            .iter()
            .flat_map(|r| r.iter().copied())
            .fold(0.0f32, f32::max)
    });
    let root_motion_error = p
        .root_motion
        .as_ref()
        .map(|m| accumulated_error(&prepared.clip, out, m, p.looping));
    PlaybackReport {
        looping: p.looping,
        looping_suggested: prepared.closes,
        loop_appended: prepared.appended,
        root_motion: p
            .root_motion
            .as_ref()
            .map(|m| skeleton.joints[m.joint].name.clone()),
        additive: p.additive.as_ref().map(AdditiveReport::new),
        wrap_error,
        root_motion_error,
        scalar_tracks: p.scalar_tracks.len(),
        scalar_error: p.scalar_tracks.iter().map(|t| t.max_error).reduce(f32::max),
    }
}

/// The runtime's travel (`root_motion_delta` from frame 0) against the source's, at every
/// frame and midpoint of the cycle after [`ROOT_MOTION_CYCLES`] cycles (of the one pass of
/// a clip that does not loop); the source's travel over a cycle is its stored cycle delta.
fn accumulated_error(
    clip: &Clip,
    out: &CompressedClip,
    m: &RootMotion,
    looping: bool,
) -> RootMotionError {
    let runtime = super::RuntimeClip::new(out);
    let frames = clip.frame_count.min(out.frame_count);
    let last = frames.saturating_sub(1) as f32;
    let cycles = if looping { ROOT_MOTION_CYCLES } else { 0 };
    let cycle = Rigid::from_f32(
        Vec3::from_array(m.cycle_translation),
        Quat::from_array(m.cycle_rotation),
    );
    let before = cycle.pow(cycles as i64);
    let start = rigid_at(clip, m.joint, 0);
    let mut worst = RootMotionError {
        cycles,
        ..RootMotionError::default()
    };
    for half in 0..(2 * frames).saturating_sub(1) {
        let s = half as f32 * 0.5;
        let (a, b) = (half / 2, (half / 2 + half % 2).min(frames - 1));
        let (x, y) = (rigid_at(clip, m.joint, a), rigid_at(clip, m.joint, b));
        let u = 0.5 * (half % 2) as f32;
        let src_pose = Rigid::from_f32(
            x.p.as_vec3().lerp(y.p.as_vec3(), u),
            crate::model::slerp_shortest(x.r.as_quat(), y.r.as_quat(), u),
        );
        let source = before.then(Rigid::travel(start, src_pose));
        let d = runtime
            .clip()
            .root_motion_delta(0.0, last * cycles as f32 + s)
            .unwrap_or_default();
        let decoded = Rigid::from_f32(
            Vec3::from_array(d.translation),
            Quat::from_array(d.rotation),
        );
        worst.translation = worst
            .translation
            .max((decoded.p - source.p).length() as f32);
        worst.rotation = worst.rotation.max(decoded.r.angle_between(source.r) as f32);
    }
    worst
}
