//! The window's chrome: status line, error banner, title and the dialogs that may be open.

use super::super::actions::Action;
use super::super::panels::{self, banner::Banner};
use super::apply::Confirm;

/// Status, banner, window title and open dialogs.
pub(super) struct Chrome {
    pub(super) banner: Option<Banner>,
    pub(super) status: String,
    pub(super) title: String,
    pub(super) show_about: bool,
    pub(super) show_shortcuts: bool,
    /// An action waiting for the user to save or discard unsaved settings.
    pub(super) confirm: Option<Confirm>,
    /// The in-app path prompt (when no native file dialog can open).
    pub(super) path_prompt: Option<panels::path_prompt::PathPrompt>,
    /// An edit below joints' floors, waiting for the user to confirm it.
    pub(super) below_floor: Option<(Vec<panels::floor::BelowFloor>, Action)>,
    /// The user chose to close (with unsaved changes saved or discarded).
    pub(super) closing: bool,
}

impl Default for Chrome {
    fn default() -> Self {
        Self {
            banner: None,
            status: "Ready".into(),
            title: String::new(),
            show_about: false,
            show_shortcuts: false,
            confirm: None,
            path_prompt: None,
            below_floor: None,
            closing: false,
        }
    }
}
