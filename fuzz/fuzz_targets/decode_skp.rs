//! The `decode_skp` target: its body is `entry::decode_skp` (fuzz/entry.rs), which
//! `tests/fuzz_corpus.rs` also runs on every input of `fuzz/regressions/decode_skp/`.
#![no_main]

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::decode_skp(data));
