//! Keys of results that stand for a whole source file (a file's report, a glTF export, a
//! conversion): the file's own bytes and the whole tool's source fingerprint, for sources
//! complete in themselves, since no other file may change what such a key describes.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::Key;

/// The fingerprint of every source of the tool, computed by `build.rs`.
pub const SOURCE_FINGERPRINT: &str = env!("SKELPACK_SOURCE_FINGERPRINT");

/// The key, under `label` (what the result is), of a result made from the file at `path`
/// holding `bytes` and described by `parts` (settings, options); `None` when the file may
/// read other files: a `.gltf`, a `.glb` naming an external buffer, or with `images` an
/// external image too. `.bvh`, `.acl.sjson` and `.fbx` sources are complete.
pub fn key(label: &str, path: &Path, bytes: &[u8], images: bool, parts: &[&str]) -> Option<Key> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let complete = if name.ends_with(".glb") {
        glb_is_complete(bytes, images)
    } else {
        [".bvh", ".acl.sjson", ".fbx"]
            .iter()
            .any(|e| name.ends_with(e))
    };
    if !complete {
        return None;
    }
    let ext = name.rsplit('.').next().unwrap_or("");
    let mut h = Sha256::new();
    h.update(format!("skelpack {label}\0{}\0", env!("CARGO_PKG_VERSION")).as_bytes());
    h.update(SOURCE_FINGERPRINT.as_bytes());
    h.update(format!("\0{ext}\0").as_bytes());
    for p in parts {
        h.update(format!("{}\0{p}\0", p.len()).as_bytes());
    }
    h.update(format!("{}\0", bytes.len()).as_bytes());
    h.update(bytes);
    Some(h.finalize().into())
}

/// Whether a GLB names no buffer outside itself (its JSON chunk's buffers have no `uri`, or
/// only `data:` ones), and with `images` no image either. Anything unreadable counts as not
/// complete.
fn glb_is_complete(bytes: &[u8], images: bool) -> bool {
    let Some(doc) = glb_json(bytes) else {
        return false;
    };
    let inside = |list: &serde_json::Value| {
        list.as_array().is_none_or(|items| {
            items.iter().all(|b| {
                b.get("uri")
                    .and_then(|u| u.as_str())
                    .is_none_or(|u| u.starts_with("data:"))
            })
        })
    };
    inside(&doc["buffers"]) && (!images || inside(&doc["images"]))
}

/// The JSON chunk of a GLB, parsed; `None` when `bytes` are not a GLB with one.
pub(super) fn glb_json(bytes: &[u8]) -> Option<serde_json::Value> {
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    let (len, kind) = (u32_at(12)?, u32_at(16)?);
    if &bytes[..4] != b"glTF" || kind != 0x4E4F_534A {
        return None;
    }
    let json = bytes.get(20..20usize.saturating_add(len))?;
    serde_json::from_slice(json).ok()
}
