//! The real app under egui_kittest on the software wgpu adapter (Vulkan pinned, see
//! STACK.md), shared by the app tests: open a file, wait for its compressed result.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::Once;
use std::time::Duration;

use egui_kittest::Harness;
use skelpack::app::{App, StartOptions};

/// The window size most app tests use.
pub const SIZE: [f32; 2] = [1280.0, 800.0];

/// Pins the Vulkan backend (lavapipe) before any wgpu instance exists.
pub fn pin_backend() {
    static ONCE: Once = Once::new();
    // SAFETY: set once, before any harness (and its wgpu instance) exists.
    ONCE.call_once(|| unsafe { std::env::set_var("WGPU_BACKEND", "vulkan") });
}

/// The app on `file` (None: the default character) in a `size` window, without storage;
/// nothing waited for.
pub fn open(file: Option<PathBuf>, size: [f32; 2]) -> Harness<'static, App> {
    open_with(
        StartOptions {
            file,
            ignore_storage: true,
            ..Default::default()
        },
        size,
    )
}

/// The app started with `opts` in a `size` window; nothing waited for.
pub fn open_with(opts: StartOptions, size: [f32; 2]) -> Harness<'static, App> {
    pin_backend();
    Harness::builder()
        .with_size(size)
        .with_max_steps(30)
        .wgpu()
        .build_eframe(move |cc| App::with_options(cc, opts))
}

/// Steps a frame or two (queued actions run), waits for the compressed result (the refined
/// one), then lets the UI settle.
pub fn settle(h: &mut Harness<'static, App>) {
    h.run_steps(2);
    assert!(
        h.state_mut().wait_for_result(Duration::from_secs(300)),
        "no compressed result"
    );
    h.run();
}

/// [`open`] then [`settle`]: the app with the open clip's result in.
pub fn opened(file: Option<PathBuf>, size: [f32; 2]) -> Harness<'static, App> {
    let mut h = open(file, size);
    settle(&mut h);
    h
}

/// Steps frames until the export worker has delivered its result.
pub fn wait_for_export(h: &mut Harness<'static, App>) {
    h.step(); // the action runs on the next frame
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
}

/// The index of the open document's joint `name` (panics when there is none).
pub fn joint(h: &Harness<'static, App>, name: &str) -> usize {
    let doc = h.state().document().expect("a document is open");
    doc.asset
        .skeleton
        .find(name)
        .unwrap_or_else(|| panic!("no joint {name}"))
}

/// A shared asset's path (`../shared/assets/NAME`).
pub fn shared_asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets")
        .join(name)
}

/// Runs `skelpack compress SOURCE -o OUT` (the command line, for files the app must write
/// byte for byte alike); panics with its stderr when it fails.
pub fn cli_compress(source: &std::path::Path, out: &std::path::Path) {
    let run = std::process::Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args([
            "compress",
            source.to_str().unwrap(),
            "-o",
            out.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
}
