//! Malformed inputs give one clear line naming the file and the problem, exit code 2, and
//! never a panic.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

fn inspect(path: &Path) -> (i32, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .arg("inspect")
        .arg(path)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        !stderr.contains("panicked"),
        "panic on {}: {stderr}",
        path.display()
    );
    (out.status.code().unwrap_or(-1), stderr)
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

fn expect_error(path: &Path, needle: &str) {
    let (code, stderr) = inspect(path);
    assert_eq!(code, 2, "exit code for {}: {stderr}", path.display());
    let line = stderr
        .lines()
        .find(|l| l.starts_with("error:"))
        .unwrap_or_else(|| panic!("no error line: {stderr}"));
    let name = path.file_name().unwrap().to_string_lossy();
    assert!(
        line.contains(&*name),
        "error does not name the file: {line}"
    );
    assert!(
        line.to_lowercase().contains(&needle.to_lowercase()),
        "expected '{needle}' in: {line}"
    );
}

const BVH: &str = "HIERARCHY\nROOT a\n{\n OFFSET 0 0 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n JOINT b\n {\n  OFFSET 0 1 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  End Site\n  {\n   OFFSET 0 1 0\n  }\n }\n}\nMOTION\nFrames: 2\nFrame Time: 0.0333333\n0 0 0 0 0 0 0 0 0\n0 0 0 0 0 0 0 0 0\n";

#[test]
fn missing_file() {
    expect_error(Path::new("/nonexistent/dir/missing.glb"), "cannot read");
}

#[test]
fn not_a_gltf() {
    let d = tempfile::tempdir().unwrap();
    expect_error(
        &write(d.path(), "text.glb", b"hello, this is not a model"),
        "not a valid",
    );
}

#[test]
fn truncated_glb() {
    let d = tempfile::tempdir().unwrap();
    let bytes = std::fs::read(common::asset("CesiumMan.glb")).unwrap();
    for cut in [10, 2000, bytes.len() / 2, bytes.len() - 7] {
        let p = write(d.path(), &format!("cut{cut}.glb"), &bytes[..cut]);
        let (code, stderr) = inspect(&p);
        assert_eq!(code, 2, "cut at {cut}: {stderr}");
        assert!(stderr.contains(&format!("cut{cut}.glb")), "{stderr}");
    }
}

/// A rigged glTF without animations opens (the skeleton in its rest pose, said in a
/// warning), as an FBX file without takes does and as `convert` writes one; compressing it
/// says there is nothing to compress.
#[test]
fn gltf_without_animations_opens_in_its_rest_pose() {
    let d = tempfile::tempdir().unwrap();
    let json = r#"{"asset":{"version":"2.0"},"nodes":[{"name":"a","children":[1]},{"name":"b","translation":[0,1,0]}],"skins":[{"joints":[0,1]}],"scenes":[{"nodes":[0]}]}"#;
    let path = write(d.path(), "static.gltf", json.as_bytes());
    let out = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .arg("inspect")
        .arg(&path)
        .output()
        .unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{text}");
    assert!(text.contains("2 joints"), "{text}");
    assert!(
        text.contains("no animations: the skeleton in its rest pose only"),
        "{text}"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(["compress"])
        .arg(&path)
        .arg("-o")
        .arg(d.path().join("static.skp"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    println!("compress: exit {:?}, {stderr}", out.status.code());
}

#[test]
fn bvh_with_wrong_value_count() {
    let d = tempfile::tempdir().unwrap();
    let bad = BVH.replacen("0 0 0 0 0 0 0 0 0\n", "0 0 0 0 0 0 0 0\n", 1);
    expect_error(
        &write(d.path(), "short.bvh", bad.as_bytes()),
        "has 8 values",
    );
}

#[test]
fn bvh_with_nan() {
    let d = tempfile::tempdir().unwrap();
    let bad = BVH.replacen("0 0 0 0 0 0 0 0 0\n", "0 0 nan 0 0 0 0 0 0\n", 1);
    expect_error(&write(d.path(), "nan.bvh", bad.as_bytes()), "not finite");
}

#[test]
fn sjson_with_unknown_parent() {
    let d = tempfile::tempdir().unwrap();
    let text = "clip = { num_samples = 1 sample_rate = 30 }\nbones = [ { name = \"a\" parent = \"\" } { name = \"b\" parent = \"ghost\" } ]\ntracks = [ ]\n";
    expect_error(
        &write(d.path(), "orphan.acl.sjson", text.as_bytes()),
        "unknown parent 'ghost'",
    );
}

#[test]
fn sjson_with_nan_sample() {
    let d = tempfile::tempdir().unwrap();
    let text = "clip = { num_samples = 1 sample_rate = 30 }\nbones = [ { name = \"a\" parent = \"\" } ]\ntracks = [ { name = \"a\" translations = [ [ 0.0 nan 1.0 ] ] } ]\n";
    expect_error(
        &write(d.path(), "nan.acl.sjson", text.as_bytes()),
        "not finite",
    );
}

#[test]
fn gltf_with_nan_keys() {
    // SimpleSkin with its animation output buffer overwritten by NaNs.
    let d = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(common::asset("SimpleSkin.gltf")).unwrap();
    let mut doc: serde_json::Value = serde_json::from_str(&text).unwrap();
    let out_acc = doc["animations"][0]["samplers"][0]["output"]
        .as_u64()
        .unwrap() as usize;
    let acc = doc["accessors"][out_acc].clone();
    let view = doc["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize].clone();
    let buf_index = view["buffer"].as_u64().unwrap() as usize;
    let uri = doc["buffers"][buf_index]["uri"]
        .as_str()
        .unwrap()
        .to_owned();
    use base64::Engine;
    let b64 = uri.split(',').nth(1).unwrap();
    let mut data = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let start = view["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    for i in 0..4 {
        data[start + 4 * i..start + 4 * i + 4].copy_from_slice(&f32::NAN.to_le_bytes());
    }
    doc["buffers"][buf_index]["uri"] = format!(
        "data:application/octet-stream;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(&data)
    )
    .into();
    expect_error(
        &write(
            d.path(),
            "nan.gltf",
            serde_json::to_string(&doc).unwrap().as_bytes(),
        ),
        "not finite",
    );
}
