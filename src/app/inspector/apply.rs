//! Applying actions: menus, keys, panels and tests push [`Action`]s; they run here, after
//! the frame's UI. A settings edit recompresses at once; actions that would lose unsaved
//! settings ask first.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::super::actions::Action;
use super::super::panels;
use super::super::panels::path_prompt::{PathPrompt, Purpose};
use super::super::state::{AbShow, Source};
use super::dialogs::{Confirm, Dialog};
use super::{App, NO_DIALOG};
use crate::settings::Settings;

impl App {
    pub(super) fn apply(&mut self, action: Action, ctx: Option<&egui::Context>) {
        if self.apply_dashboard(&action) {
            return;
        }
        match action {
            Action::Open(_) | Action::OpenDialog | Action::OpenDefault
                if self.unsaved_would_be_lost() =>
            {
                self.open_dialog(Dialog::Unsaved(Confirm::Run(action)));
            }
            Action::Open(p) => {
                self.open_path(&p);
            }
            Action::OpenDialog => {
                let start = self.prompt_start(Purpose::Open);
                let picked = self.ask_path(Purpose::Open, start, || {
                    rfd::FileDialog::new()
                        .add_filter("Animation", &["glb", "gltf", "bvh", "fbx", "sjson"])
                        .pick_file()
                });
                match picked {
                    Some(p) => {
                        self.open_path(&p);
                    }
                    None if !self.dialog_open() => {
                        self.chrome.status =
                            "Open: no file chosen (drop a file on the window, or pass a path)"
                                .into()
                    }
                    None => {}
                }
            }
            Action::PromptPath(purpose) => {
                let start = self.prompt_start(purpose);
                self.open_dialog(Dialog::Path(PathPrompt::new(purpose, &start, None)));
            }
            Action::OpenDefault => self.open_default(),
            Action::ClearRecent => self.session.recent.clear(),
            Action::ExportGltf(p) => self.export(p, &super::super::exporter::GLTF),
            Action::ExportSkp(p) => self.export(p, &super::super::exporter::SKP),
            Action::SaveSettings(p) => self.save_settings(p),
            Action::SaveSettingsAs => {
                if let Some(p) = self.ask_settings_path("Save Settings As") {
                    self.save_settings(Some(p));
                }
            }
            Action::Quit if self.dialog_open() => {
                self.chrome.status = "Answer the open dialog first".into();
            }
            Action::Quit if self.unsaved_would_be_lost() => {
                self.open_dialog(Dialog::Unsaved(Confirm::Close));
            }
            Action::Quit => {
                self.chrome.closing = true;
                if let Some(c) = ctx {
                    c.send_viewport_cmd(egui::ViewportCommand::Close);
                }
            }
            Action::Undo | Action::Redo => {
                let Some(doc) = &mut self.session.doc else {
                    return;
                };
                let label = if matches!(action, Action::Undo) {
                    self.session.history.undo(&mut doc.settings)
                } else {
                    self.session.history.redo(&mut doc.settings)
                };
                if let Some(l) = label {
                    doc.settings_rev += 1;
                    doc.refresh();
                    self.session.last_edit = None;
                    self.settings_changed();
                    self.chrome.status = format!(
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
                let Some(doc) = &self.session.doc else { return };
                let below = doc.below_floor(&settings);
                if !below.is_empty() {
                    let edit = Action::EditSettingsBelowFloor(label, settings);
                    self.open_dialog(Dialog::BelowFloor(below, edit));
                    return;
                }
                self.apply(Action::EditSettingsBelowFloor(label, settings), ctx);
            }
            Action::EditSettingsBelowFloor(label, settings) => {
                let Some(doc) = &mut self.session.doc else {
                    return;
                };
                if *settings == doc.settings {
                    return;
                }
                // Consecutive drags of one value make one undo step.
                let coalesce =
                    self.session.last_edit.as_ref().is_some_and(|(l, t)| {
                        *l == label && t.elapsed() < Duration::from_millis(800)
                    });
                let before = std::mem::replace(&mut doc.settings, *settings);
                if !coalesce {
                    self.session.history.record(label.clone(), before);
                }
                self.session.last_edit = Some((label.clone(), Instant::now()));
                doc.settings_rev += 1;
                doc.refresh();
                self.chrome.status = format!("Changed {label}; recompressing");
                self.settings_changed();
            }
            Action::SetLayout(l) => self.set_layout(l),
            Action::Select(j) => self.select_joint(j),
            Action::SelectMany(js, focus) => self.select_many(js, focus),
            Action::SetClip(c) => self.set_clip(c),
            Action::TogglePlay => {
                let n = self.frame_count();
                let p = &mut self.view.playback;
                if !p.playing && !p.looping && p.frame >= (n.saturating_sub(1)) as f32 {
                    p.frame = 0.0;
                }
                p.playing = !p.playing;
            }
            Action::Step(d) => {
                let n = self.frame_count();
                self.view.playback.step(d, n);
            }
            Action::Seek(f) => {
                self.view.playback.playing = false;
                self.view.playback.frame =
                    f.clamp(0.0, self.frame_count().saturating_sub(1) as f32);
            }
            Action::FrameCamera => self.view.viewport.request_frame(),
            Action::FlipAb => {
                let o = &mut self.view.options;
                o.ab = Some(o.ab.map_or(AbShow::Compressed, AbShow::flipped));
                self.view
                    .viewport
                    .request_frame_if(o.ab == Some(AbShow::Compressed));
            }
            Action::ExitAb => {
                if self.view.options.ab.take().is_some() {
                    self.view.viewport.request_frame();
                }
            }
            Action::CancelCompression => {
                self.work.jobs.cancel();
                if let Some(doc) = &mut self.session.doc {
                    doc.failure = Some("Compression cancelled.".into());
                }
            }
            Action::Recompress => {
                if let Some(doc) = &mut self.session.doc {
                    doc.settings_rev += 1;
                    doc.refresh();
                }
                self.ensure_job();
            }
            Action::DismissBanner => self.chrome.banner = None,
            Action::ShowAbout => self.chrome.show_about = true,
            Action::ShowShortcuts => self.chrome.show_shortcuts = true,
            // Handled by `apply_dashboard`.
            Action::ToggleDashboard
            | Action::FitBudget { .. }
            | Action::CancelFit
            | Action::ApplyFit => {}
        }
    }

    /// After a settings edit, undo or redo: the running job is stale, so it stops now (at
    /// its next check) and the job for the new settings starts at once; settings seen
    /// before (undo, redo, A/B) show their kept result instead. No debounce: a drag's edits
    /// each cancel the one before, and the incremental state keeps what they encoded.
    fn settings_changed(&mut self) {
        self.pieces_cut();
        self.work.jobs.cancel();
        self.measure.edited();
        self.ensure_job();
    }

    /// A path from the native dialog; when none could open (it answered at once, with
    /// nothing), the in-app path prompt opens instead, starting at `start`. Nothing is asked
    /// while another dialog is open.
    pub(super) fn ask_path(
        &mut self,
        purpose: Purpose,
        start: PathBuf,
        dialog: impl FnOnce() -> Option<PathBuf>,
    ) -> Option<PathBuf> {
        if self.dialog_open() {
            self.chrome.status = "Answer the open dialog first".into();
            return None;
        }
        let asked = Instant::now();
        let picked = dialog();
        if picked.is_none() && asked.elapsed() < NO_DIALOG {
            let reason = "No file dialog could open here (no desktop portal or zenity): type a \
                          path instead.";
            self.chrome.status = reason.into();
            self.open_dialog(Dialog::Path(PathPrompt::new(
                purpose,
                &start,
                Some(reason.into()),
            )));
        }
        picked
    }

    /// Where a prompt for `purpose` starts: next to the open file (exports named after it).
    pub(super) fn prompt_start(&self, purpose: Purpose) -> PathBuf {
        let source = self.session.doc.as_ref().and_then(|d| match &d.source {
            Source::File(p) => Some(p.clone()),
            Source::Default => None,
        });
        let dir = source
            .as_ref()
            .and_then(|p| p.parent())
            .filter(|p| !p.as_os_str().is_empty())
            .map(|p| p.to_path_buf())
            .or_else(|| std::env::current_dir().ok())
            .unwrap_or_default();
        let name = self
            .session
            .doc
            .as_ref()
            .map_or("character".into(), |d| d.title());
        let stem = name.strip_suffix(".acl.sjson").unwrap_or(
            std::path::Path::new(&name)
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or("character"),
        );
        match purpose {
            Purpose::Open => {
                let mut s = dir.display().to_string();
                if !s.ends_with('/') {
                    s.push('/');
                }
                PathBuf::from(s)
            }
            Purpose::ExportGltf => dir.join(format!("{stem}.compressed.glb")),
            Purpose::ExportSkp => dir.join(format!("{stem}.skp")),
            Purpose::SaveSettings => dir.join(format!("{name}.skelpack.toml")),
        }
    }

    /// A path to save settings to, from the native dialog or, when none can open, the
    /// in-app path prompt (which saves when the user confirms it; None is returned then).
    fn ask_settings_path(&mut self, what: &str) -> Option<PathBuf> {
        let name = self
            .session
            .doc
            .as_ref()
            .map_or(String::new(), |d| d.title());
        let start = self.prompt_start(Purpose::SaveSettings);
        let picked = self.ask_path(Purpose::SaveSettings, start, || {
            rfd::FileDialog::new()
                .add_filter("skelpack settings", &["toml", "json"])
                .set_file_name(format!("{name}.skelpack.toml"))
                .save_file()
        });
        if picked.is_none() && !self.dialog_open() {
            self.chrome.status = format!("{what}: no file chosen");
        }
        picked
    }

    /// Saves the settings to `path`, or (None) beside the asset, where they are loaded from
    /// next time; a document with no file of its own (the default character) asks where.
    pub(super) fn save_settings(&mut self, path: Option<PathBuf>) {
        let beside = self.session.doc.as_ref().map(|d| match &d.source {
            Source::File(p) => Some(Settings::sidecar_path(p)),
            Source::Default => None,
        });
        let path = match (path, beside) {
            (_, None) => return, // no document
            (Some(p), _) => p,
            (None, Some(Some(p))) => p,
            (None, Some(None)) => match self.ask_settings_path("Save Settings") {
                Some(p) => p,
                None => return,
            },
        };
        let Some(doc) = &mut self.session.doc else {
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
                self.chrome.status = format!(
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
}
