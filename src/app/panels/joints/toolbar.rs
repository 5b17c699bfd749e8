//! Above the joint table: the preset, the compression effort, mesh-derived markers, unsaved
//! state, the filter, the selection, and the adaptive fill.

use egui::{Color32, RichText};

use super::super::super::actions::Action;
use super::super::super::state::Document;
use super::{
    ADAPTIVE, ADAPTIVE_APPLY, DESCENDANTS, JointsView, MESH_MARKERS, Selection, THIS_CLIP,
};
use crate::settings::{EditScope, Effort, Preset};

pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    sel: Selection<'_>,
    view: &mut JointsView,
    out: &mut Vec<Action>,
) {
    let skeleton = &doc.asset.skeleton;
    ui.horizontal(|ui| {
        ui.heading("Joints");
        ui.label(
            RichText::new(format!(
                "{} ({} deforming)",
                skeleton.len(),
                skeleton.deforming_joints().count()
            ))
            .weak(),
        );
        if doc.is_dirty() {
            ui.label(RichText::new("unsaved").color(Color32::from_rgb(230, 190, 80)))
                .on_hover_text("Settings changed since they were opened or saved");
            if ui
                .small_button("Save")
                .on_hover_text("Save the settings beside the file (ctrl+S)")
                .clicked()
            {
                out.push(Action::SaveSettings(None));
            }
        }
    });
    // One line where the panel is wide enough; the checkbox wraps below on a narrow panel.
    ui.horizontal_wrapped(|ui| {
        preset(ui, doc, out);
        effort(ui, doc, out);
        let has_mesh = !doc.asset.meshes.is_empty();
        let mut from_mesh = doc.settings.markers_from_mesh;
        let r = ui
            .add_enabled(has_mesh, egui::Checkbox::new(&mut from_mesh, MESH_MARKERS))
            .on_hover_text(
                "Each joint's marker offset is the distance to the farthest vertex it moves",
            )
            .on_disabled_hover_text("This file has no skinned mesh");
        if r.changed() {
            let mut s = doc.settings.clone();
            s.markers_from_mesh = from_mesh;
            let label = if from_mesh {
                "markers from mesh"
            } else {
                "uniform markers"
            };
            out.push(Action::EditSettings(label.into(), Box::new(s)));
        }
    });
    ui.add(
        egui::TextEdit::singleline(&mut view.filter)
            .hint_text("Filter joints")
            .desired_width(f32::INFINITY),
    );
    ui.horizontal_wrapped(|ui| {
        let n = sel.set.len();
        ui.label(RichText::new(format!("{n} selected")).weak());
        if n > 0 && ui.small_button("Clear").clicked() {
            out.push(Action::Select(None));
        }
        ui.checkbox(&mut view.include_descendants, DESCENDANTS)
            .on_hover_text("Tolerance, marker and pin edits also apply below the edited joints");
        ui.checkbox(&mut view.this_clip_only, THIS_CLIP)
            .on_hover_text(format!(
                "Edits override the joints in '{}' only; other clips keep the file-wide values",
                doc.clip_name()
            ));
        ui.menu_button(ADAPTIVE, |ui| adaptive(ui, doc, sel, view, out))
            .response
            .on_hover_text("Tolerances that tighten toward the root");
    });
}

fn preset(ui: &mut egui::Ui, doc: &Document, out: &mut Vec<Action>) {
    let current = doc.settings.preset;
    let label = ui.label("Preset");
    egui::ComboBox::from_id_salt("preset")
        .selected_text(current.map_or("default", |p| p.name()))
        .show_ui(ui, |ui| {
            for p in Preset::ALL {
                let (t, o) = p.values();
                if ui
                    .selectable_label(
                        current == Some(p),
                        format!("{} ({t} mm at {o} cm)", p.name()),
                    )
                    .clicked()
                    && current != Some(p)
                {
                    let mut s = doc.settings.clone();
                    s.preset = Some(p);
                    out.push(Action::EditSettings(
                        format!("preset {}", p.name()),
                        Box::new(s),
                    ));
                }
            }
        })
        .response
        .labelled_by(label.id);
}

/// What each effort is for, in the combo's list.
fn effort_hint(e: Effort) -> &'static str {
    match e {
        Effort::Fast => "fast: least search, a few % larger",
        Effort::Default => "default: balanced",
        Effort::Max => "max: smallest files, more search",
    }
}

/// How hard the codec searches (saved in the sidecar as `effort`); every effort holds the
/// same tolerances.
fn effort(ui: &mut egui::Ui, doc: &Document, out: &mut Vec<Action>) {
    let current = doc.settings.effort;
    let label = ui.label("Effort");
    egui::ComboBox::from_id_salt("effort")
        .selected_text(current.name())
        .show_ui(ui, |ui| {
            for e in Effort::ALL {
                if ui.selectable_label(current == e, effort_hint(e)).clicked() && current != e {
                    let mut s = doc.settings.clone();
                    s.effort = e;
                    out.push(Action::EditSettings(
                        format!("effort {}", e.name()),
                        Box::new(s),
                    ));
                }
            }
        })
        .response
        .labelled_by(label.id)
        .on_hover_text(
            "How hard the compressor searches for a smaller result; every effort holds the \
             same tolerances",
        );
}

fn adaptive(
    ui: &mut egui::Ui,
    doc: &Document,
    sel: Selection<'_>,
    view: &mut JointsView,
    out: &mut Vec<Action>,
) {
    ui.set_max_width(280.0);
    let limits = &doc.resolved.limits;
    let per_mm = doc.resolved.unit.per_metre() / 1000.0;
    // Start from the most common tolerance (the file-wide one).
    let leaf = view.adaptive_leaf_mm.get_or_insert_with(|| {
        let mut t: Vec<f32> = doc
            .asset
            .skeleton
            .deforming_joints()
            .map(|j| limits.tolerance[j] / per_mm)
            .collect();
        t.sort_by(f32::total_cmp);
        t.get(t.len() / 2).copied().unwrap_or(0.1)
    });
    ui.label("Leaves keep the leaf tolerance; the root gets it times the factor, and the joints between a geometric step by how tall their subtree is.");
    egui::Grid::new("adaptive").num_columns(2).show(ui, |ui| {
        ui.label("Leaf tolerance");
        ui.add(
            egui::DragValue::new(leaf)
                .speed(0.001)
                .range(0.001..=1000.0)
                .max_decimals(4)
                .suffix(" mm"),
        );
        ui.end_row();
        ui.label("Root factor");
        ui.add(
            egui::DragValue::new(&mut view.adaptive_root_factor)
                .speed(0.01)
                .range(0.01..=1.0)
                .prefix("×"),
        );
        ui.end_row();
    });
    let leaf = *leaf;
    let factor = view.adaptive_root_factor;
    let all: Vec<usize> = doc
        .asset
        .skeleton
        .deforming_joints()
        .filter(|&j| limits.evaluated[j])
        .collect();
    let selected: Vec<usize> = sel
        .set
        .iter()
        .copied()
        .filter(|&j| limits.evaluated[j])
        .collect();
    let target = if selected.len() > 1 { selected } else { all };
    let text = format!("{ADAPTIVE_APPLY} ({} joints)", target.len());
    if ui.button(text).clicked() {
        let mut s = doc.settings.clone();
        let scope = if view.this_clip_only {
            EditScope::Clip
        } else {
            EditScope::File
        };
        s.adaptive_tolerances(
            &doc.asset.skeleton,
            doc.clip_name(),
            scope,
            &target,
            leaf,
            factor,
        );
        out.push(Action::EditSettings(
            format!("adaptive tolerances on {} joints", target.len()),
            Box::new(s),
        ));
        ui.close();
    }
}
