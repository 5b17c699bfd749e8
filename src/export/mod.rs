//! Exporters: glTF 2.0 scenes built from the model, and (with the codec) the original glTF
//! with its animations replaced by compressed ones.
//!
//! [`gltf_doc`] holds the glTF JSON and its binary buffer and writes `.glb` or `.gltf`
//! (embedded data-URI buffer); [`gltf_scene`] writes a new file from a skeleton, clips and
//! meshes (BVH / ACL conversion, the default character); [`gltf_compressed`] rewrites an
//! original glTF's animations from the codec's output ([`channels`] holds the channel data
//! and a player under each [`Rule`]; [`verify`] fits them to the target [`Player`];
//! [`compact`] drops the replaced data).

pub mod additive;
pub mod between;
pub mod buffers;
pub mod bulge;
pub mod channels;
pub mod clip_memo;
pub mod clip_switch;
pub mod compact;
pub mod gltf_animations;
pub mod gltf_clip;
pub mod gltf_compressed;
pub mod gltf_doc;
pub mod gltf_scene;
pub mod images;
mod key_points;
pub mod layout;
mod marker_angles;
pub mod meshopt;
pub mod metres;
pub(crate) mod morph_reach;
pub mod morph_weights;
mod original;
mod prune;
mod remeasure;
pub mod share;
pub mod slerp_flat;
pub mod start_states;
pub mod switch_bound;
pub mod verify;

use std::path::Path;

pub use channels::{Player, Rule};
pub use gltf_animations::keyed_channels;
pub use gltf_compressed::{
    AnimationExport, ChannelExport, CompressedGltf, FileKeyed, GltfClip, GltfOptions, Keyed,
    compress_to_gltf, compress_to_gltf_memo, compressed_gltf, encode_for_gltf, export_gltf,
    write_compressed_gltf,
};
pub use gltf_doc::{GltfDoc, GltfFormat};
pub use gltf_scene::{scene_to_gltf, write_scene};

/// A failure to export: one line naming the problem.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct ExportError(pub String);

impl ExportError {
    pub fn new(message: impl Into<String>) -> Self {
        Self(message.into())
    }
}

/// Writes `bytes` to `path` atomically, refusing to replace `input` (the file being
/// converted) unless `force` is set.
pub fn write_output(
    path: &Path,
    bytes: &[u8],
    input: Option<&Path>,
    force: bool,
) -> Result<(), ExportError> {
    if !force && let Some(input) = input {
        let same = match (std::fs::canonicalize(path), std::fs::canonicalize(input)) {
            (Ok(a), Ok(b)) => a == b,
            _ => path == input,
        };
        if same {
            return Err(ExportError::new(format!(
                "{}: refusing to overwrite the input file (use --force)",
                path.display()
            )));
        }
    }
    crate::fsutil::write_atomic(path, bytes)
        .map_err(|e| ExportError::new(format!("{}: cannot write: {e}", path.display())))
}
