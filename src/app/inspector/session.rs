//! The open document and what belongs to it across edits: undo history, recent files.

use std::path::PathBuf;
use std::time::Instant;

use super::super::history::History;
use super::super::state::Document;
use crate::settings::Settings;

/// The document, its settings history and the recent-files list.
#[derive(Default)]
pub(super) struct Session {
    pub(super) doc: Option<Document>,
    /// The id the next opened document gets (results are keyed by it).
    pub(super) next_id: u64,
    pub(super) history: History<Settings>,
    /// The last edit's label and time (consecutive drags of one value make one undo step).
    pub(super) last_edit: Option<(String, Instant)>,
    pub(super) recent: Vec<PathBuf>,
    /// The document's clip-set revision the results and clip jobs were made for.
    pub(super) cut_seen: u64,
}
