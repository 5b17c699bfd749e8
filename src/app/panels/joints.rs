//! The joint hierarchy: a tree (or a flat list when filtering); click to select. Each joint
//! shows its worst error against tolerance as a coloured dot once a result is in.

use egui::{Color32, RichText};

use super::super::actions::Action;
use super::super::state::Document;

pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    selected: Option<usize>,
    filter: &mut String,
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
    });
    ui.add(
        egui::TextEdit::singleline(filter)
            .hint_text("Filter joints")
            .desired_width(f32::INFINITY),
    );
    ui.separator();
    let ratios: Option<Vec<f32>> = doc.result.as_ref().map(|r| {
        r.errors
            .joint_max
            .iter()
            .zip(&doc.resolved.limits.tolerance)
            .map(|(e, t)| if *t > 0.0 { e / t } else { 0.0 })
            .collect()
    });
    let children = skeleton.children();
    egui::ScrollArea::both()
        .auto_shrink([false, false])
        .show(ui, |ui| {
            ui.spacing_mut().indent = 10.0;
            let needle = filter.trim().to_lowercase();
            if !needle.is_empty() {
                for (j, joint) in skeleton.joints.iter().enumerate() {
                    if joint.name.to_lowercase().contains(&needle) {
                        row(ui, doc, j, selected, ratios.as_deref(), out);
                    }
                }
                return;
            }
            for (j, joint) in skeleton.joints.iter().enumerate() {
                if joint.parent.is_none() {
                    tree(ui, doc, j, &children, selected, ratios.as_deref(), out);
                }
            }
        });
}

fn tree(
    ui: &mut egui::Ui,
    doc: &Document,
    j: usize,
    children: &[Vec<usize>],
    selected: Option<usize>,
    ratios: Option<&[f32]>,
    out: &mut Vec<Action>,
) {
    if children[j].is_empty() {
        ui.horizontal(|ui| {
            ui.add_space(18.0);
            row(ui, doc, j, selected, ratios, out);
        });
        return;
    }
    let id = ui.make_persistent_id(("joint", doc.id, j));
    egui::collapsing_header::CollapsingState::load_with_default_open(ui.ctx(), id, true)
        .show_header(ui, |ui| row(ui, doc, j, selected, ratios, out))
        .body(|ui| {
            for &c in &children[j] {
                tree(ui, doc, c, children, selected, ratios, out);
            }
        });
}

fn row(
    ui: &mut egui::Ui,
    doc: &Document,
    j: usize,
    selected: Option<usize>,
    ratios: Option<&[f32]>,
    out: &mut Vec<Action>,
) {
    let joint = &doc.asset.skeleton.joints[j];
    if let Some(r) = ratios.and_then(|r| r.get(j))
        && joint.deforming
    {
        let c = if *r > 1.0 {
            Color32::from_rgb(235, 70, 60)
        } else if *r > 0.5 {
            Color32::from_rgb(230, 190, 60)
        } else {
            Color32::from_rgb(80, 200, 90)
        };
        let (rect, _) = ui.allocate_exact_size(egui::vec2(8.0, 8.0), egui::Sense::hover());
        ui.painter().circle_filled(rect.center(), 4.0, c);
    }
    let text = if joint.deforming {
        RichText::new(&joint.name)
    } else {
        RichText::new(&joint.name).weak().italics()
    };
    let resp = ui.selectable_label(selected == Some(j), text);
    if resp.clicked() {
        out.push(Action::Select(if selected == Some(j) {
            None
        } else {
            Some(j)
        }));
    }
    if selected == Some(j) && resp.gained_focus() {
        resp.scroll_to_me(None);
    }
}
