//! The `settings` target: its body is `entry::settings` (fuzz/entry.rs), which
//! `tests/fuzz_corpus.rs` also runs on every input of `fuzz/regressions/settings/`.
#![no_main]

#[path = "../entry.rs"]
mod entry;

libfuzzer_sys::fuzz_target!(|data: &[u8]| entry::settings(data));
