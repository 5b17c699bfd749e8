//! The fuzz targets' bodies, one function per target, shared by `fuzz/fuzz_targets/*.rs`
//! (libFuzzer, nightly) and `tests/fuzz_corpus.rs` (stable `cargo test`, which runs every
//! committed regression input of `fuzz/regressions/<target>/` through the same function).
//! Each returns normally or panics; a panic is a finding.
#![allow(dead_code)]

use std::path::Path;

use skelpack_runtime::{ClipLayout, Cursor, JointPose, Skp};

/// A target's body: one input, returns or panics.
pub type Body = fn(&[u8]);

/// Every target: its name (the folder of its inputs) and its body.
pub const TARGETS: &[(&str, Body)] = &[
    ("import_gltf", import_gltf),
    ("import_bvh", import_bvh),
    ("import_acl", import_acl),
    ("import_fbx", import_fbx),
    ("settings", settings),
    ("decode_skp", decode_skp),
    ("compress", compress),
];

/// An asset or a one-line error that names the file, never a panic.
fn import(path: &Path, data: &[u8]) -> Option<skelpack::import::Asset> {
    match skelpack::import::load_bytes(path, data) {
        Ok(a) => Some(a),
        Err(e) => {
            let line = e.to_string();
            assert!(!line.contains('\n'), "multi-line error: {line}");
            assert!(
                line.starts_with(&*path.to_string_lossy()),
                "unnamed: {line}"
            );
            None
        }
    }
}

/// glTF and GLB bytes through the importer. External buffer URIs resolve against a folder
/// that does not exist, so only `data:` URIs and the GLB BIN chunk feed data.
pub fn import_gltf(data: &[u8]) {
    import(Path::new("/nonexistent-skelpack-fuzz/input.gltf"), data);
}

/// BVH text through the importer.
pub fn import_bvh(data: &[u8]) {
    import(Path::new("/nonexistent-skelpack-fuzz/input.bvh"), data);
}

/// ACL SJSON bytes through the importer.
pub fn import_acl(data: &[u8]) {
    import(
        Path::new("/nonexistent-skelpack-fuzz/input.acl.sjson"),
        data,
    );
}

/// FBX bytes (binary or ASCII) through the importer, ufbx's C code included (cargo fuzz
/// builds it with ASan through `cc`'s CFLAGS).
pub fn import_fbx(data: &[u8]) {
    import(Path::new("/nonexistent-skelpack-fuzz/input.fbx"), data);
}

/// Settings text (TOML, or JSON when it starts with `{`): parsed and validated, or one
/// error of bounded length; what parses also serializes back.
pub fn settings(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    for name in ["input.skelpack.toml", "input.skelpack.json"] {
        let path = Path::new(name);
        match skelpack::settings::Settings::parse(text, path) {
            Ok(s) => {
                let _ = s.to_text(path);
            }
            Err(e) => {
                let line = e.to_string();
                assert!(!line.contains('\n'), "multi-line error: {line}");
            }
        }
    }
}

/// The samples a `compress` input may hold (joints × frames): small enough for thousands
/// of executions a second, large enough for every code path.
const COMPRESS_SAMPLES: usize = 20_000;

/// Any importable bytes (glTF / GLB when they start with `glTF` or `{`, BVH with
/// `HIERARCHY`, else ACL SJSON) imported and, when small, every clip compressed at the
/// default settings. What import accepts must compress, and the `.skp` holding it must be
/// accepted by the validating reader — the promise that no command writes, or fails to
/// write, what its report describes (docs/ROBUSTNESS.md, item 5).
pub fn compress(data: &[u8]) {
    let name = if data.starts_with(b"glTF") || data.starts_with(b"{") {
        "input.gltf"
    } else if data.starts_with(b"HIERARCHY") {
        "input.bvh"
    } else {
        "input.acl.sjson"
    };
    let path = Path::new("/nonexistent-skelpack-fuzz").join(name);
    let Some(asset) = import(&path, data) else {
        return;
    };
    let samples: usize = asset.clips.iter().map(|c| c.frame_count).sum();
    if asset.skeleton.len().saturating_mul(samples) > COMPRESS_SAMPLES {
        return;
    }
    let settings = skelpack::settings::Settings::default();
    let control = skelpack::codec::Control::new();
    let clips: Vec<_> = asset
        .clips
        .iter()
        .map(|clip| {
            let resolved = settings.resolve(&asset, &clip.name);
            skelpack::codec::compress(&asset.skeleton, clip, &resolved, &control)
                .expect("an imported clip compresses")
        })
        .collect();
    let bytes = skelpack::container::to_bytes(&asset.skeleton, &clips);
    if let Err(e) = skelpack::container::from_bytes(&bytes) {
        panic!("an imported file compressed to a .skp the reader refuses: {e}");
    }
}

/// `.skp` bytes through the validated decoder (the runtime crate, which the skelpack crate's
/// reader also uses), then every clip sampled at each frame, by random access and by the
/// forward cursor, in both clip layouts (prepared and compact), which must agree bit for
/// bit: an error or transforms, never a panic. The trailing CRC is recomputed over the
/// mutated body first, so mutations reach the parser behind it (a wrong CRC is refused
/// before any parsing; `tests/mutation.rs` covers that).
pub fn decode_skp(input: &[u8]) {
    let mut bytes = input.to_vec();
    if bytes.len() >= 4 {
        let body = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..body]);
        bytes[body..].copy_from_slice(&crc.to_le_bytes());
    }
    let data = bytes.as_slice();
    // The full reader (skeleton and clips as the encoder's types) must agree on acceptance.
    let full = skelpack::container::from_bytes(data);
    let Ok(skp) = Skp::open(data) else {
        assert!(
            full.is_err(),
            "the runtime refused what the reader accepted"
        );
        return;
    };
    assert!(full.is_ok(), "the reader refused what the runtime accepted");
    let compact = Skp::open_with(data, ClipLayout::Compact).expect("same validation");
    let mut out = vec![JointPose::default(); skp.joint_count()];
    let mut small = out.clone();
    for c in 0..skp.clip_count() {
        let (clip, compact) = (skp.clip(c), compact.clip(c));
        let mut cursor = Cursor::new(clip);
        let mut compact_cursor = Cursor::new(compact);
        for f in 0..clip.frame_count().min(64) {
            clip.sample(f as f32 + 0.5, &mut out);
            compact.sample(f as f32 + 0.5, &mut small);
            assert!(same(&out, &small), "layouts differ at clip {c} frame {f}.5");
            cursor.sample(f as f32, &mut out);
            compact_cursor.sample(f as f32, &mut small);
            assert!(same(&out, &small), "cursors differ at clip {c} frame {f}");
        }
    }
}

/// Bit for bit equal poses (NaN-safe).
fn same(a: &[JointPose], b: &[JointPose]) -> bool {
    let bits = |p: &JointPose| {
        let mut v = [0u32; 10];
        for (d, x) in v
            .iter_mut()
            .zip(p.translation.iter().chain(&p.rotation).chain(&p.scale))
        {
            *d = x.to_bits();
        }
        v
    };
    a.iter().zip(b).all(|(x, y)| bits(x) == bits(y))
}
