//! FBX bytes (binary or ASCII) through the importer, ufbx's C code included (cargo fuzz
//! builds it with ASan through `cc`'s CFLAGS): an asset or a one-line error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("/nonexistent-skelpack-fuzz/input.fbx");
    if let Err(e) = skelpack::import::load_bytes(path, data) {
        assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
    }
});
