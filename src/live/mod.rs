//! The live source shared by `skelpack watch` and the app: noticing that a file was saved
//! ([`watcher`]), reading it only once it is complete ([`settle`]), and saying what a
//! reload changed ([`changes`]), and the quick export written before the final one
//! ([`quick_settings`]). No GUI here.

pub mod changes;
pub mod settle;
pub mod watcher;

pub use changes::{ClipChanges, Missing};
pub use settle::Settle;
pub use watcher::FileWatch;

use std::path::Path;

use crate::settings::{Effort, Settings};

/// The settings of the quick export a save writes first: `settings` at `fast` effort when
/// `out` is a compressed glTF (`.glb`, `.gltf`) and the effort in force is not `fast`
/// already; `None` otherwise (a `.skp` is quick at every effort). The quick file holds the
/// same tolerance, a few percent larger (docs/EXPORT.md); the export at the effort in force
/// replaces it when ready.
pub fn quick_settings(out: &Path, settings: &Settings) -> Option<Settings> {
    let ext = out.extension().and_then(|e| e.to_str()).unwrap_or("");
    let gltf = ext.eq_ignore_ascii_case("glb") || ext.eq_ignore_ascii_case("gltf");
    (gltf && settings.effort != Effort::Fast).then(|| Settings {
        effort: Effort::Fast,
        ..settings.clone()
    })
}
