//! Help windows: About and keyboard shortcuts.

pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Space", "Play / pause"),
    ("Left / Right", "Step one frame"),
    ("Home / End", "First / last frame"),
    (
        ", / .  or  Alt+Left / Alt+Right",
        "Previous / next key of the selected joint",
    ),
    ("Click a key (timeline)", "Go to it"),
    (
        "Click a heatmap cell",
        "Select the joint whose own tracks cause that error",
    ),
    ("Ctrl+click a heatmap cell", "Select the row's joint"),
    ("F", "Frame the character"),
    ("O", "Side by side / overlay"),
    ("C", "Clip dashboard"),
    ("B", "A/B flip: original / compressed in one place"),
    ("Esc", "Leave the A/B flip"),
    ("I", "In place: follow the root"),
    ("Ctrl+O", "Open..."),
    ("Ctrl+S", "Save settings"),
    ("Ctrl+Z", "Undo"),
    ("Ctrl+Shift+Z, Ctrl+Y", "Redo"),
    ("Ctrl+Q", "Quit"),
    ("Left drag", "Orbit"),
    ("Right / middle drag, Shift+drag", "Pan"),
    ("Wheel", "Zoom"),
    ("Double-click", "Frame the character"),
    ("Click a joint", "Select it"),
    ("Up / Down", "Previous / next joint in the table"),
    ("Ctrl+click a joint (tree)", "Add it to the selection"),
    ("Shift+click a joint (tree)", "Select a range"),
    (
        "Right-click a joint (tree)",
        "Apply its values to descendants, pin, reset",
    ),
];

pub fn show(ctx: &egui::Context, about: &mut bool, shortcuts: &mut bool) {
    egui::Window::new("About skelpack")
        .open(about)
        .collapsible(false)
        .resizable(false)
        .show(ctx, |ui| {
            ui.heading(format!("skelpack {}", env!("CARGO_PKG_VERSION")));
            ui.label("Error-bounded skeletal animation compression.");
            ui.label(
                "Original and compressed skeletons side by side; the error is the visual \
                 error of virtual markers at each joint's marker offset.",
            );
        });
    egui::Window::new("Keyboard Shortcuts")
        .open(shortcuts)
        .collapsible(false)
        .show(ctx, |ui| {
            egui::Grid::new("shortcuts").striped(true).show(ui, |ui| {
                for (k, v) in SHORTCUTS {
                    ui.label(egui::RichText::new(*k).monospace());
                    ui.label(*v);
                    ui.end_row();
                }
            });
        });
}
