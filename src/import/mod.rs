//! Importers: glTF 2.0, BVH, FBX (through ufbx) and ACL raw clips (SJSON), each into the
//! [`crate::model`].
//!
//! Every importer returns an [`Asset`] or an [`ImportError`] that names the file and the
//! problem in one line; none of them panics on malformed input.

mod acl_sjson;
mod bvh;
pub mod extras;
pub mod fbx;
mod fbx_curves;
mod fbx_eval;
mod fbx_layers;
mod fbx_local;
mod fbx_mesh;
pub mod fbx_morph;
mod fbx_props;
mod fbx_sockets;
mod gltf;
mod gltf_check;
pub mod gltf_ext;
mod gltf_sockets;
mod gltf_weights;
mod limits;
mod rate;
mod sampling;
mod sparse;
pub mod uri;
mod warnings;

use std::path::{Path, PathBuf};

use glam::{Mat4, Vec3};

use crate::model::{Clip, Skeleton, Units};

pub use rate::{detect_sample_rate, dominant_rate};
pub use uri::{read_buffer_uri, set_allow_any_uri};

/// Joint-frames (joints × frames) a file may hold whatever its size: 1 Mi. Each costs 40
/// bytes as a dense clip but about [`COMPRESS_BYTES_PER_SAMPLE`] while it is compressed,
/// so this is about 0.9 GB of compression; more only as far as the file's bytes justify
/// ([`check_dense_size`]).
pub const MAX_DENSE_SAMPLES: u64 = 1 << 20;

/// Peak memory of compressing one joint-frame (reference poses at samples and midpoints in
/// f64, the codec's inputs, the verifier's decoded poses), measured with `/usr/bin/time -v`
/// on track-less ACL clips of 1 to 4 Mi frames (docs/ROBUSTNESS.md).
pub const COMPRESS_BYTES_PER_SAMPLE: u64 = 830;

/// File bytes that justify one more joint-frame beyond [`MAX_DENSE_SAMPLES`]: compression
/// then needs at most about 50 times the file's size.
pub const BYTES_PER_JUSTIFIED_SAMPLE: u64 = 16;

/// The largest input file read (4 GiB); bigger files are refused before reading.
pub const MAX_FILE_BYTES: u64 = 1 << 32;

/// The kind of file an asset came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum SourceFormat {
    Gltf,
    Bvh,
    Acl,
    Fbx,
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
    /// Morph targets (blend shapes): per target, an offset per vertex added at full weight
    /// before skinning. The clips' scalar track named as the mesh drives their weights.
    pub morph_targets: Vec<MorphTarget>,
}

/// One morph target of a [`SkinnedMesh`].
#[derive(Clone, Debug, Default)]
pub struct MorphTarget {
    pub name: String,
    /// Per vertex of the mesh, its position offset at weight 1 (the mesh's space).
    pub offsets: Vec<Vec3>,
    /// What drives it in the source, for the importer's own bookkeeping (FBX: the blend
    /// channel's index in the scene and the in-between shape's index in that channel).
    pub source: Option<(usize, usize)>,
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
    /// Clips the source declares additive (ACL's `additive_format`), by name, with their
    /// mode and base: what settings apply unless the sidecar says otherwise.
    pub source_additive: Vec<(String, crate::model::playback::Additive)>,
    /// Measured size and inferred unit.
    pub units: Units,
    /// Non-fatal observations (ignored channels, clamped values).
    pub warnings: Vec<String>,
    /// What an FBX source declares and how it was read (None for other formats).
    pub fbx: Option<fbx::FbxInfo>,
    /// Joints held at storable values where the source put them out of range (clip name,
    /// one line naming the joint and frames): those clips miss their tolerance there, and
    /// every command that compresses them says so (docs/ROBUSTNESS.md, item 5).
    pub held: Vec<(String, String)>,
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
    } else if name.ends_with(".fbx") {
        Some(SourceFormat::Fbx)
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

/// Refuses a clip of `joints × frames` dense samples beyond [`MAX_DENSE_SAMPLES`] plus one
/// per [`BYTES_PER_JUSTIFIED_SAMPLE`] bytes of the file's data (`data_bytes`), so a declared
/// count never allocates (or costs compression) more than the file can justify.
pub(crate) fn check_dense_size(
    joints: usize,
    frames: usize,
    data_bytes: usize,
) -> Result<(), String> {
    check_dense_total(0, joints, frames, data_bytes)
}

/// Joint-frames all clips of one file may hold together whatever its size: 16 Mi, 640 MiB
/// of dense clips (clips are compressed one at a time per thread, but `convert` and the
/// app hold them all); more only as far as the file justifies, one per 2 bytes.
pub const MAX_FILE_DENSE_SAMPLES: u64 = 1 << 24;

/// [`check_dense_size`] for one more clip of a file whose earlier clips hold `earlier`
/// samples, plus the bound on the file's clips together ([`MAX_FILE_DENSE_SAMPLES`] + one
/// per 2 file bytes), so 10,000 animations of a 66 MB glTF cannot each take the whole
/// allowance.
pub(crate) fn check_dense_total(
    earlier: u64,
    joints: usize,
    frames: usize,
    data_bytes: usize,
) -> Result<(), String> {
    let samples = (joints as u64).saturating_mul(frames as u64);
    let limit = MAX_DENSE_SAMPLES + data_bytes as u64 / BYTES_PER_JUSTIFIED_SAMPLE;
    if samples > limit {
        return Err(format!(
            "{joints} joints × {frames} frames is more than the {limit} samples skelpack \
             accepts in a clip of this file (compression needs about \
             {COMPRESS_BYTES_PER_SAMPLE} bytes a sample; see docs/ROBUSTNESS.md)"
        ));
    }
    let file_limit = MAX_FILE_DENSE_SAMPLES + data_bytes as u64 / 2;
    if samples.saturating_add(earlier) > file_limit {
        return Err(format!(
            "{joints} joints × {frames} frames after the {earlier} samples of the clips \
             before it is more than the {file_limit} samples skelpack accepts for all clips \
             of this file (40 bytes each; see docs/ROBUSTNESS.md)"
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
        None if bytes.starts_with(b"Kaydara FBX Binary") || bytes.starts_with(b"; FBX") => {
            SourceFormat::Fbx
        }
        None => {
            return Err(ImportError::new(
                path,
                "unknown file type (expected .glb, .gltf, .bvh, .fbx or .acl.sjson)",
            ));
        }
    };
    let mut fbx_info = None;
    let mut source_additive = Vec::new();
    let (skeleton, mut clips, meshes, source_tolerance, mut warnings) = match format {
        SourceFormat::Gltf => gltf::import(path, bytes)?,
        SourceFormat::Bvh => bvh::import(path, bytes)?,
        SourceFormat::Acl => {
            let (imported, additive) = acl_sjson::import(path, bytes)?;
            source_additive.extend(additive);
            imported
        }
        SourceFormat::Fbx => {
            let (imported, info) = fbx::import(path, bytes)?;
            source_additive.extend(info.additive_layers.iter().cloned());
            fbx_info = Some(info);
            imported
        }
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
                format!(
                    "joint '{}' has a non-finite rest transform",
                    crate::quote::clipped(&j.name)
                ),
            ));
        }
    }
    limits::check_joint_count(&skeleton).map_err(|m| ImportError::new(path, m))?;
    limits::check_rest(&skeleton).map_err(|m| ImportError::new(path, m))?;
    let mut held = Vec::new();
    for clip in &mut clips {
        limits::check_timing(clip).map_err(|m| ImportError::new(path, m))?;
        for line in limits::hold_unreachable(&skeleton, clip) {
            held.push((clip.name.clone(), line));
        }
        limits::check_clip(&skeleton, clip).map_err(|m| ImportError::new(path, m))?;
    }
    warnings = warnings::collapse(warnings);
    warnings.extend(held.iter().map(|(_, line)| line.clone()));
    // glTF declares metres, FBX is read in metres; BVH and ACL clips declare nothing.
    let declared = matches!(format, SourceFormat::Gltf | SourceFormat::Fbx)
        .then_some(crate::model::LengthUnit::Metre);
    let units = Units::measure(&skeleton, &clips, declared);
    Ok(Asset {
        path: path.to_path_buf(),
        format,
        skeleton,
        clips,
        meshes,
        source_tolerance,
        source_additive,
        units,
        warnings,
        held,
        fbx: fbx_info,
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
