//! The question asked before an edit sets a tolerance below what a joint can reach (its
//! floor: its error with every key kept at the finest precision).

use crate::model::LengthUnit;

/// The dialog's title and buttons (tests find them by these).
pub const TITLE: &str = "Tolerance below the floor";
pub const APPLY: &str = "Apply anyway";
pub const CANCEL: &str = "Keep the previous tolerance";

/// A joint the edit would set below its floor (scene units).
#[derive(Clone, Debug, PartialEq)]
pub struct BelowFloor {
    pub joint: String,
    pub tolerance: f32,
    pub floor: f32,
}

/// Shows the question for `joints`; returns `Some(true)` to apply, `Some(false)` to cancel
/// (also Escape or a click outside), `None` while undecided.
pub fn show(ctx: &egui::Context, joints: &[BelowFloor], unit: LengthUnit) -> Option<bool> {
    let mut choice = None;
    let mm = |x: f32| super::fmt_len(x, unit);
    let modal = egui::Modal::new(egui::Id::unique("below floor")).show(ctx, |ui| {
        ui.set_max_width(420.0);
        ui.heading(TITLE);
        for b in joints.iter().take(6) {
            ui.label(format!(
                "{}: {} asked, but it cannot be held below {}.",
                b.joint,
                mm(b.tolerance),
                mm(b.floor)
            ));
        }
        if joints.len() > 6 {
            ui.label(format!("… and {} more joints.", joints.len() - 6));
        }
        ui.label(
            "The floor is the joint's error with every key kept at the finest precision the \
             format has. Applied anyway, the joint is held just above its floor and reported; \
             every other joint keeps its own tolerance.",
        );
        ui.add_space(8.0);
        ui.horizontal(|ui| {
            if ui.button(APPLY).clicked() {
                choice = Some(true);
            }
            if ui.button(CANCEL).clicked() {
                choice = Some(false);
            }
        });
    });
    choice.or(modal.should_close().then_some(false))
}
