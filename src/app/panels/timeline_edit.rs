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

/// Shows the rows for the open clip; `in_place` is the viewport's root-motion display.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    playhead: f32,
    edit: &mut TimelineEdit,
    in_place: &mut bool,
    out: &mut Vec<Action>,
) {
    event_row::show(ui, doc, playhead, &mut edit.events, out);
    let flags = &mut edit.flags;
    take_ranges::show(ui, doc, playhead, &mut edit.takes, out, |ui, out| {
        clip_flags::show(ui, doc, flags, in_place, out)
    });
}
