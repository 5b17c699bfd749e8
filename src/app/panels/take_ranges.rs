//! The timeline's take ranges: on a clip of the file (a take), set in / out at the
//! playhead, name the piece, optionally mark it looping and create it — it becomes a clip
//! of its own (`[takes.NAME]`), the take stays as it is. The take's pieces show as bars on
//! the scrub bar's frame scale; drag a bar's end (or select it and set in / out again) to
//! trim it. On a piece, set in / out trims it at the playhead. A trimmed piece keeps its
//! settings and its events stay on the take's frames they were on; events that fall
//! outside the new range are reported here and kept in the sidecar, not dropped.

use egui::{Color32, Pos2, Rect, Sense, Stroke, Vec2};

use super::super::actions::Action;
use super::super::state::Document;
use crate::settings::Settings;
use crate::settings::takes::TakeSettings;

/// Button and field labels (tests find them by these).
pub const SET_IN: &str = "Set in";
pub const SET_OUT: &str = "Set out";
pub const NAME: &str = "Piece name";
pub const LOOPING: &str = "Piece loops";
pub const CREATE: &str = "Create piece";
/// The strip's height in points.
pub const HEIGHT: f32 = 20.0;

/// The accessible name of a piece's bar on its take's strip.
pub fn bar_label(piece: &str) -> String {
    format!("Piece {piece}")
}

/// The accessible names of a piece's bar ends.
pub fn end_label(piece: &str, out: bool) -> String {
    format!("{} of {piece}", if out { "Out" } else { "In" })
}

/// What the strip keeps between frames.
#[derive(Clone, Debug, Default)]
pub struct TakeRangesState {
    /// In and out marks for the next piece (frames of the open take).
    pub marks: (Option<u32>, Option<u32>),
    pub name: String,
    pub looping: bool,
    /// The piece whose bar is selected (in / out then trim it).
    pub selected: Option<String>,
    /// A bar end being dragged: the piece, which end, the frame it is over.
    drag: Option<(String, bool, u32)>,
    clip: Option<String>,
}

/// `settings` with piece `name` trimmed to `start..=end` of its take: its own events (the
/// sidecar's list) stay on the take's frames they were on. None when nothing changes.
pub fn trimmed(
    settings: &Settings,
    name: &str,
    start: u32,
    end: u32,
    rate: f32,
) -> Option<Box<Settings>> {
    let t = settings.takes.get(name)?;
    if (t.start, t.end) == (start, end) || start >= end {
        return None;
    }
    let shift = (t.start as f32 - start as f32) / rate;
    let mut s = settings.clone();
    s.takes.get_mut(name).expect("checked").start = start;
    s.takes.get_mut(name).expect("checked").end = end;
    if let Some(events) = s.clips.get_mut(name).and_then(|c| c.events.as_mut()) {
        for e in events {
            e.time += shift;
        }
    }
    Some(Box::new(s))
}

/// Events of piece `name` that lie outside it, by name (kept, not exported).
pub fn outside(doc: &Document, name: &str) -> Vec<String> {
    let Some(c) = doc.asset.clips.iter().find(|c| c.name == name) else {
        return Vec::new();
    };
    let listed = doc.settings.clips.get(name).and_then(|c| c.events.as_ref());
    listed
        .unwrap_or(&c.events)
        .iter()
        .filter(|e| e.check(c.duration()).is_err())
        .map(|e| format!("{} ({:.3} s)", e.name, e.time))
        .collect()
}

/// What the strip hands to the controls within one frame.
pub enum TakeFrame {
    /// No clip open: no controls.
    Nothing,
    /// The open clip is a piece of a take: its controls trim it.
    Piece,
    /// The open clip is a take: the edits made on its strip (a dragged bar end).
    Take(Vec<(String, Box<Settings>)>),
}

/// Shows the open take's strip (its pieces as bars, the next piece's marks) when it has
/// pieces or marks; the controls follow on the timeline's control line ([`controls`]).
pub fn strip(ui: &mut egui::Ui, doc: &Document, state: &mut TakeRangesState) -> TakeFrame {
    if state.clip.as_deref() != Some(doc.clip_name()) {
        let keep = (state.name.clone(), state.looping);
        *state = TakeRangesState {
            clip: Some(doc.clip_name().to_owned()),
            name: keep.0,
            looping: keep.1,
            ..Default::default()
        };
    }
    if !doc.has_clip() {
        return TakeFrame::Nothing;
    }
    let clip = doc.clip_name();
    if is_piece(doc, clip) {
        return TakeFrame::Piece;
    }
    TakeFrame::Take(take_strip(ui, doc, clip, state))
}

fn is_piece(doc: &Document, clip: &str) -> bool {
    doc.settings.takes.contains_key(clip) && doc.cut_takes.0.contains_key(clip)
}

/// The controls of the strip (in / out, name, create; on a piece, its range and trim);
/// pushes the strip's and the controls' edits.
pub fn controls(
    ui: &mut egui::Ui,
    doc: &Document,
    playhead: f32,
    state: &mut TakeRangesState,
    frame: TakeFrame,
    out: &mut Vec<Action>,
) {
    let clip = doc.clip_name().to_owned();
    let frame_no = playhead.round().max(0.0) as u32;
    let mut edits = match frame {
        TakeFrame::Nothing => return,
        TakeFrame::Piece => {
            if let Some(t) = doc.settings.takes.get(&clip) {
                piece_line(ui, doc, &clip, t, frame_no, out);
            }
            return;
        }
        TakeFrame::Take(edits) => edits,
    };
    let rate = doc.sample_rate();
    pieces_controls(ui, doc, &clip, frame_no, rate, state, &mut edits);
    for (label, s) in edits {
        out.push(Action::EditSettings(label, s));
    }
}

/// On a piece: its range in its take, in / out at the playhead trim it.
fn piece_line(
    ui: &mut egui::Ui,
    doc: &Document,
    clip: &str,
    t: &TakeSettings,
    frame: u32,
    out: &mut Vec<Action>,
) {
    let rate = doc.sample_rate();
    ui.label(format!(
        "Piece of '{}': take frames {}-{} ({} frames)",
        t.source,
        t.start,
        t.end,
        t.end - t.start + 1
    ));
    let take = t.start + frame;
    for (label, out_end) in [(SET_IN, false), (SET_OUT, true)] {
        let (s, e) = if out_end {
            (t.start, take)
        } else {
            (take, t.end)
        };
        let b = ui
            .add_enabled(s < e, egui::Button::new(label))
            .on_hover_text(format!(
                "Trim the piece: {label} at the playhead (take frame {take})"
            ));
        if b.clicked()
            && let Some(edit) = trimmed(&doc.settings, clip, s, e, rate)
        {
            out.push(Action::EditSettings(format!("trim piece '{clip}'"), edit));
        }
    }
    outside_note(ui, doc, clip);
}

fn outside_note(ui: &mut egui::Ui, doc: &Document, piece: &str) {
    let o = outside(doc, piece);
    if !o.is_empty() {
        ui.colored_label(
            Color32::from_rgb(230, 150, 80),
            format!(
                "events outside the piece (kept, not exported): {}",
                o.join(", ")
            ),
        );
    }
}

/// On a take: its pieces as bars, the marks, and the controls that create or trim.
fn take_strip(
    ui: &mut egui::Ui,
    doc: &Document,
    clip: &str,
    state: &mut TakeRangesState,
) -> Vec<(String, Box<Settings>)> {
    let rate = doc.sample_rate();
    let frames = doc.frame_count().max(1);
    let last = (frames - 1).max(1) as f32;
    let pieces: Vec<(&String, &TakeSettings)> = doc
        .settings
        .takes
        .iter()
        .filter(|(_, t)| t.source == clip)
        .collect();
    if state
        .selected
        .as_ref()
        .is_some_and(|s| !pieces.iter().any(|(n, _)| *n == s))
    {
        state.selected = None;
    }
    let mut edits = Vec::new();
    if pieces.is_empty() && state.marks == (None, None) {
        // Nothing to show on a strip: the control line's Set in / Set out start one.
        return edits;
    }
    let (rect, bg) =
        ui.allocate_exact_size(Vec2::new(ui.available_width(), HEIGHT), Sense::click());
    let x_of = |f: f32| rect.left() + 6.0 + (rect.width() - 12.0) * f / last;
    let frame_at =
        |x: f32| ((x - rect.left() - 6.0) / (rect.width() - 12.0) * last).clamp(0.0, last);
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, Color32::from_gray(24));
    if bg.clicked() {
        state.selected = None;
    }
    for (k, (name, t)) in pieces.iter().enumerate() {
        let (mut a, mut b) = (t.start, t.end);
        if let Some((_, end, f)) = state.drag.as_ref().filter(|d| &d.0 == *name) {
            if *end { b = *f } else { a = *f }
        }
        let hue = [
            Color32::from_rgb(90, 140, 220),
            Color32::from_rgb(200, 130, 220),
            Color32::from_rgb(90, 190, 190),
            Color32::from_rgb(220, 170, 90),
        ][k % 4];
        let selected = state.selected.as_deref() == Some(name.as_str());
        let bar = Rect::from_x_y_ranges(
            x_of(a as f32)..=x_of(b as f32),
            rect.top() + 3.0..=rect.bottom() - 3.0,
        );
        let body = ui.interact(
            bar.shrink2(Vec2::new(5.0, 0.0)),
            egui::Id::unique(("take_piece", *name)),
            Sense::click(),
        );
        let bl = bar_label(name);
        body.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &bl));
        if body.clicked() {
            state.selected = Some((*name).clone());
        }
        let fill = hue.gamma_multiply(if selected { 0.75 } else { 0.45 });
        painter.rect_filled(bar, 3.0, fill);
        if selected {
            painter.rect_stroke(
                bar,
                3.0,
                Stroke::new(1.5, Color32::WHITE),
                egui::StrokeKind::Inside,
            );
        }
        let text = if state.drag.as_ref().is_some_and(|d| &d.0 == *name) {
            format!(
                "{name}  {a}-{b}  ({:.3}-{:.3} s)",
                a as f32 / rate,
                b as f32 / rate
            )
        } else {
            format!(
                "{name}{}  {a}-{b}",
                if t.looping == Some(true) {
                    " (loops)"
                } else {
                    ""
                }
            )
        };
        painter.text(
            Pos2::new(bar.left() + 6.0, bar.center().y),
            egui::Align2::LEFT_CENTER,
            text,
            egui::FontId::proportional(11.0),
            Color32::WHITE,
        );
        for end in [false, true] {
            let x = if end { bar.right() } else { bar.left() };
            let hit =
                Rect::from_center_size(Pos2::new(x, rect.center().y), Vec2::new(10.0, HEIGHT));
            let r = ui.interact(
                hit,
                egui::Id::unique(("take_piece_end", *name, end)),
                Sense::drag(),
            );
            let el = end_label(name, end);
            r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Slider, true, &el));
            if r.hovered() || r.dragged() {
                ui.ctx().set_cursor_icon(egui::CursorIcon::ResizeHorizontal);
            }
            painter.vline(
                x,
                bar.y_range(),
                Stroke::new(if r.hovered() { 3.0 } else { 2.0 }, hue),
            );
            if r.drag_started() {
                state.selected = Some((*name).clone());
            }
            if r.dragged()
                && let Some(p) = r.interact_pointer_pos()
            {
                let f = frame_at(p.x).round() as u32;
                let f = if end {
                    f.max(t.start + 1)
                } else {
                    f.min(t.end - 1)
                };
                state.drag = Some(((*name).clone(), end, f));
            }
            if r.drag_stopped()
                && let Some((_, _, f)) = state.drag.take()
            {
                let (s, e) = if end { (t.start, f) } else { (f, t.end) };
                if let Some(edit) = trimmed(&doc.settings, name, s, e, rate) {
                    edits.push((format!("trim piece '{name}'"), edit));
                }
            }
        }
    }
    // The marks of the next piece.
    let mark = Color32::from_rgb(250, 220, 80);
    if let (Some(a), Some(b)) = state.marks {
        let r = Rect::from_x_y_ranges(
            x_of(a.min(b) as f32)..=x_of(a.max(b) as f32),
            rect.y_range(),
        );
        painter.rect_filled(r, 0.0, Color32::from_rgba_unmultiplied(250, 220, 80, 40));
    }
    for (m, dir) in [(state.marks.0, 1.0), (state.marks.1, -1.0)] {
        if let Some(f) = m {
            let x = x_of(f as f32);
            painter.vline(x, rect.y_range(), Stroke::new(2.0, mark));
            for y in [rect.top() + 1.0, rect.bottom() - 1.0] {
                painter.hline(x..=x + 5.0 * dir, y, Stroke::new(2.0, mark));
            }
        }
    }
    edits
}

/// In / out, name, looping and create (or, with a piece selected, in / out trim it).
fn pieces_controls(
    ui: &mut egui::Ui,
    doc: &Document,
    clip: &str,
    frame: u32,
    rate: f32,
    state: &mut TakeRangesState,
    edits: &mut Vec<(String, Box<Settings>)>,
) {
    {
        let sel = state.selected.clone();
        let target = sel
            .as_ref()
            .and_then(|n| doc.settings.takes.get(n).map(|t| (n, t)));
        for (label, is_out) in [(SET_IN, false), (SET_OUT, true)] {
            let tip = match &target {
                Some((n, _)) => format!("Trim '{n}': {label} at the playhead (frame {frame})"),
                None => format!("{label} of the next piece at the playhead (frame {frame})"),
            };
            if ui.button(label).on_hover_text(tip).clicked() {
                match &target {
                    Some((n, t)) => {
                        let (s, e) = if is_out {
                            (t.start, frame)
                        } else {
                            (frame, t.end)
                        };
                        if s >= e {
                            continue;
                        }
                        if let Some(edit) = trimmed(&doc.settings, n, s, e, rate) {
                            edits.push((format!("trim piece '{n}'"), edit));
                        }
                    }
                    None if is_out => state.marks.1 = Some(frame),
                    None => state.marks.0 = Some(frame),
                }
            }
        }
        if let Some((n, t)) = &target {
            ui.label(format!("'{n}': frames {}-{}", t.start, t.end));
            if ui.button("Deselect").clicked() {
                state.selected = None;
            }
            outside_note(ui, doc, n);
            return;
        }
        let range = match state.marks {
            (Some(a), Some(b)) => Some((a.min(b), a.max(b))),
            _ => None,
        };
        ui.label(match (state.marks, range) {
            (_, Some((a, b))) => format!("frames {a}-{b}"),
            ((Some(a), None), _) => format!("from {a}"),
            ((None, Some(b)), _) => format!("to {b}"),
            _ => "in / out not set".into(),
        });
        let field = ui.add(
            egui::TextEdit::singleline(&mut state.name)
                .hint_text("piece name")
                .desired_width(120.0),
        );
        let field = field.accessible_name(NAME);
        ui.checkbox(&mut state.looping, LOOPING);
        let name = state.name.trim().to_owned();
        let taken = !name.is_empty()
            && (doc.asset.clips.iter().any(|c| c.name == name)
                || doc.settings.takes.contains_key(&name));
        let why = match range {
            None => Some("set in and out first".to_owned()),
            Some((a, b)) if a == b => Some("in and out are the same frame".into()),
            _ if name.is_empty() => Some("name the piece".into()),
            _ if taken => Some(format!("a clip named '{name}' exists")),
            _ => None,
        };
        let create = ui
            .add_enabled(why.is_none(), egui::Button::new(CREATE))
            .on_hover_text("A clip of its own, with its own settings, events and report; the take stays as it is")
            .on_disabled_hover_text(why.clone().unwrap_or_default());
        let enter = field.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if let Some(w) = &why {
            ui.weak(w);
        }
        if (create.clicked() || enter)
            && why.is_none()
            && let Some((a, b)) = range
        {
            let mut s = doc.settings.clone();
            s.takes.insert(
                name.clone(),
                TakeSettings {
                    source: clip.to_owned(),
                    start: a,
                    end: b,
                    looping: state.looping.then_some(true),
                },
            );
            edits.push((format!("create piece '{name}'"), Box::new(s)));
            state.marks = (None, None);
            state.name.clear();
        }
    }
}
