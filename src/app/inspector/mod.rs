//! The inspector window: the [`App`] owns the state, grouped by concern (`session.rs` the
//! document and history, `view_state.rs` selection / playback / viewport, `chrome.rs` status
//! and dialogs, `work.rs` jobs and results, `measure.rs` latency and frame timing) and opens
//! files; `frame.rs` lays out one frame, `apply.rs` applies actions (recompression at once
//! after an edit, the unsaved-settings question), `export_jobs.rs` runs exports on a worker,
//! `autopilot.rs` drives `skelpack view`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::actions::Action;
use super::compressor::Failure;
use super::default_asset;
use super::jobs::Jobs;
use super::panels::{self, banner::Banner};
use super::state::{Document, Layout, Playback, Source, ViewOptions};
use super::viewport::Viewport;
use crate::settings::Settings;

mod apply;
mod autopilot;
mod chrome;
mod clip_work;
mod dashboard;
mod dialogs;
mod export_jobs;
mod frame;
mod live;
mod measure;
mod pieces;
mod session;
mod view_state;
mod work;

use self::chrome::Chrome;
use self::measure::Measure;
use self::session::Session;
use self::view_state::ViewState;
use self::work::Work;

use self::autopilot::Autopilot;
pub use self::autopilot::{AutoOutcome, IdleFigures};

const RECENT_KEY: &str = "skelpack.recent";
const VIEW_KEY: &str = "skelpack.view";
const MAX_RECENT: usize = 10;
/// Longest the frame of a settings edit waits for the edit's result, so that frame
/// already paints it: the final result when it comes in time, else the first pass (ready in
/// milliseconds after an edit). A frame on a software renderer that would paint the stale
/// result instead costs a hundred milliseconds or more.
pub const EDIT_WAIT: Duration = Duration::from_millis(100);
/// Longest the frame of a settings edit waits for the edit's first pass. Past
/// [`EDIT_WAIT`] it waits for the first pass only: painting the stale result would take as
/// long on a software renderer, and the first pass would then wait for the next frame (on
/// an 840-joint rig, whose first pass takes about 100 ms of CPU, that put it 185 ms after
/// the edit instead of 110 ms).
pub const FIRST_PASS_WAIT: Duration = Duration::from_millis(400);
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
    /// Once the result is shown, sit idle this many seconds and log the frames painted and
    /// the CPU used meanwhile.
    pub measure_idle: Option<f32>,
    /// Open the clip dashboard.
    pub dashboard: bool,
    /// The window's inner size in points (None: 1600 x 960).
    pub window: Option<[f32; 2]>,
    /// The shared result cache (`--cache` / `SKELPACK_CACHE`: a folder or an HTTP URL) and a
    /// folder's size bound in bytes: final results are taken from it and written to it.
    pub cache: Option<(String, u64)>,
    /// Turn on "Export on save" (the File menu's toggle).
    pub export_on_save: bool,
}

/// The application: state grouped by concern, each group in its own module.
pub struct App {
    /// The open document, its undo history, recent files.
    session: Session,
    /// Selection, playback, view options, the viewport and the panels' own state.
    view: ViewState,
    /// Status line, banner, title and open dialogs.
    chrome: Chrome,
    /// Compression jobs, kept results, the export worker.
    work: Work,
    /// Edit latency, frame timing and the `view` autopilot.
    measure: Measure,
    /// Actions queued by panels, keys and tests, applied after the frame's UI.
    pending: Vec<Action>,
    /// The open file watched for saves (`live.rs`).
    live: live::Live,
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
        super::backdrop::install(&cc.egui_ctx);
        let software =
            rs.is_some_and(|r| super::software::is_software(r.adapter.get_info().device_type));
        super::software::configure(&cc.egui_ctx, software);
        let mut jobs = Jobs::default();
        let ctx = cc.egui_ctx.clone();
        jobs.set_waker(Arc::new(move || ctx.request_repaint()));
        let mut clips = clip_work::ClipWork::default();
        let ctx = cc.egui_ctx.clone();
        clips
            .jobs
            .set_waker(Arc::new(move || ctx.request_repaint()));
        let shared_cache = opts.cache.as_ref().and_then(|(spec, max_bytes)| {
            crate::cache::ResultCache::open(spec, *max_bytes)
                .map_err(|e| eprintln!("warning: {e}; the app runs without it"))
                .ok()
                .map(Arc::new)
        });
        if let Some(c) = &shared_cache {
            jobs.set_cache(c.clone());
            clips.jobs.set_cache(c.clone());
        }
        let ctx = cc.egui_ctx.clone();
        let live = live::Live::new(Arc::new(move || ctx.request_repaint()));
        let (recent, view) = match (cc.storage, opts.ignore_storage) {
            (Some(s), false) => (
                eframe::get_value(s, RECENT_KEY).unwrap_or_default(),
                eframe::get_value(s, VIEW_KEY).unwrap_or_default(),
            ),
            _ => (Vec::new(), ViewOptions::default()),
        };
        let mut view = view;
        view.markers_selected_only |= opts.markers_on_selection;
        view.export_on_save |= opts.export_on_save;
        let mut app = Self {
            session: Session {
                next_id: 1,
                recent,
                ..Default::default()
            },
            view: ViewState::new(viewport, view),
            chrome: Chrome::default(),
            work: Work {
                jobs,
                clips,
                shared_cache: shared_cache.map(work::SharedCache),
                ..Default::default()
            },
            measure: Measure {
                adapter,
                ..Default::default()
            },
            pending: Vec::new(),
            live,
        };
        match &opts.file {
            Some(p) => {
                app.open_path(p);
            }
            None => app.open_default(),
        }
        if let Some(name) = &opts.clip
            && let Some(doc) = &app.session.doc
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
                .session
                .doc
                .as_ref()
                .and_then(|d| d.asset.skeleton.joints.iter().position(|j| &j.name == name));
            match j {
                Some(j) => app.select_joint(Some(j)),
                None => app.set_banner(format!("No joint named '{name}'"), String::new()),
            }
        }
        app.work.clips.open = opts.dashboard;
        if let Some(f) = opts.frame {
            app.view.playback.frame = f.clamp(0.0, app.frame_count().saturating_sub(1) as f32);
        }
        if opts.screenshot.is_some()
            || opts.measure_frames.is_some()
            || opts.measure_edits.is_some()
            || opts.measure_idle.is_some()
        {
            app.measure.autopilot = Some(Autopilot {
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
                last_cpu: None,
                cpu: Vec::new(),
                idle: Duration::from_secs_f32(opts.measure_idle.unwrap_or(0.0).clamp(0.0, 3600.0)),
                idle_start: None,
                idle_frames: 0,
            });
        }
        app
    }

    // ----- test hooks and programmatic actions -----

    /// Opens a file; on failure keeps the current document and shows the error banner.
    pub fn open_path(&mut self, path: &Path) -> bool {
        self.measure.opening();
        match crate::import::load(path) {
            Ok(asset) => {
                let (settings, warn) = load_sidecar(path);
                self.install(Source::File(path.to_path_buf()), asset, settings);
                self.push_recent(path);
                self.chrome.status = format!("Opened {}", path.display());
                if let Some(w) = warn {
                    self.set_banner("Settings file ignored".into(), w);
                }
                if let Some(e) = self
                    .session
                    .doc
                    .as_ref()
                    .and_then(|d| d.cut_takes.1.clone())
                {
                    self.set_banner("Takes not cut into pieces".into(), e);
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
                self.chrome.status = format!("Open failed: {e}");
                false
            }
        }
    }

    /// Opens the default character.
    pub fn open_default(&mut self) {
        self.measure.opening();
        match default_asset::load_default() {
            Ok(asset) => {
                self.install(Source::Default, asset, Settings::default());
                self.chrome.status = "Opened the default character".into();
            }
            Err(e) => self.set_banner("Could not open the default character".into(), e.to_string()),
        }
    }

    fn install(&mut self, source: Source, asset: crate::import::Asset, settings: Settings) {
        self.work.jobs.cancel();
        self.work.clips.reset();
        if let Some(old) = &self.session.doc {
            self.work.results.forget_document(old.id);
        }
        let id = self.session.next_id;
        self.session.next_id += 1;
        self.session.doc = Some(Document::new(id, source, asset, settings));
        self.view.selected = None;
        self.view.selection.clear();
        self.view.joints_view = Default::default();
        self.measure.edited_at = None;
        self.session.history.clear();
        self.session.last_edit = None;
        self.session.cut_seen = 0;
        self.view.playback = Playback {
            speed: self.view.playback.speed,
            looping: self.view.playback.looping,
            ..Playback::default()
        };
        self.chrome.banner = None;
        // A held edit belongs to the document it was made on.
        if matches!(self.chrome.dialog, Some(dialogs::Dialog::BelowFloor(..))) {
            self.chrome.dialog = None;
        }
        self.view.viewport.request_frame();
        self.watch_source();
        self.ensure_job();
    }

    pub fn document(&self) -> Option<&Document> {
        self.session.doc.as_ref()
    }

    pub fn selected(&self) -> Option<usize> {
        self.view.selected
    }

    /// Selects one joint (None clears the selection).
    pub fn select_joint(&mut self, joint: Option<usize>) {
        self.select_many(joint.into_iter().collect(), joint);
    }

    /// Selects `joints`; `focus` (one of them) is the joint the curves and stats follow.
    pub fn select_many(&mut self, joints: Vec<usize>, focus: Option<usize>) {
        let n = self
            .session
            .doc
            .as_ref()
            .map_or(0, |d| d.asset.skeleton.len());
        self.view.auto_selected = false;
        self.view.selection = joints.into_iter().filter(|&j| j < n).collect();
        self.view.selected = focus
            .filter(|f| self.view.selection.contains(f))
            .or_else(|| self.view.selection.first().copied());
    }

    /// Every selected joint.
    pub fn selection(&self) -> &BTreeSet<usize> {
        &self.view.selection
    }

    /// From the last settings edit to its first recompressed result being shown (a first
    /// pass, or the final result when no relaxation follows).
    pub fn last_edit_latency(&self) -> Option<Duration> {
        self.measure.last_latency
    }

    /// From the open document's file being read to its first result shown, and to its
    /// final result (None until each is shown).
    pub fn open_latency(&self) -> (Option<Duration>, Option<Duration>) {
        (self.measure.open_first, self.measure.open_final)
    }

    /// From the last settings edit to its final (refined) result being shown.
    pub fn last_edit_final_latency(&self) -> Option<Duration> {
        self.measure.last_final_latency
    }

    /// True while an action waits for the user to save or discard unsaved settings.
    pub fn is_confirming(&self) -> bool {
        matches!(self.chrome.dialog, Some(dialogs::Dialog::Unsaved(_)))
    }

    pub fn playback(&self) -> &Playback {
        &self.view.playback
    }

    pub fn playback_mut(&mut self) -> &mut Playback {
        &mut self.view.playback
    }

    pub fn view_options(&self) -> &ViewOptions {
        &self.view.options
    }

    pub fn view_options_mut(&mut self) -> &mut ViewOptions {
        &mut self.view.options
    }

    pub fn set_layout(&mut self, layout: Layout) {
        if self.view.options.layout != layout {
            self.view.options.layout = layout;
            self.view.viewport.request_frame();
        }
    }

    /// The error banner's title and message.
    pub fn error_banner(&self) -> Option<(&str, &str)> {
        self.chrome
            .banner
            .as_ref()
            .map(|b| (b.title.as_str(), b.message.as_str()))
    }

    pub fn status(&self) -> &str {
        &self.chrome.status
    }

    pub fn recent_files(&self) -> &[PathBuf] {
        &self.session.recent
    }

    pub fn set_clip(&mut self, clip: usize) {
        if let Some(doc) = &mut self.session.doc
            && clip < doc.asset.clips.len()
            && clip != doc.clip
        {
            doc.set_clip(clip);
            self.view.playback.frame = 0.0;
            self.view.viewport.request_frame();
            self.ensure_job();
        }
    }

    /// Queues an action as if a menu item or button had been used.
    pub fn perform(&mut self, action: Action) {
        self.pending.push(action);
    }

    /// Blocks until the current document's compressed result is in (tests, `view`): the
    /// refined one, not a first pass. False at once when the document has no clip.
    pub fn wait_for_result(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            self.ensure_job();
            let Some(doc) = &self.session.doc else {
                return false;
            };
            // A file without a clip has nothing to compress: no result will come.
            if !doc.has_clip() {
                return false;
            }
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
            if let Some(r) = self.work.jobs.wait(left) {
                self.accept(r);
            }
        }
    }

    /// True while a compression job runs.
    pub fn is_compressing(&self) -> bool {
        self.work.jobs.running().is_some()
    }

    /// Where the 3-D viewport was drawn last frame (points).
    pub fn viewport_rect(&self) -> Option<egui::Rect> {
        self.view.viewport_rect
    }

    /// Where joint `j` of the original skeleton was drawn in the viewport last frame.
    pub fn joint_screen_position(&self, j: usize) -> Option<egui::Pos2> {
        self.view.viewport.joint_position(j)
    }

    /// Where the first curve plot (the selected joint's first animated track) was drawn
    /// last frame.
    pub fn curve_plot(&self) -> Option<panels::curves::PlotGeom> {
        self.view.curve_geom
    }

    /// Where the selected joint's error plot was drawn last frame.
    pub fn error_plot(&self) -> Option<panels::curves::PlotGeom> {
        self.view.error_geoms.plot
    }

    /// Where the error heatmap was drawn last frame (cells by joint and frame).
    pub fn heatmap(&self) -> Option<&panels::errors::HeatmapGeom> {
        self.view.error_geoms.heatmap.as_ref()
    }

    /// The copies' labels drawn in the viewport last frame (text, rectangle).
    pub fn viewport_labels(&self) -> &[(String, egui::Rect)] {
        &self.view.viewport.labels
    }

    /// The joint under the pointer in the viewport last frame.
    pub fn hovered_joint(&self) -> Option<usize> {
        self.view.viewport.hovered
    }

    /// Whether rotations are plotted as Euler angles.
    pub fn set_euler(&mut self, on: bool) {
        self.view.tuning.curves.euler = on;
    }

    /// Whether the curves panel plots residuals (raw − decoded) instead of curves.
    pub fn set_residual(&mut self, on: bool) {
        self.view.tuning.curves.residual = on;
    }

    /// Milliseconds between the last two frames.
    pub fn frame_time_ms(&self) -> f64 {
        self.measure.frame_ms
    }

    /// CPU time spent building the last viewport frame.
    pub fn viewport_build_time(&self) -> Duration {
        self.view.viewport.last_build
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
        self.measure.autopilot.as_ref().map(|a| a.outcome.clone())
    }

    // ----- internals -----

    fn frame_count(&self) -> usize {
        self.session.doc.as_ref().map_or(1, |d| d.frame_count())
    }

    fn set_banner(&mut self, title: String, message: String) {
        self.chrome.banner = Some(Banner { title, message });
    }

    fn push_recent(&mut self, path: &Path) {
        let p = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
        self.session.recent.retain(|r| r != &p);
        self.session.recent.insert(0, p);
        self.session.recent.truncate(MAX_RECENT);
    }

    /// Shows a kept result for the current settings at once (undo, redo, A/B), or starts a
    /// job for them, unless one runs or a result / failure is in.
    pub(super) fn ensure_job(&mut self) {
        if self.show_cached() {
            return;
        }
        let Some(doc) = &self.session.doc else { return };
        if !doc.has_clip() || doc.result.is_some() || doc.failure.is_some() {
            return;
        }
        let key = doc.key();
        if self.work.jobs.running().is_some_and(|(k, _)| k == key) {
            return;
        }
        self.work
            .jobs
            .start(key, doc.asset.clone(), doc.resolved.clone());
    }

    /// Right after a settings edit: waits up to [`EDIT_WAIT`] from the edit for its final
    /// result, showing the first pass (ready in milliseconds after an edit) if that is all
    /// that came by then, and for the first pass up to [`FIRST_PASS_WAIT`] if it has not
    /// come; true if anything new is shown.
    pub(super) fn wait_for_edit_result(&mut self) -> bool {
        let Some(edited) = self
            .measure
            .edited_at
            .filter(|_| self.measure.awaiting_first)
        else {
            return false;
        };
        let mut shown = false;
        loop {
            let deadline = edited
                + if self.measure.awaiting_first {
                    FIRST_PASS_WAIT
                } else {
                    EDIT_WAIT
                };
            let Some(doc) = &self.session.doc else {
                return shown;
            };
            if !self
                .work
                .jobs
                .running()
                .is_some_and(|(k, _)| k == doc.key())
            {
                return shown;
            }
            let left = deadline.saturating_duration_since(Instant::now());
            let Some(r) = (!left.is_zero())
                .then(|| self.work.jobs.wait(left))
                .flatten()
            else {
                return shown;
            };
            self.accept(r);
            shown |= !self.measure.awaiting_first;
        }
    }

    /// Shows the kept result for the current settings, if there is one; true if shown.
    pub(super) fn show_cached(&mut self) -> bool {
        let Some(doc) = &mut self.session.doc else {
            return false;
        };
        if !doc.has_clip() || doc.result.is_some() || doc.failure.is_some() {
            return false;
        }
        let Some(c) = self.work.results.get(&doc.cache_key()) else {
            return false;
        };
        self.work.jobs.cancel();
        self.measure.record_latency(true);
        self.chrome.status = format!(
            "'{}': {:.2}:1, max error {} (an earlier result for these settings)",
            doc.clip_name(),
            c.sizes.ratio(),
            panels::fmt_len(c.errors.samples.max, doc.resolved.unit),
        );
        doc.result = Some(c);
        doc.previous = None;
        true
    }

    fn accept(&mut self, r: super::jobs::JobResult) {
        let Some(doc) = &mut self.session.doc else {
            return;
        };
        if r.key != doc.key() {
            return; // stale: computed for another document, clip or settings revision
        }
        match r.outcome {
            Ok(c) => {
                self.measure.record_open(!c.refining);
                let after_edit = self.measure.record_latency(!c.refining);
                self.chrome.status = format!(
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
                // A file opened with nothing selected shows where "Go to worst" goes; the
                // selection follows the opening's results (a first pass, then the refined
                // one) until the user picks a joint.
                if self.view.selected.is_none() || self.view.auto_selected {
                    let worst =
                        panels::attribution::worst(&doc.asset, doc.clip, &doc.resolved.limits, &c)
                            .map(|w| w.cause)
                            .or_else(|| worst_animated_joint(&c))
                            .unwrap_or(c.errors.samples.worst_joint);
                    self.view.selected = Some(worst);
                    self.view.selection = BTreeSet::from([worst]);
                    self.view.auto_selected = c.refining;
                }
                let c = Arc::new(c);
                // A first pass shows until the refined result replaces it; only that is kept.
                if !c.refining {
                    self.work.results.insert(doc.cache_key(), c.clone());
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
