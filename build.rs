//! Build script: a fingerprint of the sources that decide a clip's compressed result, so the
//! result cache (`src/cache/`) never serves a result an older codec computed.
//!
//! Two fingerprints: the codec's (a clip result's key) and the whole tool's (a file report's
//! key, which also depends on the importers). Each is FNV-1a (64 bits) over the path and bytes of every file under the
//! directories below and `Cargo.lock` (the dependency versions, e.g. `glam`'s float math),
//! visited in sorted order. It changes whenever any of them changes; a clip's cache key adds
//! the clip's dense data and its resolved settings (`cache::key`).

use std::path::{Path, PathBuf};

/// What determines a compressed clip given its dense data and resolved settings.
const RESULT_SOURCES: &[&str] = &[
    "src/codec",
    "src/metric",
    "src/model",
    "src/container",
    "runtime/src",
    "Cargo.lock",
];

fn files(path: &Path, out: &mut Vec<PathBuf>) {
    if path.is_dir() {
        let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
            .map(|d| d.filter_map(|e| e.ok().map(|e| e.path())).collect())
            .unwrap_or_default();
        entries.sort();
        for e in entries {
            files(&e, out);
        }
    } else if path.is_file() {
        out.push(path.to_path_buf());
    }
}

fn fnv1a(hash: &mut u64, bytes: &[u8]) {
    for &b in bytes {
        *hash ^= u64::from(b);
        *hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
}

/// What determines a whole file's report given its bytes and settings: every source of the
/// tool (the importers, the settings, the report's own fields).
const REPORT_SOURCES: &[&str] = &["src", "runtime/src", "Cargo.lock"];

/// FNV-1a over the paths and bytes of every file under `sources`, in sorted order.
fn fingerprint(sources: &[&str]) -> u64 {
    let mut all = Vec::new();
    for s in sources {
        println!("cargo:rerun-if-changed={s}");
        files(Path::new(s), &mut all);
    }
    let mut hash = 0xcbf2_9ce4_8422_2325u64;
    for f in &all {
        fnv1a(&mut hash, f.to_string_lossy().replace('\\', "/").as_bytes());
        fnv1a(&mut hash, &[0]);
        fnv1a(&mut hash, &std::fs::read(f).unwrap_or_default());
        fnv1a(&mut hash, &[0]);
    }
    hash
}

fn main() {
    let codec = fingerprint(RESULT_SOURCES);
    println!("cargo:rustc-env=SKELPACK_CODEC_FINGERPRINT={codec:016x}");
    let report = fingerprint(REPORT_SOURCES);
    println!("cargo:rustc-env=SKELPACK_SOURCE_FINGERPRINT={report:016x}");
}
