//! The stats panel: the asset, the clip, the compression result, and the settings of the
//! selected joint (edits are undoable and recompress in the background).

use egui::{Color32, RichText};

use super::super::actions::Action;
use super::super::state::Document;
use super::{fmt_bytes, fmt_len};
use crate::settings::{JointSettings, Preset};

pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    progress: Option<f32>,
    selected: Option<usize>,
    out: &mut Vec<Action>,
) {
    let a = &doc.asset;
    let unit = doc.resolved.unit;
    egui::ScrollArea::vertical().show(ui, |ui| {
        ui.heading("Asset");
        egui::Grid::new("asset").num_columns(2).show(ui, |ui| {
            kv(ui, "Source", doc.title());
            kv(ui, "Format", format!("{:?}", a.format));
            kv(
                ui,
                "Joints",
                format!(
                    "{} ({} deforming, depth {})",
                    a.skeleton.len(),
                    a.skeleton.deforming_joints().count(),
                    a.skeleton.max_depth()
                ),
            );
            kv(ui, "Meshes", a.meshes.len().to_string());
            kv(
                ui,
                "Height",
                format!(
                    "{:.3} {} ({})",
                    a.units.height,
                    unit.symbol(),
                    if doc.settings.unit.is_some() {
                        "unit set in settings"
                    } else {
                        "unit inferred"
                    }
                ),
            );
        });
        for w in &a.warnings {
            ui.label(RichText::new(format!("Warning: {w}")).color(Color32::from_rgb(230, 190, 80)));
        }
        ui.separator();
        ui.heading("Clip");
        if let Some(c) = a.clips.get(doc.clip) {
            egui::Grid::new("clip").num_columns(2).show(ui, |ui| {
                kv(ui, "Name", c.name.clone());
                kv(
                    ui,
                    "Frames",
                    format!("{} at {} fps", c.frame_count, c.sample_rate),
                );
                kv(ui, "Duration", format!("{:.3} s", c.duration()));
            });
        } else {
            ui.label("This file has no animation: showing the rest pose.");
        }
        ui.separator();
        ui.heading("Compression");
        if let Some(p) = progress {
            ui.horizontal(|ui| {
                ui.add(
                    egui::ProgressBar::new(p)
                        .show_percentage()
                        .desired_width(140.0),
                );
                if ui.button("Cancel").clicked() {
                    out.push(Action::CancelCompression);
                }
            });
        }
        if let Some(f) = &doc.failure {
            ui.label(RichText::new(f).color(Color32::from_rgb(235, 90, 80)));
            if ui.button("Recompress").clicked() {
                out.push(Action::Recompress);
            }
        }
        if let Some(r) = &doc.result {
            if r.is_passthrough {
                ui.label(
                    RichText::new(
                        "Codec not available yet: the compressed side shows the raw clip.",
                    )
                    .color(Color32::from_rgb(230, 190, 80)),
                );
            }
            if !r.contract_met {
                let f = &r.clip.report.failures;
                ui.label(
                    RichText::new(format!(
                        "Tolerance not met on {} joint(s): {}",
                        f.len(),
                        f.iter()
                            .map(|x| x.joint.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ))
                    .color(Color32::from_rgb(235, 90, 80)),
                );
            }
            let e = &r.errors;
            let names = &a.skeleton.joints;
            egui::Grid::new("result").num_columns(2).show(ui, |ui| {
                kv(ui, "Raw size", fmt_bytes(r.sizes.raw_bytes));
                kv(ui, "Compressed size", fmt_bytes(r.sizes.compressed_bytes));
                kv(ui, "Ratio", format!("{:.2} : 1", r.sizes.ratio()));
                kv(
                    ui,
                    "Keys kept",
                    format!("{} of {}", r.sizes.keys_kept, r.sizes.keys_raw),
                );
                kv(
                    ui,
                    "Max error",
                    format!(
                        "{} at samples, {} between",
                        fmt_len(e.samples.max, unit),
                        e.midpoints.map_or("-".into(), |m| fmt_len(m.max, unit))
                    ),
                );
                kv(
                    ui,
                    "Mean / p99",
                    format!(
                        "{} / {}",
                        fmt_len(e.samples.mean, unit),
                        fmt_len(e.samples.p99, unit)
                    ),
                );
                kv(
                    ui,
                    "Over tolerance",
                    format!("{} joint-frames", e.samples.violations),
                );
                kv(
                    ui,
                    "Time",
                    format!("{:.1} ms", r.elapsed.as_secs_f64() * 1e3),
                );
            });
            let worst = e.samples.worst_joint;
            if worst < names.len()
                && e.samples.max > 0.0
                && ui
                    .button(format!(
                        "Go to worst: {} @ frame {}",
                        names[worst].name, e.samples.worst_frame
                    ))
                    .clicked()
            {
                out.push(Action::Select(Some(worst)));
                out.push(Action::Seek(e.samples.worst_frame));
            }
        }
        ui.separator();
        ui.heading("Settings");
        let current = doc.settings.preset;
        ui.horizontal(|ui| {
            let preset_label = ui.label("Preset");
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
                .labelled_by(preset_label.id);
        });
        if let Some(j) = selected {
            joint_settings(ui, doc, j, out);
        } else {
            ui.label(
                RichText::new("Select a joint to edit its tolerance and marker offset.").weak(),
            );
        }
        if doc.is_dirty() {
            ui.label(
                RichText::new("Unsaved settings changes").color(Color32::from_rgb(230, 190, 80)),
            );
        }
    });
}

fn joint_settings(ui: &mut egui::Ui, doc: &Document, j: usize, out: &mut Vec<Action>) {
    let name = doc.asset.skeleton.joints[j].name.clone();
    let unit = doc.resolved.unit;
    let limits = &doc.resolved.limits;
    let per_mm = unit.per_metre() / 1000.0;
    let mut tol_mm = limits.tolerance[j] / per_mm;
    let mut off_cm = limits.marker_offset[j] / (per_mm * 10.0);
    ui.label(RichText::new(format!("Joint {name}")).strong());
    if !limits.evaluated[j] {
        ui.label(RichText::new("A helper joint: no markers, not measured.").weak());
        return;
    }
    let mut edit: Option<(String, JointSettings)> = None;
    let js = doc.settings.joints.get(&name).cloned().unwrap_or_default();
    egui::Grid::new("joint").num_columns(2).show(ui, |ui| {
        ui.label("Tolerance");
        if ui
            .add(
                egui::DragValue::new(&mut tol_mm)
                    .speed(0.01)
                    .range(0.001..=1000.0)
                    .suffix(" mm"),
            )
            .changed()
        {
            let mut s = js.clone();
            s.tolerance_mm = Some(tol_mm);
            edit = Some((format!("tolerance of {name}"), s));
        }
        ui.end_row();
        ui.label("Marker offset");
        if ui
            .add(
                egui::DragValue::new(&mut off_cm)
                    .speed(0.1)
                    .range(0.01..=1000.0)
                    .suffix(" cm"),
            )
            .changed()
        {
            let mut s = js.clone();
            s.marker_offset_cm = Some(off_cm);
            edit = Some((format!("marker offset of {name}"), s));
        }
        ui.end_row();
        if let Some(r) = &doc.result {
            ui.label("Worst error");
            ui.label(fmt_len(r.errors.joint_max[j], unit));
            ui.end_row();
        }
    });
    if let Some((label, s)) = edit {
        let mut all = doc.settings.clone();
        all.joints.insert(name, s);
        out.push(Action::EditSettings(label, Box::new(all)));
    }
}

fn kv(ui: &mut egui::Ui, k: &str, v: String) {
    ui.label(RichText::new(k).weak());
    ui.label(v);
    ui.end_row();
}
