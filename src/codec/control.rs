//! Progress and cancellation shared between a compression job and whoever waits for it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};

/// A cheap, cloneable handle: the job reports progress; anyone may cancel.
#[derive(Clone, Debug, Default)]
pub struct Control {
    cancelled: Arc<AtomicBool>,
    progress: Arc<AtomicU32>,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks the job to stop at its next check.
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }

    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }

    /// Progress in `[0, 1]`.
    pub fn progress(&self) -> f32 {
        f32::from_bits(self.progress.load(Ordering::Relaxed))
    }

    pub fn set_progress(&self, p: f32) {
        self.progress
            .store(p.clamp(0.0, 1.0).to_bits(), Ordering::Relaxed);
    }
}
