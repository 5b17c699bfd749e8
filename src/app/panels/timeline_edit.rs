//! The editing rows under the timeline's scrub bar (issue 27, 26): the event row, the take
//! ranges and the clip's playback flags, on the scrub bar's frame scale.

use super::super::actions::Action;
use super::super::state::Document;
use super::{clip_flags, event_row, take_ranges};

/// What the rows keep between frames.
#[derive(Clone, Debug, Default)]
pub struct TimelineEdit {
    pub events: event_row::EventRowState,
    pub takes: take_ranges::TakeRangesState,
    pub flags: clip_flags::ClipFlagsState,
}

/// Shows the rows for the open clip: the event strip, the take's strip when it has
/// pieces or marks, and one control line (events, pieces, the clip's flags) that wraps
/// when the window is too narrow for it; `in_place` is the viewport's root-motion display.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    playhead: f32,
    edit: &mut TimelineEdit,
    in_place: &mut bool,
    out: &mut Vec<Action>,
) {
    let events = event_row::strip(ui, doc, playhead, &mut edit.events);
    let takes = take_ranges::strip(ui, doc, &mut edit.takes);
    ui.horizontal_wrapped(|ui| {
        event_row::controls(ui, doc, playhead, &mut edit.events, events, out);
        ui.separator();
        take_ranges::controls(ui, doc, playhead, &mut edit.takes, takes, out);
        ui.separator();
        clip_flags::show(ui, doc, &mut edit.flags, in_place, out);
    });
}
