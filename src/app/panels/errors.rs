//! The error panel: the selected joint's error over time against its tolerance, split into
//! what its own tracks cause and what it inherits (a plot sharing the curves' time axis), and
//! a joints x frames heatmap of error / tolerance for the whole clip, of the total or of the
//! own error. The heatmap is one texture of at most one texel per pixel column (the largest
//! error over the frames it covers). Clicking a cell selects the joint whose own tracks cause
//! that error (ctrl-click: the row's joint itself) and goes to the frame.

use egui::{
    Color32, ColorImage, Id, PointerButton, Pos2, Rect, RichText, Sense, Stroke, TextureHandle,
    TextureOptions, Vec2,
};
use egui_plot::{HLine, Line, LineStyle, Plot};

use super::super::actions::Action;
use super::super::state::Document;
pub use super::attribution::ratio_color;
use super::attribution::{cause, legend};
use super::curves::{PlotGeom, X_LINK, geom_of, playhead, scrub};
use super::fmt_len;
use crate::metric::Attribution;

/// Heading of the panel (found by label in tests).
pub const HEADING: &str = "Errors";
/// The accessible label of the heatmap.
pub const HEATMAP: &str = "Error heatmap";
/// The heatmap mode buttons.
pub const TOTAL_MODE: &str = "Total error";
pub const OWN_MODE: &str = "Own error";
pub const CAUSED_MODE: &str = "Caused";

/// What the heatmap's cells show.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum HeatmapMode {
    /// The joint's error ÷ its tolerance.
    #[default]
    Total,
    /// The error the joint's own tracks cause on its markers ÷ its tolerance.
    Own,
    /// The worst error ÷ tolerance the joint's own tracks cause on it or any descendant.
    Caused,
}

const NAME_WIDTH: f32 = 110.0;

/// Where the heatmap was drawn: maps joints and frames to cells (clicks, tests).
#[derive(Clone, Debug, PartialEq)]
pub struct HeatmapGeom {
    /// The cells' area on screen (names excluded).
    pub rect: Rect,
    /// Joint index of each row, top to bottom.
    pub rows: Vec<usize>,
    pub frames: usize,
}

impl HeatmapGeom {
    /// The centre of the cell of `joint` at `frame`, if the joint has a row.
    pub fn cell_center(&self, joint: usize, frame: usize) -> Option<Pos2> {
        let row = self.rows.iter().position(|&j| j == joint)?;
        let h = self.rect.height() / self.rows.len() as f32;
        let w = self.rect.width() / self.frames.max(1) as f32;
        Some(Pos2::new(
            self.rect.left() + (frame as f32 + 0.5) * w,
            self.rect.top() + (row as f32 + 0.5) * h,
        ))
    }

    /// The joint and frame under a screen point.
    pub fn cell_at(&self, p: Pos2) -> Option<(usize, usize)> {
        if !self.rect.contains(p) || self.rows.is_empty() {
            return None;
        }
        let row = ((p.y - self.rect.top()) / self.rect.height() * self.rows.len() as f32) as usize;
        let f = ((p.x - self.rect.left()) / self.rect.width() * self.frames as f32) as usize;
        Some((
            self.rows[row.min(self.rows.len() - 1)],
            f.min(self.frames.saturating_sub(1)),
        ))
    }
}

/// What the panel drew (for scrubbing and tests).
#[derive(Clone, Debug, Default)]
pub struct ErrorGeoms {
    pub plot: Option<PlotGeom>,
    pub heatmap: Option<HeatmapGeom>,
}

/// What the heatmap shows and its texture (kept by the app between frames).
#[derive(Default)]
pub struct ErrorsView {
    pub mode: HeatmapMode,
    texture: Option<(TextureKey, TextureHandle)>,
}

impl std::fmt::Debug for ErrorsView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ErrorsView")
            .field("mode", &self.mode)
            .finish_non_exhaustive()
    }
}

/// What the heatmap texture was drawn from: redrawn when any of it changes.
#[derive(Clone, Debug, PartialEq)]
struct TextureKey {
    result: usize,
    settings_rev: u64,
    document: u64,
    mode: HeatmapMode,
    columns: usize,
    rows: Vec<usize>,
}

/// Shows the panel.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    attr: Option<&Attribution>,
    joint: Option<usize>,
    frame: f32,
    view: &mut ErrorsView,
    out: &mut Vec<Action>,
) -> ErrorGeoms {
    let mut g = ErrorGeoms::default();
    let Some(r) = doc.shown() else {
        ui.label(RichText::new(HEADING).strong());
        let waiting = if doc.has_clip() {
            "Waiting for the compressed result…"
        } else {
            super::NO_CLIP
        };
        ui.label(RichText::new(waiting).weak());
        return g;
    };
    let e = &r.errors;
    let limits = &doc.resolved.limits;
    let unit = doc.resolved.unit;
    let to_mm = 1000.0 / unit.per_metre() as f64;
    let joints = e.joints;
    let frames = e.frames;
    // The attribution of another result (a clip switch in flight) is not shown.
    let attr = attr.filter(|a| a.joints == joints && a.frames == frames);
    match joint {
        Some(j) if limits.evaluated[j] => {
            let tol = limits.tolerance[j];
            let split = attr.map_or(String::new(), |a| {
                format!(
                    "; own {}, inherited {}",
                    fmt_len(a.own_max[j], unit),
                    fmt_len(a.inherited_max[j], unit)
                )
            });
            ui.label(
                RichText::new(format!(
                    "{HEADING}: {} (worst {} of {} tolerance{split})",
                    doc.asset.skeleton.joints[j].name,
                    fmt_len(e.joint_max[j], unit),
                    fmt_len(tol, unit)
                ))
                .strong(),
            );
            let mut pts: Vec<[f64; 2]> = (0..frames)
                .map(|f| [f as f64, e.at_samples[f * joints + j] as f64 * to_mm])
                .collect();
            if let Some(m) = &e.at_midpoints {
                pts.extend(
                    (0..frames.saturating_sub(1))
                        .map(|f| [f as f64 + 0.5, m[f * joints + j] as f64 * to_mm]),
                );
                pts.sort_by(|a, b| a[0].total_cmp(&b[0]));
            }
            let series = |m: &[f32]| -> Vec<[f64; 2]> {
                (0..frames)
                    .map(|f| [f as f64, m[f * joints + j] as f64 * to_mm])
                    .collect()
            };
            let split_lines = attr.map(|a| (series(&a.own), series(&a.inherited)));
            let resp = Plot::new("joint_error")
                .height((ui.available_height() * 0.38).max(70.0))
                .link_axis(Id::unique(X_LINK), [true, false])
                .link_cursor(Id::unique(X_LINK), [true, false])
                .pan_pointer_button(PointerButton::Middle)
                .allow_zoom([true, false])
                .include_y(0.0)
                .include_y(tol as f64 * to_mm * 1.1)
                .y_axis_label("mm")
                .legend(
                    egui_plot::Legend::default()
                        .position(egui_plot::Corner::LeftTop)
                        .text_style(egui::TextStyle::Small)
                        .background_alpha(0.4),
                )
                .show(ui, |p| {
                    p.line(
                        Line::new("error", super::decimate::min_max(&pts, p.transform()))
                            .color(Color32::from_rgb(240, 160, 60))
                            .width(1.5),
                    );
                    if let Some((own, inherited)) = split_lines {
                        p.line(
                            Line::new("own", super::decimate::min_max(&own, p.transform()))
                                .color(Color32::from_rgb(110, 200, 250))
                                .width(1.0),
                        );
                        p.line(
                            Line::new(
                                "inherited",
                                super::decimate::min_max(&inherited, p.transform()),
                            )
                            .color(Color32::from_rgb(170, 140, 230))
                            .style(LineStyle::dashed_loose())
                            .width(1.0),
                        );
                    }
                    p.hline(
                        HLine::new("tolerance", tol as f64 * to_mm)
                            .color(Color32::from_rgb(220, 40, 40))
                            .style(LineStyle::dashed_dense()),
                    );
                    p.vline(playhead(frame));
                });
            if let Some(f) = scrub(&resp) {
                out.push(Action::Seek(f));
            }
            g.plot = Some(geom_of(&resp.transform));
        }
        Some(j) => {
            ui.label(
                RichText::new(format!(
                    "{HEADING}: {} is a helper joint (no markers, not measured)",
                    doc.asset.skeleton.joints[j].name
                ))
                .strong(),
            );
        }
        None => {
            ui.label(RichText::new(HEADING).strong());
        }
    }
    ui.horizontal_wrapped(|ui| {
        ui.spacing_mut().item_spacing.x = 4.0;
        ui.selectable_value(&mut view.mode, HeatmapMode::Total, TOTAL_MODE)
            .on_hover_text("Each cell: the joint's error ÷ its tolerance");
        ui.add_enabled_ui(attr.is_some(), |ui| {
            ui.selectable_value(&mut view.mode, HeatmapMode::Own, OWN_MODE)
                .on_hover_text(
                    "Each cell: the error the joint's own tracks cause (decoded over its raw \
                     parents) ÷ its tolerance; what it inherits from its ancestors is left out",
                );
        });
        ui.add_enabled_ui(attr.is_some_and(|a| a.caused.is_some()), |ui| {
            ui.selectable_value(&mut view.mode, HeatmapMode::Caused, CAUSED_MODE)
                .on_hover_text(
                    "Each cell: the worst error ÷ tolerance the joint's own tracks cause, alone, \
                     on its markers or any descendant's: the joints to tune light up (off on \
                     very large clips)",
                );
        });
        legend(ui, "error ÷ tolerance");
    });
    ui.label(
        RichText::new(
            "Click a cell: the joint whose own tracks cause that error, at that frame · \
             ctrl-click: the row's joint",
        )
        .small()
        .weak(),
    );
    let mode = match (view.mode, attr) {
        (HeatmapMode::Own, Some(_)) => HeatmapMode::Own,
        (HeatmapMode::Caused, Some(a)) if a.caused.is_some() => HeatmapMode::Caused,
        _ => HeatmapMode::Total,
    };
    g.heatmap = heatmap(ui, doc, attr, mode, joint, frame, view, out);
    g
}
/// Joints in tree order (depth first, children in index order), evaluated ones only.
fn tree_rows(doc: &Document) -> Vec<usize> {
    let s = &doc.asset.skeleton;
    let n = s.len();
    let mut children = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, jt) in s.joints.iter().enumerate() {
        match jt.parent {
            Some(p) => children[p].push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(j) = stack.pop() {
        order.push(j);
        stack.extend(children[j].iter().rev());
    }
    order.retain(|&j| doc.resolved.limits.evaluated[j]);
    order
}

#[allow(clippy::too_many_arguments)]
fn heatmap(
    ui: &mut egui::Ui,
    doc: &Document,
    attr: Option<&Attribution>,
    mode: HeatmapMode,
    joint: Option<usize>,
    frame: f32,
    view: &mut ErrorsView,
    out: &mut Vec<Action>,
) -> Option<HeatmapGeom> {
    let r = doc.shown()?;
    let e = &r.errors;
    let limits = &doc.resolved.limits;
    let rows = tree_rows(doc);
    if rows.is_empty() || e.frames == 0 {
        ui.label(RichText::new("No measured joints.").weak());
        return None;
    }
    // Caused cells are ratios already: against a tolerance of 1.
    let ones;
    let (values, tolerance): (&[f32], &[f32]) = match (mode, attr) {
        (HeatmapMode::Own, Some(a)) => (&a.own, &limits.tolerance),
        (
            HeatmapMode::Caused,
            Some(Attribution {
                caused: Some(c), ..
            }),
        ) => {
            ones = vec![1.0f32; limits.len()];
            (c, &ones)
        }
        _ => (&e.at_samples, &limits.tolerance),
    };
    let avail = ui.available_size();
    let row_h = (avail.y / rows.len() as f32).clamp(3.0, 14.0);
    let size = Vec2::new(avail.x.max(NAME_WIDTH + 50.0), row_h * rows.len() as f32);
    let mut geom = None;
    egui::ScrollArea::vertical()
        .id_salt("heatmap_scroll")
        .auto_shrink([false, false])
        .show(ui, |ui| {
            let (rect, resp) = ui.allocate_exact_size(size, Sense::click_and_drag());
            let resp = resp.on_hover_cursor(egui::CursorIcon::Crosshair);
            resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, HEATMAP));
            let cells =
                Rect::from_min_max(Pos2::new(rect.left() + NAME_WIDTH, rect.top()), rect.max);
            let g = HeatmapGeom {
                rect: cells,
                rows: rows.clone(),
                frames: e.frames,
            };
            let painter = ui.painter_at(rect);
            // One texel per frame, or per pixel column when frames outnumber pixels.
            let pixels = (cells.width() * ui.ctx().pixels_per_point()).max(1.0) as usize;
            let columns = e.frames.min(pixels).max(1);
            let key = TextureKey {
                result: r as *const _ as usize,
                settings_rev: doc.settings_rev,
                document: doc.id,
                mode,
                columns,
                rows: rows.clone(),
            };
            if view.texture.as_ref().is_none_or(|(k, _)| *k != key) {
                let image = heat_image(values, e.joints, e.frames, &rows, tolerance, columns);
                let tex = ui
                    .ctx()
                    .load_texture("error heatmap", image, TextureOptions::NEAREST);
                view.texture = Some((key, tex));
            }
            if let Some((_, tex)) = &view.texture {
                painter.image(
                    tex.id(),
                    cells,
                    Rect::from_min_max(Pos2::ZERO, Pos2::new(1.0, 1.0)),
                    Color32::WHITE,
                );
            }
            // Joint names (every n-th row when rows are thin).
            let every = (9.0 / row_h).ceil().max(1.0) as usize;
            let font = egui::FontId::proportional((row_h - 1.0).clamp(8.0, 11.0));
            for (ri, &j) in rows.iter().enumerate() {
                let y = cells.top() + (ri as f32 + 0.5) * row_h;
                let selected = joint == Some(j);
                if ri % every == 0 || selected {
                    painter.text(
                        Pos2::new(rect.left() + NAME_WIDTH - 4.0, y),
                        egui::Align2::RIGHT_CENTER,
                        &doc.asset.skeleton.joints[j].name,
                        font.clone(),
                        if selected {
                            Color32::from_rgb(255, 230, 120)
                        } else {
                            ui.visuals().text_color()
                        },
                    );
                }
                if selected {
                    painter.rect_stroke(
                        Rect::from_min_size(
                            Pos2::new(cells.left(), y - row_h * 0.5),
                            Vec2::new(cells.width(), row_h),
                        ),
                        0.0,
                        Stroke::new(1.5, Color32::WHITE),
                        egui::StrokeKind::Outside,
                    );
                }
            }
            let fw = cells.width() / e.frames as f32;
            let x = cells.left() + (frame + 0.5) * fw;
            painter.line_segment(
                [Pos2::new(x, cells.top()), Pos2::new(x, cells.bottom())],
                Stroke::new(1.5, Color32::WHITE),
            );
            if let Some(p) = resp.hover_pos()
                && let Some((j, f)) = g.cell_at(p)
            {
                resp.clone().on_hover_ui_at_pointer(|ui| {
                    cell_tooltip(ui, doc, attr, j, f);
                });
            }
            if (resp.clicked() || resp.dragged_by(PointerButton::Primary))
                && let Some(p) = resp.interact_pointer_pos()
                && let Some((j, f)) = g.cell_at(p)
            {
                // Own and caused cells belong to the row's joint; a total one to its cause.
                let exact = mode != HeatmapMode::Total
                    || ui.input(|i| i.modifiers.command || i.modifiers.ctrl);
                let target = if exact {
                    j
                } else {
                    cause(doc, j, f).map_or(j, |c| c.source)
                };
                if joint != Some(target) {
                    out.push(Action::Select(Some(target)));
                }
                out.push(Action::Seek(f as f32));
            }
            geom = Some(g);
        });
    geom
}

/// The heatmap as an image: `rows` top to bottom, `columns` texels across the frames, each
/// the colour of the largest error / tolerance over the frames it covers.
fn heat_image(
    values: &[f32],
    joints: usize,
    frames: usize,
    rows: &[usize],
    tolerance: &[f32],
    columns: usize,
) -> ColorImage {
    let mut pixels = Vec::with_capacity(rows.len() * columns);
    for &j in rows {
        let tol = tolerance[j].max(1e-12);
        for c in 0..columns {
            let f0 = c * frames / columns;
            let f1 = ((c + 1) * frames / columns).max(f0 + 1);
            let m = (f0..f1)
                .map(|f| values[f * joints + j])
                .fold(0.0f32, f32::max);
            pixels.push(ratio_color(m / tol));
        }
    }
    ColorImage::new([columns, rows.len()], pixels)
}

/// What the pointer's cell holds: total, own and inherited error, and the cause.
fn cell_tooltip(ui: &mut egui::Ui, doc: &Document, attr: Option<&Attribution>, j: usize, f: usize) {
    let Some(r) = doc.shown() else { return };
    let unit = doc.resolved.unit;
    let names = &doc.asset.skeleton.joints;
    let err = r.errors.at(j, f);
    let tol = doc.resolved.limits.tolerance[j].max(1e-12);
    ui.label(format!(
        "{} @ frame {f}: {} ({:.0}% of tolerance)",
        names[j].name,
        fmt_len(err, unit),
        100.0 * err / tol
    ));
    if let Some(a) = attr {
        ui.label(format!(
            "own tracks {} · inherited {}",
            fmt_len(a.own_at(j, f), unit),
            fmt_len(a.inherited_at(j, f), unit)
        ));
    }
    if let Some(c) = cause(doc, j, f)
        && c.source != j
    {
        ui.label(format!(
            "caused mostly by {}'s tracks ({} here): click selects it",
            names[c.source].name,
            fmt_len(c.error, unit)
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_round_trip() {
        let g = HeatmapGeom {
            rect: Rect::from_min_size(Pos2::new(100.0, 50.0), Vec2::new(300.0, 40.0)),
            rows: vec![3, 0, 7, 5],
            frames: 150,
        };
        for (j, f) in [(3, 0), (7, 149), (5, 77), (0, 12)] {
            let p = g.cell_center(j, f).unwrap();
            assert_eq!(g.cell_at(p), Some((j, f)));
        }
        assert_eq!(g.cell_center(1, 0), None);
        assert_eq!(g.cell_at(Pos2::new(99.0, 60.0)), None);
    }

    #[test]
    fn heat_image_keeps_each_columns_worst_frame() {
        // 2 joints x 1000 frames into 10 columns: one spike over tolerance on joint 1.
        let (joints, frames) = (2, 1000);
        let mut values = vec![0.01f32; joints * frames];
        values[537 * joints + 1] = 2.0;
        let img = heat_image(&values, joints, frames, &[1, 0], &[1.0, 1.0], 10);
        assert_eq!(img.size, [10, 2]);
        let over = ratio_color(2.0);
        let row0: Vec<Color32> = img.pixels[..10].to_vec();
        assert_eq!(
            row0[5], over,
            "frame 537 lands in column 5 of joint 1's row"
        );
        assert_eq!(row0.iter().filter(|&&c| c == over).count(), 1);
        assert!(img.pixels[10..].iter().all(|&c| c == ratio_color(0.01)));
        // Fewer frames than columns asked: one texel per frame.
        let img = heat_image(&values[..6], joints, 3, &[0], &[1.0, 1.0], 3);
        assert_eq!(img.size, [3, 1]);
    }
}
