//! The character the app opens with no file: the single place that chooses it.

use std::path::{Path, PathBuf};

use crate::import::{Asset, ImportError, load, load_bytes};

/// The name shown for the default character.
pub const DEFAULT_NAME: &str = "RobotExpressive.glb (default)";

/// Loads the default character.
///
/// Stand-in until the project's own generated character lands on main: the shared
/// RobotExpressive, looked up beside the working directory and the executable.
pub fn load_default() -> Result<Asset, ImportError> {
    let candidates = stand_in_candidates();
    for p in &candidates {
        if p.is_file() {
            return load(p);
        }
    }
    let _ = load_bytes; // the embedded default will use load_bytes(DEFAULT_NAME, BYTES)
    Err(ImportError::new(
        Path::new(DEFAULT_NAME),
        format!(
            "default character not found (looked in {})",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ))
}

fn stand_in_candidates() -> Vec<PathBuf> {
    let rel = Path::new("shared/assets/RobotExpressive.glb");
    let mut out = vec![
        Path::new("..").join(rel),
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("..")
            .join(rel),
    ];
    if let Ok(exe) = std::env::current_exe() {
        for a in exe.ancestors().skip(1).take(5) {
            out.push(a.join("..").join(rel));
        }
    }
    out
}
