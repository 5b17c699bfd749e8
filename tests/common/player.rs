//! Running the tools the integration tests check against: the `skelpack` binary and
//! `node tools/player/SCRIPT` (three.js' player and the Khronos validator).

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

pub fn player_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/player")
}

/// Panics with what to do when Node.js or the npm packages are missing.
pub fn require_node() {
    let node = Command::new("node").arg("--version").output();
    assert!(
        matches!(node, Ok(ref o) if o.status.success()),
        "the real-player check needs Node.js (Debian: apt-get install nodejs npm), then \
         `npm ci` in tools/player"
    );
    for pkg in ["three", "gltf-validator"] {
        assert!(
            player_dir().join("node_modules").join(pkg).is_dir(),
            "tools/player/node_modules/{pkg} is missing: run `npm ci` in tools/player"
        );
    }
}

/// Runs `node tools/player/SCRIPT ARGS` and parses its JSON output (exit 0, or 2 for
/// player.mjs' "something missing in the export", which the report then names).
pub fn node_json(script: &str, args: &[&Path], extra: &[&str]) -> Value {
    require_node();
    let out = Command::new("node")
        .arg(player_dir().join(script))
        .args(args)
        .args(extra)
        .output()
        .expect("run node");
    let code = out.status.code();
    assert!(
        code == Some(0) || (script == "player.mjs" && code == Some(2)),
        "{script} {args:?} failed ({:?}): {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{script} JSON: {e}"))
}

pub fn skelpack(args: &[&str], paths: &[&Path]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(args)
        .args(paths)
        .output()
        .expect("run skelpack")
}

/// [`skelpack`], which must exit 0 (its standard error is the failure message).
pub fn skelpack_ok(args: &[&str], paths: &[&Path]) -> std::process::Output {
    let out = skelpack(args, paths);
    assert!(
        out.status.success(),
        "skelpack {args:?} {paths:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}
