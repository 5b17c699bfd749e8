//! Everything the user can ask for, from a menu, a key, a panel or a test hook. Panels push
//! actions; the app applies them after the frame's UI, in one place.

use std::path::PathBuf;

use super::state::Layout;
use crate::settings::Settings;

#[derive(Clone, Debug)]
pub enum Action {
    /// Open a file (from a dialog, Open Recent, a drop, or a test).
    Open(PathBuf),
    /// Ask for a file with a dialog, then open it.
    OpenDialog,
    /// Ask for a path in the app (no native dialog), for a purpose.
    PromptPath(super::panels::path_prompt::Purpose),
    OpenDefault,
    ClearRecent,
    /// Export the compressed glTF (None: ask with a dialog).
    ExportGltf(Option<PathBuf>),
    /// Export the `.skp` container (None: ask with a dialog).
    ExportSkp(Option<PathBuf>),
    /// Save settings (None: beside the asset, where they are loaded from next time).
    SaveSettings(Option<PathBuf>),
    /// Save settings to a file chosen with a dialog.
    SaveSettingsAs,
    Quit,
    Undo,
    Redo,
    /// Replace the settings with an edited copy; the label names the edit for Undo.
    EditSettings(String, Box<Settings>),
    /// The same edit, confirmed although it sets tolerances below joints' floors.
    EditSettingsBelowFloor(String, Box<Settings>),
    SetLayout(Layout),
    /// Select one joint (None: clear the selection).
    Select(Option<usize>),
    /// Select several joints; the second field is the one the curves and stats follow.
    SelectMany(Vec<usize>, Option<usize>),
    SetClip(usize),
    TogglePlay,
    Step(i32),
    /// Go to a (fractional) frame.
    Seek(f32),
    FrameCamera,
    CancelCompression,
    Recompress,
    DismissBanner,
    /// A/B flip: show one copy in one place; again shows the other one.
    FlipAb,
    /// Leave the A/B flip (both copies again).
    ExitAb,
    /// Open or close the clip dashboard.
    ToggleDashboard,
    /// Search the tolerance scale that fits `bytes` of payload, for one clip (None: every
    /// clip of the file together).
    FitBudget {
        clip: Option<usize>,
        bytes: u64,
    },
    CancelFit,
    /// Write the last fit's scale into the settings (undoable).
    ApplyFit,
    ShowAbout,
    ShowShortcuts,
}
