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

use super::Key;

const MAGIC: &[u8; 4] = b"SKPF";

/// The key of the report of the file at `path` holding `bytes`, under the settings whose
/// full description is `settings` (their [`crate::settings::Settings::key_text`]); `None`
/// when the file may read other files (a `.gltf`, or a `.glb` naming external buffers).
pub fn file_key(path: &Path, bytes: &[u8], settings: &str) -> Option<Key> {
    super::whole_file::key("file report 1", path, bytes, false, &[settings])
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
