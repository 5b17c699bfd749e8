//! The error panel: the selected joint's error over time against its tolerance (a plot
//! sharing the curves' time axis), and a joints x frames heatmap of error / tolerance for the
//! whole clip. Clicking or dragging on the heatmap selects that joint and frame.

use egui::{Color32, Id, Mesh, PointerButton, Pos2, Rect, RichText, Sense, Stroke, Vec2};
use egui_plot::{HLine, Line, LineStyle, Plot};

use super::super::actions::Action;
use super::super::state::Document;
use super::curves::{PlotGeom, X_LINK, geom_of, playhead, scrub};
use super::fmt_len;

/// Heading of the panel (found by label in tests).
pub const HEADING: &str = "Errors";
/// The accessible label of the heatmap.
pub const HEATMAP: &str = "Error heatmap";

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

/// Colour of an error / tolerance ratio: green (0) to yellow to orange (1), red above.
pub fn ratio_color(r: f32) -> Color32 {
    let lerp = |a: [f32; 3], b: [f32; 3], t: f32| {
        Color32::from_rgb(
            (a[0] + (b[0] - a[0]) * t) as u8,
            (a[1] + (b[1] - a[1]) * t) as u8,
            (a[2] + (b[2] - a[2]) * t) as u8,
        )
    };
    let green = [40.0, 140.0, 70.0];
    let yellow = [225.0, 205.0, 60.0];
    let orange = [240.0, 130.0, 40.0];
    if r > 1.0 {
        Color32::from_rgb(220, 30, 40)
    } else if r > 0.5 {
        lerp(yellow, orange, (r - 0.5) * 2.0)
    } else {
        lerp(green, yellow, r.max(0.0) * 2.0)
    }
}

/// Shows the panel.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    joint: Option<usize>,
    frame: f32,
    out: &mut Vec<Action>,
) -> ErrorGeoms {
    let mut g = ErrorGeoms::default();
    let Some(r) = doc.shown() else {
        ui.label(RichText::new(HEADING).strong());
        ui.label(RichText::new("Waiting for the compressed result…").weak());
        return g;
    };
    let e = &r.errors;
    let limits = &doc.resolved.limits;
    let unit = doc.resolved.unit;
    let to_mm = 1000.0 / unit.per_metre() as f64;
    let joints = e.joints;
    let frames = e.frames;
    match joint {
        Some(j) if limits.evaluated[j] => {
            let tol = limits.tolerance[j];
            ui.label(
                RichText::new(format!(
                    "{HEADING}: {} (worst {} of {} tolerance)",
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
            let resp = Plot::new("joint_error")
                .height((ui.available_height() * 0.38).max(70.0))
                .link_axis(Id::unique(X_LINK), [true, false])
                .link_cursor(Id::unique(X_LINK), [true, false])
                .pan_pointer_button(PointerButton::Middle)
                .allow_zoom([true, false])
                .include_y(0.0)
                .include_y(tol as f64 * to_mm * 1.1)
                .y_axis_label("mm")
                .show(ui, |p| {
                    p.line(
                        Line::new("error", pts)
                            .color(Color32::from_rgb(240, 160, 60))
                            .width(1.5),
                    );
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
    ui.label(
        RichText::new("Error / tolerance, joints × frames (click a cell: select joint and frame)")
            .small(),
    );
    g.heatmap = heatmap(ui, doc, joint, frame, out);
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

fn heatmap(
    ui: &mut egui::Ui,
    doc: &Document,
    joint: Option<usize>,
    frame: f32,
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
            // One column per frame, or per pixel when frames outnumber pixels (max over them).
            let ncols = e.frames.min(cells.width().max(1.0) as usize).max(1);
            let col_w = cells.width() / ncols as f32;
            let mut mesh = Mesh::default();
            for (ri, &j) in rows.iter().enumerate() {
                let tol = limits.tolerance[j].max(1e-12);
                let y0 = cells.top() + ri as f32 * row_h;
                for c in 0..ncols {
                    let f0 = c * e.frames / ncols;
                    let f1 = ((c + 1) * e.frames / ncols).max(f0 + 1);
                    let m = (f0..f1)
                        .map(|f| e.at_samples[f * e.joints + j])
                        .fold(0.0f32, f32::max);
                    let x0 = cells.left() + c as f32 * col_w;
                    mesh.add_colored_rect(
                        Rect::from_min_size(Pos2::new(x0, y0), Vec2::new(col_w + 0.5, row_h)),
                        ratio_color(m / tol),
                    );
                }
            }
            painter.add(mesh);
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
                let err = e.at_samples[f * e.joints + j];
                resp.clone().on_hover_ui_at_pointer(|ui| {
                    ui.label(format!(
                        "{} @ frame {f}: {} ({:.0}% of tolerance)",
                        doc.asset.skeleton.joints[j].name,
                        fmt_len(err, doc.resolved.unit),
                        100.0 * err / limits.tolerance[j].max(1e-12)
                    ));
                });
            }
            if (resp.clicked() || resp.dragged_by(PointerButton::Primary))
                && let Some(p) = resp.interact_pointer_pos()
                && let Some((j, f)) = g.cell_at(p)
            {
                if joint != Some(j) {
                    out.push(Action::Select(Some(j)));
                }
                out.push(Action::Seek(f as f32));
            }
            geom = Some(g);
        });
    geom
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_round_trip_and_colours_order() {
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
        let (lo, mid, hi) = (ratio_color(0.0), ratio_color(0.5), ratio_color(1.5));
        assert!(lo.g() > lo.r(), "green when small");
        assert!(mid.r() > 200 && mid.g() > 180, "yellow halfway");
        assert!(hi.r() > 200 && hi.g() < 60, "red over tolerance");
    }
}
