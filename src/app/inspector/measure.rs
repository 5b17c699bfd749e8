//! Measurement: edit latency, frame timing, the adapter's name and the `view` autopilot.

use std::time::{Duration, Instant};

use super::autopilot::Autopilot;

/// Latency and frame-time figures, and the autopilot that logs them.
#[derive(Default)]
pub(super) struct Measure {
    /// When the edit that the pending result answers was made (for the latency figure).
    pub(super) edited_at: Option<Instant>,
    /// From a settings edit to its result being shown, for the last edit.
    pub(super) last_latency: Option<Duration>,
    pub(super) last_frame: Option<Instant>,
    /// Milliseconds between the last two frames.
    pub(super) frame_ms: f64,
    /// The wgpu adapter's name and backend.
    pub(super) adapter: String,
    pub(super) autopilot: Option<Autopilot>,
}

impl Measure {
    /// A result for the last edit is on screen: the time since the edit becomes the last
    /// latency (returned).
    pub(super) fn record_latency(&mut self) -> Option<Duration> {
        let after_edit = self.edited_at.take().map(|t| t.elapsed());
        if after_edit.is_some() {
            self.last_latency = after_edit;
        }
        after_edit
    }
}
