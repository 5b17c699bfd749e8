//! The one place the app calls the exporters: `.skp` through `container::write`, compressed
//! glTF through `export::compress_to_gltf` (verified as a glTF player evaluates it). Exports
//! run on a worker thread from an [`ExportInput`] snapshot, so the UI never waits for them.

use std::borrow::Cow;
use std::path::Path;
use std::sync::Arc;

use super::compressor::{self, Control};
use super::state::Document;
use crate::codec::CompressedClip;
use crate::import::Asset;
use crate::settings::Settings;

/// What an export needs, detached from the document (sendable to a worker).
#[derive(Clone)]
pub struct ExportInput {
    pub asset: Arc<Asset>,
    pub settings: Settings,
    /// The current clip's result, reused instead of compressing it again.
    pub current: Option<(usize, Arc<CompressedClip>)>,
    /// Compressed glTF: byte-compress the animation data with `EXT_meshopt_compression`
    /// (the File menu's toggle).
    pub gltf_meshopt: bool,
    /// Clip encodings of earlier exports of this file ("Export on save"; None: none kept).
    pub memo: Option<Arc<crate::export::clip_memo::ClipMemo>>,
}

impl ExportInput {
    pub fn from_document(doc: &Document, gltf_meshopt: bool) -> Self {
        Self {
            gltf_meshopt,
            memo: None,
            asset: doc.asset.clone(),
            settings: super::pieces::effective(&doc.settings).into_owned(),
            // A first pass is not what the codec settles on: the export compresses afresh.
            current: doc
                .result
                .as_ref()
                .filter(|r| !r.refining)
                .map(|r| (doc.clip, r.clip.clone())),
        }
    }
}

/// What an export wrote.
pub struct ExportSummary {
    pub bytes: usize,
    /// Raw size over written size (the animation data for glTF, the payloads for `.skp`).
    pub ratio: f64,
    /// Largest error in millimetres over all clips, as the exporter verified it.
    pub max_error_mm: f64,
}

/// One kind of export, as the menus offer it.
pub struct Exporter {
    /// The menu item's name (also the dialog's filter name and the status prefix).
    pub what: &'static str,
    /// The file extension the dialog proposes.
    pub ext: &'static str,
    /// Whether the document can be exported this way (checked before any dialog).
    pub check: fn(&ExportInput) -> Result<(), String>,
    /// Writes the file (on the export worker).
    pub write: fn(&ExportInput, &Path) -> Result<ExportSummary, String>,
}

/// The compressed glTF: the source file with its animations replaced.
pub const GLTF: Exporter = Exporter {
    what: "Export Compressed glTF",
    ext: "glb",
    check: |_| Ok(()),
    write: export_gltf,
};

/// Every clip in a `.skp` container.
pub const SKP: Exporter = Exporter {
    what: "Export .skp",
    ext: "skp",
    check: |_| Ok(()),
    write: export_skp,
};

/// `x` in the asset's unit (the unit in force) in millimetres.
fn mm(asset: &Asset, settings: &Settings, x: f32) -> f64 {
    let unit = settings.unit_for(asset);
    x as f64 * 1000.0 / unit.per_metre() as f64
}

/// Writes the document's file with its animations replaced by the compressed result (a
/// glTF source, its takes' pieces added as animations), or for a BVH, FBX or ACL source a
/// new glTF scene in metres of every clip and piece, compressed (as `skelpack compress
/// SOURCE -o OUT.glb` writes them).
fn export_gltf(input: &ExportInput, path: &Path) -> Result<ExportSummary, String> {
    let a = &input.asset;
    let r = crate::export::compress_to_gltf_memo(
        a,
        &input.settings,
        path,
        &crate::export::GltfOptions {
            meshopt: input
                .gltf_meshopt
                .then_some(crate::export::meshopt::Fallback::None),
            ..Default::default()
        },
        false,
        input.memo.as_deref(),
    );
    if let Some(m) = &input.memo {
        m.finish();
    }
    let r = r.map_err(|e| format!("{}: {e}", path.display()))?;
    let bytes = std::fs::metadata(path)
        .map(|m| m.len() as usize)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let (orig, out) = r.animations.iter().fold((0usize, 0usize), |(o, c), x| {
        (o + x.original_bytes, c + x.exported_bytes)
    });
    let max = r
        .animations
        .iter()
        .map(|x| x.max_error)
        .fold(0.0f32, f32::max);
    Ok(ExportSummary {
        bytes,
        ratio: orig as f64 / out.max(1) as f64,
        max_error_mm: max as f64 * 1000.0
            / crate::export::metres::gltf_unit(a, &input.settings).per_metre() as f64,
    })
}

/// Writes every clip, compressed with the document's settings, into a `.skp` container, each
/// on the sample grid `compress` gives it (finer where its source curve leaves the chord of
/// its frames: `codec::grid`). The current clip's result is reused where that grid is the
/// source's own (the app compresses on the source's frames); the others are compressed here
/// (on the export worker).
fn export_skp(input: &ExportInput, path: &Path) -> Result<ExportSummary, String> {
    let a = &input.asset;
    let mut clips = Vec::with_capacity(a.clips.len());
    for (i, clip) in a.clips.iter().enumerate() {
        let resolved = input.settings.resolve(a, &clip.name);
        let grid = crate::codec::grid::for_codec(&a.skeleton, clip, &resolved.limits);
        match (&input.current, &grid) {
            (Some((c, r)), Cow::Borrowed(_)) if *c == i => clips.push((**r).clone()),
            _ => {
                let c = compressor::compress(&a.skeleton, &grid, &resolved, &Control::new())
                    .map_err(|e| format!("clip '{}': {e:?}", clip.name))?;
                clips.push((*c.clip).clone());
            }
        }
    }
    let bytes = crate::container::write(path, &a.skeleton, &clips)
        .map_err(|e| format!("{}: {e}", path.display()))?;
    let raw: u64 = clips.iter().map(|c| c.report.raw_bytes).sum();
    let payload: u64 = clips.iter().map(|c| c.report.payload_bytes).sum();
    let max = clips
        .iter()
        .map(|c| c.report.error_samples.max.max(c.report.error_midpoints.max))
        .fold(0.0f32, f32::max);
    Ok(ExportSummary {
        bytes: bytes as usize,
        ratio: raw as f64 / payload.max(1) as f64,
        max_error_mm: mm(a, &input.settings, max),
    })
}
