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

/// The committed cache seeds are real entries of `entry::CACHE_BVH`'s clip (made by
/// `skelpack report --cache` and `compress -o x.glb --cache` on that file), so mutations of
/// them reach the decoders' depths: each must still be accepted as it is. When an entry format
/// changes, make them again that way.
#[test]
fn the_cache_seeds_are_accepted_entries() {
    use skelpack::cache::{entry as clip_entry, file_report, gltf_export};
    let dir = regressions().join("cache_entry");
    let read = |name: &str| std::fs::read(dir.join(name)).unwrap();
    let key = |bytes: &[u8], at: usize| -> [u8; 32] { bytes[at..at + 32].try_into().unwrap() };
    let skeleton = skelpack::import::load_bytes(
        std::path::Path::new("cache.bvh"),
        entry::CACHE_BVH.as_bytes(),
    )
    .unwrap()
    .skeleton;
    let clip = read("seed-clip-result");
    clip_entry::decode(&key(&clip, 8), &clip, &skeleton).expect("the clip-result seed");
    let report = read("seed-file-report");
    file_report::decode(&key(&report, 4), &report).expect("the file-report seed");
    let export = read("seed-gltf-export");
    gltf_export::decode(&key(&export, 4), &export, "glb").expect("the glTF-export seed");
}
