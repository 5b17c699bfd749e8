//! The timeline's event row: a marker per event of the open clip, under the scrub bar and
//! on its frame scale. Add one at the playhead (the button or `E`), drag a marker to move
//! it (it snaps to frames and shows its frame and time), click it to edit its name and
//! payload below the row (typed text applies on Enter or focus loss; a double-click or the
//! context menu's Rename puts the cursor in the name), delete it (the button, the context
//! menu or `Delete`). Every edit is a settings edit (one undo step each) that writes the
//! clip's `[[clips.NAME.events]]` list.

use egui::{Color32, Key, Modifiers, Pos2, Rect, Sense, Stroke, Vec2};

use super::super::actions::Action;
use super::super::state::Document;
use crate::model::event::Event;
use crate::settings::Settings;

/// The add button's label.
pub const ADD: &str = "+ Event";
/// The name field's accessible name.
pub const NAME: &str = "Event name";
/// The payload field's accessible name.
pub const PAYLOAD: &str = "Event payload";
/// The delete button's label.
pub const DELETE: &str = "Delete event";
/// The row's height in points.
pub const HEIGHT: f32 = 22.0;

/// The accessible name of the marker of the event named `name`.
pub fn marker_label(name: &str) -> String {
    format!("Event {name}")
}

/// What the row keeps between frames.
#[derive(Clone, Debug, Default)]
pub struct EventRowState {
    /// The selected event (an index into [`events`]).
    pub selected: Option<usize>,
    /// The event being dragged and the frame it is over.
    drag: Option<(usize, f32)>,
    /// The text in the name and payload fields, and the event they were filled from.
    name: String,
    payload: String,
    filled_from: Option<(usize, Event)>,
    /// Put the cursor in the name field next frame.
    focus_name: bool,
    /// The clip the selection belongs to (kept by name across a re-cut of the pieces).
    clip: Option<String>,
}

impl EventRowState {
    /// The event being dragged and the frame it is over.
    pub fn dragging(&self) -> Option<(usize, f32)> {
        self.drag
    }
}

/// The open clip's events in the order the sidecar lists them (the source file's when it
/// lists none); times in seconds from the clip's first frame.
pub fn events(doc: &Document) -> Vec<Event> {
    let name = doc.clip_name();
    doc.settings
        .clips
        .get(name)
        .and_then(|c| c.events.clone())
        .or_else(|| doc.asset.clips.get(doc.clip).map(|c| c.events.clone()))
        .unwrap_or_default()
}

/// `settings` with `clip`'s event list replaced by `events`.
pub fn with_events(settings: &Settings, clip: &str, events: Vec<Event>) -> Box<Settings> {
    let mut s = settings.clone();
    s.clips.entry(clip.to_owned()).or_default().events = Some(events);
    Box::new(s)
}

/// An event name no event of `list` has (`event`, `event_2`, ...).
fn free_name(list: &[Event]) -> String {
    let used = |n: &str| list.iter().any(|e| e.name == n);
    if !used("event") {
        return "event".into();
    }
    (2..)
        .map(|i| format!("event_{i}"))
        .find(|n| !used(n))
        .expect("a free name")
}

/// What the row's strip hands to its controls within one frame: the events as listed,
/// the clip's frame scale and the edits made on the strip.
pub struct EventFrame {
    list: Vec<Event>,
    clip: String,
    rate: f32,
    last: f32,
    duration: f32,
    edits: Vec<(String, Vec<Event>)>,
}

/// Shows the row's strip (markers on the scrub bar's frame scale); the controls follow
/// on the timeline's control line ([`controls`]).
pub fn strip(
    ui: &mut egui::Ui,
    doc: &Document,
    playhead: f32,
    state: &mut EventRowState,
) -> EventFrame {
    if state.clip.as_deref() != Some(doc.clip_name()) {
        *state = EventRowState {
            clip: Some(doc.clip_name().to_owned()),
            ..Default::default()
        };
    }
    let list = events(doc);
    if state.selected.is_some_and(|i| i >= list.len()) {
        state.selected = None;
    }
    let clip = doc.clip_name().to_owned();
    let rate = doc.sample_rate();
    let frames = doc.frame_count().max(1);
    let last = (frames - 1).max(1) as f32;
    let (rect, bg) =
        ui.allocate_exact_size(Vec2::new(ui.available_width(), HEIGHT), Sense::click());
    let x_of = |f: f32| rect.left() + 6.0 + (rect.width() - 12.0) * f / last;
    let frame_at =
        |x: f32| ((x - rect.left() - 6.0) / (rect.width() - 12.0) * last).clamp(0.0, last);
    let painter = ui.painter_at(rect);
    painter.rect_filled(rect, 3.0, Color32::from_gray(24));
    if list.is_empty() {
        painter.text(
            rect.left_center() + Vec2::new(10.0, 0.0),
            egui::Align2::LEFT_CENTER,
            format!("no events: {ADD} (E) adds one at the playhead"),
            egui::FontId::proportional(11.0),
            Color32::from_gray(120),
        );
    }
    if bg.clicked() {
        state.selected = None;
    }
    let duration = last / rate;
    let mut edits: Vec<(String, Vec<Event>)> = Vec::new();
    for (i, e) in list.iter().enumerate() {
        let inside = e.check(duration).is_ok();
        let f = (e.time * rate).clamp(0.0, last);
        let dragged_to = state.drag.filter(|(d, _)| *d == i).map(|(_, f)| f);
        let x = x_of(dragged_to.unwrap_or(f));
        let hit = Rect::from_center_size(Pos2::new(x, rect.center().y), Vec2::new(12.0, HEIGHT));
        let id = egui::Id::unique(("event_row_marker", i));
        let resp = ui.interact(hit, id, Sense::click_and_drag());
        let label = marker_label(&e.name);
        resp.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
        if resp.drag_started() {
            state.selected = Some(i);
        }
        if resp.dragged()
            && let Some(p) = resp.interact_pointer_pos()
        {
            state.drag = Some((i, frame_at(p.x).round()));
        }
        if resp.drag_stopped()
            && let Some((_, to)) = state.drag.take()
            && (to - f).abs() > 0.01
        {
            let mut l = list.clone();
            l[i].time = to / rate;
            edits.push((format!("move event '{}'", e.name), l));
        }
        if resp.clicked() {
            state.selected = Some(i);
        }
        if resp.double_clicked() {
            state.selected = Some(i);
            state.focus_name = true;
        }
        resp.context_menu(|ui| {
            if ui.button("Rename…").clicked() {
                state.selected = Some(i);
                state.focus_name = true;
                ui.close();
            }
            if ui.button(DELETE).clicked() {
                let mut l = list.clone();
                l.remove(i);
                edits.push((format!("delete event '{}'", e.name), l));
                state.selected = None;
                ui.close();
            }
        });
        let selected = state.selected == Some(i);
        let color = if !inside {
            Color32::from_rgb(200, 90, 80)
        } else if selected {
            Color32::from_rgb(120, 200, 255)
        } else if resp.hovered() {
            Color32::from_rgb(160, 220, 170)
        } else {
            Color32::from_rgb(110, 190, 130)
        };
        let c = Pos2::new(x, rect.top() + 8.0);
        painter.add(egui::Shape::convex_polygon(
            vec![
                c + Vec2::new(0.0, -5.0),
                c + Vec2::new(5.0, 0.0),
                c + Vec2::new(0.0, 5.0),
                c + Vec2::new(-5.0, 0.0),
            ],
            color,
            Stroke::new(if selected { 1.5 } else { 0.0 }, Color32::WHITE),
        ));
        painter.vline(x, c.y + 5.0..=rect.bottom() - 1.0, Stroke::new(1.0, color));
        let text = match dragged_to {
            Some(to) => format!("{}  frame {}  {:.3} s", e.name, to as i64, to / rate),
            None => e.name.clone(),
        };
        painter.text(
            Pos2::new(x + 8.0, c.y),
            egui::Align2::LEFT_CENTER,
            text,
            egui::FontId::proportional(11.0),
            if dragged_to.is_some() {
                Color32::WHITE
            } else {
                Color32::from_gray(200)
            },
        );
        resp.on_hover_text(format!(
            "{}: frame {:.0}, {:.3} s{}\nDrag to move; double-click to rename; right-click for more",
            e.name,
            e.time * rate,
            e.time,
            e.payload.as_ref().map_or(String::new(), |p| format!("\npayload: {p}"))
        ));
    }
    // The playhead, as on the scrub bar.
    painter.vline(
        x_of(playhead),
        rect.y_range(),
        Stroke::new(1.0, Color32::from_rgba_unmultiplied(250, 220, 80, 140)),
    );
    EventFrame {
        list,
        clip,
        rate,
        last,
        duration,
        edits,
    }
}

/// The add button and, for the selected event, its editor (on the timeline's control
/// line, which wraps when it is full); pushes the strip's and the controls' edits.
pub fn controls(
    ui: &mut egui::Ui,
    doc: &Document,
    playhead: f32,
    state: &mut EventRowState,
    frame: EventFrame,
    out: &mut Vec<Action>,
) {
    let EventFrame {
        list,
        clip,
        rate,
        last,
        duration,
        mut edits,
    } = frame;
    let typing = ui.ctx().egui_wants_keyboard_input();
    let (add_key, delete_key) = if typing {
        (false, false)
    } else {
        ui.input_mut(|i| {
            (
                i.consume_key(Modifiers::NONE, Key::E),
                state.selected.is_some()
                    && (i.consume_key(Modifiers::NONE, Key::Delete)
                        || i.consume_key(Modifiers::NONE, Key::Backspace)),
            )
        })
    };
    {
        let add = ui
            .add_enabled(doc.has_clip(), egui::Button::new(ADD))
            .on_hover_text("Add an event at the playhead (E)");
        if (add.clicked() || (add_key && doc.has_clip())) && edits.is_empty() {
            let mut l = list.clone();
            let name = free_name(&l);
            l.push(Event {
                name: name.clone(),
                time: playhead.round().clamp(0.0, last) / rate,
                payload: None,
            });
            state.selected = Some(l.len() - 1);
            state.focus_name = true;
            edits.push((format!("add event '{name}'"), l));
        }
        match state.selected.and_then(|i| list.get(i).map(|e| (i, e))) {
            Some((i, e)) => editor(ui, state, i, e, &list, rate, delete_key, &mut edits),
            // No events: the strip says how to add one.
            None if list.is_empty() => {}
            None => {
                let outside = list.iter().filter(|e| e.check(duration).is_err()).count();
                let text = if outside > 0 {
                    format!(
                        "{} event(s); {outside} outside the clip (red, kept in the sidecar, not exported)",
                        list.len()
                    )
                } else {
                    format!("{} event(s)", list.len())
                };
                ui.weak(text)
                    .on_hover_text("Click a marker to edit it; drag it to move it");
            }
        }
    }
    for (label, l) in edits {
        out.push(Action::EditSettings(
            label,
            with_events(&doc.settings, &clip, l),
        ));
    }
}

/// The selected event's name and payload fields, its time and a delete button.
#[allow(clippy::too_many_arguments)]
fn editor(
    ui: &mut egui::Ui,
    state: &mut EventRowState,
    i: usize,
    e: &Event,
    list: &[Event],
    rate: f32,
    delete_key: bool,
    edits: &mut Vec<(String, Vec<Event>)>,
) {
    let name_id = egui::Id::unique("event_row_name");
    let payload_id = egui::Id::unique("event_row_payload");
    let editing = ui.memory(|m| m.has_focus(name_id) || m.has_focus(payload_id));
    if !editing && state.filled_from.as_ref() != Some(&(i, e.clone())) {
        state.name = e.name.clone();
        state.payload = e.payload.clone().unwrap_or_default();
        state.filled_from = Some((i, e.clone()));
    }
    ui.separator();
    ui.label("Name");
    let name = ui.add(
        egui::TextEdit::singleline(&mut state.name)
            .id(name_id)
            .desired_width(140.0),
    );
    let name = name.accessible_name(NAME);
    if std::mem::take(&mut state.focus_name) {
        // The name selected, so typing replaces it.
        name.request_focus();
        let mut st = egui::TextEdit::load_state(ui.ctx(), name_id).unwrap_or_default();
        st.cursor
            .set_char_range(Some(egui::text::CCursorRange::select_all_str(&state.name)));
        st.store(ui.ctx(), name_id);
    }
    ui.label("Payload");
    let payload = ui.add(
        egui::TextEdit::singleline(&mut state.payload)
            .id(payload_id)
            .hint_text("(none)")
            .desired_width(160.0),
    );
    let payload = payload.accessible_name(PAYLOAD);
    let new_name = state.name.trim().to_owned();
    if name.lost_focus() && new_name != e.name {
        if new_name.is_empty() {
            state.name = e.name.clone();
        } else {
            let mut l = list.to_vec();
            l[i].name = new_name.clone();
            edits.push((format!("rename event '{}' to '{new_name}'", e.name), l));
        }
    }
    let new_payload = Some(state.payload.clone()).filter(|p| !p.is_empty());
    if payload.lost_focus() && new_payload != e.payload {
        let mut l = list.to_vec();
        l[i].payload = new_payload;
        edits.push((format!("edit payload of event '{}'", e.name), l));
    }
    ui.label(format!("frame {:.0}  {:.3} s", e.time * rate, e.time));
    if ui.button(DELETE).on_hover_text("Delete (Del)").clicked() || delete_key {
        let mut l = list.to_vec();
        l.remove(i);
        edits.push((format!("delete event '{}'", e.name), l));
        state.selected = None;
    }
}
