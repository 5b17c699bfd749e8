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
        }
    }
}
