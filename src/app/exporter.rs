//! The one place the app calls the exporters. `.skp` uses `container::write`; the glTF
//! exporter (`skelpack::export`) is not on main yet, so that item reports "not available yet"
//! (shown in the status bar, never a silent no-op).

use std::path::Path;

use super::compressor::{self, Control};
use super::state::Document;

/// What an export wrote.
pub struct ExportSummary {
    pub bytes: usize,
}

pub fn export_gltf(_doc: &Document, _path: &Path) -> Result<ExportSummary, String> {
    Err("Export Compressed glTF is not available yet: the glTF exporter has not landed".into())
}

/// Writes every clip, compressed with the document's settings, into a `.skp` container. The
/// current clip's result is reused; the others are compressed here.
pub fn export_skp(doc: &Document, path: &Path) -> Result<ExportSummary, String> {
    if path.as_os_str().is_empty() {
        return Ok(ExportSummary { bytes: 0 }); // availability probe
    }
    let a = &doc.asset;
    let mut clips = Vec::with_capacity(a.clips.len());
    for (i, clip) in a.clips.iter().enumerate() {
        match &doc.result {
            Some(r) if i == doc.clip => clips.push((*r.clip).clone()),
            _ => {
                let resolved = doc.settings.resolve(a, &clip.name);
                let c = compressor::compress(&a.skeleton, clip, &resolved, &Control::new())
                    .map_err(|e| format!("clip '{}': {e:?}", clip.name))?;
                clips.push((*c.clip).clone());
            }
        }
    }
    let bytes = crate::container::write(path, &a.skeleton, &clips)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(ExportSummary {
        bytes: bytes as usize,
    })
}
