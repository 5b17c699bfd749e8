//! Background work: the compression job, kept results, the export worker.

use super::super::jobs::Jobs;
use super::super::result_cache::ResultCache;
use super::clip_work::ClipWork;
use super::export_jobs::ExportJob;

/// Jobs, the result cache and the running export.
#[derive(Default)]
pub(super) struct Work {
    pub(super) jobs: Jobs,
    /// Results by the settings they were computed for (undo, redo and A/B show at once).
    pub(super) results: ResultCache,
    /// An export running on a worker thread.
    pub(super) export_job: Option<ExportJob>,
    /// The clip dashboard's jobs, results and size search.
    pub(super) clips: ClipWork,
    /// The result cache shared with other runs and machines, if one is set (the jobs hold
    /// it too; this one trims a folder when the app closes).
    #[expect(dead_code, reason = "held for its Drop")]
    pub(super) shared_cache: Option<SharedCache>,
}

/// The shared result cache ([`crate::cache`]); a folder is trimmed to its size bound when
/// the app closes.
pub(super) struct SharedCache(pub(super) std::sync::Arc<crate::cache::ResultCache>);

impl Drop for SharedCache {
    fn drop(&mut self) {
        self.0.finish();
    }
}
