//! BVH bytes through the importer: an asset or a one-line error, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("/nonexistent-skelpack-fuzz/input.bvh");
    if let Err(e) = skelpack::import::load_bytes(path, data) {
        assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
    }
});
