//! What the user looks at: selection, playback, view toggles, the viewport and the panels'
//! own state, and where things were drawn last frame (for tests and clicks).

use std::collections::BTreeSet;

use super::super::panels;
use super::super::state::{Playback, ViewOptions};
use super::super::viewport::Viewport;

/// Selection, playback, view options, the viewport and panel state.
pub(super) struct ViewState {
    pub(super) playback: Playback,
    pub(super) options: ViewOptions,
    /// The focused joint (curves and stats follow it).
    pub(super) selected: Option<usize>,
    /// Every selected joint (contains `selected`).
    pub(super) selection: BTreeSet<usize>,
    /// The selection was made by the app from a first pass (not by the user): the refined
    /// result replaces it.
    pub(super) auto_selected: bool,
    pub(super) viewport: Viewport,
    pub(super) joints_view: panels::joints::JointsView,
    pub(super) tuning: panels::tuning::TuningView,
    /// Where the 3-D viewport was drawn last frame.
    pub(super) viewport_rect: Option<egui::Rect>,
    pub(super) curve_geom: Option<panels::curves::PlotGeom>,
    pub(super) error_geoms: panels::errors::ErrorGeoms,
    /// The timeline's event row, take ranges and clip flags.
    pub(super) timeline_edit: panels::timeline_edit::TimelineEdit,
    /// The curves-and-errors panel's default height follows the window until the user
    /// resizes the panel.
    pub(super) tuning_fit: PanelFit,
}

/// A resizable panel whose default size follows the room it has until the user drags
/// it: the panel is given a new id (so egui applies the new default) whenever the room
/// changes and the panel is still at the size it was last given.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PanelFit {
    generation: u32,
    /// The size asked for and the size shown in the first frame of this generation.
    first: Option<(f32, f32)>,
}

impl PanelFit {
    /// The panel's id salt.
    pub(super) fn id_salt(&self) -> (&'static str, u32) {
        ("tuning", self.generation)
    }

    /// After the panel was shown at `shown` points with `want` asked for: follow the
    /// room (a new id next frame) unless the user has resized it.
    pub(super) fn after(&mut self, want: f32, shown: f32) {
        match self.first {
            None => self.first = Some((want, shown)),
            Some((asked, was)) if (shown - was).abs() < 1.5 && (want - asked).abs() > 1.0 => {
                self.generation += 1;
                self.first = None;
            }
            Some(_) => {}
        }
    }
}

impl ViewState {
    pub(super) fn new(viewport: Viewport, options: ViewOptions) -> Self {
        Self {
            playback: Playback::default(),
            options,
            selected: None,
            selection: BTreeSet::new(),
            auto_selected: false,
            viewport,
            joints_view: Default::default(),
            tuning: Default::default(),
            viewport_rect: None,
            curve_geom: None,
            error_geoms: Default::default(),
            timeline_edit: Default::default(),
            tuning_fit: Default::default(),
        }
    }
}
