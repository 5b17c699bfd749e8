//! FBX sources out to glTF: every shared FBX file with a take is converted
//! (`skelpack convert`, the uncompressed reference) and compressed (`skelpack compress -o
//! x.glb`); the compressed file must pass the Khronos validator with no issue the conversion
//! lacks, hold the tolerance under `animeval.py --markers physical --player portable` against
//! the conversion, and play within the tolerance in three.js (tools/player/player.mjs), from
//! rest and after every other clip.
//!
//! Needs Node.js with `npm ci` in tools/player, and python3 with numpy (as
//! tests/real_player.rs).

mod common;
use common::player::{node_json, skelpack};

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn fbx_with_takes() -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(common::asset("fbx"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fbx"))
        .filter(|p| !skelpack::import::load(p).unwrap().clips.is_empty())
        .collect();
    v.sort();
    v
}

/// Validator messages of severity error (0) or warning (1), by code.
fn serious(report: &Value) -> Vec<String> {
    report["issues"]["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter(|x| x["severity"].as_i64().is_some_and(|s| s <= 1))
                .map(|x| x["code"].as_str().unwrap_or("?").to_owned())
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn compressed_fbx_exports_validate_and_hold_the_tolerance_in_animeval_and_three_js() {
    let dir = tempfile::tempdir().unwrap();
    let mut failures = Vec::new();
    let files = fbx_with_takes();
    assert_eq!(
        files.len(),
        9,
        "every shared FBX file but the one without a take"
    );
    for input in &files {
        let name = input.file_stem().unwrap().to_string_lossy().into_owned();
        let conv = dir.path().join(format!("{name}.conv.glb"));
        let out = dir.path().join(format!("{name}.glb"));
        let c = skelpack(&["convert"], &[input, &conv]);
        assert!(c.status.success(), "convert {name}: {c:?}");
        let z = skelpack(&["compress", "-o"], &[&out, input]);
        assert!(z.status.success(), "compress {name}: {z:?}");
        // Tolerance and marker offset in force, scene units.
        let info = skelpack(&["inspect", "--json"], &[input]);
        let info: Value = serde_json::from_slice(&info.stdout).unwrap();
        let (tol, shell) = (
            info[0]["tolerance"].as_f64().unwrap(),
            info[0]["marker_offset"].as_f64().unwrap(),
        );

        let v = node_json("validate.mjs", &[&conv, &out], &[]);
        let (before, after) = (serious(&v[0]), serious(&v[1]));
        let new: Vec<&String> = after.iter().filter(|c| !before.contains(c)).collect();
        if !new.is_empty() {
            failures.push(format!("{name}: validator {new:?}"));
        }

        let e = Command::new("python3")
            .arg(root().join("../shared/tools/animeval.py"))
            .args([&conv, &out])
            .args(["--markers", "physical", "--player", "portable", "--json"])
            .args(["--shell", &shell.to_string()])
            .output()
            .expect("python3 with numpy");
        assert!(
            matches!(e.status.code(), Some(0) | Some(2)),
            "animeval {name}: {}",
            String::from_utf8_lossy(&e.stderr)
        );
        let report: Value = serde_json::from_slice(&e.stdout).unwrap();
        let anims = report["animations"].as_array().unwrap();
        assert!(!anims.is_empty(), "{name}: animeval measured no animation");
        for a in anims {
            let max = a["error"]["max"].as_f64().unwrap_or(f64::INFINITY);
            if max > tol {
                failures.push(format!("{name} '{}': animeval {max} > {tol}", a["name"]));
            }
        }

        let p = node_json(
            "player.mjs",
            &[&conv, &out],
            &["--json", "--shell", &shell.to_string()],
        );
        for key in ["joints_unmatched", "clips_missing"] {
            let missing = p[key].as_array().unwrap();
            if !missing.is_empty() {
                failures.push(format!("{name}: three.js {key} {missing:?}"));
            }
        }
        for c in p["clips"].as_array().unwrap() {
            for key in ["clean", "after_any"] {
                let max = c[key]["max"].as_f64().unwrap();
                if max > tol {
                    failures.push(format!(
                        "{name} '{}': three.js {key} {max} > {tol}",
                        c["name"]
                    ));
                }
            }
        }
        eprintln!(
            "{name}: three.js max {:.3e} (tolerance {tol:.3e})",
            p["max_clean"].as_f64().unwrap_or(f64::NAN)
        );
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn a_file_without_a_take_opens_and_says_so_but_has_nothing_to_export() {
    let input = common::asset("fbx/pab_arnaud.fbx");
    let i = skelpack(&["inspect"], &[&input]);
    assert!(i.status.success());
    let text = String::from_utf8_lossy(&i.stdout);
    assert!(text.contains("no take has keys"), "{text}");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.glb");
    let z = skelpack(&["compress", "-o"], &[&out, &input]);
    assert!(!z.status.success());
    let err = String::from_utf8_lossy(&z.stderr);
    let lines: Vec<&str> = err.lines().filter(|l| l.starts_with("error")).collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("pab_arnaud.fbx") && lines[0].contains("no clip"),
        "{err}"
    );
    assert!(!out.exists());
}
