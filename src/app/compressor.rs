//! The one place the app touches the codec. Until `skelpack::codec::compress` lands, the
//! "compressed" clip is the raw clip itself (zero error, ratio 1); switching to the real codec
//! changes only [`compress`] and [`Compressed`]'s fields.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::time::{Duration, Instant};

use crate::metric::{ErrorReport, PoseSource, Reference, measure};
use crate::model::{Clip, Skeleton, Transform};
use crate::settings::Resolved;

/// Cancellation flag and progress (0..1), shared between the UI and a worker.
#[derive(Debug, Default)]
pub struct Control {
    cancelled: AtomicBool,
    progress: AtomicU32,
}

impl Control {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn cancel(&self) {
        self.cancelled.store(true, Ordering::Relaxed);
    }
    pub fn is_cancelled(&self) -> bool {
        self.cancelled.load(Ordering::Relaxed)
    }
    pub fn set_progress(&self, p: f32) {
        self.progress
            .store(p.clamp(0.0, 1.0).to_bits(), Ordering::Relaxed);
    }
    pub fn progress(&self) -> f32 {
        f32::from_bits(self.progress.load(Ordering::Relaxed))
    }
}

/// A decoded pose source the viewport can sample (the compressed clip).
pub type SharedPoses = Arc<dyn PoseSource + Send + Sync>;

/// Sizes and counts the stats panel shows.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Sizes {
    pub raw_bytes: usize,
    pub compressed_bytes: usize,
    pub keys_kept: usize,
    pub keys_raw: usize,
}

impl Sizes {
    pub fn ratio(&self) -> f32 {
        if self.compressed_bytes == 0 {
            0.0
        } else {
            self.raw_bytes as f32 / self.compressed_bytes as f32
        }
    }
}

/// One compressed clip and how it measures.
pub struct Compressed {
    pub poses: SharedPoses,
    pub errors: ErrorReport,
    pub sizes: Sizes,
    pub elapsed: Duration,
    /// True while the codec is not on main: the "compressed" clip is the raw clip.
    pub is_passthrough: bool,
}

/// Why a compression produced nothing.
#[derive(Debug, Clone, PartialEq)]
pub enum Failure {
    Cancelled,
    Error(String),
}

/// Compresses `clip` with `settings`, reporting progress and honouring cancellation.
pub fn compress(
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &Resolved,
    control: &Control,
) -> Result<Compressed, Failure> {
    let start = Instant::now();
    control.set_progress(0.05);
    // Stand-in codec: the raw clip, measured with the real metric so every panel works.
    let poses: SharedPoses = Arc::new(RawPoses(clip.clone()));
    if control.is_cancelled() {
        return Err(Failure::Cancelled);
    }
    control.set_progress(0.3);
    let reference = Reference::new(skeleton, clip, clip.frame_count);
    if control.is_cancelled() {
        return Err(Failure::Cancelled);
    }
    control.set_progress(0.6);
    let errors = measure(skeleton, &reference, poses.as_ref(), &settings.limits, true);
    control.set_progress(1.0);
    let raw = clip.raw_bytes();
    let keys = clip.frame_count * clip.tracks.len() * 3;
    Ok(Compressed {
        poses,
        errors,
        sizes: Sizes {
            raw_bytes: raw,
            compressed_bytes: raw,
            keys_kept: keys,
            keys_raw: keys,
        },
        elapsed: start.elapsed(),
        is_passthrough: true,
    })
}

/// A raw clip as a pose source.
struct RawPoses(Clip);

impl PoseSource for RawPoses {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        self.0.sample_local(frame, out)
    }
}
