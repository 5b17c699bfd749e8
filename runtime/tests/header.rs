//! The committed C header is what cbindgen generates from the library today.
//! `SKELPACK_BLESS=1` rewrites it instead of failing.

use std::path::PathBuf;

#[test]
fn committed_header_matches_the_library() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let config = cbindgen::Config::from_file(dir.join("cbindgen.toml")).unwrap();
    let bindings = cbindgen::Builder::new()
        .with_config(config)
        .with_src(dir.join("src/capi.rs"))
        .with_src(dir.join("src/clip.rs"))
        .generate()
        .expect("cbindgen generates the header");
    let mut generated = Vec::new();
    bindings.write(&mut generated);
    let path = dir.join("include/skelpack.h");
    if std::env::var_os("SKELPACK_BLESS").is_some() {
        std::fs::write(&path, &generated).unwrap();
    }
    let committed = std::fs::read(&path).unwrap_or_default();
    assert!(
        committed == generated,
        "include/skelpack.h differs from the library's API: regenerate it with \
         SKELPACK_BLESS=1 cargo test --release -p skelpack-runtime --test header\n\n{}",
        String::from_utf8_lossy(&generated)
    );
    for f in [
        "skp_open",
        "skp_close",
        "skp_joint_info",
        "skp_clip_info",
        "skp_sample",
        "skp_cursor_sample",
        "skp_cursor_destroy",
    ] {
        assert!(String::from_utf8_lossy(&generated).contains(f), "{f}");
    }
}
