//! Exports run on a worker thread; their summary (or error) lands in the status bar.

use std::path::PathBuf;

use super::super::exporter::{ExportInput, ExportSummary, Exporter};
use super::super::panels;
use super::super::panels::path_prompt::Purpose;
use super::App;

/// A running export: what, where, and the channel its result arrives on.
pub(super) struct ExportJob {
    pub(super) what: String,
    pub(super) path: PathBuf,
    /// What "Export on save" remembers of it.
    pub(super) target: crate::settings::exports::ExportTarget,
    pub(super) result: std::sync::mpsc::Receiver<Result<ExportSummary, String>>,
}

impl App {
    /// Exports the document with `exporter` to `path` (None: ask with a dialog).
    pub(super) fn export(&mut self, path: Option<PathBuf>, exporter: &Exporter) {
        let (what, ext) = (exporter.what, exporter.ext);
        let Some(doc) = &self.session.doc else {
            self.chrome.status = format!("{what}: open a file first");
            return;
        };
        if self.work.export_job.is_some() {
            self.chrome.status = format!("{what}: another export is still running");
            return;
        }
        let input = ExportInput::from_document(doc, self.view.options.gltf_meshopt);
        // Availability is checked before a dialog is shown.
        if let Err(e) = (exporter.check)(&input) {
            self.set_banner(format!("{what} is not available"), e);
            return;
        }
        let purpose = if ext == "skp" {
            Purpose::ExportSkp
        } else {
            Purpose::ExportGltf
        };
        let path = match path {
            Some(p) => Some(p),
            None => {
                let start = self.prompt_start(purpose);
                let name = start
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let dir = start.parent().map(|p| p.to_path_buf());
                self.ask_path(purpose, start, || {
                    let d = rfd::FileDialog::new()
                        .add_filter(what, &[ext])
                        .set_file_name(name);
                    match dir {
                        Some(dir) => d.set_directory(dir),
                        None => d,
                    }
                    .save_file()
                })
            }
        };
        let Some(path) = path else {
            if !self.dialog_open() {
                self.chrome.status = format!("{what}: no file chosen");
            }
            return;
        };
        let (tx, rx) = std::sync::mpsc::channel();
        let target = path.clone();
        let write = exporter.write;
        std::thread::spawn(move || {
            let _ = tx.send(write(&input, &target));
        });
        self.chrome.status = format!("{what}: writing {}…", path.display());
        self.work.export_job = Some(ExportJob {
            what: what.to_owned(),
            target: crate::settings::exports::ExportTarget {
                path: path.clone(),
                format: if ext == "skp" { "skp" } else { "glb" }.to_owned(),
                meshopt: ext != "skp" && self.view.options.gltf_meshopt,
            },
            path,
            result: rx,
        });
    }

    /// True while an export is running on its worker.
    pub fn export_running(&self) -> bool {
        self.work.export_job.is_some()
    }

    /// Takes a finished export's result into the status bar (or an error banner).
    pub(super) fn poll_export(&mut self) {
        let Some(job) = &self.work.export_job else {
            return;
        };
        let outcome = match job.result.try_recv() {
            Ok(r) => r,
            Err(std::sync::mpsc::TryRecvError::Empty) => return,
            Err(std::sync::mpsc::TryRecvError::Disconnected) => {
                Err("the export worker stopped unexpectedly".into())
            }
        };
        let job = self.work.export_job.take().expect("checked above");
        match outcome {
            Ok(s) => {
                self.chrome.status = format!(
                    "{}: wrote {} ({}, {:.1}:1, max error {:.4} mm)",
                    job.what,
                    job.path.display(),
                    panels::fmt_bytes(s.bytes),
                    s.ratio,
                    s.max_error_mm
                );
                self.remember_export(job.target);
            }
            Err(e) => self.set_banner(format!("{} failed", job.what), e),
        }
    }
}
