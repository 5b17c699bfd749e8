//! The fuzz targets' regression corpora under stable `cargo test`: every file of
//! `fuzz/regressions/<target>/` (minimized campaign corpora and the hostile inputs of issue
//! 24, committed) runs through the same function the libFuzzer target calls
//! (`fuzz/entry.rs`). A panic fails the test with the file's name; an abort (an allocation
//! beyond the machine) fails it too, as the test process dies.

#[path = "../fuzz/entry.rs"]
mod entry;

use std::path::PathBuf;

fn regressions() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions")
}

#[test]
fn every_committed_fuzz_input_runs_without_a_panic() {
    let mut total = 0;
    let mut failures = Vec::new();
    for (target, body) in entry::TARGETS {
        let dir = regressions().join(target);
        let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        assert!(!files.is_empty(), "{}: no inputs", dir.display());
        for f in files {
            let data = std::fs::read(&f).unwrap();
            total += 1;
            if std::panic::catch_unwind(|| body(&data)).is_err() {
                failures.push(f.display().to_string());
            }
        }
    }
    assert!(failures.is_empty(), "panicked on: {failures:#?}");
    eprintln!("{total} fuzz inputs ran clean");
}
