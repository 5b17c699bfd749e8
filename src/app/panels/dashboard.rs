//! The clip dashboard: every clip of the open file with its size, ratio, errors, time and
//! pass / fail; per-clip preset, method and tolerance (edits go through undo); a "fit in N
//! KiB" search per clip or per file, and the result it reached. Clicking a clip opens it.

use std::sync::Arc;

use super::super::actions::Action;
use super::super::compressor::Compressed;
use super::{fmt_bytes, fmt_len};
use crate::codec::size_budget::Fit;
use crate::model::LengthUnit;
use crate::settings::{ClipSettings, Method, Preset, Settings};

/// The window's title (also its label for tests).
pub const TITLE: &str = "Clips";
/// The fit button's label.
pub const FIT: &str = "Fit";
/// The button that writes a fit's scale into the settings.
pub const APPLY_FIT: &str = "Apply to settings";
/// Pass / fail labels.
pub const PASS: &str = "pass";
pub const FAIL: &str = "FAIL";

/// What the dashboard keeps between frames.
#[derive(Clone, Debug)]
pub struct DashboardView {
    pub budget_kib: f64,
    /// Fit the whole file (all clips together) rather than the open clip.
    pub whole_file: bool,
}

impl Default for DashboardView {
    fn default() -> Self {
        Self {
            budget_kib: 16.0,
            whole_file: false,
        }
    }
}

/// One clip's row.
pub struct ClipRow {
    pub index: usize,
    pub name: String,
    pub frames: usize,
    pub rate: f32,
    /// The result for the clip's current settings, once compressed.
    pub result: Option<Arc<Compressed>>,
    /// Progress while the clip is being compressed.
    pub progress: Option<f32>,
    /// The tolerance a joint without overrides gets in this clip (mm).
    pub tolerance_mm: f32,
    /// Why the clip could not be compressed at its current settings.
    pub failure: Option<String>,
    /// The clip's events inside it, by time (the timeline's event row edits them).
    pub events: Vec<crate::model::event::Event>,
}

impl ClipRow {
    /// Every evaluated joint within tolerance at every sample and midpoint.
    pub fn passes(&self) -> Option<bool> {
        self.result.as_ref().map(|r| {
            r.contract_met
                && r.errors.samples.violations == 0
                && r.errors.midpoints.is_none_or(|m| m.violations == 0)
        })
    }
}

/// A finished (or failed) size search.
#[derive(Clone, Debug)]
pub struct FitOutcome {
    /// The clip searched (None: the whole file).
    pub clip: Option<usize>,
    pub fit: Result<Fit, String>,
    /// The settings revision it was searched for (applying it later would be stale).
    pub settings_rev: u64,
}

/// The search's state, for display.
pub struct FitState<'a> {
    pub running: bool,
    pub outcome: Option<&'a FitOutcome>,
    /// The outcome was searched for the current settings.
    pub current: bool,
}

/// Everything the window shows.
pub struct Dashboard<'a> {
    pub rows: &'a [ClipRow],
    pub open_clip: usize,
    pub settings: &'a Settings,
    pub unit: LengthUnit,
    pub fit: FitState<'a>,
}

/// Shows the dashboard window; `open` is cleared when the user closes it.
pub fn show(
    ctx: &egui::Context,
    open: &mut bool,
    d: &Dashboard<'_>,
    view: &mut DashboardView,
    out: &mut Vec<Action>,
) {
    let max = ctx.content_rect().size() * egui::vec2(0.9, 0.8);
    egui::Window::new(TITLE)
        .open(open)
        .resizable(true)
        .default_width(max.x.min(1100.0))
        .max_size(max)
        .show(ctx, |ui| {
            fit_bar(ui, d, view, out);
            ui.separator();
            totals(ui, d);
            egui::ScrollArea::both().show(ui, |ui| table(ui, d, out));
        });
}

fn fit_bar(ui: &mut egui::Ui, d: &Dashboard<'_>, view: &mut DashboardView, out: &mut Vec<Action>) {
    ui.horizontal_wrapped(|ui| {
        ui.label("Fit in");
        ui.add(
            egui::DragValue::new(&mut view.budget_kib)
                .range(0.1..=1.0e6)
                .speed(0.5)
                .suffix(" KiB"),
        );
        ui.selectable_value(&mut view.whole_file, false, "open clip");
        ui.selectable_value(&mut view.whole_file, true, "whole file");
        let clip = (!view.whole_file).then_some(d.open_clip);
        if d.fit.running {
            ui.spinner();
            ui.label("searching (one compression per step)…");
            if ui.button("Cancel").clicked() {
                out.push(Action::CancelFit);
            }
        } else if ui
            .button(FIT)
            .on_hover_text(
                "Scale every tolerance by one factor (keeping your per-joint ratios) and \
                 search for the tightest that fits",
            )
            .clicked()
        {
            out.push(Action::FitBudget {
                clip,
                bytes: (view.budget_kib * 1024.0) as u64,
            });
        }
    });
    let Some(o) = d.fit.outcome else { return };
    let scope = o
        .clip
        .and_then(|c| d.rows.get(c))
        .map_or("the whole file".to_owned(), |r| format!("'{}'", r.name));
    match &o.fit {
        Err(e) => {
            ui.colored_label(ui.visuals().error_fg_color, format!("Fit failed: {e}"));
        }
        Ok(fit) => {
            let Some(p) = fit.reached() else { return };
            let fits = fit.best.is_some();
            let text = format!(
                "{scope} {} {}: tolerances ×{:.3}, {}, max error {} ({} compressions){}",
                if fits { "fits in" } else { "does NOT fit in" },
                fmt_bytes(fit.budget_bytes as usize),
                p.scale,
                fmt_bytes(p.bytes as usize),
                fmt_len(p.max_error, d.unit),
                fit.probes.len(),
                if fits {
                    ""
                } else {
                    " — the smallest size reached"
                }
            );
            ui.horizontal_wrapped(|ui| {
                let colour = if fits {
                    ui.visuals().text_color()
                } else {
                    ui.visuals().warn_fg_color
                };
                ui.colored_label(colour, text);
                if !d.fit.current {
                    ui.weak("(settings changed since)");
                } else if ui
                    .add_enabled(fits, egui::Button::new(APPLY_FIT))
                    .on_hover_text("Scale the tolerances in this clip's settings (undoable)")
                    .clicked()
                {
                    out.push(Action::ApplyFit);
                }
            });
        }
    }
}

/// The file at a glance: total size and how many clips pass.
fn totals(ui: &mut egui::Ui, d: &Dashboard<'_>) {
    let done: Vec<&ClipRow> = d.rows.iter().filter(|r| r.result.is_some()).collect();
    let bytes: usize = done
        .iter()
        .filter_map(|r| r.result.as_ref())
        .map(|r| r.sizes.compressed_bytes)
        .sum();
    let pass = done.iter().filter(|r| r.passes() == Some(true)).count();
    ui.label(format!(
        "{} clips · {} compressed{} · {pass} pass, {} fail",
        d.rows.len(),
        fmt_bytes(bytes),
        if done.len() < d.rows.len() {
            format!(" ({} still compressing)", d.rows.len() - done.len())
        } else {
            String::new()
        },
        done.len() - pass
    ));
}

fn table(ui: &mut egui::Ui, d: &Dashboard<'_>, out: &mut Vec<Action>) {
    egui::Grid::new("clip_table")
        .striped(true)
        .num_columns(12)
        .spacing([12.0, 4.0])
        .show(ui, |ui| {
            for h in [
                "Clip",
                "Frames",
                "Size",
                "Ratio",
                "Max err",
                "Between",
                "Time",
                "",
                "Preset",
                "Method",
                "Tolerance",
                "Events",
            ] {
                ui.strong(h);
            }
            ui.end_row();
            for row in d.rows {
                clip_row(ui, d, row, out);
                ui.end_row();
            }
        });
}

fn clip_row(ui: &mut egui::Ui, d: &Dashboard<'_>, row: &ClipRow, out: &mut Vec<Action>) {
    if ui
        .selectable_label(row.index == d.open_clip, &row.name)
        .on_hover_text("Open this clip")
        .clicked()
    {
        out.push(Action::SetClip(row.index));
    }
    ui.label(format!(
        "{} ({:.1} s)",
        row.frames,
        row.frames.saturating_sub(1) as f32 / row.rate.max(1e-3)
    ));
    match &row.result {
        Some(r) => {
            ui.label(fmt_bytes(r.sizes.compressed_bytes));
            ui.label(format!("{:.1}:1", r.sizes.ratio()));
            ui.label(fmt_len(r.errors.samples.max, d.unit));
            ui.label(
                r.errors
                    .midpoints
                    .map_or("—".into(), |m| fmt_len(m.max, d.unit)),
            );
            ui.label(format!("{:.0} ms", r.elapsed.as_secs_f64() * 1e3));
        }
        None => {
            for _ in 0..5 {
                ui.weak("…");
            }
        }
    }
    match (row.passes(), row.progress) {
        (Some(true), _) => ui.colored_label(egui::Color32::from_rgb(80, 190, 100), PASS),
        (Some(false), _) => ui.colored_label(ui.visuals().error_fg_color, FAIL),
        (None, _) if row.failure.is_some() => ui
            .colored_label(ui.visuals().error_fg_color, "error")
            .on_hover_text(row.failure.clone().unwrap_or_default()),
        (None, Some(p)) => ui.weak(format!("{:.0}%", p * 100.0)),
        (None, None) => ui.weak("queued"),
    };
    let own = d.settings.clips.get(&row.name).cloned().unwrap_or_default();
    preset_combo(ui, d.settings, row, &own, out);
    method_combo(ui, d.settings, row, &own, out);
    tolerance_field(ui, d.settings, row, &own, out);
    events_cell(ui, row);
}

/// The clip's events: names at their frames, the first few shown, all on hover.
fn events_cell(ui: &mut egui::Ui, row: &ClipRow) {
    if row.events.is_empty() {
        ui.weak("—");
        return;
    }
    let at = |e: &crate::model::event::Event| format!("{} @{:.0}", e.name, e.time * row.rate);
    let mut text: Vec<String> = row.events.iter().take(3).map(at).collect();
    if row.events.len() > 3 {
        text.push(format!("+{}", row.events.len() - 3));
    }
    let all: Vec<String> = row
        .events
        .iter()
        .map(|e| {
            format!(
                "{}  frame {:.0}  {:.3} s{}",
                e.name,
                e.time * row.rate,
                e.time,
                e.payload
                    .as_ref()
                    .map_or(String::new(), |p| format!("  ({p})"))
            )
        })
        .collect();
    ui.label(text.join(", ")).on_hover_text(all.join("\n"));
}

/// The accessible name of a clip's preset picker (tests find it by this).
pub fn preset_label(clip: &str) -> String {
    format!("Preset of {clip}")
}

/// The accessible name of a clip's method picker.
pub fn method_label(clip: &str) -> String {
    format!("Method of {clip}")
}

/// The accessible name of a clip's tolerance field.
pub fn tolerance_label(clip: &str) -> String {
    format!("Tolerance of {clip}")
}

fn named(kind: egui::Role, label: &str) -> egui::WidgetInfo {
    egui::WidgetInfo::labeled(kind, true, label)
}

/// The settings with `row`'s clip entry replaced by `clip` (removed when it is empty).
fn with_clip(settings: &Settings, name: &str, clip: ClipSettings) -> Box<Settings> {
    let mut s = settings.clone();
    if clip == ClipSettings::default() {
        s.clips.remove(name);
    } else {
        s.clips.insert(name.to_owned(), clip);
    }
    Box::new(s)
}

fn preset_combo(
    ui: &mut egui::Ui,
    settings: &Settings,
    row: &ClipRow,
    own: &ClipSettings,
    out: &mut Vec<Action>,
) {
    let name = |p: Option<Preset>| p.map_or("file's", Preset::name);
    let mut chosen = own.preset;
    egui::ComboBox::from_id_salt(("clip_preset", row.index))
        .selected_text(name(chosen))
        .width(90.0)
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut chosen, None, name(None));
            for p in Preset::ALL {
                ui.selectable_value(&mut chosen, Some(p), p.name());
            }
        })
        .response
        .widget_info(|| named(egui::Role::ComboBox, &preset_label(&row.name)));
    if chosen != own.preset {
        let clip = ClipSettings {
            preset: chosen,
            ..own.clone()
        };
        out.push(Action::EditSettings(
            format!("preset of clip '{}'", row.name),
            with_clip(settings, &row.name, clip),
        ));
    }
}

fn method_combo(
    ui: &mut egui::Ui,
    settings: &Settings,
    row: &ClipRow,
    own: &ClipSettings,
    out: &mut Vec<Action>,
) {
    let name = |m: Option<Method>| match m {
        None => "file's",
        Some(Method::None) => "none",
        Some(Method::Linear) => "linear",
        Some(Method::CatmullRom) => "catmull-rom",
        Some(Method::Auto) => "auto",
    };
    let mut chosen = own.method;
    egui::ComboBox::from_id_salt(("clip_method", row.index))
        .selected_text(name(chosen))
        .width(100.0)
        .show_ui(ui, |ui| {
            for m in [
                None,
                Some(Method::Auto),
                Some(Method::Linear),
                Some(Method::CatmullRom),
                Some(Method::None),
            ] {
                ui.selectable_value(&mut chosen, m, name(m));
            }
        })
        .response
        .widget_info(|| named(egui::Role::ComboBox, &method_label(&row.name)));
    if chosen != own.method {
        let clip = ClipSettings {
            method: chosen,
            ..own.clone()
        };
        out.push(Action::EditSettings(
            format!("method of clip '{}'", row.name),
            with_clip(settings, &row.name, clip),
        ));
    }
}

fn tolerance_field(
    ui: &mut egui::Ui,
    settings: &Settings,
    row: &ClipRow,
    own: &ClipSettings,
    out: &mut Vec<Action>,
) {
    ui.horizontal(|ui| {
        let mut mm = row.tolerance_mm;
        let r = ui
            .add(
                super::setting_value::drag(&mut mm)
                    .range(1e-4..=1000.0)
                    .speed(0.001 * row.tolerance_mm.max(0.01) * 10.0)
                    .max_decimals(4)
                    .suffix(" mm"),
            )
            .on_hover_text("This clip's tolerance (joints without their own value)");
        r.widget_info(|| named(egui::Role::SpinButton, &tolerance_label(&row.name)));
        if r.changed() && mm != row.tolerance_mm && mm > 0.0 {
            let clip = ClipSettings {
                tolerance_mm: Some(mm),
                ..own.clone()
            };
            out.push(Action::EditSettings(
                format!("tolerance of clip '{}'", row.name),
                with_clip(settings, &row.name, clip),
            ));
        }
        if own.tolerance_mm.is_some()
            && ui
                .small_button("×")
                .on_hover_text("Use the file's tolerance")
                .clicked()
        {
            let clip = ClipSettings {
                tolerance_mm: None,
                ..own.clone()
            };
            out.push(Action::EditSettings(
                format!("tolerance of clip '{}'", row.name),
                with_clip(settings, &row.name, clip),
            ));
        }
    });
}
