//! Importers: glTF 2.0, BVH and ACL raw clips (SJSON), each into the [`crate::model`].
//!
//! Every importer returns an [`Asset`] or an [`ImportError`] that names the file and the
//! problem in one line; none of them panics on malformed input.

mod acl_sjson;
mod bvh;
pub mod extras;
mod gltf;
mod gltf_check;
pub mod gltf_ext;
mod rate;
mod sampling;
pub mod uri;

use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};

use crate::model::{Clip, Skeleton, Units};

pub use rate::{detect_sample_rate, dominant_rate};
pub use uri::{read_buffer_uri, set_allow_any_uri};

/// Joint-frames (joints × frames) any clip may hold whatever its file: 16 Mi, 640 MiB of
/// dense transforms. A clip may hold more only as far as its file's bytes justify
/// ([`check_dense_size`]).
pub const MAX_DENSE_SAMPLES: u64 = 1 << 24;

/// The largest input file read (4 GiB); bigger files are refused before reading.
pub const MAX_FILE_BYTES: u64 = 1 << 32;

/// The kind of file an asset came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceFormat {
    Gltf,
    Bvh,
    Acl,
}

/// A skinned mesh primitive in bind pose, its vertices mapped to skeleton joints.
#[derive(Clone, Debug, Default)]
pub struct SkinnedMesh {
    pub name: String,
    /// Bind-pose positions in the mesh node's space.
    pub positions: Vec<Vec3>,
    pub normals: Vec<Vec3>,
    /// Skeleton joint indices per vertex (up to four influences).
    pub joints: Vec<[u16; 4]>,
    pub weights: Vec<[f32; 4]>,
    pub indices: Vec<u32>,
    /// Per skeleton joint: the inverse bind matrix, identity where the skin does not list it.
    pub inverse_bind: Vec<Mat4>,
    pub base_color: [f32; 4],
}

/// Everything an importer produces.
#[derive(Clone, Debug)]
pub struct Asset {
    pub path: PathBuf,
    pub format: SourceFormat,
    pub skeleton: Skeleton,
    pub clips: Vec<Clip>,
    /// Skinned meshes, for marker offsets from vertices and for drawing.
    pub meshes: Vec<SkinnedMesh>,
    /// A tolerance the source prescribes (the ACL `error_threshold`), in scene units.
    pub source_tolerance: Option<f32>,
    /// Measured size and inferred unit.
    pub units: Units,
    /// Non-fatal observations (ignored channels, clamped values).
    pub warnings: Vec<String>,
}

/// A failure to read a file: the file and the problem.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {message}")]
pub struct ImportError {
    pub path: PathBuf,
    pub message: String,
}

impl ImportError {
    pub fn new(path: &Path, message: impl Into<String>) -> Self {
        Self {
            path: path.to_path_buf(),
            message: message.into(),
        }
    }
}

/// True when the path names a file skelpack can import (by extension).
pub fn is_supported(path: &Path) -> bool {
    format_of(path).is_some()
}

fn format_of(path: &Path) -> Option<SourceFormat> {
    let name = path.file_name()?.to_str()?.to_ascii_lowercase();
    if name.ends_with(".glb") || name.ends_with(".gltf") {
        Some(SourceFormat::Gltf)
    } else if name.ends_with(".bvh") {
        Some(SourceFormat::Bvh)
    } else if name.ends_with(".acl.sjson") || name.ends_with(".sjson") {
        Some(SourceFormat::Acl)
    } else {
        None
    }
}

/// Reads a file of any supported format, chosen by extension (or by content for `.glb`).
/// Only regular files are read (a FIFO or device is refused before it is opened).
pub fn load(path: &Path) -> Result<Asset, ImportError> {
    let bytes = read_input(path).map_err(|m| ImportError::new(path, m))?;
    load_bytes(path, &bytes)
}

fn read_input(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read: {e}"))?;
    if !meta.is_file() {
        return Err("cannot read: not a regular file".into());
    }
    if meta.len() > MAX_FILE_BYTES {
        return Err(format!(
            "cannot read: {} bytes, more than the {MAX_FILE_BYTES}-byte limit",
            meta.len()
        ));
    }
    let mut out = Vec::with_capacity(meta.len() as usize);
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_FILE_BYTES).read_to_end(&mut out))
        .map_err(|e| format!("cannot read: {e}"))?;
    Ok(out)
}

/// Refuses a clip of `joints × frames` dense samples beyond [`MAX_DENSE_SAMPLES`] plus
/// one per two bytes of the file's data (`data_bytes`), so a declared count never allocates
/// more than the file can justify.
pub(crate) fn check_dense_size(
    joints: usize,
    frames: usize,
    data_bytes: usize,
) -> Result<(), String> {
    let samples = (joints as u64).saturating_mul(frames as u64);
    let limit = MAX_DENSE_SAMPLES + data_bytes as u64 / 2;
    if samples > limit {
        return Err(format!(
            "{joints} joints × {frames} frames is more than the {limit} samples skelpack \
             accepts for this file (see docs/ROBUSTNESS.md)"
        ));
    }
    Ok(())
}

/// Imports a file's bytes; `path` chooses the format and resolves external glTF buffers.
pub fn load_bytes(path: &Path, bytes: &[u8]) -> Result<Asset, ImportError> {
    let format = match format_of(path) {
        Some(f) => f,
        None if bytes.starts_with(b"glTF") => SourceFormat::Gltf,
        None if bytes.starts_with(b"HIERARCHY") => SourceFormat::Bvh,
        None => {
            return Err(ImportError::new(
                path,
                "unknown file type (expected .glb, .gltf, .bvh or .acl.sjson)",
            ));
        }
    };
    let (skeleton, clips, meshes, source_tolerance, warnings) = match format {
        SourceFormat::Gltf => gltf::import(path, bytes)?,
        SourceFormat::Bvh => bvh::import(path, bytes)?,
        SourceFormat::Acl => acl_sjson::import(path, bytes)?,
    };
    if skeleton.is_empty() {
        return Err(ImportError::new(path, "no joints found"));
    }
    for clip in &clips {
        clip.validate(&skeleton)
            .map_err(|m| ImportError::new(path, m))?;
    }
    for j in &skeleton.joints {
        if !j.rest.is_finite() {
            return Err(ImportError::new(
                path,
                format!("joint '{}' has a non-finite rest transform", j.name),
            ));
        }
    }
    // glTF declares metres; BVH and ACL clips declare nothing.
    let declared = (format == SourceFormat::Gltf).then_some(crate::model::LengthUnit::Metre);
    let units = Units::measure(&skeleton, &clips, declared);
    Ok(Asset {
        path: path.to_path_buf(),
        format,
        skeleton,
        clips,
        meshes,
        source_tolerance,
        units,
        warnings,
    })
}

/// What each format importer returns.
pub(crate) type Imported = (
    Skeleton,
    Vec<Clip>,
    Vec<SkinnedMesh>,
    Option<f32>,
    Vec<String>,
);

/// Lists importable files under `path` (itself if a file; recursively if a folder), sorted.
/// Symlinked folders inside `path` are not followed (a link loop cannot recurse forever).
pub fn collect_files(path: &Path) -> std::io::Result<Vec<PathBuf>> {
    let mut out = Vec::new();
    if path.is_dir() {
        let mut entries: Vec<_> = std::fs::read_dir(path)?.collect::<Result<_, _>>()?;
        entries.sort_by_key(|e| e.path());
        for e in entries {
            let p = e.path();
            if e.file_type()?.is_dir() {
                out.extend(collect_files(&p)?);
            } else if !p.is_dir()
                && is_supported(&p)
                && !p.to_string_lossy().contains("format_reference")
            {
                out.push(p);
            }
        }
    } else {
        out.push(path.to_path_buf());
    }
    Ok(out)
}
