//! Issue 24 item 8: an export written to another folder than its source keeps no relative
//! image URI (it would no longer resolve: the Khronos validator's `IO_ERROR`). No shared
//! asset has an external image (SimpleSkin.gltf has no image, the others embed theirs), so
//! the source is made here: CesiumMan with its texture moved to `tex/CesiumMan.jpg` beside a
//! `.gltf`. Needs Node.js and `npm ci` in tools/player (the validator).

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skelpack::export::{GltfDoc, GltfFormat, GltfOptions, compress_to_gltf};
use skelpack::import;
use skelpack::settings::{Preset, Settings};

/// CesiumMan as `dir/CesiumMan.gltf` whose image is the file `dir/tex/CesiumMan.jpg`.
fn with_external_image(dir: &Path) -> PathBuf {
    let mut doc = GltfDoc::read(&common::asset("CesiumMan.glb")).unwrap();
    let image = doc.array("images")[0].clone();
    let view = &doc.array("bufferViews")[image["bufferView"].as_u64().unwrap() as usize];
    let at = view["byteOffset"].as_u64().unwrap_or(0) as usize;
    let len = view["byteLength"].as_u64().unwrap() as usize;
    let jpeg = doc.buffers[0][at..at + len].to_vec();
    std::fs::create_dir(dir.join("tex")).unwrap();
    std::fs::write(dir.join("tex/CesiumMan.jpg"), jpeg).unwrap();
    doc.array_mut("images")[0] = serde_json::json!({ "uri": "tex/CesiumMan.jpg" });
    let path = dir.join("CesiumMan.gltf");
    std::fs::write(&path, doc.to_bytes(GltfFormat::Embedded).unwrap()).unwrap();
    path
}

/// The validator's message codes for `file` (tools/player/validate.mjs).
fn validator_codes(file: &Path) -> Vec<String> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/player/validate.mjs");
    assert!(
        script
            .with_file_name("node_modules/gltf-validator")
            .is_dir(),
        "tools/player/node_modules/gltf-validator is missing: run `npm ci` in tools/player"
    );
    let out = Command::new("node")
        .arg(&script)
        .arg(file)
        .output()
        .expect("the validator needs Node.js");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    report[0]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["code"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn exports_to_another_folder_embed_relative_images() {
    let src_dir = tempfile::tempdir().unwrap();
    let out_dir = tempfile::tempdir().unwrap();
    let source = with_external_image(src_dir.path());
    // The source itself is sound where it is.
    assert!(!validator_codes(&source).iter().any(|c| c == "IO_ERROR"));
    let asset = import::load(&source).unwrap();
    let settings = Settings::from_preset(Preset::Acl);
    for name in ["moved.glb", "moved.gltf"] {
        let out = out_dir.path().join(name);
        let r = compress_to_gltf(&asset, &settings, &out, &GltfOptions::default(), false).unwrap();
        assert!(r.warnings.is_empty(), "{:?}", r.warnings);
        let codes = validator_codes(&out);
        assert!(
            !codes.iter().any(|c| c == "IO_ERROR"),
            "{name}: the validator cannot read an image: {codes:?}"
        );
        let doc = GltfDoc::read(&out).unwrap();
        let image = &doc.array("images")[0];
        assert!(image.get("uri").is_none(), "{name}: {image}");
        assert_eq!(image["mimeType"], "image/jpeg");
        let view = &doc.array("bufferViews")[image["bufferView"].as_u64().unwrap() as usize];
        let at = view["byteOffset"].as_u64().unwrap_or(0) as usize;
        let len = view["byteLength"].as_u64().unwrap() as usize;
        let jpeg = std::fs::read(src_dir.path().join("tex/CesiumMan.jpg")).unwrap();
        assert_eq!(
            &doc.buffers[0][at..at + len],
            &jpeg[..],
            "{name}: the image's bytes"
        );
    }
    // Beside the source, the relative URI still resolves and is kept.
    let beside = src_dir.path().join("beside.glb");
    compress_to_gltf(&asset, &settings, &beside, &GltfOptions::default(), false).unwrap();
    let doc = GltfDoc::read(&beside).unwrap();
    assert_eq!(doc.array("images")[0]["uri"], "tex/CesiumMan.jpg");
    assert!(!validator_codes(&beside).iter().any(|c| c == "IO_ERROR"));
}
