//! The live source: the open file and its sidecar are watched; when the DCC saves the file
//! (in place, in pieces, or as a temporary file renamed over it) it is reloaded once
//! complete ([`crate::live::Settle`]), keeping the selection, camera, clip, playhead,
//! settings and undo history; settings naming a joint or clip the file no longer has are
//! reported and kept aside (left in the settings, unused). The status line then says what
//! changed (clips added / removed / modified, the clip's size and error before and after)
//! and, with "Export on save", every export remembered in the sidecar is redone.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{Receiver, TryRecvError};
use std::time::{Duration, Instant};

use super::super::exporter::{self, ExportInput, ExportSummary};
use super::super::panels;
use super::super::state::{Document, Source};
use super::App;
use crate::export::clip_memo::ClipMemo;
use crate::live::settle::{Stat, stat};
use crate::live::{ClipChanges, FileWatch, Missing, Settle};
use crate::settings::Settings;
use crate::settings::exports::ExportTarget;

/// How long a saved file must stay unchanged before it is read.
pub const SETTLE: Duration = Duration::from_millis(100);

/// The watched file and what the last reload left to do.
pub(super) struct Live {
    wake: Arc<dyn Fn() + Send + Sync>,
    watch: Option<FileWatch>,
    file: PathBuf,
    sidecar: PathBuf,
    settle: Settle,
    /// The file's and sidecar's size and modification time as last read.
    file_stat: Option<Stat>,
    sidecar_stat: Option<Stat>,
    /// A reload whose result is not on screen yet.
    report: Option<Reload>,
    /// Why the last attempt could not read the file (said once).
    said: Option<String>,
    /// Export-on-save runs: one line per target as each finishes.
    exports: Option<Receiver<ExportDone>>,
    /// Every line the live source reported (reloads, kept-aside settings, exports).
    pub(super) log: Vec<String>,
    /// From the save to the reloaded result on screen (first pass, refined).
    pub(super) on_screen: (Option<Duration>, Option<Duration>),
    /// Per export-on-save target, the clip encodings of its last export, and of its last
    /// quick export (`live::quick_settings`).
    memos: std::collections::HashMap<PathBuf, Arc<ClipMemo>>,
    quick_memos: std::collections::HashMap<PathBuf, Arc<ClipMemo>>,
    /// Whether the open file's glTF targets were exported once in the background to fill
    /// their memos (so that the first save costs what every later one does).
    warmed: bool,
    /// That background export, while it runs (exports on save wait for it).
    warming: Option<std::thread::JoinHandle<()>>,
}

/// One export on save done: the target, what was written (or why not), when after the
/// save, and whether it was the quick export a final one follows.
type ExportDone = (ExportTarget, Result<ExportSummary, String>, Duration, bool);

/// A reload in progress: when the save was seen, what changed, the shown clip's size and
/// error before.
struct Reload {
    saved: Instant,
    title: String,
    changes: ClipChanges,
    before: Option<(usize, f32)>,
}

impl Live {
    pub(super) fn new(wake: Arc<dyn Fn() + Send + Sync>) -> Self {
        Self {
            wake,
            watch: None,
            file: PathBuf::new(),
            sidecar: PathBuf::new(),
            settle: Settle::new(SETTLE),
            file_stat: None,
            sidecar_stat: None,
            report: None,
            said: None,
            exports: None,
            log: Vec::new(),
            on_screen: (None, None),
            memos: Default::default(),
            quick_memos: Default::default(),
            warmed: false,
            warming: None,
        }
    }

    /// Each target's export memo and quick export memo (new ones for a target not
    /// exported yet).
    fn memos_of(&mut self, targets: &[ExportTarget]) -> Vec<(Arc<ClipMemo>, Arc<ClipMemo>)> {
        (targets.iter())
            .map(|t| {
                (
                    self.memos.entry(t.path.clone()).or_default().clone(),
                    self.quick_memos.entry(t.path.clone()).or_default().clone(),
                )
            })
            .collect()
    }

    fn say(&mut self, line: String) {
        eprintln!("live: {line}");
        self.log.push(line);
    }
}

impl App {
    /// Starts watching the open document's file and sidecar (nothing for the default
    /// character). Called when a document is opened.
    pub(super) fn watch_source(&mut self) {
        let live = &mut self.live;
        live.watch = None;
        live.report = None;
        live.memos.clear();
        live.quick_memos.clear();
        live.warmed = false;
        live.settle = Settle::new(SETTLE);
        let Some(Source::File(p)) = self.session.doc.as_ref().map(|d| &d.source) else {
            return;
        };
        let Ok(file) = crate::live::watcher::resolve(p) else {
            return;
        };
        live.sidecar = Settings::sidecar_path(&file);
        live.file_stat = stat(&file);
        live.sidecar_stat = stat(&live.sidecar);
        let wake = live.wake.clone();
        match FileWatch::new(std::slice::from_ref(&file), move || wake()) {
            Ok(w) => {
                live.watch = Some(w);
                live.say(format!("watching {}", file.display()));
            }
            Err(e) => live.say(format!("{}: not watched: {e:#}", file.display())),
        }
        live.file = file;
    }

    /// Whether "Export on save" has prepared the open file's glTF targets (their memos
    /// filled by a background export; see `warm_exports_on_save`), and per target path how
    /// many clip encodings its memo holds.
    pub fn exports_prepared(&self) -> Option<Vec<(PathBuf, usize)>> {
        let done = self.live.warmed && self.live.warming.as_ref().is_none_or(|w| w.is_finished());
        done.then(|| {
            let mut v: Vec<(PathBuf, usize)> = (self.live.memos.iter())
                .map(|(p, m)| (p.clone(), m.kept()))
                .collect();
            v.sort();
            v
        })
    }

    /// Lines the live source reported (reloads, settings kept aside, exports on save).
    pub fn live_log(&self) -> &[String] {
        &self.live.log
    }

    /// From the last save of the open file to its reloaded result on screen: the first
    /// result shown and the refined one.
    pub fn reload_latency(&self) -> (Option<Duration>, Option<Duration>) {
        self.live.on_screen
    }

    /// True while a save of the open file waits to be read, its result to be shown, or
    /// its exports on save to be written.
    pub fn live_busy(&self) -> bool {
        self.live.settle.is_pending() || self.live.report.is_some() || self.live.exports.is_some()
    }

    /// Once a frame: notices saves, reloads complete ones, reports results and exports.
    pub(super) fn poll_live(&mut self, ctx: &egui::Context) {
        let now = Instant::now();
        if let Some(w) = &self.live.watch {
            let changed = w.changed();
            if changed
                .iter()
                .any(|p| *p == self.live.file || *p == self.live.sidecar)
            {
                self.live.settle.changed(&self.live.file, now);
            }
        }
        if let Some(first) = self.live.settle.ready(&self.live.file, now) {
            self.reload_source(first);
        }
        if let Some(at) = self.live.settle.next_check() {
            ctx.request_repaint_after(at.saturating_duration_since(now));
        }
        self.report_reload();
        self.warm_exports_on_save();
        self.poll_exports_on_save();
        if self.live.exports.is_some() {
            ctx.request_repaint_after(Duration::from_millis(50));
        }
    }

    /// Reads the saved file (and a changed sidecar) and puts it in place of the open one.
    fn reload_source(&mut self, saved: Instant) {
        let path = self.live.file.clone();
        let file_stat = stat(&path);
        let sidecar_stat = stat(&self.live.sidecar);
        let file_changed = file_stat != self.live.file_stat;
        let sidecar_changed = sidecar_stat != self.live.sidecar_stat;
        if !file_changed && !sidecar_changed {
            return;
        }
        let asset = match file_changed.then(|| crate::import::load(&path)) {
            None => None,
            Some(Ok(a)) => Some(a),
            Some(Err(e)) => {
                // Not complete after all, or broken.
                let msg = format!("{}: not reloaded: {e}", path.display());
                if self.live.said.as_ref() != Some(&msg) {
                    self.chrome.status = msg.clone();
                    self.live.say(msg.clone());
                    self.live.said = Some(msg);
                }
                // Read again at the file's next change, not before (a broken file is not
                // re-imported over and over).
                self.live.file_stat = file_stat;
                return;
            }
        };
        self.live.said = None;
        self.live.file_stat = file_stat;
        self.live.sidecar_stat = sidecar_stat;
        let Some(doc) = &self.session.doc else { return };
        // The sidecar: taken when the user has no unsaved edits (an undoable step),
        // else the edits are kept and the user told.
        let mut settings = doc.settings.clone();
        let mut saved_settings = doc.saved_settings.clone();
        let mut notes = Vec::new();
        if sidecar_changed {
            match self
                .live
                .sidecar
                .is_file()
                .then(|| Settings::load(&self.live.sidecar))
            {
                Some(Ok(s)) if s != doc.saved_settings => {
                    if doc.is_dirty() {
                        notes.push("the settings file changed on disk; your unsaved edits are kept (save to overwrite it)".to_owned());
                    } else {
                        self.session
                            .history
                            .record("Settings file changed on disk", settings.clone());
                        settings = s.clone();
                    }
                    saved_settings = s;
                }
                Some(Err(e)) => notes.push(format!("settings file not read: {e}")),
                _ => {}
            }
        }
        if asset.is_none() && settings == doc.settings {
            return; // our own save of the sidecar, or nothing that matters
        }
        // The file's own clips (the takes' pieces are cut from them again below), compared
        // with what was open as the document shows them: pieces included.
        let asset = asset.unwrap_or_else(|| (*doc.base).clone());
        let (shown, _) = crate::app::pieces::cut(&asset, &settings);
        let changes = ClipChanges::between(
            &crate::live::changes::clip_keys(&doc.asset, &doc.settings),
            &crate::live::changes::clip_keys(&shown, &settings),
        );
        let missing = Missing::of(&settings, &shown);
        let before = doc
            .shown()
            .map(|r| (r.sizes.compressed_bytes, r.errors.samples.max));
        // What the user was looking at, by name.
        let names = |i: usize| doc.asset.skeleton.joints.get(i).map(|j| j.name.clone());
        let selection: Vec<String> = self
            .view
            .selection
            .iter()
            .filter_map(|&j| names(j))
            .collect();
        let focus = self.view.selected.and_then(names);
        let clip = doc.clip_name().to_owned();
        let rev = doc.settings_rev + 1;
        let old_id = doc.id;

        self.work.jobs.cancel();
        self.work.clips.reset();
        self.work.results.forget_document(old_id);
        let id = self.session.next_id;
        self.session.next_id += 1;
        let mut doc = Document::new(id, Source::File(path.clone()), asset, settings);
        doc.saved_settings = saved_settings;
        doc.settings_rev = rev;
        if let Some(i) = doc.asset.clips.iter().position(|c| c.name == clip) {
            doc.clip = i;
            doc.refresh();
        }
        doc.before_edit = before;
        let find = |n: &String| doc.asset.skeleton.joints.iter().position(|j| &j.name == n);
        let selection: Vec<usize> = selection.iter().filter_map(find).collect();
        let focus = focus.as_ref().and_then(find);
        let frames = doc.frame_count();
        let title = doc.title();
        self.session.doc = Some(doc);
        let auto = self.view.auto_selected || selection.is_empty();
        self.select_many(selection, focus);
        self.view.auto_selected = auto;
        self.view.playback.frame = self
            .view
            .playback
            .frame
            .clamp(0.0, frames.saturating_sub(1) as f32);
        // The camera stays where the user put it (no re-framing).
        self.live.on_screen = (None, None);
        self.live.report = Some(Reload {
            saved,
            title: title.clone(),
            changes: changes.clone(),
            before,
        });
        let mut line = format!("Reloaded {title} ({changes})");
        for n in &notes {
            line.push_str("; ");
            line.push_str(n);
        }
        self.chrome.status = format!("{line}; recompressing");
        self.live.say(line);
        if !missing.is_empty() {
            let msg = format!(
                "The saved file no longer has these names ({missing}). Their settings are kept \
                 aside in the settings, unused, until the names come back or you remove them."
            );
            self.live
                .say(format!("{title}: settings kept aside for {missing}"));
            self.set_banner(format!("Reloaded {title}: settings kept aside"), msg);
        }
        self.ensure_job();
    }

    /// Once the reloaded document's result is shown: the status line says what changed;
    /// then the exports on save start.
    fn report_reload(&mut self) {
        let Some(r) = &self.live.report else { return };
        let Some(doc) = &self.session.doc else { return };
        let Some(res) = doc.result.as_ref() else {
            if doc.failure.is_some() || !doc.has_clip() {
                self.live.report = None;
            }
            return;
        };
        let elapsed = r.saved.elapsed();
        self.live.on_screen.0.get_or_insert(elapsed);
        if res.refining {
            return;
        }
        self.live.on_screen.1 = Some(elapsed);
        let unit = doc.resolved.unit;
        let after = (res.sizes.compressed_bytes, res.errors.samples.max);
        let sizes = match r.before {
            Some(b) => format!(
                "{} -> {}, max error {} -> {}",
                panels::fmt_bytes(b.0),
                panels::fmt_bytes(after.0),
                panels::fmt_len(b.1, unit),
                panels::fmt_len(after.1, unit)
            ),
            None => format!(
                "{}, max error {}",
                panels::fmt_bytes(after.0),
                panels::fmt_len(after.1, unit)
            ),
        };
        let first = self.live.on_screen.0.unwrap_or(elapsed);
        let line = format!(
            "Reloaded {} ({}): '{}' {sizes}; on screen {} ms after the save (first pass {} ms)",
            r.title,
            r.changes,
            doc.clip_name(),
            elapsed.as_millis(),
            first.as_millis()
        );
        let saved = r.saved;
        self.chrome.status = line.clone();
        self.live.report = None;
        self.live.say(line);
        if self.view.options.export_on_save {
            self.start_exports_on_save(saved);
        }
    }

    /// Redoes every export remembered in the sidecar, one after the other on a worker.
    fn start_exports_on_save(&mut self, saved: Instant) {
        let Some(doc) = &self.session.doc else { return };
        let targets = doc.saved_settings.exports.clone();
        if targets.is_empty() {
            self.live
                .say("Export on save: nothing exported from this file yet".into());
            return;
        }
        let input = ExportInput::from_document(doc, false);
        let memos = self.live.memos_of(&targets);
        let (tx, rx) = std::sync::mpsc::channel();
        let warming = self.live.warming.take();
        std::thread::spawn(move || {
            // The memos are filled one export at a time: after the warm-up, if it runs.
            if let Some(w) = warming {
                let _ = w.join();
            }
            // Every target first (a compressed glTF at `fast` effort), then the compressed
            // glTF targets at the effort in force, each replacing its quick file.
            let mut finals = Vec::new();
            for (t, (memo, quick_memo)) in targets.into_iter().zip(memos) {
                let mut input = input.clone();
                input.gltf_meshopt = t.meshopt;
                let e = if t.format == "skp" {
                    &exporter::SKP
                } else {
                    &exporter::GLTF
                };
                let quick = crate::live::quick_settings(&t.path, &input.settings);
                let is_quick = quick.is_some();
                let first = match quick {
                    Some(q) => ExportInput {
                        settings: q,
                        memo: Some(quick_memo),
                        ..input.clone()
                    },
                    None => ExportInput {
                        memo: Some(memo.clone()),
                        ..input.clone()
                    },
                };
                let r = (e.write)(&first, &t.path);
                if is_quick && r.is_ok() {
                    input.memo = Some(memo);
                    finals.push((t.clone(), input));
                }
                if tx.send((t, r, saved.elapsed(), is_quick)).is_err() {
                    return;
                }
            }
            for (t, input) in finals {
                let r = (exporter::GLTF.write)(&input, &t.path);
                if tx.send((t, r, saved.elapsed(), false)).is_err() {
                    return;
                }
            }
        });
        self.live.exports = Some(rx);
    }

    /// With "Export on save" on, once the open file's refined result is on screen: exports
    /// each remembered glTF target once in the background, to a temporary file removed
    /// afterwards, so that its memo holds every clip's encoding and every clip pair's
    /// measure before the first save (which then re-encodes only what changed, as later
    /// saves do). `.skp` targets keep no memo and need none.
    fn warm_exports_on_save(&mut self) {
        if !self.view.options.export_on_save || self.live.warmed {
            return;
        }
        let Some(doc) = &self.session.doc else { return };
        let refined = doc.result.as_ref().is_some_and(|r| !r.refining);
        if !refined || self.live.report.is_some() || self.live.exports.is_some() {
            return;
        }
        self.live.warmed = true;
        let targets: Vec<ExportTarget> = (doc.saved_settings.exports.iter())
            .filter(|t| t.format != "skp")
            .cloned()
            .collect();
        if targets.is_empty() {
            return;
        }
        let input = ExportInput::from_document(doc, false);
        let memos = self.live.memos_of(&targets);
        self.live.say(format!(
            "Export on save: preparing {} glTF target(s) in the background",
            targets.len()
        ));
        self.live.warming = Some(std::thread::spawn(move || {
            let start = Instant::now();
            let n = targets.len();
            for (i, (t, (memo, quick_memo))) in targets.into_iter().zip(memos).enumerate() {
                let ext = t.path.extension().and_then(|e| e.to_str()).unwrap_or("glb");
                let scratch = std::env::temp_dir()
                    .join(format!("skelpack-warm-{}-{i}.{ext}", std::process::id()));
                let mut input = input.clone();
                input.gltf_meshopt = t.meshopt;
                // The quick export's memo first: the first save writes it first.
                if let Some(q) = crate::live::quick_settings(&t.path, &input.settings) {
                    let quick = ExportInput {
                        settings: q,
                        memo: Some(quick_memo),
                        ..input.clone()
                    };
                    let _ = (exporter::GLTF.write)(&quick, &scratch);
                }
                input.memo = Some(memo);
                let _ = (exporter::GLTF.write)(&input, &scratch);
                let _ = std::fs::remove_file(&scratch);
            }
            // On stderr only, as the other live lines are (the log is the UI thread's).
            eprintln!(
                "live: Export on save: {n} glTF target(s) prepared in {} ms",
                start.elapsed().as_millis()
            );
        }));
    }

    fn poll_exports_on_save(&mut self) {
        let Some(rx) = &self.live.exports else { return };
        let mut lines = Vec::new();
        let mut done = false;
        loop {
            match rx.try_recv() {
                Ok((t, Ok(s), took, quick)) => lines.push(format!(
                    "Export on save: wrote {}{} ({}, {:.1}:1, max error {:.4} mm) {} ms after the save",
                    t.path.display(),
                    if quick {
                        " (fast; the final export follows)"
                    } else {
                        ""
                    },
                    panels::fmt_bytes(s.bytes),
                    s.ratio,
                    s.max_error_mm,
                    took.as_millis()
                )),
                Ok((t, Err(e), _, _)) => {
                    lines.push(format!("Export on save: {} failed: {e}", t.path.display()))
                }
                Err(TryRecvError::Empty) => break,
                Err(TryRecvError::Disconnected) => {
                    done = true;
                    break;
                }
            }
        }
        if done {
            self.live.exports = None;
        }
        for l in lines {
            self.chrome.status = l.clone();
            self.live.say(l);
        }
    }

    /// Remembers a finished export in the sidecar (on disk, leaving unsaved edits out) and
    /// in the document, for "Export on save".
    pub(super) fn remember_export(&mut self, target: ExportTarget) {
        let Some(doc) = &mut self.session.doc else {
            return;
        };
        let Source::File(p) = &doc.source else { return };
        let sidecar = Settings::sidecar_path(p);
        let mut on_disk = if sidecar.is_file() {
            match Settings::load(&sidecar) {
                Ok(s) => s,
                Err(e) => {
                    self.live.say(format!(
                        "export not remembered: settings file not read: {e}"
                    ));
                    return;
                }
            }
        } else {
            Settings::default()
        };
        let path = std::fs::canonicalize(&target.path).unwrap_or(target.path.clone());
        let target = ExportTarget { path, ..target };
        crate::settings::exports::remember(&mut on_disk.exports, target, 8);
        if let Err(e) = on_disk.save(&sidecar) {
            self.live
                .say(format!("export not remembered: {}: {e}", sidecar.display()));
            return;
        }
        doc.settings.exports = on_disk.exports.clone();
        doc.saved_settings.exports = on_disk.exports;
        self.live.sidecar_stat = stat(&self.live.sidecar);
    }
}
