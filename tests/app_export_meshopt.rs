#![cfg(feature = "gui")]
//! The File menu's "glTF: meshopt byte compression" toggle, clicked in the real app
//! (headless, software wgpu adapter): the compressed glTF export then requires
//! EXT_meshopt_compression and opens again with the same clips.

use std::path::PathBuf;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skelpack::app::{Action, App};

mod app_harness;

const TOGGLE: &str = "glTF: meshopt byte compression";

fn harness(file: PathBuf) -> Harness<'static, App> {
    app_harness::opened(Some(file), app_harness::SIZE)
}

fn required_extensions(path: &std::path::Path) -> Vec<String> {
    let bytes = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let json: serde_json::Value = serde_json::from_slice(&bytes[20..20 + n]).unwrap();
    json["extensionsRequired"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn the_meshopt_toggle_byte_compresses_the_gltf_export() {
    let src = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/CesiumMan.glb");
    let mut h = harness(src);
    let dir = tempfile::tempdir().unwrap();
    h.get_by_label("File").click();
    h.run();
    h.get_by_label(TOGGLE).click();
    h.run();
    assert!(
        h.state().view_options().gltf_meshopt,
        "the toggle did not switch on"
    );
    let out = dir.path().join("packed.glb");
    h.state_mut().perform(Action::ExportGltf(Some(out.clone())));
    app_harness::wait_for_export(&mut h);
    assert!(
        required_extensions(&out)
            .iter()
            .any(|e| e == "EXT_meshopt_compression"),
        "{:?}",
        required_extensions(&out)
    );
    let back = skelpack::import::load(&out).unwrap();
    assert_eq!(back.clips.len(), 1);
}
