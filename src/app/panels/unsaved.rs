//! The question asked before unsaved settings would be lost (closing, opening another file).

/// The dialog's title and buttons (tests find them by these).
pub const TITLE: &str = "Unsaved settings";
pub const SAVE: &str = "Save";
pub const DISCARD: &str = "Discard changes";
pub const CANCEL: &str = "Cancel";

/// What the user answered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Choice {
    Save,
    Discard,
    /// The Cancel button, Escape, or a click outside the dialog.
    Cancel,
}

/// Shows the modal question about `file`'s settings before `doing` (e.g. "closing");
/// returns the answer once there is one.
pub fn show(ctx: &egui::Context, file: &str, doing: &str) -> Option<Choice> {
    let mut choice = None;
    let modal = egui::Modal::new(egui::Id::unique("unsaved settings")).show(ctx, |ui| {
        ui.set_max_width(380.0);
        ui.heading(TITLE);
        ui.label(format!(
            "The compression settings of {file} have changed since they were saved. Save \
             them beside the file before {doing}?"
        ));
        ui.add_space(8.0);
        ui.horizontal(|ui| {
            for (text, c) in [
                (SAVE, Choice::Save),
                (DISCARD, Choice::Discard),
                (CANCEL, Choice::Cancel),
            ] {
                if ui.button(text).clicked() {
                    choice = Some(c);
                }
            }
        });
    });
    choice.or(modal.should_close().then_some(Choice::Cancel))
}
