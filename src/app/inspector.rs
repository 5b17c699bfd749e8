//! The inspector window: owns the state, lays out the panels around the viewport, applies
//! actions, runs compression jobs, persists recent files and view options.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use egui::{Key, Modifiers};

use super::actions::Action;
use super::compressor::Failure;
use super::default_asset;
use super::history::History;
use super::jobs::Jobs;
use super::panels::{self, banner::Banner};
use super::state::{Document, Layout, Playback, Selection, Source, ViewOptions};
use super::viewport::Viewport;
use crate::settings::Settings;

const RECENT_KEY: &str = "skelpack.recent";
const VIEW_KEY: &str = "skelpack.view";
const MAX_RECENT: usize = 10;
/// Quiet time after a settings edit before recompression starts (drags send many edits).
pub const DEBOUNCE: Duration = Duration::from_millis(200);

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
}

/// What an automated run (`skelpack view`) reports when it ends.
#[derive(Clone, Debug, Default)]
pub struct AutoOutcome {
    pub error: Option<String>,
    pub screenshot: Option<PathBuf>,
    pub frame_times_ms: Vec<f64>,
    pub build_times_ms: Vec<f64>,
    /// Per measured edit: from the edit to its result shown, and the compression alone.
    pub edit_latency_ms: Vec<f64>,
    pub edit_compress_ms: Vec<f64>,
}

struct Autopilot {
    screenshot: Option<PathBuf>,
    measure: usize,
    ready_frames: usize,
    requested: bool,
    measured: Vec<f64>,
    builds: Vec<f64>,
    /// Edits still to make, and the settings revision of the one in flight.
    edits: usize,
    edit_in_flight: Option<u64>,
    outcome: Arc<Mutex<AutoOutcome>>,
    done: Arc<Mutex<bool>>,
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
    /// An export running on a worker thread.
    export_job: Option<ExportJob>,
}

/// An action that would lose unsaved settings, held until the user decides.
#[derive(Clone, Debug)]
enum Confirm {
    Close,
    Run(Action),
}

/// A running export: what, where, and the channel its result arrives on.
struct ExportJob {
    what: String,
    path: PathBuf,
    result: std::sync::mpsc::Receiver<Result<super::exporter::ExportSummary, String>>,
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

    /// Blocks until the current document's compressed result is in (tests, `view`).
    pub fn wait_for_result(&mut self, timeout: Duration) -> bool {
        let end = Instant::now() + timeout;
        loop {
            if let Some(t) = self.debounce_until {
                std::thread::sleep(t.saturating_duration_since(Instant::now()));
            }
            self.ensure_job();
            let Some(doc) = &self.doc else { return false };
            if doc.result.is_some() {
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

    /// Starts a job for the current key unless one runs or a result / failure is in.
    fn ensure_job(&mut self) {
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

    fn accept(&mut self, r: super::jobs::JobResult) {
        let Some(doc) = &mut self.doc else { return };
        if r.key != doc.key() {
            return; // stale: computed for another document, clip or settings revision
        }
        match r.outcome {
            Ok(c) => {
                let after_edit = self.edited_at.take().map(|t| t.elapsed());
                if after_edit.is_some() {
                    self.last_latency = after_edit;
                }
                self.status = format!(
                    "Compressed '{}': {:.2}:1, max error {}{}",
                    doc.clip_name(),
                    c.sizes.ratio(),
                    panels::fmt_len(c.errors.samples.max, doc.resolved.unit),
                    after_edit.map_or(String::new(), |d| format!(
                        "; shown {:.0} ms after the edit",
                        d.as_secs_f64() * 1e3
                    ))
                );
                // With nothing selected, show the joint compression hurts most (one with
                // curves of its own, when any joint has them).
                if self.selected.is_none() {
                    let worst = worst_animated_joint(&c).unwrap_or(c.errors.samples.worst_joint);
                    self.selected = Some(worst);
                    self.selection = BTreeSet::from([worst]);
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

    fn apply(&mut self, action: Action, ctx: Option<&egui::Context>) {
        match action {
            Action::Open(_) | Action::OpenDialog | Action::OpenDefault
                if self.unsaved_would_be_lost() =>
            {
                self.confirm = Some(Confirm::Run(action));
            }
            Action::Open(p) => {
                self.open_path(&p);
            }
            Action::OpenDialog => {
                let picked = rfd::FileDialog::new()
                    .add_filter("Animation", &["glb", "gltf", "bvh", "sjson"])
                    .pick_file();
                match picked {
                    Some(p) => {
                        self.open_path(&p);
                    }
                    None => {
                        self.status =
                            "Open: no file chosen (drop a file on the window, or pass a path)"
                                .into()
                    }
                }
            }
            Action::OpenDefault => self.open_default(),
            Action::ClearRecent => self.recent.clear(),
            Action::ExportGltf(p) => self.export(
                p,
                "glb",
                "Export Compressed glTF",
                super::exporter::export_gltf,
            ),
            Action::ExportSkp(p) => {
                self.export(p, "skp", "Export .skp", super::exporter::export_skp)
            }
            Action::SaveSettings(p) => self.save_settings(p),
            Action::SaveSettingsAs => {
                let name = self.doc.as_ref().map_or(String::new(), |d| d.title());
                match rfd::FileDialog::new()
                    .add_filter("skelpack settings", &["toml", "json"])
                    .set_file_name(format!("{name}.skelpack.toml"))
                    .save_file()
                {
                    Some(p) => self.save_settings(Some(p)),
                    None => self.status = "Save Settings As: no file chosen".into(),
                }
            }
            Action::Quit if self.unsaved_would_be_lost() => self.confirm = Some(Confirm::Close),
            Action::Quit => {
                self.closing = true;
                if let Some(c) = ctx {
                    c.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            Action::Undo | Action::Redo => {
                let Some(doc) = &mut self.doc else { return };
                let label = if matches!(action, Action::Undo) {
                    self.history.undo(&mut doc.settings)
                } else {
                    self.history.redo(&mut doc.settings)
                };
                if let Some(l) = label {
                    doc.settings_rev += 1;
                    doc.refresh();
                    self.last_edit = None;
                    self.settings_changed();
                    self.status = format!(
                        "{} {l}",
                        if matches!(action, Action::Undo) {
                            "Undid"
                        } else {
                            "Redid"
                        }
                    );
                }
            }
            Action::EditSettings(label, settings) => {
                let Some(doc) = &mut self.doc else { return };
                if *settings == doc.settings {
                    return;
                }
                // Consecutive drags of one value make one undo step.
                let coalesce = self
                    .last_edit
                    .as_ref()
                    .is_some_and(|(l, t)| *l == label && t.elapsed() < Duration::from_millis(800));
                let before = std::mem::replace(&mut doc.settings, *settings);
                if !coalesce {
                    self.history.record(label.clone(), before);
                }
                self.last_edit = Some((label.clone(), Instant::now()));
                doc.settings_rev += 1;
                doc.refresh();
                self.status = format!("Changed {label}; recompressing");
                self.settings_changed();
            }
            Action::SetLayout(l) => self.set_layout(l),
            Action::Select(j) => self.select_joint(j),
            Action::SelectMany(js, focus) => self.select_many(js, focus),
            Action::SetClip(c) => self.set_clip(c),
            Action::TogglePlay => {
                let n = self.frame_count();
                let p = &mut self.playback;
                if !p.playing && !p.looping && p.frame >= (n.saturating_sub(1)) as f32 {
                    p.frame = 0.0;
                }
                p.playing = !p.playing;
            }
            Action::Step(d) => {
                let n = self.frame_count();
                self.playback.step(d, n);
            }
            Action::Seek(f) => {
                self.playback.playing = false;
                self.playback.frame = f.clamp(0.0, self.frame_count().saturating_sub(1) as f32);
            }
            Action::FrameCamera => self.viewport.request_frame(),
            Action::CancelCompression => {
                self.jobs.cancel();
                if let Some(doc) = &mut self.doc {
                    doc.failure = Some("Compression cancelled.".into());
                }
            }
            Action::Recompress => {
                if let Some(doc) = &mut self.doc {
                    doc.settings_rev += 1;
                    doc.refresh();
                }
                self.ensure_job();
            }
            Action::DismissBanner => self.banner = None,
            Action::ShowAbout => self.show_about = true,
            Action::ShowShortcuts => self.show_shortcuts = true,
        }
    }

    /// After a settings edit, undo or redo: the running job is stale, so it stops now, and
    /// the next one starts once edits have paused for [`DEBOUNCE`].
    fn settings_changed(&mut self) {
        self.jobs.cancel();
        let now = Instant::now();
        self.debounce_until = Some(now + DEBOUNCE);
        self.edited_at = Some(now);
    }

    /// True when the document has unsaved settings and no decision was made about them.
    fn unsaved_would_be_lost(&self) -> bool {
        !self.closing && self.doc.as_ref().is_some_and(|d| d.is_dirty())
    }

    /// Asks whether to save unsaved settings before closing or opening another file.
    fn confirm_dialog(&mut self, ctx: &egui::Context) {
        let Some(confirm) = self.confirm.clone() else {
            return;
        };
        let title = self.doc.as_ref().map_or(String::new(), |d| d.title());
        let what = match confirm {
            Confirm::Close => "closing",
            Confirm::Run(_) => "opening another file",
        };
        let mut choice = None;
        let modal = egui::Modal::new(egui::Id::unique("unsaved settings")).show(ctx, |ui| {
            ui.set_max_width(380.0);
            ui.heading(panels::help::UNSAVED_TITLE);
            ui.label(format!(
                "The compression settings of {title} have changed since they were saved. \
                 Save them beside the file before {what}?"
            ));
            ui.add_space(8.0);
            ui.horizontal(|ui| {
                if ui.button(panels::help::UNSAVED_SAVE).clicked() {
                    choice = Some(true);
                }
                if ui.button(panels::help::UNSAVED_DISCARD).clicked() {
                    choice = Some(false);
                }
                if ui.button(panels::help::UNSAVED_CANCEL).clicked() {
                    self.confirm = None;
                }
            });
        });
        if modal.should_close() {
            self.confirm = None;
        }
        let Some(save) = choice else { return };
        self.confirm = None;
        if save {
            self.save_settings(None);
            if self.doc.as_ref().is_some_and(|d| d.is_dirty()) {
                return; // not saved (no file chosen, or an error banner): stay
            }
        }
        match confirm {
            Confirm::Close => {
                self.closing = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            Confirm::Run(action) => {
                // The user decided: the held action may now replace the document.
                self.closing = true;
                self.apply(action, Some(ctx));
                self.closing = false;
            }
        }
    }

    fn export(
        &mut self,
        path: Option<PathBuf>,
        ext: &str,
        what: &str,
        f: super::exporter::ExportFn,
    ) {
        let Some(doc) = &self.doc else {
            self.status = format!("{what}: open a file first");
            return;
        };
        if self.export_job.is_some() {
            self.status = format!("{what}: another export is still running");
            return;
        }
        let input = super::exporter::ExportInput::from_document(doc);
        // Availability is checked before a dialog is shown.
        if let Err(e) = f(&input, Path::new("")) {
            self.set_banner(format!("{what} is not available"), e);
            return;
        }
        let path = path.or_else(|| {
            rfd::FileDialog::new()
                .add_filter(what, &[ext])
                .set_file_name(format!("{}.{ext}", doc.title()))
                .save_file()
        });
        let Some(path) = path else {
            self.status = format!("{what}: no file chosen");
            return;
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let target = path.clone();
        std::thread::spawn(move || {
            let _ = tx.send(f(&input, &target));
        });
        self.status = format!("{what}: writing {}…", path.display());
        self.export_job = Some(ExportJob {
            what: what.to_owned(),
            path,
            result: rx,
        });
    }

    /// True while an export is running on its worker.
    pub fn export_running(&self) -> bool {
        self.export_job.is_some()
    }

    /// Takes a finished export's result into the status bar (or an error banner).
    fn poll_export(&mut self) {
        let Some(job) = &self.export_job else { return };
        let outcome = match job.result.try_recv() {
            Ok(r) => r,
            Err(std::sync::mpsc::TryRecvError::Empty) => return,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                Err("the export worker stopped unexpectedly".into())
            }
        };
        let job = self.export_job.take().expect("checked above");
        match outcome {
            Ok(s) => {
                self.status = format!(
                    "{}: wrote {} ({}, {:.1}:1, max error {:.4} mm)",
                    job.what,
                    job.path.display(),
                    panels::fmt_bytes(s.bytes),
                    s.ratio,
                    s.max_error_mm
                )
            }
            Err(e) => self.set_banner(format!("{} failed", job.what), e),
        }
    }

    fn save_settings(&mut self, path: Option<PathBuf>) {
        let Some(doc) = &mut self.doc else { return };
        let path = path.or_else(|| match &doc.source {
            Source::File(p) => Some(Settings::sidecar_path(p)),
            Source::Default => rfd::FileDialog::new()
                .set_file_name("default_character.glb.skelpack.toml")
                .save_file(),
        });
        let Some(path) = path else {
            self.status = "Save Settings: no file chosen".into();
            return;
        };
        match doc.settings.save(&path) {
            Ok(()) => {
                doc.saved_settings = doc.settings.clone();
                let bytes = std::fs::metadata(&path).map_or(0, |m| m.len() as usize);
                let overrides = doc.settings.joints.len()
                    + doc
                        .settings
                        .clips
                        .values()
                        .map(|c| c.joints.len())
                        .sum::<usize>();
                self.status = format!(
                    "Saved settings to {} ({}, {overrides} joint override(s))",
                    path.display(),
                    panels::fmt_bytes(bytes)
                );
            }
            Err(e) => self.set_banner(
                "Could not save settings".into(),
                format!("{}: {e}", path.display()),
            ),
        }
    }

    fn keyboard(&mut self, ctx: &egui::Context) {
        let typing = ctx.egui_wants_keyboard_input();
        let mut out = Vec::new();
        ctx.input_mut(|i| {
            let cmd = Modifiers::COMMAND;
            if i.consume_key(cmd, Key::O) {
                out.push(Action::OpenDialog);
            }
            if i.consume_key(cmd, Key::S) {
                out.push(Action::SaveSettings(None));
            }
            if i.consume_key(cmd, Key::Q) {
                out.push(Action::Quit);
            }
            if i.consume_key(cmd | Modifiers::SHIFT, Key::Z) || i.consume_key(cmd, Key::Y) {
                out.push(Action::Redo);
            }
            if i.consume_key(cmd, Key::Z) {
                out.push(Action::Undo);
            }
            if typing {
                return;
            }
            if i.consume_key(Modifiers::NONE, Key::Space) {
                out.push(Action::TogglePlay);
            }
            if i.consume_key(Modifiers::NONE, Key::ArrowLeft) {
                out.push(Action::Step(-1));
            }
            if i.consume_key(Modifiers::NONE, Key::ArrowRight) {
                out.push(Action::Step(1));
            }
            if i.consume_key(Modifiers::NONE, Key::Home) {
                out.push(Action::Seek(0.0));
            }
            if i.consume_key(Modifiers::NONE, Key::End) {
                out.push(Action::Seek(f32::MAX));
            }
            if i.consume_key(Modifiers::NONE, Key::F) {
                out.push(Action::FrameCamera);
            }
            if i.consume_key(Modifiers::NONE, Key::O) {
                out.push(Action::SetLayout(match self.view.layout {
                    Layout::SideBySide => Layout::Overlay,
                    Layout::Overlay => Layout::SideBySide,
                }));
            }
        });
        self.pending.extend(out);
    }

    fn update_title(&mut self, ctx: &egui::Context) {
        let t = match &self.doc {
            Some(d) => format!(
                "skelpack — {}{}{}",
                d.title(),
                if d.has_clip() {
                    format!(" [{}]", d.clip_name())
                } else {
                    String::new()
                },
                if d.is_dirty() { " •" } else { "" }
            ),
            None => "skelpack".into(),
        };
        if t != self.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(t.clone()));
            self.title = t;
        }
    }

    fn autopilot(&mut self, ctx: &egui::Context) {
        let ready = self
            .doc
            .as_ref()
            .is_some_and(|d| d.result.is_some() || d.failure.is_some())
            || self.doc.is_none();
        let frame_ms = self.frame_ms;
        let build = self.viewport.last_build.as_secs_f64() * 1e3;
        let Some(ap) = &mut self.autopilot else {
            return;
        };
        if *ap.done.lock().expect("autopilot lock") {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if !ready {
            // Waiting for a result: the worker's waker repaints when it lands; meanwhile
            // the window redraws only as a user's would (progress), leaving the CPU to the
            // compressor.
            ctx.request_repaint_after(Duration::from_millis(250));
            return;
        }
        ctx.request_repaint();
        ap.ready_frames += 1;
        if ap.ready_frames == 1 {
            if let Some(doc) = &self.doc
                && let Some(f) = &doc.failure
            {
                ap.outcome.lock().expect("autopilot lock").error = Some(f.clone());
            }
            if let Some(b) = &self.banner {
                ap.outcome.lock().expect("autopilot lock").error =
                    Some(format!("{}: {}", b.title, b.message));
            }
            if ap.measure > 0 {
                self.playback.playing = true;
                self.playback.looping = true;
            }
        }
        // Skip the first frames after the result lands (layout settles, pipelines warm up).
        let warm = 5;
        if ap.ready_frames > warm && (ap.edits > 0 || ap.edit_in_flight.is_some()) {
            self.autopilot_edit();
            return;
        }
        if ap.ready_frames > warm && ap.measured.len() < ap.measure {
            ap.measured.push(frame_ms);
            ap.builds.push(build);
            return;
        }
        if ap.ready_frames <= warm || ap.requested {
            return;
        }
        ap.requested = true;
        self.playback.playing = false;
        {
            let mut o = ap.outcome.lock().expect("autopilot lock");
            o.frame_times_ms = std::mem::take(&mut ap.measured);
            o.build_times_ms = std::mem::take(&mut ap.builds);
        }
        let done = ap.done.clone();
        let outcome = ap.outcome.clone();
        match ap.screenshot.clone() {
            Some(path) => {
                let ctx2 = ctx.clone();
                ctx.request_screenshot(move |image| {
                    let mut o = outcome.lock().expect("autopilot lock");
                    match super::png::save(&image, &path) {
                        Ok(()) => o.screenshot = Some(path),
                        Err(e) => o.error = Some(format!("{}: {e}", path.display())),
                    }
                    *done.lock().expect("autopilot lock") = true;
                    ctx2.request_repaint();
                });
            }
            None => *done.lock().expect("autopilot lock") = true,
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

impl App {
    /// The `--measure-edits` step: records the edit in flight once its result is shown,
    /// then makes the next one (halving the focused joint's tolerance, or undoing that).
    fn autopilot_edit(&mut self) {
        let (Some(ap), Some(doc)) = (&mut self.autopilot, &self.doc) else {
            return;
        };
        if let Some(rev) = ap.edit_in_flight {
            let Some(r) = doc.result.as_ref().filter(|_| doc.settings_rev > rev) else {
                return;
            };
            let mut o = ap.outcome.lock().expect("autopilot lock");
            if let Some(l) = self.last_latency {
                o.edit_latency_ms.push(l.as_secs_f64() * 1e3);
                o.edit_compress_ms.push(r.elapsed.as_secs_f64() * 1e3);
            }
            ap.edit_in_flight = None;
            return;
        }
        let Some(j) = self.selected else {
            ap.edits = 0;
            return;
        };
        ap.edit_in_flight = Some(doc.settings_rev);
        let undo = ap.edits % 2 == 1;
        ap.edits -= 1;
        if undo {
            self.pending.push(Action::Undo);
        } else {
            let tol_mm =
                doc.resolved.limits.tolerance[j] / (doc.resolved.unit.per_metre() / 1000.0);
            let (label, s) = panels::joints::edited(
                doc,
                crate::settings::EditScope::File,
                &[j],
                crate::settings::JointEdit::ToleranceMm(tol_mm * 0.5),
                "tolerance",
            );
            self.pending.push(Action::EditSettings(label, s));
        }
    }
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

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        let now = Instant::now();
        let dt = self
            .last_frame
            .map_or(0.0, |t| now.duration_since(t).as_secs_f64());
        self.last_frame = Some(now);
        self.frame_ms = dt * 1e3;

        if ctx.input(|i| i.viewport().close_requested()) && self.unsaved_would_be_lost() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.confirm = Some(Confirm::Close);
        }
        for r in self.jobs.poll() {
            self.accept(r);
        }
        self.poll_export();
        if self.export_job.is_some() {
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        self.ensure_job();
        if let Some(t) = self.debounce_until {
            ctx.request_repaint_after(t.saturating_duration_since(Instant::now()));
        }
        if self.jobs.running().is_some() {
            // Progress 4 times a second; on a software renderer a frame costs a core.
            ctx.request_repaint_after(Duration::from_millis(250));
        }

        // Files dropped on the window.
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        if let Some(p) = dropped.into_iter().next() {
            self.pending.push(Action::Open(p));
        }
        self.keyboard(&ctx);

        // Playback.
        if self.playback.playing {
            let (rate, n) = self
                .doc
                .as_ref()
                .map_or((30.0, 1), |d| (d.sample_rate(), d.frame_count()));
            let step = ctx.input(|i| i.stable_dt).min(0.1);
            self.playback.advance(step, rate, n);
            ctx.request_repaint();
        }

        let mut out = std::mem::take(&mut self.pending);
        egui::Panel::top("menu").show(ui, |ui| {
            let ms = panels::menu::MenuState {
                recent: &self.recent,
                has_document: self.doc.is_some(),
                undo: self.history.undo_label(),
                redo: self.history.redo_label(),
            };
            let before = self.view.layout;
            panels::menu::show(ui, &ms, &mut self.view, &mut out);
            if self.view.layout != before {
                self.viewport.request_frame();
            }
        });
        if let Some(b) = &self.banner {
            egui::Panel::top("banner").show(ui, |ui| panels::banner::show_banner(ui, b, &mut out));
        }
        egui::Panel::bottom("status").show(ui, |ui| {
            let right = format!(
                "{} · MSAA {}× · frame {:.1} ms (scene {:.2} ms)",
                self.adapter,
                self.viewport.samples,
                self.frame_ms,
                self.viewport.last_build.as_secs_f64() * 1e3
            );
            panels::banner::show_status(ui, &self.status, &right);
        });
        if let Some(doc) = &self.doc {
            egui::Panel::bottom("timeline")
                .resizable(false)
                .show(ui, |ui| {
                    ui.add_space(4.0);
                    panels::timeline::show(ui, doc, &mut self.playback, self.selected, &mut out);
                    ui.add_space(2.0);
                });
            let frame = self.playback.frame;
            egui::Panel::bottom("tuning")
                .resizable(true)
                .default_size(340.0)
                .min_size(160.0)
                .show(ui, |ui| {
                    (self.curve_geom, self.error_geoms) = panels::tuning::show(
                        ui,
                        doc,
                        self.selected,
                        frame,
                        &mut self.tuning,
                        &mut out,
                    );
                });
            // The joint table's columns need about 540 points; a small window gets a third.
            let joints_width = (ctx.content_rect().width() * 0.34).clamp(300.0, 540.0);
            egui::Panel::left("joints")
                .resizable(true)
                .default_size(joints_width)
                .show(ui, |ui| {
                    let sel = Selection {
                        focus: self.selected,
                        set: &self.selection,
                    };
                    panels::joints::show(ui, doc, sel, &mut self.joints_view, &mut out);
                });
            let progress = self
                .jobs
                .running()
                .filter(|(k, _)| *k == doc.key())
                .map(|(_, p)| p);
            egui::Panel::right("stats")
                .resizable(true)
                .default_size(290.0)
                .show(ui, |ui| {
                    panels::stats::show(ui, doc, progress, self.selected, &mut out)
                });
        }
        egui::CentralPanel::default().show(ui, |ui| {
            // Wraps on a narrow window rather than pushing the viewport under the panels.
            ui.horizontal_wrapped(|ui| {
                let mut layout = self.view.layout;
                ui.selectable_value(&mut layout, Layout::SideBySide, "Side by side");
                ui.selectable_value(&mut layout, Layout::Overlay, "Overlay");
                if layout != self.view.layout {
                    out.push(Action::SetLayout(layout));
                }
                ui.separator();
                ui.checkbox(&mut self.view.markers, "Markers");
                ui.checkbox(&mut self.view.error_vectors, "Error vectors");
                ui.add_enabled(
                    self.view.error_vectors,
                    egui::DragValue::new(&mut self.view.error_scale)
                        .range(1.0..=10000.0)
                        .prefix("×")
                        .speed(1.0),
                )
                .on_hover_text("Error vectors are drawn this many times longer");
                ui.checkbox(&mut self.view.mesh, "Mesh");
                ui.separator();
                if ui
                    .button("Frame")
                    .on_hover_text("Frame the character (F)")
                    .clicked()
                {
                    out.push(Action::FrameCamera);
                }
            });
            let rect = ui.available_rect_before_wrap();
            self.viewport_rect = Some(rect);
            let o = self.viewport.show(
                ui,
                rect,
                self.doc.as_ref(),
                self.playback.frame,
                &self.view,
                Selection {
                    focus: self.selected,
                    set: &self.selection,
                },
            );
            if let Some(j) = o.picked {
                out.push(Action::Select(Some(j)));
            }
        });
        panels::help::show(&ctx, &mut self.show_about, &mut self.show_shortcuts);
        self.confirm_dialog(&ctx);

        if ctx.input(|i| !i.raw.hovered_files.is_empty()) {
            let painter = ctx.layer_painter(egui::LayerId::new(
                egui::Order::Foreground,
                egui::Id::unique("drop"),
            ));
            let r = ctx.content_rect();
            painter.rect_filled(r, 0.0, egui::Color32::from_black_alpha(160));
            painter.text(
                r.center(),
                egui::Align2::CENTER_CENTER,
                "Drop to open",
                egui::FontId::proportional(28.0),
                egui::Color32::WHITE,
            );
        }

        if !out.is_empty() {
            // The next frame shows what the actions changed.
            ctx.request_repaint();
        }
        for a in out {
            self.apply(a, Some(&ctx));
        }
        self.update_title(&ctx);
        self.autopilot(&ctx);
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, RECENT_KEY, &self.recent);
        eframe::set_value(storage, VIEW_KEY, &self.view);
    }
}
