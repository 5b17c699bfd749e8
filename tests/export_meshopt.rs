//! `skelpack compress --meshopt`: EXT_meshopt_compression on the animation data (rotations
//! through the QUATERNION filter where verified), the fallback buffer as the extension
//! specifies, played by three.js' MeshoptDecoder.
//!
//! animeval.py cannot decode meshopt here (its Node helper is not in the shared kit), so it
//! judges the decoded equivalent (the same file with its views decoded by skelpack), and the
//! test proves that meshoptimizer's reference decoder (tools/peers/decode_meshopt.mjs)
//! decodes the file to exactly the same animation data.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use skelpack::export::{GltfDoc, GltfFormat};

fn skelpack(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(args)
        .output()
        .expect("run skelpack")
}

/// Compresses `src` to `out` with `extra` flags; the `--json` report.
fn compress(src: &Path, out: &Path, extra: &[&str]) -> Value {
    let mut args = vec![
        "compress",
        src.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
        "--json",
        "--force",
    ];
    args.extend_from_slice(extra);
    let o = skelpack(&args);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

fn raw_json(path: &Path) -> Value {
    let bytes = std::fs::read(path).unwrap();
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    serde_json::from_slice(&bytes[20..20 + n]).unwrap()
}

/// Every animation sampler's (input, output) data, decoded, in channel order.
fn sampler_data(doc: &GltfDoc) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    for a in doc.array("animations") {
        for s in a["samplers"].as_array().unwrap() {
            for key in ["input", "output"] {
                out.push(accessor_bytes(doc, s[key].as_u64().unwrap() as usize));
            }
        }
    }
    out
}

fn accessor_bytes(doc: &GltfDoc, ai: usize) -> Vec<u8> {
    let a = &doc.array("accessors")[ai];
    let comp = match a["componentType"].as_u64().unwrap() {
        5120 | 5121 => 1,
        5122 | 5123 => 2,
        _ => 4,
    };
    let n = match a["type"].as_str().unwrap() {
        "SCALAR" => 1,
        "VEC3" => 3,
        _ => 4,
    };
    let count = a["count"].as_u64().unwrap() as usize;
    let v = &doc.array("bufferViews")[a["bufferView"].as_u64().unwrap() as usize];
    let buf = &doc.buffers[v["buffer"].as_u64().unwrap() as usize];
    let start = v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize
        + a.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let stride = v
        .get("byteStride")
        .and_then(Value::as_u64)
        .map_or(comp * n, |s| s as usize);
    (0..count)
        .flat_map(|i| buf[start + i * stride..start + i * stride + comp * n].to_vec())
        .collect()
}

fn sum(report: &Value, key: &str) -> u64 {
    report
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a[key].as_u64().unwrap())
        .sum()
}

fn decoded_copy(path: &Path, dir: &Path) -> PathBuf {
    let out = dir.join(format!(
        "{}.decoded.glb",
        path.file_stem().unwrap().to_string_lossy()
    ));
    let doc = GltfDoc::read(path).unwrap();
    std::fs::write(&out, doc.to_bytes(GltfFormat::Binary).unwrap()).unwrap();
    out
}

#[test]
fn meshopt_exports_are_smaller_decode_alike_and_hold_the_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["CesiumMan.glb", "Fox.glb", "RobotExpressive.glb"] {
        let src = common::asset(name);
        let plain = dir.path().join(format!("{name}.plain.glb"));
        let packed = dir.path().join(format!("{name}.meshopt.glb"));
        let r_plain = compress(&src, &plain, &[]);
        let r_packed = compress(&src, &packed, &["--meshopt"]);
        // The extension is required and the fallback buffer holds no data.
        let json = raw_json(&packed);
        assert!(
            json["extensionsRequired"]
                .as_array()
                .unwrap()
                .iter()
                .any(|e| e == "EXT_meshopt_compression"),
            "{name}"
        );
        let fallback: Vec<&Value> = json["buffers"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|b| {
                b.pointer("/extensions/EXT_meshopt_compression/fallback")
                    == Some(&Value::Bool(true))
            })
            .collect();
        assert_eq!(fallback.len(), 1, "{name}: one fallback buffer");
        assert!(
            fallback[0].get("uri").is_none(),
            "{name}: fallback has data"
        );
        // meshoptimizer's reference decoder reads the same animation data as skelpack's.
        let reference = dir.path().join(format!("{name}.reference.glb"));
        let o = Command::new("node")
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/peers/decode_meshopt.mjs"))
            .arg(&packed)
            .arg(&reference)
            .output()
            .expect("node");
        assert!(
            o.status.success(),
            "decode_meshopt.mjs (run `npm ci` in tools/peers): {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let ours = GltfDoc::read(&packed).unwrap();
        let theirs = GltfDoc::read(&reference).unwrap();
        assert_eq!(
            sampler_data(&ours),
            sampler_data(&theirs),
            "{name}: decoders differ"
        );
        let (raw, stored) = (
            sum(&r_packed, "exported_bytes"),
            sum(&r_packed, "stored_bytes"),
        );
        assert!(
            stored < raw,
            "{name}: stored {stored} B not below raw {raw} B"
        );
        if name == "CesiumMan.glb" {
            // Issue 14, rest channels dropped (as the optimizers compared drop them): below
            // 4,300 B stored (4,070 before the accessor order in the view, then 3,989, which
            // was 0.1003 mm at `animeval --oversample 64` beside a key under `raw`: issue 24
            // item 3's `RawLimit` keeps some chains SHORT, 4,289 B and 0.0940 mm). By default
            // the one-key rest channels are kept (issue 24 item 2; docs/EXPORT.md).
            let drop = dir.path().join("CesiumMan.drop.glb");
            let r_drop = compress(&src, &drop, &["--meshopt", "--drop-rest-channels"]);
            let dropped = sum(&r_drop, "stored_bytes");
            assert!(dropped < 4_300, "{name}: stored {dropped} B");
        }
        assert!(
            stored < sum(&r_plain, "exported_bytes"),
            "{name}: stored above the plain export"
        );
        let file = |p: &Path| std::fs::metadata(p).unwrap().len();
        assert!(
            file(&packed) < file(&plain),
            "{name}: the meshopt file is larger"
        );
        for a in r_packed.as_array().unwrap() {
            assert!(a["worst_ratio"].as_f64().unwrap() <= 1.0, "{name}: {a}");
        }
        // animeval on the decoded equivalent: within the tolerance under portable rules.
        let shell = r_packed[0]["marker_offset"].as_f64().unwrap() as f32;
        let tol = r_packed[0]["tolerance"].as_f64().unwrap();
        if let Some(report) =
            common::animeval_portable(&src, &decoded_copy(&packed, dir.path()), shell)
        {
            let max = common::animeval_max(&report);
            assert!(max <= tol, "{name}: animeval {max} > {tol}");
        }
    }
}

#[test]
fn fallback_mode_keeps_the_data_and_only_uses_the_extension() {
    let dir = tempfile::tempdir().unwrap();
    let src = common::asset("CesiumMan.glb");
    let plain = dir.path().join("plain.glb");
    let kept = dir.path().join("kept.glb");
    compress(&src, &plain, &[]);
    let r = compress(&src, &kept, &["--meshopt", "fallback"]);
    let json = raw_json(&kept);
    assert!(json.get("extensionsRequired").is_none());
    assert!(
        json["extensionsUsed"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == "EXT_meshopt_compression")
    );
    assert!(sum(&r, "stored_bytes") < sum(&r, "exported_bytes"));
    // A loader without meshopt reads the views as they are: the same data a meshopt
    // loader decodes.
    let mut doc = GltfDoc::read(&kept).unwrap();
    let decoded = sampler_data(&doc);
    let bytes = std::fs::read(&kept).unwrap();
    let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
    let bin_at = 20 + n + 8;
    doc.json = json.clone();
    doc.buffers = vec![bytes[bin_at..].to_vec()];
    for v in doc.array_mut("bufferViews") {
        v.as_object_mut().unwrap().remove("extensions");
    }
    assert_eq!(sampler_data(&doc), decoded);
    let _ = plain;
}

/// A looser preset never gives a larger file than a tighter one on the same clip: `ozz`
/// (1 mm at 10 cm markers) against `acl` (0.1 mm at 3 cm) on every shared glTF asset, per
/// animation (raw bytes) and per file (meshopt-stored bytes).
#[test]
fn a_looser_preset_never_gives_a_larger_export() {
    let dir = tempfile::tempdir().unwrap();
    for src in common::gltf_assets() {
        let name = src.file_name().unwrap().to_string_lossy().to_string();
        for extra in [&[][..], &["--meshopt"][..]] {
            let report = |preset: &str| {
                let out = dir.path().join(format!("{name}.{preset}.glb"));
                let mut args = vec!["--preset", preset];
                args.extend_from_slice(extra);
                compress(&src, &out, &args)
            };
            let (tight, loose) = (report("acl"), report("ozz"));
            // Raw exports choose layouts by raw bytes: per animation. Meshopt exports choose
            // them by compressed size: per file, stored (below).
            let per_animation = if extra.is_empty() {
                tight.as_array().unwrap().len()
            } else {
                0
            };
            for (t, l) in tight
                .as_array()
                .unwrap()
                .iter()
                .zip(loose.as_array().unwrap())
                .take(per_animation)
            {
                assert!(
                    l["exported_bytes"].as_u64() <= t["exported_bytes"].as_u64(),
                    "{name} '{}' {extra:?}: ozz {} B > acl {} B",
                    t["name"],
                    l["exported_bytes"],
                    t["exported_bytes"]
                );
            }
            // Stored bytes pro-rate compressed views shared by all clips: per file.
            let (st, sl) = (sum(&tight, "stored_bytes"), sum(&loose, "stored_bytes"));
            assert!(sl <= st, "{name} {extra:?}: ozz stores {sl} B > acl {st} B");
        }
    }
}
