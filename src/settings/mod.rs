//! Compression settings: global values, per-joint overrides by name, per-clip overrides,
//! presets. Stored as a human-readable TOML (or JSON) sidecar next to the asset. Lengths are
//! written in millimetres (tolerances) and centimetres (marker offsets) and converted to
//! scene units with the asset's unit, which the file may override.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

mod edit;
pub mod exports;
mod parse;
mod scale;
pub mod takes;
pub use edit::{EditScope, JointEdit};
pub use parse::MAX_SETTINGS_BYTES;

use crate::codec::Interpolation;
use crate::import::Asset;
use crate::metric::JointLimits;
use crate::model::playback::{Additive, AdditiveBase, AdditiveMode};
use crate::model::{Event, LengthUnit, Skeleton, Transform};

/// Key-reduction method.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Method {
    /// Keep every sample; quantize only.
    None,
    Linear,
    CatmullRom,
    /// Whichever is smaller for each track.
    #[default]
    Auto,
}

impl Method {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "none" => Some(Self::None),
            "linear" => Some(Self::Linear),
            "catmull-rom" | "catmullrom" | "cr" => Some(Self::CatmullRom),
            "auto" => Some(Self::Auto),
            _ => None,
        }
    }

    /// The curve interpolations this method tries.
    pub fn candidates(self) -> &'static [Interpolation] {
        match self {
            Self::None | Self::Linear => &[Interpolation::Linear],
            Self::CatmullRom => &[Interpolation::CatmullRom],
            Self::Auto => &[Interpolation::Linear, Interpolation::CatmullRom],
        }
    }
}

/// Bit width of quantized values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Bits {
    /// The smallest width per track that holds the error.
    #[default]
    Auto,
    /// Fixed widths: rotations 48-bit smallest-three, vectors 16 bits per component.
    Fixed,
}

/// How hard the compressor searches for a smaller result; every effort holds the same
/// contract (each joint within tolerance at every sample and midpoint).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Effort {
    /// The least search: for the edit loop and batch previews.
    Fast,
    /// The balanced search (what every compression did before efforts existed).
    #[default]
    Default,
    /// More search for smaller files: for final exports.
    Max,
}

impl Effort {
    pub const ALL: [Effort; 3] = [Self::Fast, Self::Default, Self::Max];

    pub fn name(self) -> &'static str {
        match self {
            Self::Fast => "fast",
            Self::Default => "default",
            Self::Max => "max",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|e| e.name() == s)
    }

    /// True for [`Effort::Default`] (left out of saved settings).
    pub fn is_default(&self) -> bool {
        *self == Self::Default
    }
}

/// A named starting point.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Preset {
    /// 0.1 mm at 3 cm markers (the leading library's default).
    Acl,
    /// 1 mm at 10 cm markers.
    Ozz,
    /// 1 mm at 3 cm markers.
    Aggressive,
}

impl Preset {
    pub const ALL: [Preset; 3] = [Self::Acl, Self::Ozz, Self::Aggressive];

    /// (tolerance in mm, marker offset in cm).
    pub fn values(self) -> (f32, f32) {
        match self {
            Self::Acl => (0.1, 3.0),
            Self::Ozz => (1.0, 10.0),
            Self::Aggressive => (1.0, 3.0),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Acl => "acl",
            Self::Ozz => "ozz",
            Self::Aggressive => "aggressive",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.name() == s)
    }
}

/// Overrides for one joint.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct JointSettings {
    #[serde(
        default,
        deserialize_with = "parse::positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance_mm: Option<f32>,
    #[serde(
        default,
        deserialize_with = "parse::positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub marker_offset_cm: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pinned: Option<bool>,
}

/// Overrides for one socket (a non-joint node hanging from a joint, `model::Socket`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SocketSettings {
    /// The socket's own tolerance; without it the socket is held to its joint's.
    #[serde(
        default,
        deserialize_with = "parse::positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance_mm: Option<f32>,
}

/// Overrides for one scalar track (`[curves."NAME"]`): a custom property curve, or a morph
/// target's weights.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CurveSettings {
    /// The largest change of the curve's values where they move no geometry (in the
    /// curve's own unit); without it, `weight_tolerance`.
    #[serde(
        default,
        deserialize_with = "parse::non_negative",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance: Option<f32>,
}

/// Overrides for one clip.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ClipSettings {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<Preset>,
    #[serde(
        default,
        deserialize_with = "parse::positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance_mm: Option<f32>,
    #[serde(
        default,
        deserialize_with = "parse::positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub marker_offset_cm: Option<f32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<Method>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bits: Option<Bits>,
    /// The clip loops: playback across its wrap (last frame to first) is held to the
    /// tolerance, and the runtime wraps time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub looping: Option<bool>,
    /// Root motion: `true` for the skeleton's root, or a joint's name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub root_motion: Option<RootMotionSetting>,
    /// The clip is additive on a base: `{ base = "rest" }`, `{ base = "Idle", frame = 0 }`
    /// (a frame of a clip), or `{ base = "Idle" }` (that clip played in sync).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub additive: Option<AdditiveSettings>,
    /// The clip's events (`[[clips.NAME.events]] name = "footstep_l" time = 0.42`, time in
    /// seconds from the clip's first frame, optional `payload`). When present they replace
    /// the events the source file declares; an empty list removes them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<Vec<Event>>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub joints: BTreeMap<String, JointSettings>,
}

/// `root_motion = true` (the root) or `root_motion = "JointName"`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RootMotionSetting {
    Enabled(bool),
    Joint(String),
}

/// An additive clip's base, as the sidecar writes it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AdditiveSettings {
    /// `"rest"` or a clip's name.
    pub base: String,
    /// A frame of the base clip; absent: the base clip played in sync.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub frame: Option<u32>,
    /// `"additive1"` (default: translation added, rotation composed, scale `1 + s`),
    /// `"additive0"` (scale multiplied) or `"relative"` (transform product), ACL's names.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

/// Everything a user can tune, for a whole file.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Settings {
    /// The result cache (a folder, or `http://HOST:PORT/PREFIX`) for the runs this file is
    /// given to with `--settings` (a studio-wide settings file); `--cache`, `--no-cache` and
    /// `SKELPACK_CACHE` come first, and an asset's sidecar's is not used (the cache belongs to
    /// the machine or the farm, not to one asset). Never part of a result's key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache: Option<String>,
    /// Starting values; explicit fields override it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preset: Option<Preset>,
    /// Overrides the inferred scene unit: `"m"`, `"cm"`, `"mm"`, `"inch"`, or a number of
    /// scene units per metre (also accepted as `scene_units_per_metre = N`).
    #[serde(
        default,
        alias = "scene_units_per_metre",
        skip_serializing_if = "Option::is_none"
    )]
    pub unit: Option<LengthUnit>,
    #[serde(
        default,
        deserialize_with = "parse::positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub tolerance_mm: Option<f32>,
    #[serde(
        default,
        deserialize_with = "parse::positive",
        skip_serializing_if = "Option::is_none"
    )]
    pub marker_offset_cm: Option<f32>,
    #[serde(default)]
    pub method: Method,
    #[serde(default)]
    pub bits: Bits,
    /// How hard the compressor searches (`fast`, `default`, `max`).
    #[serde(default, skip_serializing_if = "Effort::is_default")]
    pub effort: Effort,
    /// Derive each joint's marker offset from the skinned mesh (farthest influenced vertex).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub markers_from_mesh: bool,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub joints: BTreeMap<String, JointSettings>,
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub clips: BTreeMap<String, ClipSettings>,
    /// The largest change of a morph-target weight that moves no geometry (a target without
    /// POSITION deltas, driving something else); weights of targets with geometry are held to
    /// the tolerance as the vertex distance they cause. Default 0: such weights are exact.
    #[serde(
        default,
        deserialize_with = "parse::non_negative",
        skip_serializing_if = "Option::is_none"
    )]
    pub weight_tolerance: Option<f32>,
    /// Per scalar track by name (`[curves."Controls.Smile"] tolerance = 0.001`): the
    /// tolerance of its values that move no geometry (custom FBX properties).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub curves: BTreeMap<String, CurveSettings>,
    /// Measure no socket: each joint is held at its own markers only (smaller; what hangs
    /// from a joint far beyond its marker offset may then move more than the tolerance).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub ignore_sockets: bool,
    /// Per socket by node name: its own tolerance (`[sockets."Head_end"] tolerance_mm = 0.05`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub sockets: BTreeMap<String, SocketSettings>,
    /// Takes split into clips by frame range (`[takes.Attack] source = "Take 001",
    /// start = 12, end = 88`; `takes.rs`).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub takes: BTreeMap<String, takes::TakeSettings>,
    /// Where the app last exported this file (most recent first), redone by "Export on
    /// save" (`exports.rs`). Never part of a result's key.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub exports: Vec<exports::ExportTarget>,
}

/// Settings resolved for one clip of one asset, in scene units.
#[derive(Clone, Debug, PartialEq)]
pub struct Resolved {
    pub limits: JointLimits,
    pub pinned: Vec<bool>,
    pub method: Method,
    pub bits: Bits,
    pub effort: Effort,
    pub unit: LengthUnit,
    /// The clip loops.
    pub looping: bool,
    /// The joint carrying root motion.
    pub root_motion: Option<usize>,
    /// The clip is additive on this base.
    pub additive: Option<Additive>,
    /// An additive clip's base, `[frame][joint]`: one pose (the rest pose, a frame of a
    /// clip of the asset) or every frame of a clip played in sync; none when the base clip
    /// is not in the asset.
    pub additive_base: Option<Vec<Vec<Transform>>>,
    /// The clip's events, sorted, inside the clip (the sidecar's, else the source's; those
    /// outside the clip are left out and reported by [`Settings::event_warnings`]).
    pub events: Vec<Event>,
    /// Largest weight change of a morph target without geometry (`weight_tolerance`).
    pub weight_tolerance: f32,
    /// Per scalar track by name, its own tolerance for values without geometry
    /// (`[curves."NAME"] tolerance`), overriding `weight_tolerance`.
    pub curve_tolerances: BTreeMap<String, f32>,
}

/// A settings problem: where and what.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct SettingsError {
    pub path: PathBuf,
    pub message: String,
}

impl Settings {
    /// Everything that decides a result, as text for a cache key: every field in its
    /// `Debug` form but [`Self::cache`] and [`Self::exports`] (where results are kept or
    /// written does not change them).
    pub fn key_text(&self) -> String {
        format!(
            "{:?}",
            Settings {
                cache: None,
                exports: Vec::new(),
                ..self.clone()
            }
        )
    }

    /// Settings starting from a preset.
    pub fn from_preset(preset: Preset) -> Self {
        Self {
            preset: Some(preset),
            ..Self::default()
        }
    }

    /// The conventional sidecar path: `Character.glb` -> `Character.glb.skelpack.toml`.
    pub fn sidecar_path(asset: &Path) -> PathBuf {
        let mut s = asset.as_os_str().to_owned();
        s.push(".skelpack.toml");
        PathBuf::from(s)
    }

    /// Resolves the limits for `clip_name` of `asset`. Precedence, lowest first: defaults
    /// (0.1 mm / 3 cm, or what an ACL clip carries), preset, file-wide values, per-joint
    /// values, then the clip's own values and joints.
    pub fn resolve(&self, asset: &Asset, clip_name: &str) -> Resolved {
        let unit = self.unit_for(asset);
        let per_mm = unit.per_metre() / 1000.0;
        let per_cm = unit.per_metre() / 100.0;
        let clip = self.clips.get(clip_name);
        let preset = clip.and_then(|c| c.preset).or(self.preset);
        let (mut tol, mut off) = (0.1 * per_mm, 3.0 * per_cm);
        let acl_defaults =
            asset.source_tolerance.is_some() && preset.is_none() && self.tolerance_mm.is_none();
        if let Some(t) = asset.source_tolerance {
            tol = t;
        }
        if let Some(p) = preset {
            let (t, o) = p.values();
            tol = t * per_mm;
            off = o * per_cm;
        }
        if let Some(t) = self.tolerance_mm {
            tol = t * per_mm;
        }
        if let Some(o) = self.marker_offset_cm {
            off = o * per_cm;
        }
        if let Some(c) = clip {
            if let Some(t) = c.tolerance_mm {
                tol = t * per_mm;
            }
            if let Some(o) = c.marker_offset_cm {
                off = o * per_cm;
            }
        }
        // The sidecar's additive settings, else what the source declares (ACL).
        let additive = match clip.and_then(|c| c.additive.as_ref()) {
            Some(a) => a.resolve(),
            None => asset
                .source_additive
                .iter()
                .find(|(n, _)| n == clip_name)
                .map(|(_, a)| a.clone()),
        };
        let skeleton = &asset.skeleton;
        let mut limits = JointLimits::uniform(skeleton, off, tol);
        if acl_defaults && self.marker_offset_cm.is_none() {
            for (j, joint) in skeleton.joints.iter().enumerate() {
                if let Some(d) = joint.source_marker_offset {
                    limits.marker_offset[j] = d;
                }
            }
        }
        if self.markers_from_mesh {
            for (j, d) in mesh_marker_offsets(asset).into_iter().enumerate() {
                if let Some(d) = d {
                    limits.marker_offset[j] = d;
                }
            }
        }
        let mut pinned = vec![false; skeleton.len()];
        let layers = std::iter::once(&self.joints).chain(clip.map(|c| &c.joints));
        for joints in layers {
            for (name, js) in joints {
                if let Some(j) = skeleton.find(name) {
                    if let Some(t) = js.tolerance_mm {
                        limits.tolerance[j] = t * per_mm;
                    }
                    if let Some(o) = js.marker_offset_cm {
                        limits.marker_offset[j] = o * per_cm;
                    }
                    if let Some(p) = js.pinned {
                        pinned[j] = p;
                    }
                }
            }
        }
        if self.ignore_sockets {
            limits.sockets.iter_mut().for_each(Vec::clear);
        }
        for (j, list) in limits.sockets.iter_mut().enumerate() {
            for marker in list {
                let name = &skeleton.sockets[marker.socket].name;
                if let Some(t) = self.sockets.get(name).and_then(|s| s.tolerance_mm) {
                    marker.tolerance_ratio = t * per_mm / limits.tolerance[j];
                }
            }
        }
        Resolved {
            limits,
            pinned,
            method: clip.and_then(|c| c.method).unwrap_or(self.method),
            bits: clip.and_then(|c| c.bits).unwrap_or(self.bits),
            effort: self.effort,
            unit,
            looping: clip.and_then(|c| c.looping).unwrap_or(false),
            root_motion: clip
                .and_then(|c| c.root_motion.as_ref())
                .and_then(|r| r.joint(skeleton)),
            additive_base: additive.as_ref().and_then(|a| base_pose(asset, &a.base)),
            additive,
            events: self.events_for(asset, clip_name).0,
            weight_tolerance: self.weight_tolerance.unwrap_or(0.0),
            curve_tolerances: self
                .curves
                .iter()
                .filter_map(|(n, c)| Some((n.clone(), c.tolerance?)))
                .collect(),
        }
    }

    /// The events of `clip_name` in `asset`: the sidecar's when it lists them, else the
    /// source's; split into those inside the clip (clamped, sorted) and a warning line for
    /// each outside it.
    pub fn events_for(&self, asset: &Asset, clip_name: &str) -> (Vec<Event>, Vec<String>) {
        let Some(clip) = asset.clips.iter().find(|c| c.name == clip_name) else {
            return (Vec::new(), Vec::new());
        };
        let listed = self.clips.get(clip_name).and_then(|c| c.events.as_ref());
        let events = listed.unwrap_or(&clip.events);
        let (inside, outside) = crate::model::event::split(events, clip.duration());
        let warnings = outside
            .into_iter()
            .map(|m| format!("clip '{clip_name}': {m}; left out"))
            .collect();
        (inside, warnings)
    }

    /// Warning lines for every clip's events that lie outside it (a trimmed take, a
    /// shortened source).
    pub fn event_warnings(&self, asset: &Asset) -> Vec<String> {
        asset
            .clips
            .iter()
            .flat_map(|c| self.events_for(asset, &c.name).1)
            .collect()
    }

    /// These settings without any clip's looping, root-motion or additive flag (for outputs
    /// that carry none: glTF plays a clip's own frames).
    pub fn without_playback(&self) -> Self {
        let mut s = self.clone();
        for c in s.clips.values_mut() {
            c.looping = None;
            c.root_motion = None;
            c.additive = None;
        }
        s
    }

    /// The unit in force for `asset`: the one set here, or the inferred one.
    pub fn unit_for(&self, asset: &Asset) -> LengthUnit {
        self.unit.unwrap_or(asset.units.unit)
    }

    /// A warning about the unit in force: a set unit that makes the character implausibly
    /// sized, or an inferred one the proportions do not settle.
    pub fn unit_warning(&self, asset: &Asset) -> Option<String> {
        match self.unit {
            Some(u) => asset
                .units
                .implausible_with(u)
                .map(|w| format!("the unit is set to {}: {w}", u.name())),
            None if asset.units.confidence == crate::model::Confidence::Low => {
                Some(format!("unit uncertain: {}", asset.units.reason))
            }
            None => None,
        }
    }

    /// Names in the settings that the asset does not have: `(joints, clips)`.
    pub fn unknown_names(
        &self,
        skeleton: &Skeleton,
        clip_names: &[&str],
    ) -> (Vec<String>, Vec<String>) {
        let mut joints: Vec<String> = self
            .joints
            .keys()
            .filter(|n| skeleton.find(n).is_none())
            .cloned()
            .collect();
        for c in self.clips.values() {
            joints.extend(
                c.joints
                    .keys()
                    .filter(|n| skeleton.find(n).is_none())
                    .cloned(),
            );
            if let Some(RootMotionSetting::Joint(n)) = &c.root_motion
                && skeleton.find(n).is_none()
            {
                joints.push(n.clone());
            }
        }
        joints.sort();
        joints.dedup();
        let mut clips: Vec<String> = self
            .clips
            .keys()
            .filter(|n| !clip_names.contains(&n.as_str()))
            .cloned()
            .collect();
        for c in self.clips.values() {
            if let Some(a) = &c.additive
                && a.base != "rest"
                && !clip_names.contains(&a.base.as_str())
            {
                clips.push(a.base.clone());
            }
        }
        clips.sort();
        clips.dedup();
        (joints, clips)
    }

    /// Checks values: tolerances and offsets must be positive and finite.
    pub fn validate(&self) -> Result<(), String> {
        let check = |path: String, v: Option<f32>| -> Result<(), String> {
            match v {
                Some(x) if !(x.is_finite() && x > 0.0) => {
                    Err(format!("{path} = {x} must be a positive number"))
                }
                _ => Ok(()),
            }
        };
        let joints = |prefix: &str, js: &BTreeMap<String, JointSettings>| -> Result<(), String> {
            for (n, j) in js {
                check(
                    format!("{prefix}joints.\"{n}\".tolerance_mm"),
                    j.tolerance_mm,
                )?;
                check(
                    format!("{prefix}joints.\"{n}\".marker_offset_cm"),
                    j.marker_offset_cm,
                )?;
            }
            Ok(())
        };
        check("tolerance_mm".into(), self.tolerance_mm)?;
        check("marker_offset_cm".into(), self.marker_offset_cm)?;
        joints("", &self.joints)?;
        if let Some(w) = self.weight_tolerance
            && !(w.is_finite() && w >= 0.0)
        {
            return Err(format!(
                "weight_tolerance = {w} must be a number of at least 0"
            ));
        }
        for (n, s) in &self.sockets {
            check(format!("sockets.\"{n}\".tolerance_mm"), s.tolerance_mm)?;
        }
        for (n, c) in &self.curves {
            if let Some(t) = c.tolerance
                && !(t.is_finite() && t >= 0.0)
            {
                return Err(format!(
                    "curves.\"{n}\".tolerance = {t} must be a number of at least 0"
                ));
            }
        }
        for (n, c) in &self.clips {
            let p = format!("clips.\"{n}\".");
            check(format!("{p}tolerance_mm"), c.tolerance_mm)?;
            check(format!("{p}marker_offset_cm"), c.marker_offset_cm)?;
            joints(&p, &c.joints)?;
            if let Some(a) = &c.additive {
                a.validate().map_err(|e| format!("{p}additive: {e}"))?;
            }
            for (i, e) in c.events.iter().flatten().enumerate() {
                e.check(f32::INFINITY)
                    .map_err(|m| format!("{p}events[{i}]: {m}"))?;
            }
        }
        Ok(())
    }

    /// Parses TOML (or JSON when the text starts with `{`), validating values; an error
    /// names the line and the field path.
    pub fn parse(text: &str, path: &Path) -> Result<Self, SettingsError> {
        parse::parse(text, path)
    }

    /// Reads a settings file (a regular file of bounded size).
    pub fn load(path: &Path) -> Result<Self, SettingsError> {
        Self::parse(&parse::read(path)?, path)
    }

    /// Serializes as TOML (JSON when the path ends in `.json`).
    pub fn to_text(&self, path: &Path) -> String {
        if path.extension().is_some_and(|e| e == "json") {
            serde_json::to_string_pretty(self).expect("settings serialize")
        } else {
            toml::to_string_pretty(self).expect("settings serialize")
        }
    }

    /// Writes atomically (temporary file, then rename).
    pub fn save(&self, path: &Path) -> std::io::Result<()> {
        crate::fsutil::write_atomic(path, self.to_text(path).as_bytes())
    }
}

impl RootMotionSetting {
    /// The motion joint in `skeleton` (the root for `true`; `None` when off or unknown).
    pub fn joint(&self, skeleton: &Skeleton) -> Option<usize> {
        match self {
            Self::Enabled(true) => Some(0),
            Self::Enabled(false) => None,
            Self::Joint(n) => skeleton.find(n),
        }
    }
}

impl AdditiveSettings {
    /// The mode's value, if it names one.
    fn mode(&self) -> Option<AdditiveMode> {
        match self.mode.as_deref() {
            None | Some("additive1") => Some(AdditiveMode::Additive1),
            Some("additive0") => Some(AdditiveMode::Additive0),
            Some("relative") => Some(AdditiveMode::Relative),
            Some(_) => None,
        }
    }

    /// Checks the mode's name and that a rest base has no frame.
    pub fn validate(&self) -> Result<(), String> {
        if self.mode().is_none() {
            return Err(format!(
                "mode {:?} is not one of additive1, additive0, relative",
                self.mode.as_deref().unwrap_or_default()
            ));
        }
        if self.base == "rest" && self.frame.is_some() {
            return Err("a rest-pose base has no frame".into());
        }
        if self.base.is_empty() {
            return Err("base is empty (\"rest\" or a clip's name)".into());
        }
        Ok(())
    }

    /// The additive mode and base this names.
    pub fn resolve(&self) -> Option<Additive> {
        let base = match (self.base.as_str(), self.frame) {
            ("rest", _) => AdditiveBase::Rest,
            (clip, Some(frame)) => AdditiveBase::Frame {
                clip: clip.to_owned(),
                frame,
            },
            (clip, None) => AdditiveBase::Clip {
                clip: clip.to_owned(),
            },
        };
        Some(Additive {
            mode: self.mode()?,
            base,
        })
    }
}

/// The local poses an additive clip is applied on, `[frame][joint]`: the rest pose, a
/// frame of a clip of `asset` (clamped to the clip), or every frame of a clip played in
/// sync; none for a clip not in the asset.
fn base_pose(asset: &Asset, base: &AdditiveBase) -> Option<Vec<Vec<Transform>>> {
    let clip_of = |name: &str| {
        let c = asset.clips.iter().find(|c| c.name == name)?;
        c.validate(&asset.skeleton).ok()?;
        (c.frame_count > 0).then_some(c)
    };
    let pose = |c: &crate::model::Clip, f: usize| c.tracks.iter().map(|t| t.at(f)).collect();
    match base {
        AdditiveBase::Rest => Some(vec![asset.skeleton.rest_pose()]),
        AdditiveBase::Frame { clip, frame } => {
            let c = clip_of(clip)?;
            Some(vec![pose(c, (*frame as usize).min(c.frame_count - 1))])
        }
        AdditiveBase::Clip { clip } => {
            let c = clip_of(clip)?;
            Some((0..c.frame_count).map(|f| pose(c, f)).collect())
        }
    }
}

/// Per joint: the distance from the joint (bind pose) to the farthest vertex it influences.
pub fn mesh_marker_offsets(asset: &Asset) -> Vec<Option<f32>> {
    let n = asset.skeleton.len();
    let rest_scale = asset.skeleton.rest_scales();
    let mut out: Vec<Option<f32>> = vec![None; n];
    for mesh in &asset.meshes {
        for (v, (js, ws)) in mesh
            .positions
            .iter()
            .zip(mesh.joints.iter().zip(&mesh.weights))
        {
            for k in 0..4 {
                let j = js[k] as usize;
                if ws[k] <= 0.0 || j >= n {
                    continue;
                }
                // The inverse bind matrix takes the vertex into the joint's frame; its
                // distance there, times the joint's rest scale, is the physical offset.
                let local = mesh.inverse_bind[j].transform_point3(*v);
                let d = local.length() * rest_scale[j];
                if d.is_finite() {
                    out[j] = Some(out[j].map_or(d, |x: f32| x.max(d)));
                }
            }
        }
    }
    out
}
