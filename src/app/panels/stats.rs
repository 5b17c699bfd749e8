//! The stats panel: the asset, the clip, the compression result (sizes, ratio, bytes by
//! section, keys, errors at and between samples, worst joint, time) and the focused joint.

use egui::{Color32, RichText};

use super::super::actions::Action;
use super::super::compressor::Compressed;
use super::super::state::Document;
use super::{fmt_bytes, fmt_len};
use crate::metric::ErrorStats;
use crate::model::LengthUnit;

const WARNING: Color32 = Color32::from_rgb(230, 190, 80);

/// The scene unit: inferred (with how sure), or set by the user (undoable, saved in the
/// sidecar as `unit`). Tolerances and marker offsets are physical, so they follow it.
fn unit_picker(ui: &mut egui::Ui, doc: &Document, out: &mut Vec<Action>) {
    let units = &doc.asset.units;
    let current = doc.settings.unit;
    let inferred =
        format!("inferred: {} ({:?})", units.unit.name(), units.confidence).to_lowercase();
    let shown = match current {
        Some(u) => u.name(),
        None => inferred.clone(),
    };
    let mut chosen: Option<Option<LengthUnit>> = None;
    let combo = egui::ComboBox::from_id_salt("unit")
        .selected_text(shown)
        .show_ui(ui, |ui| {
            if ui.selectable_label(current.is_none(), &inferred).clicked() {
                chosen = Some(None);
            }
            for u in LengthUnit::NAMED {
                if ui.selectable_label(current == Some(u), u.name()).clicked() {
                    chosen = Some(Some(u));
                }
            }
        });
    combo
        .response
        .on_hover_text(format!("Why: {}", units.reason));
    // A custom unit: scene units per metre.
    let mut per_metre = doc.resolved.unit.per_metre();
    let drag = ui.add(
        super::setting_value::drag(&mut per_metre)
            .range(1e-4..=1e6)
            .speed(0.05)
            .suffix(" /m"),
    );
    if drag.changed() {
        chosen = LengthUnit::per_metre_checked(per_metre).map(Some);
    }
    drag.on_hover_text("Scene units per metre (set any value for an unusual unit)");
    if let Some(unit) = chosen.filter(|u| *u != current) {
        let mut settings = doc.settings.clone();
        settings.unit = unit;
        let label = match unit {
            Some(u) => format!("Unit: {}", u.name()),
            None => "Unit: inferred".to_string(),
        };
        out.push(Action::EditSettings(label, Box::new(settings)));
    }
}

pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    progress: Option<f32>,
    selected: Option<usize>,
    out: &mut Vec<Action>,
) {
    let a = &doc.asset;
    let unit = doc.resolved.unit;
    // First, above the fold at any window size: where the clip hurts most.
    if let Some(r) = doc.shown() {
        go_to_worst(ui, doc, r, out);
    }
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
                    "{:.3} {} = {}",
                    a.units.height,
                    unit.symbol(),
                    fmt_len(a.units.height, unit)
                ),
            );
            ui.label("Unit");
            unit_picker(ui, doc, out);
            ui.end_row();
        });
        if let Some(w) = doc.settings.unit_warning(a) {
            ui.label(RichText::new(format!("Check the unit: {w}")).color(WARNING));
        }
        for w in &a.warnings {
            ui.label(RichText::new(format!("Warning: {w}")).color(WARNING));
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
        if let Some(r) = doc.shown() {
            if doc.is_stale() {
                ui.label(
                    RichText::new("Previous result, until the recompressed one lands")
                        .color(WARNING),
                );
            }
            result(ui, doc, r);
        } else if !doc.has_clip() {
            ui.label(RichText::new(super::NO_CLIP).weak());
        } else if progress.is_none() && doc.failure.is_none() {
            ui.horizontal(|ui| {
                ui.spinner();
                ui.label("Recompressing after the edit…");
            });
        }
        ui.separator();
        ui.heading("Selected joint");
        match selected {
            Some(j) => joint(ui, doc, j),
            None => {
                ui.label(RichText::new("Select a joint in the tree or the viewport.").weak());
            }
        }
    });
}

fn result(ui: &mut egui::Ui, doc: &Document, r: &Compressed) {
    let unit = doc.resolved.unit;
    if !r.contract_met {
        let f = &r.clip.report.failures;
        ui.label(
            RichText::new(format!(
                "Tolerance not met on {} joint(s): {}",
                f.len(),
                f.iter()
                    .map(|x| format!("{} (floor {})", x.joint, fmt_len(x.floor, unit)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
            .color(Color32::from_rgb(235, 90, 80)),
        );
    }
    let e = &r.errors;
    egui::Grid::new("result").num_columns(2).show(ui, |ui| {
        kv(ui, "Raw size", fmt_bytes(r.sizes.raw_bytes));
        kv(ui, "Compressed size", fmt_bytes(r.sizes.compressed_bytes));
        if let (Some((bytes, err)), false) = (doc.before_edit, doc.is_stale()) {
            let d = r.sizes.compressed_bytes as i64 - bytes as i64;
            kv(
                ui,
                "Last edit",
                format!(
                    "{}{d} B; max error was {}",
                    if d > 0 { "+" } else { "" },
                    fmt_len(err, unit),
                ),
            );
        }
        kv(ui, "Ratio", format!("{:.2} : 1", r.sizes.ratio()));
        kv(
            ui,
            "Keys kept",
            format!(
                "{} of {} ({:.1}%)",
                r.sizes.keys_kept,
                r.sizes.keys_raw,
                100.0 * r.sizes.keys_kept as f64 / r.sizes.keys_raw.max(1) as f64
            ),
        );
        let stats = |s: &ErrorStats| {
            format!(
                "{} / {} / {}",
                fmt_len(s.max, unit),
                fmt_len(s.mean, unit),
                fmt_len(s.p99, unit)
            )
        };
        kv(ui, "Error at samples", stats(&e.samples));
        kv(
            ui,
            "Between samples",
            e.midpoints.as_ref().map_or("-".into(), stats),
        );
        ui.label("");
        ui.label(RichText::new("max / mean / p99").weak().small());
        ui.end_row();
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
    egui::CollapsingHeader::new("Bytes by section")
        .default_open(true)
        .show(ui, |ui| {
            let s = &r.clip.report.sections;
            egui::Grid::new("sections").num_columns(2).show(ui, |ui| {
                for (k, v) in [
                    ("Rotations", s.rotations),
                    ("Translations", s.translations),
                    ("Scales", s.scales),
                    ("Ranges", s.ranges),
                    ("Key tables", s.tables),
                    ("Headers", s.headers),
                ] {
                    kv(ui, k, fmt_bytes(v as usize));
                }
            });
        });
}

/// The label of the focused joint's floor (the tightest tolerance it can reach).
pub const FLOOR: &str = "Floor (tightest tolerance)";

/// The button that selects the joint whose own tracks cause the largest error (the worst
/// joint itself, or the ancestor it inherits the error from) and goes to its frame.
fn go_to_worst(ui: &mut egui::Ui, doc: &Document, r: &Compressed, out: &mut Vec<Action>) {
    let names = &doc.asset.skeleton.joints;
    let Some(w) = super::attribution::worst(&doc.asset, doc.clip, &doc.resolved.limits, r) else {
        return;
    };
    let frame = w.frame;
    let text = if w.cause == w.joint {
        format!("Go to worst: {} @ frame {frame}", names[w.joint].name)
    } else {
        format!(
            "Go to worst: {} @ frame {frame} (cause {})",
            names[w.joint].name, names[w.cause].name
        )
    };
    if ui
        .button(text)
        .on_hover_text(
            "Select the joint whose own tracks cause the largest error (the worst joint \
             itself, or the ancestor it inherits the error from) and go to its frame",
        )
        .clicked()
    {
        out.push(Action::Select(Some(w.cause)));
        out.push(Action::Seek(frame));
    }
}

/// The focused joint: its limits, floor, worst error, keys and bytes (edited in the tree).
fn joint(ui: &mut egui::Ui, doc: &Document, j: usize) {
    let unit = doc.resolved.unit;
    let limits = &doc.resolved.limits;
    let name = &doc.asset.skeleton.joints[j].name;
    ui.label(RichText::new(format!("Joint {name}")).strong());
    if !limits.evaluated[j] {
        ui.label(RichText::new("A helper joint: no markers, not measured.").weak());
        return;
    }
    egui::Grid::new("joint").num_columns(2).show(ui, |ui| {
        kv(ui, "Tolerance", fmt_len(limits.tolerance[j], unit));
        kv(ui, "Marker offset", fmt_len(limits.marker_offset[j], unit));
        kv(
            ui,
            "Pinned",
            if doc.resolved.pinned[j] { "yes" } else { "no" }.into(),
        );
        if let Some(r) = doc.shown() {
            if let Some(&f) = r.clip.report.floors.get(j) {
                kv(ui, FLOOR, fmt_len(f, unit));
            }
            kv(ui, "Worst error", fmt_len(r.errors.joint_max[j], unit));
            if let Some(c) = r.joint_costs.get(j) {
                kv(
                    ui,
                    "Keys / bytes",
                    format!("{} / {}", c.keys, fmt_bytes(c.bits.div_ceil(8) as usize)),
                );
            }
        }
    });
    ui.label(RichText::new("Edit it in the joint tree.").weak().small());
}

fn kv(ui: &mut egui::Ui, k: &str, v: String) {
    ui.label(RichText::new(k).weak());
    ui.label(v);
    ui.end_row();
}
