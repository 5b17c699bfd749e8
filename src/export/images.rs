//! Images an export refers to by a relative URI (`"uri": "textures/skin.png"`), which no
//! longer resolve once the export is written to another folder (the Khronos validator's
//! `IO_ERROR`, a model without its textures in every viewer).
//!
//! Where the output's folder differs from the source's, each such image is embedded: its
//! bytes go into buffer 0 (the `.glb` BIN chunk, or the `.gltf`'s data-URI buffer) as a
//! buffer view, and the image gets `bufferView` + `mimeType` instead of `uri`, so the
//! export is self-contained wherever it is written, as its buffers already are. Files are
//! read under the importer's URI policy ([`crate::import::uri`]: inside the source's folder,
//! regular files, at most [`crate::import::uri::MAX_EXTERNAL_BYTES`]). An image that cannot
//! be read (missing, refused, of no known type) keeps its URI, with a warning. In the same
//! folder, URIs are left as they are (they still resolve).

use std::path::Path;

use serde_json::{Value, json};

use super::GltfDoc;
use crate::import::uri;

/// Embeds the images of `doc` with relative URIs when `output` is not in `source`'s folder.
/// Returns one warning per image left as it was.
pub fn embed_if_moved(doc: &mut GltfDoc, source: &Path, output: &Path) -> Vec<String> {
    let folder = |p: &Path| {
        let dir = p
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf())
    };
    let (from, to) = (folder(source), folder(output));
    if from == to {
        return Vec::new();
    }
    embed(doc, &from)
}

/// Embeds every image of `doc` whose URI is a relative path (not a `data:` URI), resolved
/// against `base`. Returns one warning per image left as it was.
pub fn embed(doc: &mut GltfDoc, base: &Path) -> Vec<String> {
    let mut warnings = Vec::new();
    for i in 0..doc.array("images").len() {
        let image = &doc.array("images")[i];
        let Some(u) = image.get("uri").and_then(Value::as_str) else {
            continue;
        };
        if u.starts_with("data:") {
            continue;
        }
        let u = u.to_owned();
        let declared = image
            .get("mimeType")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let bytes = match read(base, &u) {
            Ok(b) => b,
            Err(m) => {
                warnings.push(format!("image {i} ('{u}') is not embedded: {m}"));
                continue;
            }
        };
        let Some(mime) = declared.or_else(|| mime_type(&bytes, &u).map(str::to_owned)) else {
            warnings.push(format!(
                "image {i} ('{u}') is not embedded: not a PNG, JPEG, WebP or KTX2 image"
            ));
            continue;
        };
        let view = doc.push_view(&bytes, None);
        let image = doc.array_mut("images")[i]
            .as_object_mut()
            .expect("an image with a uri is an object");
        image.remove("uri");
        image.insert("bufferView".into(), json!(view));
        image.insert("mimeType".into(), json!(mime));
    }
    warnings
}

/// The whole file a relative image URI names, under the URI policy.
fn read(base: &Path, u: &str) -> Result<Vec<u8>, String> {
    let file = uri::resolve(base, u, uri::allow_any_uri())?;
    let len = std::fs::metadata(&file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?
        .len();
    uri::read_buffer_uri(base, u, len)
}

/// The image's MIME type from its first bytes, else from the URI's extension.
fn mime_type(bytes: &[u8], u: &str) -> Option<&'static str> {
    let magic: [(&[u8], usize, &str); 4] = [
        (b"\x89PNG\r\n\x1a\n", 0, "image/png"),
        (b"\xff\xd8\xff", 0, "image/jpeg"),
        (b"WEBP", 8, "image/webp"),
        (b"\xabKTX 20\xbb", 0, "image/ktx2"),
    ];
    if let Some((_, _, m)) = magic
        .iter()
        .find(|(m, at, _)| bytes.get(*at..*at + m.len()) == Some(*m))
    {
        return Some(m);
    }
    let ext = u.rsplit('.').next()?.to_ascii_lowercase();
    match ext.as_str() {
        "png" => Some("image/png"),
        "jpg" | "jpeg" => Some("image/jpeg"),
        "webp" => Some("image/webp"),
        "ktx2" => Some("image/ktx2"),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_images_are_embedded_and_the_rest_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("tex")).unwrap();
        let png = b"\x89PNG\r\n\x1a\nrest of the file";
        std::fs::write(dir.path().join("tex/skin.png"), png).unwrap();
        let mut doc = GltfDoc::new();
        doc.json["images"] = json!([
            { "uri": "tex/skin.png", "name": "skin" },
            { "uri": "data:image/png;base64,AAAA" },
            { "uri": "missing.png" },
            { "uri": "../outside.png" },
        ]);
        let out_dir = tempfile::tempdir().unwrap();
        let source = dir.path().join("a.gltf");
        // Same folder: nothing to do.
        let mut same = doc.clone();
        assert!(embed_if_moved(&mut same, &source, &dir.path().join("b.glb")).is_empty());
        assert_eq!(same.json, doc.json);
        let warnings = embed_if_moved(&mut doc, &source, &out_dir.path().join("b.glb"));
        let images = doc.array("images");
        assert_eq!(images[0]["mimeType"], "image/png");
        assert_eq!(images[0]["name"], "skin");
        assert!(images[0].get("uri").is_none());
        let view = &doc.array("bufferViews")[images[0]["bufferView"].as_u64().unwrap() as usize];
        let at = view["byteOffset"].as_u64().unwrap() as usize;
        assert_eq!(&doc.buffers[0][at..at + png.len()], png);
        assert_eq!(images[1]["uri"], "data:image/png;base64,AAAA");
        assert_eq!(images[2]["uri"], "missing.png");
        assert_eq!(images[3]["uri"], "../outside.png");
        assert_eq!(warnings.len(), 2, "{warnings:?}");
        assert!(
            warnings[1].contains("leaves the asset's folder"),
            "{warnings:?}"
        );
    }

    #[test]
    fn types_by_content_then_extension() {
        assert_eq!(mime_type(b"\xff\xd8\xff\xe0", "x.png"), Some("image/jpeg"));
        assert_eq!(mime_type(b"RIFF\0\0\0\0WEBPVP8 ", "x"), Some("image/webp"));
        assert_eq!(mime_type(b"????", "x.JPG"), Some("image/jpeg"));
        assert_eq!(mime_type(b"????", "x.bmp"), None);
    }
}
