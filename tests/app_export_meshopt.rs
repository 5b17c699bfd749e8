#![cfg(feature = "gui")]
//! The File menu's "glTF: meshopt byte compression" toggle, clicked in the real app
//! (headless, software wgpu adapter): the compressed glTF export then requires
//! EXT_meshopt_compression and opens again with the same clips.

use std::path::PathBuf;
use std::sync::Once;
use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skelpack::app::{Action, App, StartOptions};

const TOGGLE: &str = "glTF: meshopt byte compression";

fn harness(file: PathBuf) -> Harness<'static, App> {
    static ONCE: Once = Once::new();
    // SAFETY: set once, before any harness (and its wgpu instance) exists.
    ONCE.call_once(|| unsafe { std::env::set_var("WGPU_BACKEND", "vulkan") });
    let mut h = Harness::builder()
        .with_size([1280.0, 800.0])
        .with_max_steps(30)
        .wgpu()
        .build_eframe(move |cc| {
            App::with_options(
                cc,
                StartOptions {
                    file: Some(file),
                    ignore_storage: true,
                    ..Default::default()
                },
            )
        });
    h.run_steps(2);
    assert!(h.state_mut().wait_for_result(Duration::from_secs(120)));
    h.run();
    h
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
        skelpack::app::exporter::gltf_meshopt(),
        "the toggle did not switch on"
    );
    let out = dir.path().join("packed.glb");
    h.state_mut().perform(Action::ExportGltf(Some(out.clone())));
    h.step();
    let start = std::time::Instant::now();
    while h.state().export_running() {
        assert!(
            start.elapsed() < Duration::from_secs(300),
            "export did not finish"
        );
        std::thread::sleep(Duration::from_millis(50));
        h.step();
    }
    h.run();
    assert!(
        required_extensions(&out)
            .iter()
            .any(|e| e == "EXT_meshopt_compression"),
        "{:?}",
        required_extensions(&out)
    );
    let back = skelpack::import::load(&out).unwrap();
    assert_eq!(back.clips.len(), 1);
    skelpack::app::exporter::set_gltf_meshopt(false);
}
