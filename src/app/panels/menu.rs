//! The menu bar: File, Edit, View, Help.

use std::path::PathBuf;

use super::super::actions::Action;
use super::super::state::{Layout, ViewOptions};

/// What the menus need to know.
pub struct MenuState<'a> {
    pub recent: &'a [PathBuf],
    pub has_document: bool,
    pub undo: Option<&'a str>,
    pub redo: Option<&'a str>,
}

pub fn show(ui: &mut egui::Ui, s: &MenuState<'_>, view: &mut ViewOptions, out: &mut Vec<Action>) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open...").clicked() {
                out.push(Action::OpenDialog);
                ui.close();
            }
            if ui.button("Open Path...").clicked() {
                out.push(Action::PromptPath(super::path_prompt::Purpose::Open));
                ui.close();
            }
            ui.menu_button("Open Recent", |ui| {
                if s.recent.is_empty() {
                    ui.label("No recent files");
                }
                for p in s.recent {
                    if ui.button(p.display().to_string()).clicked() {
                        out.push(Action::Open(p.clone()));
                        ui.close();
                    }
                }
                ui.separator();
                if ui.button("Open Default Character").clicked() {
                    out.push(Action::OpenDefault);
                    ui.close();
                }
                if ui
                    .add_enabled(!s.recent.is_empty(), egui::Button::new("Clear Recent"))
                    .clicked()
                {
                    out.push(Action::ClearRecent);
                    ui.close();
                }
            });
            ui.separator();
            let doc = s.has_document;
            if ui
                .add_enabled(doc, egui::Button::new("Export Compressed glTF..."))
                .clicked()
            {
                out.push(Action::ExportGltf(None));
                ui.close();
            }
            ui.checkbox(&mut view.gltf_meshopt, "glTF: meshopt byte compression")
                .on_hover_text(
                    "EXT_meshopt_compression on the animation data (lossless, smaller; \
                     needs a meshopt-aware loader such as three.js with MeshoptDecoder)",
                );
            if ui
                .add_enabled(doc, egui::Button::new("Export .skp..."))
                .clicked()
            {
                out.push(Action::ExportSkp(None));
                ui.close();
            }
            ui.checkbox(&mut view.export_on_save, "Export on save")
                .on_hover_text(
                    "When the open file is saved again, redo every export made from it \
                 (remembered in its settings file)",
                );
            if ui
                .add_enabled(doc, egui::Button::new("Save Settings"))
                .clicked()
            {
                out.push(Action::SaveSettings(None));
                ui.close();
            }
            if ui
                .add_enabled(doc, egui::Button::new("Save Settings As..."))
                .clicked()
            {
                out.push(Action::SaveSettingsAs);
                ui.close();
            }
            ui.separator();
            if ui.button("Quit").clicked() {
                out.push(Action::Quit);
                ui.close();
            }
        });
        ui.menu_button("Edit", |ui| {
            let undo = s.undo.map_or("Undo".to_owned(), |l| format!("Undo {l}"));
            if ui
                .add_enabled(s.undo.is_some(), egui::Button::new(undo))
                .clicked()
            {
                out.push(Action::Undo);
                ui.close();
            }
            let redo = s.redo.map_or("Redo".to_owned(), |l| format!("Redo {l}"));
            if ui
                .add_enabled(s.redo.is_some(), egui::Button::new(redo))
                .clicked()
            {
                out.push(Action::Redo);
                ui.close();
            }
        });
        ui.menu_button("View", |ui| {
            if ui
                .radio(view.layout == Layout::SideBySide, "Layout: side by side")
                .clicked()
            {
                out.push(Action::SetLayout(Layout::SideBySide));
            }
            if ui
                .radio(view.layout == Layout::Overlay, "Layout: overlay (ghost)")
                .clicked()
            {
                out.push(Action::SetLayout(Layout::Overlay));
            }
            ui.separator();
            ui.checkbox(&mut view.markers, "Show markers");
            ui.checkbox(
                &mut view.markers_selected_only,
                "Markers and error vectors on the selection only",
            );
            ui.checkbox(&mut view.error_vectors, "Show error vectors");
            ui.checkbox(&mut view.mesh, "Show mesh");
            ui.checkbox(&mut view.grid, "Show grid");
            ui.separator();
            if ui.button("Frame Character").clicked() {
                out.push(Action::FrameCamera);
                ui.close();
            }
            if ui
                .add_enabled(
                    s.has_document,
                    egui::Button::new("Clip Dashboard").shortcut_text("C"),
                )
                .clicked()
            {
                out.push(Action::ToggleDashboard);
                ui.close();
            }
        });
        ui.menu_button("Help", |ui| {
            if ui.button("Keyboard Shortcuts").clicked() {
                out.push(Action::ShowShortcuts);
                ui.close();
            }
            if ui.button("About skelpack").clicked() {
                out.push(Action::ShowAbout);
                ui.close();
            }
        });
    });
}
