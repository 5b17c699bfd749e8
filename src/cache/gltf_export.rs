//! A whole compressed-glTF export (`compress -o OUT.glb`), cached: the written file's bytes and
//! what was reported about it.
//!
//! A glTF export cannot be cached clip by clip as a `.skp` is: every animation's channels are
//! verified against the poses every other animation of the file leaves behind (the start-pose
//! check of docs/EXPORT.md), and the file carries the source's meshes, skins and images. So the
//! key is the file's: its bytes, its extension, the resolved settings, the export options, the
//! output's extension and the whole tool's source fingerprint. It is used only for sources that
//! are complete in themselves (`.bvh`, `.acl.sjson`, `.fbx`, and `.glb` naming no external
//! buffer or image), since an export embeds what a relative URI names depending on where it is
//! written.
//!
//! The value is `SKPG`, the key, the report's JSON and the warnings (each a length and UTF-8
//! bytes, little-endian `u64` lengths), then the output file. The output is checked on read: a
//! `.glb` must be a GLB of exactly its declared length with a JSON chunk that parses, a
//! `.gltf` a JSON document.

use std::path::Path;

use super::Key;
use super::whole_file::{self, glb_json};

const MAGIC: &[u8; 4] = b"SKPG";

/// A cached export: the report, the warnings and the file, as they were when it was made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CachedExport {
    /// The exporter's report of the animations, as JSON (exactly the bytes `--json` prints).
    pub report_json: String,
    /// The non-fatal observations the exporter made.
    pub warnings: Vec<String>,
    /// The output file's bytes.
    pub output: Vec<u8>,
}

/// The key of the export of the source at `path` holding `bytes` to a file with extension
/// `output_ext` (`glb` or `gltf`), under the settings and options whose full descriptions are
/// `settings` and `options`; `None` when the source may read other files.
pub fn export_key(
    path: &Path,
    bytes: &[u8],
    settings: &str,
    options: &str,
    output_ext: &str,
) -> Option<Key> {
    let output_ext = output_ext.to_ascii_lowercase();
    whole_file::key(
        "gltf export 1",
        path,
        bytes,
        true,
        &[settings, options, &output_ext],
    )
}

fn put_chunk(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The stored form of `export`.
pub fn encode(key: &Key, export: &CachedExport) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + export.report_json.len() + export.output.len());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(key);
    put_chunk(&mut out, export.report_json.as_bytes());
    out.extend_from_slice(&(export.warnings.len() as u64).to_le_bytes());
    for w in &export.warnings {
        put_chunk(&mut out, w.as_bytes());
    }
    put_chunk(&mut out, &export.output);
    out
}

/// Reads `bytes` front to back; every read is bounded by what is left.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn u64(&mut self) -> Result<u64, String> {
        let (head, rest) = self
            .rest
            .split_first_chunk::<8>()
            .ok_or("the entry is truncated")?;
        self.rest = rest;
        Ok(u64::from_le_bytes(*head))
    }

    fn chunk(&mut self) -> Result<&'a [u8], String> {
        let len = self.u64()?;
        if len > self.rest.len() as u64 {
            return Err("a length runs past the entry's end".into());
        }
        let (head, rest) = self.rest.split_at(len as usize);
        self.rest = rest;
        Ok(head)
    }

    fn text(&mut self) -> Result<String, String> {
        String::from_utf8(self.chunk()?.to_vec()).map_err(|_| "a text is not UTF-8".into())
    }
}

/// The export in `bytes`, if they are the stored export of `key` to a file of extension
/// `output_ext`, and the file in it is what that extension promises.
pub fn decode(key: &Key, bytes: &[u8], output_ext: &str) -> Result<CachedExport, String> {
    if bytes.len() < 36 || &bytes[..4] != MAGIC {
        return Err("not a skelpack glTF export".into());
    }
    if &bytes[4..36] != key {
        return Err("the export belongs to another key".into());
    }
    let mut r = Reader { rest: &bytes[36..] };
    let report_json = r.text()?;
    serde_json::from_str::<serde_json::Value>(&report_json)
        .map_err(|_| "the export's report is not JSON".to_string())?;
    let count = r.u64()?;
    // Each warning takes at least its 8-byte length.
    if count > (r.rest.len() / 8) as u64 {
        return Err("more warnings than the entry holds".into());
    }
    let warnings = (0..count)
        .map(|_| r.text())
        .collect::<Result<Vec<_>, _>>()?;
    let output = r.chunk()?.to_vec();
    if !r.rest.is_empty() {
        return Err("bytes after the export's end".into());
    }
    check_output(&output, output_ext)?;
    Ok(CachedExport {
        report_json,
        warnings,
        output,
    })
}

/// Whether `output` is a whole file of its kind.
fn check_output(output: &[u8], output_ext: &str) -> Result<(), String> {
    if output_ext.eq_ignore_ascii_case("glb") {
        let declared = output
            .get(8..12)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize);
        if declared != Some(output.len()) || glb_json(output).is_none() {
            return Err("the exported GLB is damaged".into());
        }
    } else if serde_json::from_slice::<serde_json::Value>(output).is_err() {
        return Err("the exported glTF is not JSON".into());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn glb(json: &str) -> Vec<u8> {
        let mut j = json.as_bytes().to_vec();
        while !j.len().is_multiple_of(4) {
            j.push(b' ');
        }
        let total = 12 + 8 + j.len();
        let mut out = b"glTF".to_vec();
        out.extend_from_slice(&2u32.to_le_bytes());
        out.extend_from_slice(&(total as u32).to_le_bytes());
        out.extend_from_slice(&(j.len() as u32).to_le_bytes());
        out.extend_from_slice(&0x4E4F_534Au32.to_le_bytes());
        out.extend_from_slice(&j);
        out
    }

    fn sample() -> CachedExport {
        CachedExport {
            report_json: "[{\"name\": \"Walk\"}]".into(),
            warnings: vec!["one".into(), "two ü".into()],
            output: glb("{\"asset\":{\"version\":\"2.0\"}}"),
        }
    }

    #[test]
    fn round_trip_and_every_damage_is_refused() {
        let key = [7u8; 32];
        let bytes = encode(&key, &sample());
        assert_eq!(decode(&key, &bytes, "glb").unwrap(), sample());
        assert!(decode(&[8u8; 32], &bytes, "glb").is_err(), "foreign key");
        for cut in 0..bytes.len() {
            assert!(decode(&key, &bytes[..cut], "glb").is_err(), "cut at {cut}");
        }
        let mut longer = bytes.clone();
        longer.push(0);
        assert!(decode(&key, &longer, "glb").is_err());
        // The GLB's declared length no longer matches: one byte of its header changed.
        let mut damaged = bytes.clone();
        let at = bytes.len() - sample().output.len() + 8;
        damaged[at] ^= 1;
        assert!(decode(&key, &damaged, "glb").is_err());
        // A warning count past the entry's end.
        let mut many = bytes.clone();
        let at = 36 + 8 + sample().report_json.len();
        many[at..at + 8].copy_from_slice(&u64::MAX.to_le_bytes());
        assert!(decode(&key, &many, "glb").is_err());
    }

    #[test]
    fn only_self_contained_sources_get_a_key() {
        let inside = glb("{\"buffers\":[{\"byteLength\":4}],\"images\":[{\"bufferView\":0}]}");
        let image_file = glb("{\"images\":[{\"uri\":\"skin.png\"}]}");
        let key = |name: &str, bytes: &[u8]| export_key(Path::new(name), bytes, "s", "o", "glb");
        assert!(key("a.glb", &inside).is_some());
        assert!(key("a.glb", &image_file).is_none());
        assert!(key("a.gltf", b"{}").is_none());
        assert!(key("a.bvh", b"HIERARCHY").is_some());
        assert_ne!(key("a.bvh", b"x"), key("a.bvh", b"y"));
        assert_ne!(
            export_key(Path::new("a.bvh"), b"x", "s", "o", "glb"),
            export_key(Path::new("a.bvh"), b"x", "s", "o", "gltf")
        );
        assert_ne!(
            export_key(Path::new("a.bvh"), b"x", "s", "o", "glb"),
            export_key(Path::new("a.bvh"), b"x", "s", "p", "glb")
        );
    }
}
