//! Measurement: edit latency, frame timing, the adapter's name and the `view` autopilot.

use std::time::{Duration, Instant};

use super::autopilot::Autopilot;

/// Latency and frame-time figures, and the autopilot that logs them.
#[derive(Default)]
pub(super) struct Measure {
    /// When the edit that the pending result answers was made (for the latency figure).
    pub(super) edited_at: Option<Instant>,
    /// No result of the edit at `edited_at` has been shown yet.
    pub(super) awaiting_first: bool,
    /// From a settings edit to its first result being shown (a first pass, or the final
    /// result), and to its final result, for the last edit.
    pub(super) last_latency: Option<Duration>,
    pub(super) last_final_latency: Option<Duration>,
    /// When the open document's file started to be read, until its final result is shown.
    pub(super) opened_at: Option<Instant>,
    /// From the file being read to its first result shown, and to its final result.
    pub(super) open_first: Option<Duration>,
    pub(super) open_final: Option<Duration>,
    pub(super) last_frame: Option<Instant>,
    /// Milliseconds between the last two frames.
    pub(super) frame_ms: f64,
    /// The wgpu adapter's name and backend.
    pub(super) adapter: String,
    pub(super) autopilot: Option<Autopilot>,
}

impl Measure {
    /// A result for the last edit is on screen (`last`: its final one, not a first pass):
    /// the time since the edit becomes the last latency (returned); the first result sets
    /// the first latency, the final one the final latency.
    pub(super) fn record_latency(&mut self, last: bool) -> Option<Duration> {
        let edited = self.edited_at?;
        let after_edit = edited.elapsed();
        if self.awaiting_first {
            self.last_latency = Some(after_edit);
            self.awaiting_first = false;
        }
        if last {
            self.last_final_latency = Some(after_edit);
            self.edited_at = None;
        }
        Some(after_edit)
    }

    /// A file starts to be read now: its first and final results are timed.
    pub(super) fn opening(&mut self) {
        self.opened_at = Some(Instant::now());
        self.open_first = None;
        self.open_final = None;
    }

    /// A result of the file being opened is on screen (`last`: the final one).
    pub(super) fn record_open(&mut self, last: bool) {
        let Some(t) = self.opened_at else { return };
        self.open_first.get_or_insert(t.elapsed());
        if last {
            self.open_final = Some(t.elapsed());
            self.opened_at = None;
        }
    }

    /// A settings edit was made now: its results are awaited.
    pub(super) fn edited(&mut self) {
        self.edited_at = Some(Instant::now());
        self.awaiting_first = true;
    }
}
