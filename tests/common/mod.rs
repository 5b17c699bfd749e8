//! Shared helpers for integration tests: where the third-party assets live.
#![allow(dead_code)]

use std::path::PathBuf;

/// `../shared/assets` beside the checkout (panics with a clear message when missing).
pub fn assets() -> PathBuf {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets");
    assert!(
        p.is_dir(),
        "test assets not found at {} (../shared must sit beside the checkout)",
        p.display()
    );
    p
}

pub fn asset(name: &str) -> PathBuf {
    assets().join(name)
}

/// Every glTF asset in the shared folder.
pub fn gltf_assets() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(assets())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "glb" || e == "gltf"))
        .collect();
    v.sort();
    v
}

/// Every importable file (glTF, BVH, ACL clips), recursively.
pub fn all_assets() -> Vec<PathBuf> {
    skelpack::import::collect_files(&assets()).unwrap()
}
