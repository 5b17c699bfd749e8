//! The modal dialogs: at most one is open at a time (a second is never stacked on it), and
//! while one is open the window's shortcuts are not acted on and dropped files are ignored,
//! so the question on screen is the one being answered.

use super::super::actions::Action;
use super::super::panels;
use super::super::panels::floor::BelowFloor;
use super::super::panels::path_prompt::{Outcome, PathPrompt, Purpose};
use super::super::panels::unsaved::Choice;
use super::App;

/// An action that would lose unsaved settings, held until the user decides.
#[derive(Clone, Debug)]
pub(super) enum Confirm {
    Close,
    Run(Action),
}

/// The one modal dialog that may be open.
#[derive(Clone, Debug)]
pub(super) enum Dialog {
    /// Save, discard or cancel before unsaved settings would be lost.
    Unsaved(Confirm),
    /// An edit that sets tolerances below joints' floors, waiting to be confirmed.
    BelowFloor(Vec<BelowFloor>, Action),
    /// A path typed in the app (no native file dialog could open, or asked for).
    Path(PathPrompt),
}

impl App {
    /// Opens `dialog` unless one is open already (then it is refused, with a status line,
    /// and false is returned).
    pub(super) fn open_dialog(&mut self, dialog: Dialog) -> bool {
        if self.chrome.dialog.is_some() {
            self.chrome.status = "Answer the open dialog first".into();
            return false;
        }
        self.chrome.dialog = Some(dialog);
        true
    }

    /// True while a modal dialog is open.
    pub(super) fn dialog_open(&self) -> bool {
        self.chrome.dialog.is_some()
    }

    /// The window's close button: the unsaved-settings question replaces whatever dialog is
    /// open (the user asked to close the window, not to answer it).
    pub(super) fn close_requested(&mut self, ctx: &egui::Context) {
        if self.unsaved_would_be_lost() {
            ctx.send_viewport_cmd(egui::ViewportCommand::CancelClose);
            self.chrome.dialog = Some(Dialog::Unsaved(Confirm::Close));
        }
    }

    /// Shows the open dialog and acts on its answer.
    pub(super) fn dialog(&mut self, ctx: &egui::Context) {
        match &self.chrome.dialog {
            None => {}
            Some(Dialog::Unsaved(c)) => {
                let c = c.clone();
                self.unsaved_dialog(ctx, c);
            }
            Some(Dialog::BelowFloor(..)) => self.below_floor_dialog(ctx),
            Some(Dialog::Path(_)) => self.path_prompt_dialog(ctx),
        }
    }

    /// The in-app path prompt: a chosen path runs the action it was for.
    fn path_prompt_dialog(&mut self, ctx: &egui::Context) {
        let Some(Dialog::Path(prompt)) = &mut self.chrome.dialog else {
            return;
        };
        let purpose = prompt.purpose;
        match panels::path_prompt::show(ctx, prompt) {
            None => {}
            Some(Outcome::Cancelled) => {
                self.chrome.dialog = None;
                self.chrome.status = format!("{}: cancelled", purpose.title());
            }
            Some(Outcome::Chosen(p)) => {
                self.chrome.dialog = None;
                self.pending.push(match purpose {
                    Purpose::Open => Action::Open(p),
                    Purpose::ExportGltf => Action::ExportGltf(Some(p)),
                    Purpose::ExportSkp => Action::ExportSkp(Some(p)),
                    Purpose::SaveSettings => Action::SaveSettings(Some(p)),
                });
            }
        }
    }

    /// Asks before an edit that sets tolerances below joints' floors.
    fn below_floor_dialog(&mut self, ctx: &egui::Context) {
        let Some(Dialog::BelowFloor(joints, edit)) = &self.chrome.dialog else {
            return;
        };
        let unit = self
            .session
            .doc
            .as_ref()
            .map_or(crate::model::LengthUnit::Metre, |d| d.resolved.unit);
        let Some(apply) = panels::floor::show(ctx, joints, unit) else {
            return;
        };
        let edit = edit.clone();
        self.chrome.dialog = None;
        if apply {
            self.apply(edit, Some(ctx));
        } else {
            self.chrome.status = "Kept the previous tolerance".into();
        }
    }

    /// True when the document has unsaved settings and no decision was made about them.
    pub(super) fn unsaved_would_be_lost(&self) -> bool {
        !self.chrome.closing && self.session.doc.as_ref().is_some_and(|d| d.is_dirty())
    }

    /// Asks whether to save unsaved settings before closing or opening another file.
    fn unsaved_dialog(&mut self, ctx: &egui::Context, confirm: Confirm) {
        let title = self
            .session
            .doc
            .as_ref()
            .map_or(String::new(), |d| d.title());
        let what = match confirm {
            Confirm::Close => "closing",
            Confirm::Run(_) => "opening another file",
        };
        let save = match panels::unsaved::show(ctx, &title, what) {
            None => return,
            Some(Choice::Cancel) => {
                self.chrome.dialog = None;
                return;
            }
            Some(choice) => choice == Choice::Save,
        };
        self.chrome.dialog = None;
        if save {
            self.save_settings(None);
            if self.session.doc.as_ref().is_some_and(|d| d.is_dirty()) {
                return; // not saved (a path is asked for, or an error banner): stay
            }
        }
        match confirm {
            Confirm::Close => {
                self.chrome.closing = true;
                ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            }
            Confirm::Run(action) => {
                // The user decided: the held action may now replace the document.
                self.chrome.closing = true;
                self.apply(action, Some(ctx));
                self.chrome.closing = false;
            }
        }
    }
}
