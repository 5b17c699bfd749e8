//! The one place the app calls the exporters: `.skp` through `container::write`, compressed
//! glTF through `export::compress_to_gltf` (verified as a glTF player evaluates it).

use std::path::Path;

use super::compressor::{self, Control};
use super::state::Document;

/// What an export wrote.
pub struct ExportSummary {
    pub bytes: usize,
}

/// Writes the document's file with its animations replaced by the compressed result.
/// Only glTF sources can be rewritten this way; BVH and ACL clips are exported as a new
/// glTF scene whose animations are then compressed.
pub fn export_gltf(doc: &Document, path: &Path) -> Result<ExportSummary, String> {
    if path.as_os_str().is_empty() {
        return Ok(ExportSummary { bytes: 0 }); // availability probe
    }
    let a = &doc.asset;
    if a.format != crate::import::SourceFormat::Gltf {
        return Err(format!(
            "{}: compressed glTF export needs a glTF source; use `skelpack convert` first",
            a.path.display()
        ));
    }
    crate::export::compress_to_gltf(a, &doc.settings, path, false)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let bytes = std::fs::metadata(path)
        .map(|m| m.len() as usize)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(ExportSummary { bytes })
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
