//! The tuning area above the timeline: the curves panel on the left, the error panel on the
//! right, with a draggable split between them.

use egui::{CursorIcon, Pos2, Rect, Sense, Stroke, UiBuilder};

use super::super::actions::Action;
use super::super::state::Document;
use super::curves::{self, CurvesView, PlotGeom};
use super::errors::{self, ErrorGeoms, ErrorsView};
use crate::metric::Attribution;

const MIN_SIDE: f32 = 240.0;
const GAP: f32 = 10.0;

/// Options of the tuning area (kept by the app).
#[derive(Debug)]
pub struct TuningView {
    pub curves: CurvesView,
    /// The scalar track shown in the curves panel instead of the joint's, if any.
    pub scalar: super::scalar_curves::ScalarCurvesView,
    pub errors: ErrorsView,
    /// The error panel's share of the width.
    pub errors_fraction: f32,
}

impl Default for TuningView {
    fn default() -> Self {
        Self {
            curves: CurvesView::default(),
            scalar: Default::default(),
            errors: ErrorsView::default(),
            errors_fraction: 0.38,
        }
    }
}

/// Shows both panels; returns where the first curve plot and the error panel were drawn.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    attr: Option<&Attribution>,
    selected: Option<usize>,
    frame: f32,
    view: &mut TuningView,
    out: &mut Vec<Action>,
) -> (Option<PlotGeom>, ErrorGeoms) {
    let avail = ui.available_rect_before_wrap();
    let w = avail.width();
    let ew = (w * view.errors_fraction).clamp(MIN_SIDE.min(w * 0.5), (w - MIN_SIDE).max(w * 0.5));
    let split = avail.right() - ew - GAP;
    let left = Rect::from_min_max(avail.min, Pos2::new(split, avail.bottom()));
    let right = Rect::from_min_max(Pos2::new(split + GAP, avail.top()), avail.max);
    let handle = Rect::from_min_max(
        Pos2::new(split, avail.top()),
        Pos2::new(split + GAP, avail.bottom()),
    );
    let r = ui
        .interact(handle, ui.scope_id().with("tuning_split"), Sense::drag())
        .on_hover_cursor(CursorIcon::ResizeHorizontal);
    if r.dragged()
        && let Some(p) = r.interact_pointer_pos()
        && w > 0.0
    {
        view.errors_fraction = ((avail.right() - p.x) / w).clamp(0.15, 0.85);
    }
    let x = handle.center().x;
    ui.painter().line_segment(
        [Pos2::new(x, avail.top()), Pos2::new(x, avail.bottom())],
        Stroke::new(1.0, ui.visuals().widgets.noninteractive.bg_stroke.color),
    );
    let g = ui
        .scope_builder(UiBuilder::new().max_rect(left), |ui| {
            ui.set_clip_rect(left);
            match view.scalar.shown(doc, selected) {
                Some(t) => super::scalar_curves::plot(ui, doc, t, frame, &mut view.scalar, out),
                None => curves::show(ui, doc, selected, frame, &mut view.curves, out),
            }
        })
        .inner;
    let e = ui
        .scope_builder(UiBuilder::new().max_rect(right), |ui| {
            ui.set_clip_rect(right);
            errors::show(ui, doc, attr, selected, frame, &mut view.errors, out)
        })
        .inner;
    ui.advance_cursor_after_rect(avail);
    (g, e)
}
