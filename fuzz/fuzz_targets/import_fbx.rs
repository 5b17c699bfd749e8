//! The `import_fbx` target: its body is `entry::import_fbx` (fuzz/entry.rs), which
//! `tests/fuzz_corpus.rs` also runs on every input of `fuzz/regressions/import_fbx/`.
//! Build it with `CFLAGS=-fsanitize=address` so `cc` compiles ufbx.c with ASan too.
#![no_main]

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::import_fbx(data));
