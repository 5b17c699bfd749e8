//! The dope-sheet row under the timeline: the focused joint's kept keys, one lane per
//! animated track (translation, rotation, scale), aligned with the scrub bar; a click on a
//! key goes to it, and `,` / `.` (or Alt+Left / Alt+Right) go to the previous / next key.

use egui::{Color32, Pos2, RichText, Sense, Shape, Stroke, Vec2};

use super::super::actions::Action;
use super::super::state::Document;
use crate::codec::TrackData;

/// The accessible name of the row (tests find it by this).
pub const DOPE_SHEET: &str = "Keys of the selected joint";
pub const PREV_KEY: &str = "Previous key";
pub const NEXT_KEY: &str = "Next key";

const LANES: [(&str, Color32); 3] = [
    ("T", Color32::from_rgb(235, 150, 90)),
    ("R", Color32::from_rgb(120, 190, 250)),
    ("S", Color32::from_rgb(170, 220, 120)),
];

/// The kept key frames of each track of `joint` in the shown result (empty for a track
/// that is not animated).
pub fn track_keys(doc: &Document, joint: usize) -> [Vec<u32>; 3] {
    let Some(r) = doc.shown() else {
        return Default::default();
    };
    let Some(tracks) = r.clip.tracks.get(joint) else {
        return Default::default();
    };
    std::array::from_fn(|k| match &tracks[k] {
        TrackData::Animated(a) => a.curve.frames.clone(),
        _ => Vec::new(),
    })
}

/// Every frame where `joint` keeps a key on any track, ascending.
pub fn key_frames(doc: &Document, joint: usize) -> Vec<u32> {
    let mut all: Vec<u32> = track_keys(doc, joint).into_iter().flatten().collect();
    all.sort_unstable();
    all.dedup();
    all
}

/// The key before (`forward == false`) or after `frame` in `keys` (ascending), if any.
pub fn adjacent_key(keys: &[u32], frame: f32, forward: bool) -> Option<u32> {
    let at = frame.round();
    if forward {
        keys.iter().copied().find(|&k| k as f32 > at)
    } else {
        keys.iter().rev().copied().find(|&k| (k as f32) < at)
    }
}

/// The row; `x_of` maps a frame to screen x exactly as the scrub bar above does.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    joint: Option<usize>,
    frame: f32,
    x_of: impl Fn(f32, egui::Rect) -> f32,
    out: &mut Vec<Action>,
) {
    let lanes = joint.map(|j| track_keys(doc, j)).unwrap_or_default();
    let animated: Vec<usize> = (0..3).filter(|&k| !lanes[k].is_empty()).collect();
    let lane_h = 7.0;
    let height = (animated.len().max(1) as f32 * lane_h + 4.0).max(12.0);
    let (rect, resp) =
        ui.allocate_exact_size(Vec2::new(ui.available_width(), height), Sense::click());
    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Canvas, true, DOPE_SHEET));
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 2.0, Color32::from_gray(24));
    let Some(j) = joint else {
        painter.text(
            rect.left_center() + Vec2::new(8.0, 0.0),
            egui::Align2::LEFT_CENTER,
            "Keys: select a joint",
            egui::FontId::proportional(10.0),
            Color32::from_gray(130),
        );
        return;
    };
    if animated.is_empty() {
        painter.text(
            rect.left_center() + Vec2::new(8.0, 0.0),
            egui::Align2::LEFT_CENTER,
            format!(
                "Keys: {} has no animated tracks (rest or constant)",
                doc.asset.skeleton.joints[j].name
            ),
            egui::FontId::proportional(10.0),
            Color32::from_gray(130),
        );
        return;
    }
    let mut nearest: Option<(f32, u32)> = None;
    let pointer = resp.hover_pos();
    for (lane, &k) in animated.iter().enumerate() {
        let y = rect.top() + 2.0 + (lane as f32 + 0.5) * lane_h;
        let (name, color) = LANES[k];
        painter.text(
            Pos2::new(rect.left() + 1.0, y),
            egui::Align2::LEFT_CENTER,
            name,
            egui::FontId::monospace(7.0),
            Color32::from_gray(140),
        );
        let r = (lane_h * 0.5 - 0.5).max(2.0);
        let mut last_x = f32::NEG_INFINITY;
        for &f in &lanes[k] {
            let x = x_of(f as f32, rect);
            if let Some(p) = pointer {
                let d = (p.x - x).abs();
                if nearest.is_none_or(|(nd, _)| d < nd) {
                    nearest = Some((d, f));
                }
            }
            // Keys closer than a pixel are drawn once.
            if x - last_x < 1.0 {
                continue;
            }
            last_x = x;
            painter.add(Shape::convex_polygon(
                vec![
                    Pos2::new(x, y - r),
                    Pos2::new(x + r, y),
                    Pos2::new(x, y + r),
                    Pos2::new(x - r, y),
                ],
                color,
                Stroke::NONE,
            ));
        }
    }
    let x = x_of(frame, rect);
    painter.vline(
        x,
        rect.y_range(),
        Stroke::new(2.0, Color32::from_rgb(250, 220, 80)),
    );
    let near = nearest.filter(|(d, _)| *d <= 6.0).map(|(_, f)| f);
    if let Some(f) = near {
        let on: Vec<&str> = (0..3)
            .filter(|&k| lanes[k].binary_search(&f).is_ok())
            .map(|k| ["translation", "rotation", "scale"][k])
            .collect();
        resp.clone().on_hover_ui_at_pointer(|ui| {
            ui.label(RichText::new(format!("key at frame {f}: {}", on.join(", "))).small());
        });
    }
    if resp.clicked()
        && let Some(f) = near
    {
        out.push(Action::Seek(f as f32));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adjacent_keys_step_over_the_current_frame() {
        let keys = [0, 4, 9, 20];
        assert_eq!(adjacent_key(&keys, 0.0, true), Some(4));
        assert_eq!(adjacent_key(&keys, 4.0, true), Some(9));
        assert_eq!(adjacent_key(&keys, 5.4, true), Some(9));
        assert_eq!(adjacent_key(&keys, 20.0, true), None);
        assert_eq!(adjacent_key(&keys, 9.0, false), Some(4));
        assert_eq!(
            adjacent_key(&keys, 8.6, false),
            Some(4),
            "8.6 shows frame 9"
        );
        assert_eq!(adjacent_key(&keys, 0.0, false), None);
        assert_eq!(adjacent_key(&[], 3.0, true), None);
    }
}
