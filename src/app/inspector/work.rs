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
}
