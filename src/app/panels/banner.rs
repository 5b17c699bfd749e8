//! The error banner (a file that would not open, a failed save) and the status bar.

use egui::{Color32, RichText};

use super::super::actions::Action;

/// A problem the user must see.
#[derive(Clone, Debug, PartialEq)]
pub struct Banner {
    pub title: String,
    pub message: String,
}

pub fn show_banner(ui: &mut egui::Ui, banner: &Banner, out: &mut Vec<Action>) {
    egui::Frame::new()
        .fill(Color32::from_rgb(110, 28, 28))
        .inner_margin(8.0)
        .corner_radius(4.0)
        .show(ui, |ui| {
            ui.horizontal(|ui| {
                ui.label(RichText::new("!").strong().color(Color32::WHITE).size(20.0));
                ui.vertical(|ui| {
                    ui.label(RichText::new(&banner.title).strong().color(Color32::WHITE));
                    ui.label(RichText::new(&banner.message).color(Color32::from_gray(235)));
                });
                ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
                    if ui.button("Dismiss").clicked() {
                        out.push(Action::DismissBanner);
                    }
                });
            });
        });
}

pub fn show_status(ui: &mut egui::Ui, status: &str, right: &str) {
    // The adapter and frame time first, from the right; the message takes the room left,
    // cut with an ellipsis (whole on hover) rather than drawn under them.
    ui.with_layout(egui::Layout::right_to_left(egui::Align::Center), |ui| {
        ui.label(RichText::new(right).weak());
        ui.with_layout(egui::Layout::left_to_right(egui::Align::Center), |ui| {
            ui.add(egui::Label::new(status).truncate())
                .on_hover_text(status);
        });
    });
}
