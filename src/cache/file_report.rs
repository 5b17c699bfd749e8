//! A whole file's report, cached beside its clips' results, so a warm batch run does not even
//! import an unchanged file.
//!
//! Its key hashes the file's own bytes, its extension, the settings that apply to it and the
//! whole tool's source fingerprint (the importers decide the clips). It is used only for files
//! that are complete in themselves (`.glb` without external buffers, `.bvh`, `.acl.sjson`,
//! `.fbx`), so no other file can change what the key describes. The clip-level cache still
//! serves a file whose bytes changed but whose motion did not.
//!
//! The value is `SKPF`, the key, then the report's JSON (what `report` made of the file).

use std::path::Path;

use sha2::{Digest, Sha256};

use super::Key;

/// The fingerprint of every source of the tool, computed by `build.rs`.
pub const SOURCE_FINGERPRINT: &str = env!("SKELPACK_SOURCE_FINGERPRINT");

const MAGIC: &[u8; 4] = b"SKPF";

/// The key of the report of the file at `path` holding `bytes`, under the settings whose
/// full description is `settings` (e.g. their `Debug` form); `None` when the file may read
/// other files (a `.gltf`, or a `.glb` naming external buffers).
pub fn file_key(path: &Path, bytes: &[u8], settings: &str) -> Option<Key> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    let complete = if name.ends_with(".glb") {
        glb_is_complete(bytes)
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
    h.update(b"skelpack file report 1\0");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(b"\0");
    h.update(SOURCE_FINGERPRINT.as_bytes());
    h.update(format!("\0{ext}\0{settings}\0{}\0", bytes.len()).as_bytes());
    h.update(bytes);
    Some(h.finalize().into())
}

/// Whether a GLB names no buffer outside itself (its JSON chunk's buffers have no `uri`, or
/// only `data:` ones). Anything unreadable counts as not complete.
fn glb_is_complete(bytes: &[u8]) -> bool {
    let u32_at = |at: usize| {
        bytes
            .get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
    };
    let (Some(len), Some(kind)) = (u32_at(12), u32_at(16)) else {
        return false;
    };
    if &bytes[..4] != b"glTF" || kind != 0x4E4F_534A {
        return false;
    }
    let Some(json) = bytes.get(20..20usize.saturating_add(len)) else {
        return false;
    };
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(json) else {
        return false;
    };
    doc["buffers"].as_array().is_none_or(|buffers| {
        buffers.iter().all(|b| {
            b.get("uri")
                .and_then(|u| u.as_str())
                .is_none_or(|u| u.starts_with("data:"))
        })
    })
}

/// The stored form of a file report.
pub fn encode(key: &Key, json: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(36 + json.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(key);
    out.extend_from_slice(json);
    out
}

/// The report JSON in `bytes`, if they are the stored report of `key`.
pub fn decode<'a>(key: &Key, bytes: &'a [u8]) -> Result<&'a [u8], String> {
    if bytes.len() < 36 || &bytes[..4] != MAGIC {
        return Err("not a skelpack file report".into());
    }
    if &bytes[4..36] != key {
        return Err("the report belongs to another key".into());
    }
    Ok(&bytes[36..])
}
