//! The `compress` target: its body is `entry::compress` (fuzz/entry.rs), which
//! `tests/fuzz_corpus.rs` also runs on every input of `fuzz/regressions/compress/`.
#![no_main]

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::compress(data));
