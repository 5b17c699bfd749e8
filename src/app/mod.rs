//! The inspector app (eframe + a custom wgpu viewport). The only module that touches egui,
//! eframe or wgpu; everything it shows comes from the core.
//!
//! Layout: menu bar; joint hierarchy (left); viewport with original and compressed
//! skeletons (centre); stats and settings (right); timeline and status bar (bottom).

pub mod actions;
pub mod backdrop;
pub mod compressor;
pub mod cpu_time;
pub mod default_asset;
pub mod exporter;
pub mod history;
mod inspector;
pub mod jobs;
pub mod panels;
pub mod pieces;
pub mod png;
pub mod result_cache;
pub mod software;
pub mod state;
pub mod viewport;

use std::path::PathBuf;

pub use actions::Action;
pub use inspector::{App, AutoOutcome, EDIT_WAIT, IdleFigures, StartOptions};
pub use state::{Layout, ViewOptions};

/// Window options shared by `run` and `view`.
pub fn native_options(persist: bool, vsync: bool) -> eframe::NativeOptions {
    let mut o = eframe::NativeOptions {
        viewport: egui::ViewportBuilder::default()
            .with_title("skelpack")
            .with_app_id("skelpack")
            .with_inner_size([1600.0, 960.0])
            .with_min_inner_size([640.0, 400.0])
            .with_drag_and_drop(true),
        renderer: eframe::Renderer::Wgpu,
        persist_window: persist,
        ..Default::default()
    };
    if !vsync {
        o.wgpu_options.surface.present_mode = egui_wgpu::wgpu::PresentMode::AutoNoVsync;
    }
    o
}

/// Opens the app on `file` (or the default character); returns the process exit code.
pub fn run(file: Option<PathBuf>) -> i32 {
    // The shared result cache, as `compress` and `report` find it.
    let cache = std::env::var("SKELPACK_CACHE")
        .ok()
        .filter(|s| !s.trim().is_empty())
        .map(|s| (s.trim().to_string(), 4096 << 20));
    let opts = StartOptions {
        file,
        cache,
        ..Default::default()
    };
    match eframe::run_native(
        "skelpack",
        native_options(true, true),
        Box::new(move |cc| Ok(Box::new(App::with_options(cc, opts)))),
    ) {
        Ok(()) => 0,
        Err(e) => {
            eprintln!("error: cannot open the app window: {e}");
            2
        }
    }
}

/// Runs the app unattended (the `view` command): returns what happened. It starts from
/// fresh state (no recent files, view options or panel sizes from earlier sessions), so
/// screenshots and measurements are reproducible.
pub fn run_auto(mut opts: StartOptions) -> Result<AutoOutcome, String> {
    opts.ignore_storage = true;
    let fresh = std::env::temp_dir().join(format!("skelpack-view-{}", std::process::id()));
    let slot: std::sync::Arc<
        std::sync::Mutex<Option<std::sync::Arc<std::sync::Mutex<AutoOutcome>>>>,
    > = Default::default();
    let s2 = slot.clone();
    let vsync = opts.measure_frames.unwrap_or(0) == 0;
    let mut native = native_options(false, vsync);
    if let Some(size) = opts.window {
        native.viewport = native.viewport.with_inner_size(size);
    }
    native.persistence_path = Some(fresh.clone());
    let ran = eframe::run_native(
        "skelpack",
        native,
        Box::new(move |cc| {
            let app = App::with_options(cc, opts);
            *s2.lock().expect("slot") = app.auto_outcome();
            Ok(Box::new(app))
        }),
    );
    let _ = std::fs::remove_dir_all(&fresh);
    ran.map_err(|e| format!("cannot open the app window: {e}"))?;
    let outcome = slot
        .lock()
        .expect("slot")
        .take()
        .map(|o| o.lock().expect("outcome").clone())
        .unwrap_or_default();
    Ok(outcome)
}
