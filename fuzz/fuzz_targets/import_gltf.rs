//! glTF and GLB bytes through the importer: an asset or a one-line error, never a panic.
//! External buffer URIs resolve against a folder that does not exist, so only `data:`
//! URIs and the GLB BIN chunk feed data.
#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let path = std::path::Path::new("/nonexistent-skelpack-fuzz/input.gltf");
    if let Err(e) = skelpack::import::load_bytes(path, data) {
        assert!(!e.to_string().contains('\n'), "multi-line error: {e}");
    }
});
