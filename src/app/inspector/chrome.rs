//! The window's chrome: status line, error banner, title and the dialogs that may be open.

use super::super::panels::banner::Banner;
use super::dialogs::Dialog;

/// Status, banner, window title and open dialogs.
pub(super) struct Chrome {
    pub(super) banner: Option<Banner>,
    pub(super) status: String,
    pub(super) title: String,
    pub(super) show_about: bool,
    pub(super) show_shortcuts: bool,
    /// The one modal dialog open, if any (never two stacked).
    pub(super) dialog: Option<Dialog>,
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
            dialog: None,
            closing: false,
        }
    }
}
