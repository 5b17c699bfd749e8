//! The inspector window: the [`App`] owns the state (document, selection, playback, view,
//! history, jobs) and opens files; `frame.rs` lays out one frame, `apply.rs` applies actions
//! (debounced recompression, the unsaved-settings question), `export_jobs.rs` runs exports on a
//! worker, `autopilot.rs` drives `skelpack view`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::actions::Action;
use super::compressor::Failure;
use super::default_asset;
use super::history::History;
use super::jobs::Jobs;
use super::panels::{self, banner::Banner};
use super::result_cache::ResultCache;
use super::state::{Document, Layout, Playback, Source, ViewOptions};
use super::viewport::Viewport;
use crate::settings::Settings;

mod apply;
mod autopilot;
mod export_jobs;
mod frame;

use self::apply::Confirm;
pub use self::autopilot::AutoOutcome;
use self::autopilot::Autopilot;
use self::export_jobs::ExportJob;

const RECENT_KEY: &str = "skelpack.recent";
const VIEW_KEY: &str = "skelpack.view";
const MAX_RECENT: usize = 10;
/// Quiet time after a settings edit before recompression starts (drags send many edits).
pub const DEBOUNCE: Duration = Duration::from_millis(200);
/// A native file dialog that answers with nothing faster than this never opened (no desktop
/// portal or zenity): the in-app path prompt is shown instead.
pub const NO_DIALOG: Duration = Duration::from_millis(300);

/// How the app starts (the `view` command and tests use the extra fields).
#[derive(Clone, Debug, Default)]
pub struct StartOptions {
    /// A file to open; None opens the default character.
    pub file: Option<PathBuf>,
    pub clip: Option<String>,
    pub frame: Option<f32>,
    /// A joint to select (by name).
    pub joint: Option<String>,
    /// Save a screenshot here once the compressed result is shown, then close.
    pub screenshot: Option<PathBuf>,
    /// Play this many frames once the result is shown, log frame times, then close.
    pub measure_frames: Option<usize>,
    /// Make this many settings edits once the result is shown (halve the selected joint's
    /// tolerance, then undo, alternately) and log how long each took to show.
    pub measure_edits: Option<usize>,
    /// Ignore persisted state (recent files, view options).
    pub ignore_storage: bool,
    /// Draw markers and error vectors on the selected joints only.
    pub markers_on_selection: bool,
}

/// The application.
pub struct App {
    doc: Option<Document>,
    next_id: u64,
    playback: Playback,
    view: ViewOptions,
    selected: Option<usize>,
    /// Every selected joint (contains `selected`).
    selection: BTreeSet<usize>,
    history: History<Settings>,
    last_edit: Option<(String, Instant)>,
    jobs: Jobs,
    viewport: Viewport,
    recent: Vec<PathBuf>,
    banner: Option<Banner>,
    status: String,
    show_about: bool,
    show_shortcuts: bool,
    joints_view: panels::joints::JointsView,
    pending: Vec<Action>,
    /// When the last settings edit lands, recompression starts at this instant.
    debounce_until: Option<Instant>,
    /// When the edit that the pending result answers was made (for the latency figure).
    edited_at: Option<Instant>,
    /// From a settings edit to its result being shown, for the last edit.
    last_latency: Option<Duration>,
    /// An action waiting for the user to save or discard unsaved settings.
    confirm: Option<Confirm>,
    /// The in-app path prompt (when no native file dialog can open).
    path_prompt: Option<panels::path_prompt::PathPrompt>,
    /// Results by the settings they were computed for (undo, redo and A/B show at once).
    results: ResultCache,
    /// An edit below joints' floors, waiting for the user to confirm it.
    below_floor: Option<(Vec<panels::floor::BelowFloor>, Action)>,
    /// The user chose to close (with unsaved changes saved or discarded).
    closing: bool,
    autopilot: Option<Autopilot>,
    last_frame: Option<Instant>,
    frame_ms: f64,
    title: String,
    adapter: String,
    viewport_rect: Option<egui::Rect>,
    tuning: panels::tuning::TuningView,
    curve_geom: Option<panels::curves::PlotGeom>,
    error_geoms: panels::errors::ErrorGeoms,
    /// Own / inherited error of the shown result (computed once per result).
    attribution: panels::attribution::AttributionCache,
    /// An export running on a worker thread.
    export_job: Option<ExportJob>,
}

impl App {
    /// The app on the default character (or on persisted state).
    pub fn new(cc: &eframe::CreationContext<'_>) -> Self {
        Self::with_options(cc, StartOptions::default())
    }

    pub fn with_options(cc: &eframe::CreationContext<'_>, opts: StartOptions) -> Self {
        let rs = cc.wgpu_render_state.as_ref();
        let adapter = rs.map_or("no wgpu".into(), |r| {
            let i = r.adapter.get_info();
            format!("{} ({:?})", i.name, i.backend)
        });
        let viewport = Viewport::new(rs);
        let mut jobs = Jobs::default();
        let ctx = cc.egui_ctx.clone();
        jobs.set_waker(Arc::new(move || ctx.request_repaint()));
        let (recent, view) = match (cc.storage, opts.ignore_storage) {
            (Some(s), false) => (
                eframe::get_value(s, RECENT_KEY).unwrap_or_default(),
                eframe::get_value(s, VIEW_KEY).unwrap_or_default(),
            ),
            _ => (Vec::new(), ViewOptions::default()),
        };
        let mut view = view;
        view.markers_selected_only |= opts.markers_on_selection;
        let mut app = Self {
            doc: None,
            next_id: 1,
            playback: Playback::default(),
            view,
            selected: None,
            selection: BTreeSet::new(),
            history: History::default(),
            last_edit: None,
            jobs,
            viewport,
            recent,
            banner: None,
            status: "Ready".into(),
            show_about: false,
            show_shortcuts: false,
            joints_view: Default::default(),
            pending: Vec::new(),
            debounce_until: None,
            edited_at: None,
            last_latency: None,
            confirm: None,
            below_floor: None,
            results: ResultCache::default(),
            path_prompt: None,
            closing: false,
            autopilot: None,
            last_frame: None,
            frame_ms: 0.0,
            title: String::new(),
            adapter,
            viewport_rect: None,
            tuning: Default::default(),
            curve_geom: None,
            error_geoms: Default::default(),
            attribution: Default::default(),
            export_job: None,
        };
        match &opts.file {
            Some(p) => {
                app.open_path(p);
            }
            None => app.open_default(),
        }
        if let Some(name) = &opts.clip
            && let Some(doc) = &app.doc
        {
            match doc.asset.clips.iter().position(|c| &c.name == name) {
                Some(i) => app.set_clip(i),
                None => app.set_banner(
                    format!("No clip named '{name}'"),
                    format!(
                        "{} has: {}",
                        doc.title(),
                        doc.asset
                            .clips
                            .iter()
                            .map(|c| c.name.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ),
            }
        }
        if let Some(name) = &opts.joint {
            let j = app
                .doc
                .as_ref()
                .and_then(|d| d.asset.skeleton.joints.iter().position(|j| &j.name == name));
            match j {
                Some(j) => app.select_joint(Some(j)),
                None => app.set_banner(format!("No joint named '{name}'"), String::new()),
            }
        }
        if let Some(f) = opts.frame {
            app.playback.frame = f.clamp(0.0, app.frame_count().saturating_sub(1) as f32);
        }
        if opts.screenshot.is_some()
            || opts.measure_frames.is_some()
            || opts.measure_edits.is_some()
        {
            app.autopilot = Some(Autopilot {
                screenshot: opts.screenshot.clone(),
                measure: opts.measure_frames.unwrap_or(0),
                ready_frames: 0,
                requested: false,
                measured: Vec::new(),
                builds: Vec::new(),
                edits: opts.measure_edits.unwrap_or(0),
                edit_in_flight: None,
                undo_in_flight: false,
                outcome: Arc::new(Mutex::new(AutoOutcome::default())),
                done: Arc::new(Mutex::new(false)),
            });
        }
        app
    }

    // ----- test hooks and programmatic actions -----

    /// Opens a file; on failure keeps the current document and shows the error banner.
    pub fn open_path(&mut self, path: &Path) -> bool {
        match crate::import::load(path) {
            Ok(asset) => {
                let (settings, warn) = load_sidecar(path);
                self.install(Source::File(path.to_path_buf()), asset, settings);
                self.push_recent(path);
                self.status = format!("Opened {}", path.display());
                if let Some(w) = warn {
                    self.set_banner("Settings file ignored".into(), w);
                }
                true
            }
            Err(e) => {
                self.set_banner(
                    format!(
                        "Could not open {}",
                        path.file_name().map_or_else(
                            || path.display().to_string(),
                            |n| n.to_string_lossy().into()
                        )
                    ),
                    e.to_string(),
                );
                self.status = format!("Open failed: {e}");
                false
            }
        }
    }

    /// Opens the default character.
    pub fn open_default(&mut self) {
        match default_asset::load_default() {
            Ok(asset) => {
                self.install(Source::Default, asset, Settings::default());
                self.status = "Opened the default character".into();
            }
            Err(e) => self.set_banner("Could not open the default character".into(), e.to_string()),
        }
    }

    fn install(&mut self, source: Source, asset: crate::import::Asset, settings: Settings) {
        self.jobs.cancel();
        if let Some(old) = &self.doc {
            self.results.forget_document(old.id);
        }
        let id = self.next_id;
        self.next_id += 1;
        self.doc = Some(Document::new(id, source, asset, settings));
        self.selected = None;
        self.selection.clear();
        self.joints_view = Default::default();
        self.debounce_until = None;
        self.edited_at = None;
        self.history.clear();
        self.last_edit = None;
        self.playback = Playback {
            speed: self.playback.speed,
            looping: self.playback.looping,
            ..Playback::default()
        };
        self.banner = None;
        self.viewport.request_frame();
        self.ensure_job();
    }

    pub fn document(&self) -> Option<&Document> {
        self.doc.as_ref()
    }

    pub fn selected(&self) -> Option<usize> {
        self.selected
    }

    /// Selects one joint (None clears the selection).
    pub fn select_joint(&mut self, joint: Option<usize>) {
        self.select_many(joint.into_iter().collect(), joint);
    }

    /// Selects `joints`; `focus` (one of them) is the joint the curves and stats follow.
    pub fn select_many(&mut self, joints: Vec<usize>, focus: Option<usize>) {
        let n = self.doc.as_ref().map_or(0, |d| d.asset.skeleton.len());
        self.selection = joints.into_iter().filter(|&j| j < n).collect();
        self.selected = focus
            .filter(|f| self.selection.contains(f))
            .or_else(|| self.selection.first().copied());
    }

    /// Every selected joint.
    pub fn selection(&self) -> &BTreeSet<usize> {
        &self.selection
    }

    /// From the last settings edit to its recompressed result being shown.
    pub fn last_edit_latency(&self) -> Option<Duration> {
        self.last_latency
    }

    /// True while an action waits for the user to save or discard unsaved settings.
    pub fn is_confirming(&self) -> bool {
        self.confirm.is_some()
    }

    pub fn playback(&self) -> &Playback {
        &self.playback
    }

    pub fn playback_mut(&mut self) -> &mut Playback {
        &mut self.playback
    }

    pub fn view_options(&self) -> &ViewOptions {
        &self.view
    }

    pub fn view_options_mut(&mut self) -> &mut ViewOptions {
        &mut self.view
    }

    pub fn set_layout(&mut self, layout: Layout) {
        if self.view.layout != layout {
            self.view.layout = layout;
            self.viewport.request_frame();
        }
    }

    /// The error banner's title and message.
    pub fn error_banner(&self) -> Option<(&str, &str)> {
        self.banner
            .as_ref()
            .map(|b| (b.title.as_str(), b.message.as_str()))
    }

    pub fn status(&self) -> &str {
        &self.status
    }

    pub fn recent_files(&self) -> &[PathBuf] {
        &self.recent
    }

    pub fn set_clip(&mut self, clip: usize) {
        if let Some(doc) = &mut self.doc
            && clip < doc.asset.clips.len()
            && clip != doc.clip
        {
            doc.set_clip(clip);
            self.playback.frame = 0.0;
            self.viewport.request_frame();
            self.ensure_job();
        }
    }

    /// Queues an action as if a menu item or button had been used.
    pub fn perform(&mut self, action: Action) {
        self.pending.push(action);
    }

    /// Blocks until the current document's compressed result is in (tests, `view`): the
    /// refined one, not a first pass.
    pub fn wait_for_result(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if let Some(t) = self.debounce_until {
                std::thread::sleep(t.saturating_duration_since(Instant::now()));
            }
            self.ensure_job();
            let Some(doc) = &self.doc else { return false };
            if doc.result.as_ref().is_some_and(|r| !r.refining) {
                return true;
            }
            if doc.failure.is_some() {
                return false;
            }
            let left = end.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            if let Some(r) = self.jobs.wait(left) {
                self.accept(r);
            }
        }
    }

    /// True while a compression job runs.
    pub fn is_compressing(&self) -> bool {
        self.jobs.running().is_some()
    }

    /// Where the 3-D viewport was drawn last frame (points).
    pub fn viewport_rect(&self) -> Option<egui::Rect> {
        self.viewport_rect
    }

    /// Where joint `j` of the original skeleton was drawn in the viewport last frame.
    pub fn joint_screen_position(&self, j: usize) -> Option<egui::Pos2> {
        self.viewport.joint_position(j)
    }

    /// Where the first curve plot (the selected joint's first animated track) was drawn
    /// last frame.
    pub fn curve_plot(&self) -> Option<panels::curves::PlotGeom> {
        self.curve_geom
    }

    /// Where the selected joint's error plot was drawn last frame.
    pub fn error_plot(&self) -> Option<panels::curves::PlotGeom> {
        self.error_geoms.plot
    }

    /// Where the error heatmap was drawn last frame (cells by joint and frame).
    pub fn heatmap(&self) -> Option<&panels::errors::HeatmapGeom> {
        self.error_geoms.heatmap.as_ref()
    }

    /// Whether rotations are plotted as Euler angles.
    pub fn set_euler(&mut self, on: bool) {
        self.tuning.curves.euler = on;
    }

    /// Whether the curves panel plots residuals (raw − decoded) instead of curves.
    pub fn set_residual(&mut self, on: bool) {
        self.tuning.curves.residual = on;
    }

    /// Milliseconds between the last two frames.
    pub fn frame_time_ms(&self) -> f64 {
        self.frame_ms
    }

    /// CPU time spent building the last viewport frame.
    pub fn viewport_build_time(&self) -> Duration {
        self.viewport.last_build
    }

    pub fn undo(&mut self) {
        self.pending.push(Action::Undo);
        self.apply_pending_now();
    }

    pub fn redo(&mut self) {
        self.pending.push(Action::Redo);
        self.apply_pending_now();
    }

    /// Applies queued actions immediately (outside a frame; no dialogs are involved).
    pub fn apply_pending_now(&mut self) {
        let actions = std::mem::take(&mut self.pending);
        for a in actions {
            self.apply(a, None);
        }
    }

    /// The outcome of an automated run, once it has finished.
    pub fn auto_outcome(&self) -> Option<Arc<Mutex<AutoOutcome>>> {
        self.autopilot.as_ref().map(|a| a.outcome.clone())
    }

    // ----- internals -----

    fn frame_count(&self) -> usize {
        self.doc.as_ref().map_or(1, |d| d.frame_count())
    }

    fn set_banner(&mut self, title: String, message: String) {
        self.banner = Some(Banner { title, message });
    }

    fn push_recent(&mut self, path: &Path) {
        let p = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.recent.retain(|r| r != &p);
        self.recent.insert(0, p);
        self.recent.truncate(MAX_RECENT);
    }

    /// Shows a kept result for the current settings at once (undo, redo, A/B), or starts a
    /// job for them once edits have paused, unless one runs or a result / failure is in.
    fn ensure_job(&mut self) {
        if self.show_cached() {
            return;
        }
        if self.debounce_until.is_some_and(|t| Instant::now() < t) {
            return;
        }
        self.debounce_until = None;
        let Some(doc) = &self.doc else { return };
        if !doc.has_clip() || doc.result.is_some() || doc.failure.is_some() {
            return;
        }
        let key = doc.key();
        if self.jobs.running().is_some_and(|(k, _)| k == key) {
            return;
        }
        self.jobs
            .start(key, doc.asset.clone(), doc.resolved.clone());
    }

    /// Shows the kept result for the current settings, if there is one; true if shown.
    pub(super) fn show_cached(&mut self) -> bool {
        let Some(doc) = &mut self.doc else {
            return false;
        };
        if !doc.has_clip() || doc.result.is_some() || doc.failure.is_some() {
            return false;
        }
        let Some(c) = self.results.get(&doc.cache_key()) else {
            return false;
        };
        self.jobs.cancel();
        self.debounce_until = None;
        Self::record_latency(&mut self.edited_at, &mut self.last_latency);
        self.status = format!(
            "'{}': {:.2}:1, max error {} (an earlier result for these settings)",
            doc.clip_name(),
            c.sizes.ratio(),
            panels::fmt_len(c.errors.samples.max, doc.resolved.unit),
        );
        doc.result = Some(c);
        doc.previous = None;
        true
    }

    /// A result for the last edit is on screen: the time since the edit becomes the last
    /// latency (returned).
    fn record_latency(
        edited_at: &mut Option<Instant>,
        last_latency: &mut Option<Duration>,
    ) -> Option<Duration> {
        let after_edit = edited_at.take().map(|t| t.elapsed());
        if after_edit.is_some() {
            *last_latency = after_edit;
        }
        after_edit
    }

    fn accept(&mut self, r: super::jobs::JobResult) {
        let Some(doc) = &mut self.doc else { return };
        if r.key != doc.key() {
            return; // stale: computed for another document, clip or settings revision
        }
        match r.outcome {
            Ok(c) => {
                let after_edit = Self::record_latency(&mut self.edited_at, &mut self.last_latency);
                self.status = format!(
                    "{} '{}': {:.2}:1, max error {}{}",
                    if c.refining {
                        "First pass (refining)"
                    } else {
                        "Compressed"
                    },
                    doc.clip_name(),
                    c.sizes.ratio(),
                    panels::fmt_len(c.errors.samples.max, doc.resolved.unit),
                    after_edit.map_or(String::new(), |d| format!(
                        "; shown {:.0} ms after the edit",
                        d.as_secs_f64() * 1e3
                    ))
                );
                // With nothing selected, show the joint whose own tracks cause the largest
                // error (else the worst joint with curves of its own).
                if self.selected.is_none() {
                    let worst = panels::attribution::cause_of_worst(
                        &doc.asset,
                        doc.clip,
                        &doc.resolved.limits,
                        &c,
                    )
                    .or_else(|| worst_animated_joint(&c))
                    .unwrap_or(c.errors.samples.worst_joint);
                    self.selected = Some(worst);
                    self.selection = BTreeSet::from([worst]);
                }
                let c = Arc::new(c);
                // A first pass shows until the refined result replaces it; only that is kept.
                if !c.refining {
                    self.results.insert(doc.cache_key(), c.clone());
                }
                doc.result = Some(c);
                doc.previous = None;
                doc.failure = None;
            }
            Err(Failure::Cancelled) => {
                doc.failure = Some("Compression cancelled.".into());
            }
            Err(Failure::Error(e)) => {
                doc.failure = Some(format!("Compression failed: {e}"));
            }
        }
    }
}

/// The joint with the largest error among those with curves of their own.
fn worst_animated_joint(c: &super::compressor::Compressed) -> Option<usize> {
    c.joint_costs
        .iter()
        .zip(&c.errors.joint_max)
        .enumerate()
        .filter(|(_, (cost, _))| cost.animated_tracks > 0)
        .max_by(|a, b| a.1.1.total_cmp(b.1.1))
        .map(|(j, _)| j)
}

fn load_sidecar(asset: &Path) -> (Settings, Option<String>) {
    let p = Settings::sidecar_path(asset);
    if !p.is_file() {
        return (Settings::default(), None);
    }
    match Settings::load(&p) {
        Ok(s) => (s, None),
        Err(e) => (Settings::default(), Some(e.to_string())),
    }
}
