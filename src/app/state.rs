//! What the app shows: the open document, playback, view options, the current result.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::Arc;

use glam::Affine3A;
use serde::{Deserialize, Serialize};

use super::compressor::Compressed;
use super::jobs::JobKey;
use crate::import::Asset;
use crate::model::{Transform, local_to_object};
use crate::settings::{Resolved, Settings};

/// Where a document came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Source {
    File(PathBuf),
    Default,
}

/// An open asset with its settings and the compressed result for the current clip.
pub struct Document {
    /// Unique per opened document (results are keyed by it).
    pub id: u64,
    pub source: Source,
    /// The file's clips with the takes' pieces cut (`pieces.rs`): what the app shows.
    pub asset: Arc<Asset>,
    /// The file's own clips, before any take is cut.
    pub base: Arc<Asset>,
    /// The takes `asset` was cut with, and why they could not be cut (if so).
    pub cut_takes: (
        std::collections::BTreeMap<String, crate::settings::takes::TakeSettings>,
        Option<String>,
    ),
    /// Bumped whenever the clip set is cut again (a piece created, trimmed, undone).
    pub asset_rev: u64,
    pub settings: Settings,
    /// Bumped on every settings change (edit, undo, redo).
    pub settings_rev: u64,
    pub clip: usize,
    /// Settings resolved for the current clip (limits in scene units).
    pub resolved: Resolved,
    /// The result for [`Document::key`], when it has arrived.
    pub result: Option<Arc<Compressed>>,
    /// The result before the last settings edit, shown (marked as stale) until the new one
    /// lands, so the panels do not flicker while tuning.
    pub previous: Option<Arc<Compressed>>,
    /// Compressed bytes and worst error of the result before the last settings edit (the
    /// stats panel shows what the edit changed).
    pub before_edit: Option<(usize, f32)>,
    /// An error from the last compression of the current key.
    pub failure: Option<String>,
    /// The last saved settings (to mark unsaved changes).
    pub saved_settings: Settings,
}

impl Document {
    pub fn new(id: u64, source: Source, base: Asset, settings: Settings) -> Self {
        let (asset, error) = super::pieces::cut(&base, &settings);
        let asset = Arc::new(asset);
        let resolved = super::pieces::effective(&settings)
            .resolve(&asset, asset.clips.first().map_or("", |c| &c.name));
        Self {
            id,
            source,
            asset,
            base: Arc::new(base),
            cut_takes: (settings.takes.clone(), error),
            asset_rev: 0,
            saved_settings: settings.clone(),
            settings,
            settings_rev: 0,
            clip: 0,
            resolved,
            result: None,
            previous: None,
            before_edit: None,
            failure: None,
        }
    }

    /// What a result must have been computed for to be shown now.
    pub fn key(&self) -> JobKey {
        JobKey {
            document: self.id,
            clip: self.clip,
            settings_rev: self.settings_rev,
        }
    }

    pub fn has_clip(&self) -> bool {
        self.clip < self.asset.clips.len()
    }

    pub fn clip_name(&self) -> &str {
        self.asset.clips.get(self.clip).map_or("", |c| &c.name)
    }

    pub fn frame_count(&self) -> usize {
        self.asset.clips.get(self.clip).map_or(1, |c| c.frame_count)
    }

    pub fn sample_rate(&self) -> f32 {
        self.asset
            .clips
            .get(self.clip)
            .map_or(30.0, |c| c.sample_rate)
    }

    /// The display name (file name).
    pub fn title(&self) -> String {
        match &self.source {
            Source::File(p) => p
                .file_name()
                .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into()),
            Source::Default => super::default_asset::DEFAULT_NAME.into(),
        }
    }

    /// Re-resolves limits after a settings change; the current result becomes the
    /// previous one (shown until the new result lands).
    pub fn refresh(&mut self) {
        self.cut_pieces();
        self.resolved = super::pieces::effective(&self.settings)
            .resolve(&self.asset, self.clip_name().to_owned().as_str());
        if let Some(r) = self.result.take() {
            self.before_edit = Some((r.sizes.compressed_bytes, r.errors.samples.max));
            self.previous = Some(r);
        }
        self.failure = None;
    }

    /// Cuts the takes' pieces again when `[takes.*]` changed since the last cut, keeping
    /// the open clip by name (the source take when the open piece is gone).
    fn cut_pieces(&mut self) {
        if self.cut_takes.0 == self.settings.takes {
            return;
        }
        let name = self.clip_name().to_owned();
        let source = self.cut_takes.0.get(&name).map(|t| t.source.clone());
        let (asset, error) = super::pieces::cut(&self.base, &self.settings);
        self.asset = Arc::new(asset);
        self.cut_takes = (self.settings.takes.clone(), error);
        self.asset_rev += 1;
        let find = |n: &str| self.asset.clips.iter().position(|c| c.name == n);
        self.clip = find(&name)
            .or_else(|| source.as_deref().and_then(find))
            .unwrap_or(0);
        self.result = None;
        self.previous = None;
        self.before_edit = None;
    }

    /// What a result must have been computed from to be shown now (for the result cache).
    pub fn cache_key(&self) -> super::result_cache::CacheKey {
        super::result_cache::CacheKey {
            document: self.id,
            clip: self.clip,
            settings: self.resolved.clone(),
        }
    }

    /// Switches to another clip: nothing of the old clip's result is shown.
    pub fn set_clip(&mut self, clip: usize) {
        self.clip = clip;
        self.refresh();
        self.previous = None;
        self.before_edit = None;
    }

    /// What the panels show: the current result, or the previous one while recompressing.
    pub fn shown(&self) -> Option<&Compressed> {
        self.result.as_deref().or(self.previous.as_deref())
    }

    /// True while the panels show the previous result (a recompression is pending).
    pub fn is_stale(&self) -> bool {
        self.result.is_none() && self.previous.is_some()
    }

    /// Joints that `settings` would set below their floor (from the shown result) and that
    /// are not below it already: an edit to confirm first.
    pub fn below_floor(&self, settings: &Settings) -> Vec<super::panels::floor::BelowFloor> {
        let Some(result) = self.result.as_ref().or(self.previous.as_ref()) else {
            return Vec::new();
        };
        let floors = &result.clip.report.floors;
        let clip = self
            .asset
            .clips
            .get(self.clip)
            .map_or("", |c| c.name.as_str());
        let next = settings.resolve(&self.asset, clip).limits;
        let now = &self.resolved.limits;
        (0..next.len().min(floors.len()))
            .filter(|&j| next.evaluated[j] && next.tolerance[j] < floors[j])
            .filter(|&j| now.tolerance[j] >= floors[j] || next.tolerance[j] < now.tolerance[j])
            .map(|j| super::panels::floor::BelowFloor {
                joint: self.asset.skeleton.joints[j].name.clone(),
                tolerance: next.tolerance[j],
                floor: floors[j],
            })
            .collect()
    }

    pub fn is_dirty(&self) -> bool {
        self.settings != self.saved_settings
    }

    /// Object-space poses of the raw clip and of the compressed result (the raw pose when no
    /// result has arrived) at a fractional frame. An additive clip is drawn as players show
    /// it: its base with the additive applied (both the raw and the compressed keys).
    pub fn poses_at(&self, frame: f32) -> Poses {
        let s = &self.asset.skeleton;
        let n = s.len();
        let mut local = vec![Transform::IDENTITY; n];
        let mut raw = vec![Affine3A::IDENTITY; n];
        match self.asset.clips.get(self.clip) {
            Some(c) => c.sample_local(frame, &mut local),
            None => local = s.rest_pose(),
        }
        self.on_additive_base(frame, &mut local);
        local_to_object(s, &local, &mut raw);
        let compressed = self.shown().map(|r| {
            let mut out = vec![Affine3A::IDENTITY; n];
            r.poses.sample_local(frame, &mut local);
            self.on_additive_base(frame, &mut local);
            local_to_object(s, &local, &mut out);
            out
        });
        Poses { raw, compressed }
    }

    /// For an additive clip (with a base the asset holds), `local` applied on the base at
    /// `frame`; else `local` as it is.
    fn on_additive_base(&self, frame: f32, local: &mut [Transform]) {
        let (Some(a), Some(base)) = (&self.resolved.additive, &self.resolved.additive_base) else {
            return;
        };
        if base.is_empty() || base.iter().any(|p| p.len() != local.len()) {
            return;
        }
        for (j, l) in local.iter_mut().enumerate() {
            *l = crate::codec::playback::compose_on(a.mode, base, j, frame, l);
        }
    }
}

/// The selected joints: the focused one (curves, stats) and the whole set.
#[derive(Clone, Copy, Debug)]
pub struct Selection<'a> {
    pub focus: Option<usize>,
    pub set: &'a BTreeSet<usize>,
}

/// Object-space poses at one instant.
pub struct Poses {
    pub raw: Vec<Affine3A>,
    pub compressed: Option<Vec<Affine3A>>,
}

/// Playback of the current clip.
#[derive(Clone, Debug, PartialEq)]
pub struct Playback {
    pub playing: bool,
    /// Fractional frame position.
    pub frame: f32,
    pub speed: f32,
    pub looping: bool,
    /// When playback last advanced: time advances with the wall clock, so a slow window
    /// skips frames instead of playing slowly.
    pub clock: Option<std::time::Instant>,
    /// Frames the window draws per second while playing (smoothed), to say when it cannot
    /// keep up with the clip.
    pub drawn_fps: f32,
}

impl Default for Playback {
    fn default() -> Self {
        Self {
            playing: false,
            frame: 0.0,
            speed: 1.0,
            looping: true,
            clock: None,
            drawn_fps: 0.0,
        }
    }
}

impl Playback {
    /// Advances to the wall-clock time `now` (nothing on the first call after play starts),
    /// and keeps the window's drawing rate.
    pub fn tick(&mut self, now: std::time::Instant, rate: f32, frames: usize) {
        if !self.playing {
            self.clock = None;
            return;
        }
        if let Some(then) = self.clock {
            let dt = now.duration_since(then).as_secs_f32();
            if dt > 0.0 {
                let fps = 1.0 / dt;
                self.drawn_fps = if self.drawn_fps > 0.0 {
                    0.8 * self.drawn_fps + 0.2 * fps
                } else {
                    fps
                };
            }
            self.advance(dt, rate, frames);
        } else {
            self.drawn_fps = 0.0;
        }
        self.clock = Some(now);
    }

    /// True while playing and the window draws fewer frames than the clip has per second
    /// (at the playback speed): frames are skipped to keep real time.
    pub fn skipping(&self, rate: f32) -> bool {
        self.playing && self.drawn_fps > 0.0 && self.drawn_fps < 0.9 * rate * self.speed
    }

    /// Advances by `dt` seconds at `rate` fps through `frames` frames.
    pub fn advance(&mut self, dt: f32, rate: f32, frames: usize) {
        if !self.playing || frames < 2 {
            return;
        }
        let last = (frames - 1) as f32;
        self.frame += dt * rate * self.speed;
        if self.frame > last {
            if self.looping {
                self.frame = self.frame.rem_euclid(last);
            } else {
                self.frame = last;
                self.playing = false;
            }
        } else if self.frame < 0.0 {
            self.frame = if self.looping {
                self.frame.rem_euclid(last)
            } else {
                0.0
            };
        }
    }

    /// Steps whole frames, wrapping when looping.
    pub fn step(&mut self, delta: i32, frames: usize) {
        self.playing = false;
        let n = frames.max(1) as i32;
        let f = self.frame.round() as i32 + delta;
        let f = if self.looping {
            f.rem_euclid(n)
        } else {
            f.clamp(0, n - 1)
        };
        self.frame = f as f32;
    }
}

/// How the two skeletons are arranged.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Layout {
    SideBySide,
    Overlay,
}

/// What the viewport draws (persisted).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ViewOptions {
    pub layout: Layout,
    pub markers: bool,
    /// Markers (and error vectors) only on the selected joints, to declutter.
    pub markers_selected_only: bool,
    pub error_vectors: bool,
    pub mesh: bool,
    pub grid: bool,
    /// Error vectors are drawn this many times longer than they are.
    pub error_scale: f32,
    /// Follow the root horizontally (a walk is framed on the character, not on its path).
    pub in_place: bool,
    /// A/B flip: one copy, in one place; a key flips which (not persisted).
    #[serde(skip)]
    pub ab: Option<AbShow>,
    /// Compressed glTF exports byte-compress their animation data with
    /// `EXT_meshopt_compression` (the File menu's toggle; persisted with these options).
    pub gltf_meshopt: bool,
    /// After the open file is saved and reloaded, redo every export remembered in its
    /// sidecar (the File menu's "Export on save"; `inspector/live.rs`).
    #[serde(default)]
    pub export_on_save: bool,
}

/// Which copy the A/B flip shows.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AbShow {
    Original,
    Compressed,
}

impl AbShow {
    pub fn flipped(self) -> Self {
        match self {
            Self::Original => Self::Compressed,
            Self::Compressed => Self::Original,
        }
    }
}

impl Default for ViewOptions {
    fn default() -> Self {
        Self {
            layout: Layout::SideBySide,
            markers: true,
            markers_selected_only: false,
            error_vectors: true,
            mesh: true,
            grid: true,
            error_scale: 100.0,
            in_place: true,
            ab: None,
            gltf_meshopt: false,
            export_on_save: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn playback_wraps_and_clamps() {
        let mut p = Playback {
            playing: true,
            ..Default::default()
        };
        p.advance(1.0, 30.0, 11);
        assert!((p.frame - 10.0).abs() < 1e-4 || p.frame < 1e-3);
        p.looping = false;
        p.playing = true;
        p.advance(5.0, 30.0, 11);
        assert_eq!(p.frame, 10.0);
        assert!(!p.playing);
        p.step(1, 11);
        assert_eq!(p.frame, 10.0);
        p.looping = true;
        p.step(1, 11);
        assert_eq!(p.frame, 0.0);
    }

    #[test]
    fn playback_advances_by_wall_clock_time() {
        use std::time::{Duration, Instant};
        let mut p = Playback {
            playing: true,
            ..Playback::default()
        };
        let t0 = Instant::now();
        p.tick(t0, 30.0, 100);
        assert_eq!(p.frame, 0.0, "the first tick starts the clock");
        // A slow frame of half a second moves 15 frames at 30 fps: real time.
        p.tick(t0 + Duration::from_millis(500), 30.0, 100);
        assert!((p.frame - 15.0).abs() < 1e-3, "{}", p.frame);
        assert!(p.skipping(30.0), "2 fps drawn for a 30 fps clip");
        p.speed = 2.0;
        p.tick(t0 + Duration::from_millis(600), 30.0, 100);
        assert!((p.frame - 21.0).abs() < 1e-3, "{}", p.frame);
        p.playing = false;
        p.tick(t0 + Duration::from_secs(5), 30.0, 100);
        assert!(p.clock.is_none());
        assert!((p.frame - 21.0).abs() < 1e-3);
    }
}
