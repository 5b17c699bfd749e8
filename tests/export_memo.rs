//! The clip memo of repeated compressed-glTF exports (`skelpack watch`, "Export on save"):
//! after a save that changed one clip, the others' encodings come from the memo and the
//! file written is byte for byte the one a fresh export writes.

use std::path::Path;

use skelpack::export::clip_memo::ClipMemo;
use skelpack::export::{GltfOptions, compress_to_gltf, compress_to_gltf_memo};
use skelpack::settings::Settings;

/// A GLB with the first key of `clip`'s first translation (else
/// first) channel moved by `by`.
fn bump_key(glb: &[u8], clip: &str, by: f32) -> Vec<u8> {
    let mut b = glb.to_vec();
    let jlen = u32::from_le_bytes(b[12..16].try_into().unwrap()) as usize;
    let doc: serde_json::Value = serde_json::from_slice(&b[20..20 + jlen]).unwrap();
    let bin = 20 + jlen + 8;
    let anim = doc["animations"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["name"] == clip)
        .unwrap();
    let channels = anim["channels"].as_array().unwrap();
    let ch = channels
        .iter()
        .find(|c| c["target"]["path"] == "translation")
        .unwrap_or(&channels[0]);
    let sampler = &anim["samplers"][ch["sampler"].as_u64().unwrap() as usize];
    let acc = &doc["accessors"][sampler["output"].as_u64().unwrap() as usize];
    let bv = &doc["bufferViews"][acc["bufferView"].as_u64().unwrap() as usize];
    let at = bin
        + bv["byteOffset"].as_u64().unwrap_or(0) as usize
        + acc["byteOffset"].as_u64().unwrap_or(0) as usize;
    let v = f32::from_le_bytes(b[at..at + 4].try_into().unwrap()) + by;
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
    b
}

fn export(src: &Path, out: &Path, memo: Option<&ClipMemo>) -> Vec<u8> {
    let asset = skelpack::import::load(src).unwrap();
    let settings = Settings::default();
    let options = GltfOptions::default();
    match memo {
        Some(m) => compress_to_gltf_memo(&asset, &settings, out, &options, false, Some(m)),
        None => compress_to_gltf(&asset, &settings, out, &options, false),
    }
    .unwrap();
    std::fs::read(out).unwrap()
}

#[test]
fn a_changed_clip_is_encoded_again_and_the_others_come_from_the_memo() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("char.glb");
    let out = dir.path().join("out.glb");
    let original = skelpack::character::DEFAULT_CHARACTER_GLB;
    std::fs::write(&src, original).unwrap();
    let memo = ClipMemo::default();
    export(&src, &out, Some(&memo));
    assert_eq!(memo.finish(), 0, "nothing to reuse on the first export");

    // The animator moves one key of Walk and saves.
    let modified = bump_key(original, "Walk", 0.01);
    assert_ne!(modified, original);
    std::fs::write(&src, &modified).unwrap();
    let with_memo = export(&src, &out, Some(&memo));
    let reused = memo.finish();
    let asset = skelpack::import::load(&src).unwrap();
    assert!(
        reused >= 1 && reused < asset.clips.len() * 4,
        "the unchanged clips' encodings are reused, Walk's is not: {reused}"
    );
    let fresh = export(&src, &dir.path().join("fresh.glb"), None);
    assert_eq!(
        with_memo, fresh,
        "the memo changes nothing in the file written"
    );

    // Saved again unchanged: every encoding comes from the memo, the same file again.
    let again = export(&src, &out, Some(&memo));
    assert!(
        memo.finish() > reused,
        "all clips reused on an unchanged save"
    );
    assert_eq!(again, fresh);
}

/// RobotExpressive: its clips key different properties, so every clip is checked after
/// every other (`clip_switch`) and re-encoded at tightened tolerances where it misses. After
/// a save that moved a key of Dance, the pairs of the other clips and their re-encodings come
/// from the memo, and the file is byte for byte a fresh export's.
#[test]
fn clip_switch_pairs_and_reencodings_come_from_the_memo() {
    let robot = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/RobotExpressive.glb");
    let original = std::fs::read(&robot).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("robot.glb");
    let out = dir.path().join("out.glb");
    std::fs::write(&src, &original).unwrap();
    let memo = ClipMemo::default();
    export(&src, &out, Some(&memo));
    assert_eq!(
        memo.pair_hits(),
        0,
        "no pair measured before the first export"
    );
    memo.finish();

    let modified = bump_key(&original, "Dance", 0.01);
    std::fs::write(&src, &modified).unwrap();
    let with_memo = export(&src, &out, Some(&memo));
    let pairs = memo.pair_hits();
    let reused = memo.finish();
    let clips = skelpack::import::load(&src).unwrap().clips.len();
    assert!(pairs > 0, "the pairs without Dance come from the memo");
    assert!(
        reused > clips - 1,
        "the other clips and their tightened re-encodings are reused: {reused}"
    );
    let fresh = export(&src, &dir.path().join("fresh.glb"), None);
    assert_eq!(
        with_memo, fresh,
        "the memo changes nothing in the file written"
    );
}
