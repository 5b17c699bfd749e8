//! The one place the app calls the exporters. `skelpack::export` is not on main yet: until it
//! lands these report "not available yet" (shown in the status bar, never a silent no-op).

use std::path::Path;

use super::state::Document;

/// What an export wrote.
pub struct ExportSummary {
    pub bytes: usize,
}

pub fn export_gltf(_doc: &Document, _path: &Path) -> Result<ExportSummary, String> {
    Err("Export Compressed glTF is not available yet: the glTF exporter has not landed".into())
}

pub fn export_skp(_doc: &Document, _path: &Path) -> Result<ExportSummary, String> {
    Err("Export .skp is not available yet: the .skp container writer has not landed".into())
}
