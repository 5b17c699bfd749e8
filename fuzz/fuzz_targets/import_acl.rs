//! The `import_acl` target: its body is `entry::import_acl` (fuzz/entry.rs), which
//! `tests/fuzz_corpus.rs` also runs on every input of `fuzz/regressions/import_acl/`.
#![no_main]

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::import_acl(data));
