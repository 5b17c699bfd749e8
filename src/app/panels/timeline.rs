//! The timeline: clip selector, transport, loop and speed, a scrub bar that shows the error
//! over time, the selected joint's keys as a dope-sheet row, the current time / frame and the
//! error at the current frame.

use egui::{Color32, Pos2, Rect, RichText, Sense, Stroke, Vec2};

use super::super::actions::Action;
use super::super::state::{Document, Playback};
use super::{dope_sheet, fmt_len};

pub const PLAY: &str = "Play";
pub const PAUSE: &str = "Pause";
pub const PREV: &str = "< Prev";
pub const NEXT: &str = "Next >";
pub const SCRUB: &str = "Timeline";

pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    play: &mut Playback,
    selected: Option<usize>,
    edit: &mut super::timeline_edit::TimelineEdit,
    in_place: &mut bool,
    out: &mut Vec<Action>,
) {
    let frames = doc.frame_count();
    let rate = doc.sample_rate();
    let last = frames.saturating_sub(1);
    ui.horizontal(|ui| {
        let clip_label = ui.label("Clip");
        egui::ComboBox::from_id_salt("clip")
            .selected_text(if doc.asset.clips.is_empty() {
                "(no clips: rest pose)".to_owned()
            } else {
                doc.clip_name().to_owned()
            })
            .width(180.0)
            .show_ui(ui, |ui| {
                for (i, c) in doc.asset.clips.iter().enumerate() {
                    let text = format!("{}  ({} frames)", c.name, c.frame_count);
                    if ui.selectable_label(i == doc.clip, text).clicked() {
                        out.push(Action::SetClip(i));
                    }
                }
            })
            .response
            .labelled_by(clip_label.id);
        ui.separator();
        if ui
            .button("|<")
            .on_hover_text("First frame (Home)")
            .clicked()
        {
            out.push(Action::Seek(0.0));
        }
        if ui
            .button(PREV)
            .on_hover_text("Previous frame (Left)")
            .clicked()
        {
            out.push(Action::Step(-1));
        }
        let label = if play.playing { PAUSE } else { PLAY };
        if ui
            .add(egui::Button::new(label).min_size(Vec2::new(72.0, 0.0)))
            .on_hover_text("Space")
            .clicked()
        {
            out.push(Action::TogglePlay);
        }
        if ui
            .button(NEXT)
            .on_hover_text("Next frame (Right)")
            .clicked()
        {
            out.push(Action::Step(1));
        }
        if ui.button(">|").on_hover_text("Last frame (End)").clicked() {
            out.push(Action::Seek(last as f32));
        }
        let keys = selected
            .map(|j| dope_sheet::key_frames(doc, j))
            .unwrap_or_default();
        for (text, name, forward, tip) in [
            (
                "< Key",
                dope_sheet::PREV_KEY,
                false,
                "Previous key of the selected joint (, or Alt+Left)",
            ),
            (
                "Key >",
                dope_sheet::NEXT_KEY,
                true,
                "Next key of the selected joint (. or Alt+Right)",
            ),
        ] {
            let target = dope_sheet::adjacent_key(&keys, play.frame, forward);
            let b = ui
                .add_enabled(target.is_some(), egui::Button::new(text))
                .on_hover_text(tip)
                .accessible_name(name);
            if b.clicked()
                && let Some(f) = target
            {
                out.push(Action::Seek(f as f32));
            }
        }
        ui.checkbox(&mut play.looping, "Loop");
        let speed_label = ui.label("Speed");
        egui::ComboBox::from_id_salt("speed")
            .selected_text(format!("{}×", play.speed))
            .width(60.0)
            .show_ui(ui, |ui| {
                for s in [0.1, 0.25, 0.5, 1.0, 2.0] {
                    ui.selectable_value(&mut play.speed, s, format!("{s}×"));
                }
            })
            .response
            .labelled_by(speed_label.id);
        ui.separator();
        let f = play.frame;
        ui.label(
            RichText::new(format!(
                "Frame {:>4} / {last}   {:.3} s / {:.3} s   {rate} fps",
                f.round() as i64,
                f / rate,
                last as f32 / rate
            ))
            .monospace(),
        );
        if play.skipping(rate) {
            ui.label(
                RichText::new(format!(
                    "window draws {:.0} fps: frames skipped to keep real time",
                    play.drawn_fps
                ))
                .color(egui::Color32::from_rgb(230, 190, 80)),
            )
            .on_hover_text(
                "Playback follows the wall clock; this window cannot draw every frame of \
                 the clip, so some are not shown",
            );
        }
    });
    scrub_bar(ui, doc, play, out);
    super::timeline_edit::show(ui, doc, play.frame, edit, in_place, out);
    let last = (frames - 1).max(1) as f32;
    dope_sheet::show(
        ui,
        doc,
        selected,
        play.frame,
        |f, rect| rect.left() + 6.0 + (rect.width() - 12.0) * f / last,
        out,
    );
    ui.horizontal(|ui| {
        ui.label(error_line(doc, play.frame, selected));
        ui.separator();
        super::attribution::legend(ui, "bars: worst error ÷ tolerance per frame");
    });
}

/// The error-at-frame summary line.
pub fn error_line(doc: &Document, frame: f32, selected: Option<usize>) -> String {
    let unit = doc.resolved.unit;
    let Some(r) = doc.shown() else {
        return if doc.has_clip() {
            "Error at frame: (compressing...)".into()
        } else {
            "Error at frame: none (no clip, nothing compressed)".into()
        };
    };
    let f = (frame.round() as usize).min(r.errors.frames.saturating_sub(1));
    if r.errors.frames == 0 || r.errors.joints == 0 {
        return "Error at frame: no samples".into();
    }
    let row = &r.errors.at_samples[f * r.errors.joints..(f + 1) * r.errors.joints];
    let evaluated = &doc.resolved.limits.evaluated;
    let Some(first) = evaluated.iter().position(|&e| e) else {
        return "Error at frame: no joint carries markers".into();
    };
    let (wj, we) = row.iter().enumerate().filter(|(j, _)| evaluated[*j]).fold(
        (first, 0.0f32),
        |a, (j, &e)| if e > a.1 { (j, e) } else { a },
    );
    let names = &doc.asset.skeleton.joints;
    let mut s = format!(
        "Error at frame {f}: max {} ({}) against tolerance {}",
        fmt_len(we, unit),
        names[wj].name,
        fmt_len(doc.resolved.limits.tolerance[wj], unit)
    );
    if let Some(j) = selected {
        s += &format!(
            "   ·   {}: {} / {}",
            names[j].name,
            fmt_len(row[j], unit),
            fmt_len(doc.resolved.limits.tolerance[j], unit)
        );
    }
    s
}

/// A scrub bar with per-frame worst error / tolerance drawn as bars behind the playhead.
fn scrub_bar(ui: &mut egui::Ui, doc: &Document, play: &mut Playback, out: &mut Vec<Action>) {
    let frames = doc.frame_count().max(1);
    let last = (frames - 1).max(1) as f32;
    let (rect, resp) = ui.allocate_exact_size(
        Vec2::new(ui.available_width(), 34.0),
        Sense::click_and_drag(),
    );
    resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Slider, true, SCRUB));
    let x_of = |f: f32| rect.left() + 6.0 + (rect.width() - 12.0) * f / last;
    if (resp.dragged() || resp.clicked())
        && let Some(p) = resp.interact_pointer_pos()
    {
        let f = ((p.x - rect.left() - 6.0) / (rect.width() - 12.0) * last).clamp(0.0, last);
        out.push(Action::Seek(f.round()));
    }
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, Color32::from_gray(30));
    if let Some(r) = doc.shown()
        && r.errors.joints > 0
    {
        let tol = &doc.resolved.limits.tolerance;
        let worst = |f: usize| {
            let row = &r.errors.at_samples[f * r.errors.joints..(f + 1) * r.errors.joints];
            row.iter()
                .zip(tol)
                .map(|(e, t)| if *t > 0.0 { e / t } else { 0.0 })
                .fold(0.0f32, f32::max)
        };
        // One bar per frame, or per pixel column (the worst of its frames) when frames
        // outnumber pixels: a long capture's 2,748 bars cost every frame of the window.
        let bar_w = ((rect.width() - 12.0) / last).max(1.0);
        let per_bar = ((last / (rect.width() - 12.0).max(1.0)).ceil() as usize).max(1);
        for first in (0..r.errors.frames).step_by(per_bar) {
            let end = (first + per_bar).min(r.errors.frames);
            let ratio = (first..end).map(worst).fold(0.0f32, f32::max);
            let h = (ratio.min(2.0) / 2.0) * (rect.height() - 14.0);
            let color = super::attribution::ratio_color(ratio);
            let x = x_of((first + end - 1) as f32 * 0.5);
            let w = bar_w.max(x_of((end - 1) as f32) - x_of(first as f32) + 1.0);
            painter.rect_filled(
                Rect::from_min_max(
                    Pos2::new(x - w * 0.5, rect.bottom() - 2.0 - h.max(1.0)),
                    Pos2::new(x + w * 0.5, rect.bottom() - 2.0),
                ),
                0.0,
                color,
            );
        }
        // Tolerance line at ratio 1.
        let y = rect.bottom() - 2.0 - 0.5 * (rect.height() - 14.0);
        painter.hline(
            rect.x_range(),
            y,
            Stroke::new(1.0, Color32::from_rgba_unmultiplied(230, 200, 80, 90)),
        );
    }
    // Ticks every ~10 frames (rounded to the rate).
    let step = [1usize, 5, 10, 15, 30, 60, 120, 300, 600]
        .into_iter()
        .find(|s| (rect.width() - 12.0) / last * *s as f32 >= 40.0)
        .unwrap_or(1200);
    for f in (0..frames).step_by(step) {
        let x = x_of(f as f32);
        painter.vline(
            x,
            rect.top()..=rect.top() + 5.0,
            Stroke::new(1.0, Color32::GRAY),
        );
        painter.text(
            Pos2::new(x + 2.0, rect.top() + 1.0),
            egui::Align2::LEFT_TOP,
            f.to_string(),
            egui::FontId::monospace(9.0),
            Color32::from_gray(160),
        );
    }
    let x = x_of(play.frame);
    painter.vline(
        x,
        rect.y_range(),
        Stroke::new(2.0, Color32::from_rgb(250, 220, 80)),
    );
}
