//! One row of the joint table: name (indented, with an expander), error bar (the share its
//! own tracks cause drawn solid, the share inherited from its ancestors hatched), tolerance
//! (red when below the joint's floor; the floor on hover), marker offset, pinned, keys, bytes.

use egui::{Color32, Modifiers, RichText, Sense, Stroke, vec2};
use egui_extras::{Column, TableBuilder, TableRow};

use super::super::super::actions::Action;
use super::super::super::state::Document;
use super::super::attribution::ratio_color;
use super::super::{fmt_bytes, fmt_len};
use super::{JointsView, Selection, edited, marker_label, pin_label, tolerance_label};
use crate::codec::JointCost;
use crate::metric::Attribution;
use crate::settings::{EditScope, JointEdit, JointSettings};

const INDENT: f32 = 8.0;
/// Overridden values are drawn in this colour (file-wide values in the normal one).
const OVERRIDE: Color32 = Color32::from_rgb(120, 190, 255);
/// A tolerance below the joint's floor is drawn in this colour.
const BELOW_FLOOR: Color32 = Color32::from_rgb(240, 95, 80);
/// The error bar spans 0 to twice the tolerance; the tick marks the tolerance.
const BAR_SPAN: f32 = 2.0;

/// How a joint's name was clicked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Click {
    /// Select just this joint.
    Single,
    /// Ctrl / cmd: add it to or remove it from the selection.
    Add,
    /// Shift: select the range from the last clicked joint.
    Range,
    /// The expander: show or hide its children.
    Expand,
}

/// What every row needs, computed once per frame.
pub struct RowContext<'a> {
    doc: &'a Document,
    sel: Selection<'a>,
    children: &'a [Vec<usize>],
    include_descendants: bool,
    scope: EditScope,
    ratios: Option<Vec<f32>>,
    costs: Option<&'a [JointCost]>,
    /// Own / inherited error of the shown result.
    attr: Option<&'a Attribution>,
    /// Per joint, the tightest tolerance it can reach.
    floors: Option<&'a [f32]>,
    per_mm: f32,
}

impl<'a> RowContext<'a> {
    pub fn new(
        doc: &'a Document,
        sel: Selection<'a>,
        children: &'a [Vec<usize>],
        view: &JointsView,
        attr: Option<&'a Attribution>,
    ) -> Self {
        let ratios = doc.shown().map(|r| {
            r.errors
                .joint_max
                .iter()
                .zip(&doc.resolved.limits.tolerance)
                .map(|(e, t)| if *t > 0.0 { e / t } else { 0.0 })
                .collect()
        });
        Self {
            doc,
            sel,
            children,
            include_descendants: view.include_descendants,
            scope: if view.this_clip_only {
                EditScope::Clip
            } else {
                EditScope::File
            },
            ratios,
            costs: doc.shown().map(|r| r.joint_costs.as_slice()),
            attr: attr.filter(|a| a.joints == doc.asset.skeleton.len()),
            floors: doc.shown().map(|r| r.clip.report.floors.as_slice()),
            per_mm: doc.resolved.unit.per_metre() / 1000.0,
        }
    }

    /// The joints an edit on `j` applies to: the selection when `j` is in it, else `j`;
    /// with their descendants when asked.
    fn targets(&self, j: usize) -> Vec<usize> {
        let mut t: Vec<usize> = if self.sel.set.contains(&j) {
            self.sel.set.iter().copied().collect()
        } else {
            vec![j]
        };
        if self.include_descendants {
            t = t
                .into_iter()
                .flat_map(|j| self.doc.asset.skeleton.subtree(j))
                .collect();
            t.sort_unstable();
            t.dedup();
        }
        t
    }

    /// The joint's own overrides (file-wide merged with the current clip's).
    fn overrides(&self, name: &str) -> JointSettings {
        let s = &self.doc.settings;
        let file = s.joints.get(name).cloned().unwrap_or_default();
        let clip = s
            .clips
            .get(self.doc.clip_name())
            .and_then(|c| c.joints.get(name))
            .cloned()
            .unwrap_or_default();
        JointSettings {
            tolerance_mm: clip.tolerance_mm.or(file.tolerance_mm),
            marker_offset_cm: clip.marker_offset_cm.or(file.marker_offset_cm),
            pinned: clip.pinned.or(file.pinned),
        }
    }
}

/// The table's columns: name, error, tolerance, marker, pin, keys, bytes.
pub fn columns(table: TableBuilder<'_>) -> TableBuilder<'_> {
    table
        .column(Column::auto().at_least(110.0).resizable(true).clip(true))
        .column(Column::exact(46.0))
        .column(Column::exact(58.0))
        .column(Column::exact(58.0))
        .column(Column::exact(22.0))
        .column(Column::exact(34.0))
        .column(Column::remainder().at_least(44.0))
}

/// The column titles (with the units of the editable values).
pub fn header(mut row: TableRow<'_, '_>) {
    let titles = [
        (
            "Joint",
            "Click: select · ctrl-click: add · shift-click: range · right-click: more",
        ),
        (
            "Error",
            "Worst error over the clip against the joint's tolerance (the tick), coloured by \
             error ÷ tolerance like the heatmap (green within, yellow near, red over). Solid: \
             the share the joint's own tracks cause; hatched: the share it inherits from its \
             ancestors (their tracks are the ones to tune)",
        ),
        (
            "Tol. mm",
            "Largest error allowed on this joint's markers, in millimetres; blue when set on \
             the joint, white when it follows the file-wide value, red when below the joint's \
             floor (the tightest tolerance it can reach; hover a value to see it)",
        ),
        (
            "Marker cm",
            "Distance of the joint's markers from it, in centimetres; blue when set on the \
             joint",
        ),
        (
            "Pin",
            "Pinned: measured against its own decoded parent chain",
        ),
        ("Keys", "Keys its tracks keep"),
        ("Bytes", "Bytes its tracks cost"),
    ];
    for (t, tip) in titles {
        row.col(|ui| {
            ui.label(RichText::new(t).strong().small())
                .on_hover_text(tip);
        });
    }
}

/// Draws joint `j`'s cells; returns a click on its name.
pub fn show(
    row: &mut TableRow<'_, '_>,
    ctx: &RowContext<'_>,
    j: usize,
    depth: Option<usize>,
    collapsed: bool,
    out: &mut Vec<Action>,
) -> Option<Click> {
    let doc = ctx.doc;
    let joint = &doc.asset.skeleton.joints[j];
    let limits = &doc.resolved.limits;
    let measured = limits.evaluated[j];
    let mut click = None;
    row.col(|ui| click = name_cell(ui, ctx, j, depth, collapsed, out));
    row.col(|ui| error_bar(ui, ctx, j));
    let own = ctx.overrides(&joint.name);
    if measured {
        row.col(|ui| {
            let mut tol_mm = limits.tolerance[j] / ctx.per_mm;
            let floor = ctx.floors.and_then(|f| f.get(j)).copied();
            let below = floor.is_some_and(|f| limits.tolerance[j] < f);
            let r = ui
                .scope(|ui| {
                    if below {
                        ui.visuals_mut().override_text_color = Some(BELOW_FLOOR);
                    }
                    value_cell(
                        ui,
                        &mut tol_mm,
                        own.tolerance_mm.is_some(),
                        &tolerance_label(&joint.name),
                    )
                })
                .inner;
            let r = match floor {
                Some(f) => r.on_hover_text(floor_text(f / ctx.per_mm, below)),
                None => r,
            };
            if r.changed() {
                push(ctx, j, JointEdit::ToleranceMm(tol_mm), "tolerance", out);
            }
        });
        row.col(|ui| {
            let mut off_cm = limits.marker_offset[j] / (ctx.per_mm * 10.0);
            let r = value_cell(
                ui,
                &mut off_cm,
                own.marker_offset_cm.is_some(),
                &marker_label(&joint.name),
            );
            if r.changed() {
                let edit = JointEdit::MarkerOffsetCm(off_cm);
                push(ctx, j, edit, "marker offset", out);
            }
        });
        row.col(|ui| {
            let mut pinned = doc.resolved.pinned[j];
            if ui
                .checkbox(&mut pinned, "")
                .on_hover_text(
                    "Pinned: this joint's error is held against its own decoded parents, so \
                     its ancestors' budgets do not include it",
                )
                .accessible_name(pin_label(&joint.name))
                .changed()
            {
                push(ctx, j, JointEdit::Pinned(pinned), "pinned", out);
            }
        });
    } else {
        for _ in 0..3 {
            row.col(|ui| {
                ui.label(RichText::new("—").weak())
                    .on_hover_text("A helper joint: no markers, not measured");
            });
        }
    }
    let cost = ctx.costs.and_then(|c| c.get(j));
    row.col(|ui| {
        if let Some(c) = cost {
            ui.label(RichText::new(c.keys.to_string()).small());
        }
    });
    row.col(|ui| {
        if let Some(c) = cost {
            ui.label(RichText::new(fmt_bytes(c.bits.div_ceil(8) as usize)).small());
        }
    });
    click
}

fn name_cell(
    ui: &mut egui::Ui,
    ctx: &RowContext<'_>,
    j: usize,
    depth: Option<usize>,
    collapsed: bool,
    out: &mut Vec<Action>,
) -> Option<Click> {
    let doc = ctx.doc;
    let joint = &doc.asset.skeleton.joints[j];
    let mut click = None;
    ui.horizontal(|ui| {
        ui.spacing_mut().item_spacing.x = 2.0;
        if let Some(d) = depth {
            ui.add_space(d as f32 * INDENT);
            let (rect, resp) = ui.allocate_exact_size(vec2(12.0, 12.0), Sense::click());
            if !ctx.children[j].is_empty() {
                let c = rect.center();
                let color = ui.visuals().text_color();
                let pts = if collapsed {
                    vec![
                        c + vec2(-3.0, -4.0),
                        c + vec2(-3.0, 4.0),
                        c + vec2(4.0, 0.0),
                    ]
                } else {
                    vec![
                        c + vec2(-4.0, -2.5),
                        c + vec2(4.0, -2.5),
                        c + vec2(0.0, 4.0),
                    ]
                };
                ui.painter()
                    .add(egui::Shape::convex_polygon(pts, color, Stroke::NONE));
                if resp
                    .on_hover_text(if collapsed { "Expand" } else { "Collapse" })
                    .clicked()
                {
                    click = Some(Click::Expand);
                }
            }
        }
        let text = if joint.deforming {
            RichText::new(&joint.name)
        } else {
            RichText::new(&joint.name).weak().italics()
        };
        let selected = ctx.sel.set.contains(&j) || ctx.sel.focus == Some(j);
        let mut resp = ui.selectable_label(selected, text);
        if ctx.sel.focus == Some(j) {
            resp = resp.highlight();
        }
        if resp.clicked() {
            let m = ui.input(|i| i.modifiers);
            click = Some(if m.shift {
                Click::Range
            } else if m.matches_logically(Modifiers::COMMAND) || m.ctrl {
                Click::Add
            } else {
                Click::Single
            });
        }
        resp.context_menu(|ui| context_menu(ui, ctx, j, out));
    });
    click
}

/// The worst error against tolerance, as a bar with a tick at the tolerance: the share the
/// joint's own tracks cause solid, the inherited share hatched.
fn error_bar(ui: &mut egui::Ui, ctx: &RowContext<'_>, j: usize) {
    let (rect, resp) = ui.allocate_exact_size(vec2(44.0, 10.0), Sense::hover());
    let doc = ctx.doc;
    let Some(r) = ctx.ratios.as_ref().and_then(|r| r.get(j)) else {
        return;
    };
    if !doc.resolved.limits.evaluated[j] {
        return;
    }
    let p = ui.painter();
    p.rect_filled(rect, 2.0, ui.visuals().extreme_bg_color);
    let fill = (r / BAR_SPAN).clamp(0.0, 1.0);
    let mut bar = rect;
    bar.set_width((rect.width() * fill).max(1.0));
    let color = ratio_color(*r);
    let split = ctx.attr.map(|a| (a.own_max[j], a.inherited_max[j]));
    match split {
        Some((own, inherited)) if own + inherited > 0.0 => {
            let own_w = bar.width() * own / (own + inherited);
            let mut solid = bar;
            solid.set_width(own_w);
            p.rect_filled(solid, 2.0, color);
            let hatched = egui::Rect::from_min_max(egui::pos2(solid.right(), bar.top()), bar.max);
            p.rect_filled(hatched, 0.0, color.gamma_multiply(0.35));
            let mut x = hatched.left() + 2.0;
            while x < hatched.right() {
                p.line_segment(
                    [
                        egui::pos2(x, hatched.bottom()),
                        egui::pos2((x + 3.0).min(hatched.right()), hatched.top()),
                    ],
                    Stroke::new(1.0, color),
                );
                x += 3.0;
            }
        }
        _ => {
            p.rect_filled(bar, 2.0, color);
        }
    }
    let x = rect.left() + rect.width() / BAR_SPAN;
    p.line_segment(
        [
            egui::pos2(x, rect.top() - 1.0),
            egui::pos2(x, rect.bottom() + 1.0),
        ],
        Stroke::new(1.0, ui.visuals().strong_text_color()),
    );
    if let Some(res) = doc.shown() {
        let unit = doc.resolved.unit;
        let mut text = format!(
            "worst error {} of {} ({:.0}% of tolerance)",
            fmt_len(res.errors.joint_max[j], unit),
            fmt_len(doc.resolved.limits.tolerance[j], unit),
            r * 100.0
        );
        if let Some((own, inherited)) = split {
            text += &format!(
                "\nits own tracks cause up to {} (solid); inherited from its ancestors up to {} \
                 (hatched)",
                fmt_len(own, unit),
                fmt_len(inherited, unit)
            );
        }
        resp.on_hover_text(text);
    }
}

/// The hover text of a tolerance: the joint's floor (mm).
fn floor_text(floor_mm: f32, below: bool) -> String {
    if below {
        format!(
            "Below this joint's floor of {floor_mm:.4} mm (the tightest tolerance it can reach: \
             its error with every key at the finest precision): it is held just above it"
        )
    } else {
        format!("Floor {floor_mm:.4} mm: the tightest tolerance this joint can reach")
    }
}

fn value_cell(ui: &mut egui::Ui, value: &mut f32, overridden: bool, name: &str) -> egui::Response {
    let speed = (*value as f64 * 0.01).max(1e-4);
    ui.scope(|ui| {
        // A colour set by the caller (below the floor) wins over the override colour.
        if overridden && ui.visuals().override_text_color.is_none() {
            ui.visuals_mut().override_text_color = Some(OVERRIDE);
        }
        ui.add_sized(
            [54.0, 18.0],
            super::super::setting_value::drag(value)
                .speed(speed)
                .range(1e-6..=10000.0)
                // A value set elsewhere (a sidecar, an edit below the floor) is shown as it
                // is, never rewritten by the widget.
                .clamp_existing_to_range(false)
                .min_decimals(2)
                .max_decimals(6),
        )
        .accessible_name(name)
    })
    .inner
}

fn push(ctx: &RowContext<'_>, j: usize, edit: JointEdit, what: &str, out: &mut Vec<Action>) {
    let (label, s) = edited(ctx.doc, ctx.scope, &ctx.targets(j), edit, what);
    out.push(Action::EditSettings(label, s));
}

/// Right-click on a joint: subtree operations with this joint's values.
fn context_menu(ui: &mut egui::Ui, ctx: &RowContext<'_>, j: usize, out: &mut Vec<Action>) {
    let doc = ctx.doc;
    let name = &doc.asset.skeleton.joints[j].name;
    let subtree = doc.asset.skeleton.subtree(j);
    let limits = &doc.resolved.limits;
    let tol_mm = limits.tolerance[j] / ctx.per_mm;
    let off_cm = limits.marker_offset[j] / (ctx.per_mm * 10.0);
    ui.label(RichText::new(name).strong());
    if ui.button("Select with descendants").clicked() {
        out.push(Action::SelectMany(subtree.clone(), Some(j)));
        ui.close();
    }
    let mut act = |ui: &mut egui::Ui, text: String, joints: &[usize], edit, what: &str| {
        if ui.button(text).clicked() {
            let (label, s) = edited(doc, ctx.scope, joints, edit, what);
            out.push(Action::EditSettings(label, s));
            ui.close();
        }
    };
    ui.separator();
    if limits.evaluated[j] {
        act(
            ui,
            format!("Apply tolerance {tol_mm:.4} mm to descendants"),
            &subtree,
            JointEdit::ToleranceMm(tol_mm),
            "tolerance",
        );
        act(
            ui,
            format!("Apply marker offset {off_cm:.2} cm to descendants"),
            &subtree,
            JointEdit::MarkerOffsetCm(off_cm),
            "marker offset",
        );
        let pinned = doc.resolved.pinned[j];
        act(
            ui,
            format!("{} with descendants", if pinned { "Unpin" } else { "Pin" }),
            &subtree,
            JointEdit::Pinned(!pinned),
            "pinned",
        );
    }
    ui.separator();
    act(
        ui,
        "Reset this joint to file-wide values".into(),
        &[j],
        JointEdit::Reset,
        "reset",
    );
    act(
        ui,
        "Reset with descendants".into(),
        &subtree,
        JointEdit::Reset,
        "reset",
    );
}
