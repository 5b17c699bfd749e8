//! Error attribution in the app: the shown result's own / inherited split (computed with the
//! result on the compression worker, `metric::attribute`), the joint whose own tracks cause a cell's error, and the
//! legend of the error / tolerance colour scale every panel shares.

use std::sync::Arc;

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, Vec2};

use super::super::compressor::Compressed;
use super::super::state::Document;
use crate::metric::{self, Attribution, Contribution};

/// The attribution of `doc`'s shown result (computed with it on the compression worker;
/// none while a first pass is shown).
pub fn shown(doc: &Document) -> Option<Arc<Attribution>> {
    let shown = doc.result.as_ref().or(doc.previous.as_ref())?;
    shown.attribution.clone()
}

/// The joint whose own tracks cause most of `joint`'s error at sample `frame` in the shown
/// result (the joint itself when nothing above it causes more).
pub fn cause(doc: &Document, joint: usize, frame: usize) -> Option<Contribution> {
    let r = doc.shown()?;
    let clip = doc.asset.clips.get(doc.clip)?;
    let limits = &doc.resolved.limits;
    if joint >= limits.len() || !limits.evaluated[joint] {
        return None;
    }
    Some(metric::responsible(
        &doc.asset.skeleton,
        clip,
        r.poses.as_ref(),
        limits,
        joint,
        frame as f32,
    ))
}

/// Where "Go to worst" goes in result `c` of clip `clip` of `asset`: the joint whose own
/// tracks cause the largest error (the worst joint itself, or the ancestor it inherits the
/// error from), its worst joint and the frame; None when the clip has no error. The joint
/// selected when a file opens is this one too.
pub fn worst(
    asset: &crate::import::Asset,
    clip: usize,
    limits: &crate::metric::JointLimits,
    c: &Compressed,
) -> Option<Worst> {
    let raw = asset.clips.get(clip)?;
    let (joint, frame) = (c.errors.samples.worst_joint, c.errors.samples.worst_frame);
    if c.errors.samples.max <= 0.0 || joint >= limits.len() {
        return None;
    }
    let cause = if limits.evaluated[joint] {
        let by = metric::responsible(&asset.skeleton, raw, c.poses.as_ref(), limits, joint, frame);
        if by.error > 0.0 { by.source } else { joint }
    } else {
        joint
    };
    Some(Worst {
        cause,
        joint,
        frame,
    })
}

/// The worst error of a result: the joint showing it, at which frame, and the joint whose
/// own tracks cause it.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Worst {
    pub cause: usize,
    pub joint: usize,
    pub frame: f32,
}

/// Colour of an error / tolerance ratio: dark green (0) brightening to yellow-green at the
/// tolerance (1), red above it, so a clip within its tolerances reads green and what is over
/// stands out. The one scale of the heatmap, the joint table's error bars and the timeline
/// strip.
pub fn ratio_color(r: f32) -> Color32 {
    let lerp = |a: [f32; 3], b: [f32; 3], t: f32| {
        Color32::from_rgb(
            (a[0] + (b[0] - a[0]) * t) as u8,
            (a[1] + (b[1] - a[1]) * t) as u8,
            (a[2] + (b[2] - a[2]) * t) as u8,
        )
    };
    let dark = [28.0, 62.0, 48.0];
    let green = [60.0, 150.0, 80.0];
    let yellow = [220.0, 215.0, 80.0];
    if r > 1.0 {
        Color32::from_rgb(225, 35, 45)
    } else if r > 0.5 {
        lerp(green, yellow, (r - 0.5) * 2.0)
    } else {
        lerp(dark, green, r.max(0.0) * 2.0)
    }
}

/// The accessible name of a colour legend.
pub const LEGEND: &str = "Colour legend: error / tolerance";

/// A small legend of [`ratio_color`]: a gradient from 0 to the tolerance and a red swatch
/// for "over", labelled, `what` saying what the ratio is of.
pub fn legend(ui: &mut egui::Ui, what: &str) {
    ui.horizontal(|ui| {
        ui.spacing_mut().item_spacing.x = 3.0;
        ui.label(RichText::new(what).small().weak());
        let (rect, resp) = ui.allocate_exact_size(Vec2::new(84.0, 10.0), Sense::hover());
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Image, true, LEGEND));
        let p = ui.painter();
        let steps = 24;
        let w = rect.width() / steps as f32;
        for i in 0..steps {
            let r = (i as f32 + 0.5) / steps as f32;
            p.rect_filled(
                Rect::from_min_size(
                    Pos2::new(rect.left() + i as f32 * w, rect.top()),
                    Vec2::new(w + 0.5, rect.height()),
                ),
                0.0,
                ratio_color(r),
            );
        }
        let mid = rect.center().x;
        p.line_segment(
            [Pos2::new(mid, rect.top()), Pos2::new(mid, rect.bottom())],
            Stroke::new(1.0, Color32::from_black_alpha(120)),
        );
        ui.label(RichText::new("0 · ½ · 1 tol").small().weak());
        let (over, _) = ui.allocate_exact_size(Vec2::new(12.0, 10.0), Sense::hover());
        ui.painter().rect_filled(over, 0.0, ratio_color(2.0));
        ui.label(RichText::new("over").small().weak());
    })
    .response
    .on_hover_text(
        "Colour of error ÷ tolerance: dark green well within, brighter nearer the \
         tolerance, yellow at it, red over it",
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_order_from_green_to_red() {
        let (lo, mid, at, hi) = (
            ratio_color(0.0),
            ratio_color(0.5),
            ratio_color(1.0),
            ratio_color(1.5),
        );
        assert!(
            lo.g() > lo.r() && mid.g() > mid.r(),
            "green within tolerance"
        );
        assert!(mid.g() > lo.g(), "brighter nearer the tolerance");
        assert!(at.r() > 200 && at.g() > 200, "yellow at the tolerance");
        assert!(hi.r() > 200 && hi.g() < 60, "red over tolerance");
        assert_ne!(ratio_color(0.99), ratio_color(1.01), "a visible step at 1");
    }
}
