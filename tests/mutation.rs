//! A bounded, seeded mutation run over the shared assets (CI's fuzzing): truncations, bit
//! flips, byte runs, huge counts, NaN / inf, edited JSON fields and text lines. Every
//! outcome must be an asset or a one-line error naming the file: no panic (caught per case),
//! no case over [`CASE_SECONDS`] (a watchdog aborts), no allocation beyond [`MEMORY_CAP`]
//! (a counting allocator refuses it). `SKELPACK_MUTATIONS=N` sets the cases per seed file.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::io::Write;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Live heap bytes the whole test may hold (2 GiB).
const MEMORY_CAP: usize = 2 << 30;
/// The longest one case may take before the watchdog aborts the run.
const CASE_SECONDS: u64 = 20;
/// Cases per seed file by default.
const DEFAULT_CASES: usize = 2000;

static LIVE: AtomicUsize = AtomicUsize::new(0);
/// The running case (1-based; 0 between cases) and when it started (ms since the run began).
static CASE: AtomicU64 = AtomicU64::new(0);
static CASE_START_MS: AtomicU64 = AtomicU64::new(0);

struct Capped;

/// Writes "mutation case N: WHAT" to stderr without allocating.
fn report_case(what: &[u8]) {
    let mut digits = [0u8; 20];
    let mut n = CASE.load(Ordering::Relaxed);
    let mut i = digits.len();
    loop {
        i -= 1;
        digits[i] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    let mut e = std::io::stderr();
    let _ = e.write_all(b"\nmutation case ");
    let _ = e.write_all(&digits[i..]);
    let _ = e.write_all(b": ");
    let _ = e.write_all(what);
    let _ = e.write_all(b"\n");
}

fn reserve(n: usize) -> bool {
    let now = LIVE.fetch_add(n, Ordering::Relaxed) + n;
    if now > MEMORY_CAP {
        LIVE.fetch_sub(n, Ordering::Relaxed);
        report_case(b"allocation over the memory cap (rerun with that case to reproduce)");
        return false;
    }
    true
}

unsafe impl GlobalAlloc for Capped {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        if !reserve(l.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc(l) }
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        if !reserve(l.size()) {
            return std::ptr::null_mut();
        }
        unsafe { System.alloc_zeroed(l) }
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        LIVE.fetch_sub(l.size(), Ordering::Relaxed);
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, new: usize) -> *mut u8 {
        if new > l.size() && !reserve(new - l.size()) {
            return std::ptr::null_mut();
        }
        let q = unsafe { System.realloc(p, l, new) };
        if q.is_null() {
            if new > l.size() {
                LIVE.fetch_sub(new - l.size(), Ordering::Relaxed);
            }
        } else if new < l.size() {
            LIVE.fetch_sub(l.size() - new, Ordering::Relaxed);
        }
        q
    }
}

#[global_allocator]
static ALLOC: Capped = Capped;

/// xorshift64*: small, seeded, reproducible.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len())]
    }
}

/// Numbers that break naive importers.
const HOSTILE_NUMBERS: &[&str] = &[
    "0",
    "-1",
    "1e39",
    "-1e39",
    "nan",
    "inf",
    "1e30",
    "999999999",
    "4294967295",
    "18446744073709551615",
    "2147483648",
    "0.0",
    "3",
    "1e-40",
    "65536",
];

/// Values put into JSON fields.
fn hostile_json(r: &mut Rng) -> Value {
    match r.below(12) {
        0 => Value::from(-1),
        1 => Value::from(0),
        2 => Value::from(1),
        3 => Value::from(u32::MAX),
        4 => Value::from(u64::MAX),
        5 => Value::from(1e30),
        6 => Value::from(5126),
        7 => Value::from(5121),
        8 => Value::from(r.below(40)),
        9 => Value::from("SCALAR"),
        10 => Value::Array(vec![Value::from(r.below(8))]),
        _ => Value::from(2147483648u64),
    }
}

/// A random numeric, string or array leaf of `v` replaced, or a key removed.
fn mutate_json(v: &mut Value, r: &mut Rng) {
    let mut leaves = Vec::new();
    collect_paths(v, &mut Vec::new(), &mut leaves);
    if leaves.is_empty() {
        return;
    }
    let path = r.pick(&leaves).clone();
    let mut cur = &mut *v;
    for (i, k) in path.iter().enumerate() {
        let last = i + 1 == path.len();
        if last
            && r.below(6) == 0
            && let (Value::Object(m), Key::Name(n)) = (&mut *cur, k)
        {
            m.remove(n);
            return;
        }
        cur = match (cur, k) {
            (Value::Object(m), Key::Name(n)) => m.get_mut(n).unwrap(),
            (Value::Array(a), Key::Index(i)) => &mut a[*i],
            _ => unreachable!("paths come from the same value"),
        };
    }
    *cur = hostile_json(r);
}

#[derive(Clone)]
enum Key {
    Name(String),
    Index(usize),
}

fn collect_paths(v: &Value, path: &mut Vec<Key>, out: &mut Vec<Vec<Key>>) {
    match v {
        Value::Object(m) => {
            for (k, x) in m {
                path.push(Key::Name(k.clone()));
                collect_paths(x, path, out);
                path.pop();
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate().take(64) {
                path.push(Key::Index(i));
                collect_paths(x, path, out);
                path.pop();
            }
        }
        _ => out.push(path.clone()),
    }
}

/// GLB: the JSON chunk and the BIN chunk, if the bytes are a well-formed GLB.
fn split_glb(b: &[u8]) -> Option<(Value, Vec<u8>)> {
    let u32_at = |o: usize| Some(u32::from_le_bytes(b.get(o..o + 4)?.try_into().ok()?) as usize);
    let jlen = u32_at(12)?;
    let json = serde_json::from_slice(b.get(20..20 + jlen)?).ok()?;
    let bin_at = 20 + jlen;
    let bin = match u32_at(bin_at) {
        Some(blen) => b.get(bin_at + 8..bin_at + 8 + blen)?.to_vec(),
        None => Vec::new(),
    };
    Some((json, bin))
}

fn join_glb(json: &Value, bin: &[u8]) -> Vec<u8> {
    let mut j = serde_json::to_vec(json).unwrap();
    while !j.len().is_multiple_of(4) {
        j.push(b' ');
    }
    let mut out = Vec::new();
    let total = 12 + 8 + j.len() + if bin.is_empty() { 0 } else { 8 + bin.len() };
    out.extend_from_slice(b"glTF");
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(j.len() as u32).to_le_bytes());
    out.extend_from_slice(b"JSON");
    out.extend_from_slice(&j);
    if !bin.is_empty() {
        out.extend_from_slice(&(bin.len() as u32).to_le_bytes());
        out.extend_from_slice(b"BIN\0");
        out.extend_from_slice(bin);
    }
    out
}

/// One mutation of `seed` (bytes of a file of `kind`).
fn mutate(seed: &[u8], kind: &str, r: &mut Rng) -> Vec<u8> {
    let mut b = seed.to_vec();
    let text = kind != "glb";
    match r.below(if text { 8 } else { 6 }) {
        0 => b.truncate(r.below(b.len())),
        1 => {
            for _ in 0..1 + r.below(8) {
                let i = r.below(b.len());
                b[i] ^= 1 << r.below(8);
            }
        }
        2 => {
            let i = r.below(b.len());
            let n = (1 + r.below(16)).min(b.len() - i);
            let fill = *r.pick(&[0u8, 0xff, 0x7f, 0x80]);
            b[i..i + n].fill(fill);
        }
        3 | 4 if kind == "glb" || kind == "gltf" => {
            let parsed = if kind == "glb" {
                split_glb(&b)
            } else {
                serde_json::from_slice(&b).ok().map(|j| (j, Vec::new()))
            };
            if let Some((mut json, bin)) = parsed {
                for _ in 0..1 + r.below(3) {
                    mutate_json(&mut json, r);
                }
                b = if kind == "glb" {
                    join_glb(&json, &bin)
                } else {
                    serde_json::to_vec(&json).unwrap()
                };
            }
        }
        5 if kind == "glb" => {
            // A huge or tiny chunk length.
            let at = *r.pick(&[8usize, 12, 16]);
            let v = *r.pick(&[0u32, 1, u32::MAX, 0x7fff_ffff]);
            if b.len() >= at + 4 {
                b[at..at + 4].copy_from_slice(&v.to_le_bytes());
            }
        }
        _ if text => {
            // Replace a number with a hostile one, or duplicate / drop a line.
            let s = String::from_utf8_lossy(&b).into_owned();
            let numbers: Vec<(usize, usize)> = number_spans(&s);
            if r.below(3) > 0 && !numbers.is_empty() {
                let (a, e) = *r.pick(&numbers);
                let n = r.pick(HOSTILE_NUMBERS);
                b = format!("{}{}{}", &s[..a], n, &s[e..]).into_bytes();
            } else {
                let mut lines: Vec<&str> = s.split_inclusive('\n').collect();
                if lines.len() > 1 {
                    let i = r.below(lines.len());
                    if r.below(2) == 0 {
                        lines.insert(i, lines[i]);
                    } else {
                        lines.remove(i);
                    }
                }
                b = lines.concat().into_bytes();
            }
        }
        _ => {
            let i = r.below(b.len());
            let junk: Vec<u8> = (0..1 + r.below(8)).map(|_| r.next() as u8).collect();
            b.splice(i..i, junk);
        }
    }
    b
}

/// Byte spans of decimal numbers in `s` (at most the first 4,000).
fn number_spans(s: &str) -> Vec<(usize, usize)> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() && out.len() < 4000 {
        if b[i].is_ascii_digit() {
            let start = i;
            while i < b.len() && (b[i].is_ascii_digit() || b".eE+-".contains(&b[i])) {
                i += 1;
            }
            out.push((start, i));
        } else {
            i += 1;
        }
    }
    out
}

/// The seed files: small glTF / GLB whole, BVH cut to 40 frames, the small ACL clips.
fn seeds() -> Vec<(PathBuf, &'static str, Vec<u8>)> {
    let mut out = Vec::new();
    for p in common::gltf_assets() {
        let bytes = std::fs::read(&p).unwrap();
        if bytes.len() > 200_000 {
            continue;
        }
        let kind = if bytes.starts_with(b"glTF") {
            "glb"
        } else {
            "gltf"
        };
        out.push((p, kind, bytes));
    }
    for name in ["pirouette.bvh", "CMU_131_01.bvh"] {
        let p = common::asset(name);
        let text = std::fs::read_to_string(&p).unwrap();
        let mut kept = String::new();
        let mut frames_left: Option<usize> = None;
        for line in text.lines() {
            if line.starts_with("Frames:") {
                kept.push_str("Frames: 40\n");
                continue;
            }
            if let Some(n) = frames_left.as_mut() {
                if *n == 0 {
                    break;
                }
                *n -= 1;
            }
            if line.starts_with("Frame Time:") {
                frames_left = Some(40);
            }
            kept.push_str(line);
            kept.push('\n');
        }
        out.push((p, "bvh", kept.into_bytes()));
    }
    for name in [
        "acl/121_10.acl.sjson",
        "acl/93_01_zero_range_extent.acl.sjson",
        "acl/09_02_multi_root.acl.sjson",
    ] {
        let p = common::asset(name);
        let bytes = std::fs::read(&p).unwrap();
        out.push((p, "sjson", bytes));
    }
    out
}

#[test]
fn mutated_assets_give_an_asset_or_one_clean_error() {
    let cases: usize = std::env::var("SKELPACK_MUTATIONS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(DEFAULT_CASES);
    let run_start = Instant::now();
    // Watchdog: a case running past its bound aborts the run, naming the case.
    std::thread::spawn(move || {
        loop {
            std::thread::sleep(Duration::from_millis(200));
            let case = CASE.load(Ordering::Relaxed);
            let started = CASE_START_MS.load(Ordering::Relaxed);
            let now = run_start.elapsed().as_millis() as u64;
            if case != 0 && now.saturating_sub(started) > CASE_SECONDS * 1000 {
                report_case(b"hangs (over the time bound)");
                std::process::abort();
            }
        }
    });
    let seeds = seeds();
    assert!(seeds.len() >= 10, "too few seed files: {}", seeds.len());
    // Every seed itself imports.
    for (p, _, bytes) in &seeds {
        skelpack::import::load_bytes(p, bytes)
            .unwrap_or_else(|e| panic!("seed {} does not import: {e}", p.display()));
    }
    let mut failures = Vec::new();
    let (mut ok, mut errors) = (0usize, 0usize);
    let mut case = 0u64;
    for (si, (path, kind, bytes)) in seeds.iter().enumerate() {
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ (si as u64 + 1).wrapping_mul(0x1234_5678_9abc));
        for _ in 0..cases {
            case += 1;
            let input = mutate(bytes, kind, &mut rng);
            CASE_START_MS.store(run_start.elapsed().as_millis() as u64, Ordering::Relaxed);
            CASE.store(case, Ordering::Relaxed);
            let started = Instant::now();
            let result = catch_unwind(AssertUnwindSafe(|| {
                skelpack::import::load_bytes(path, &input)
            }));
            CASE.store(0, Ordering::Relaxed);
            let took = started.elapsed();
            let name = path.file_name().unwrap().to_string_lossy();
            let failed_before = failures.len();
            match result {
                Err(_) => failures.push(format!("case {case} ({name}): panic")),
                Ok(Ok(_)) => ok += 1,
                Ok(Err(e)) => {
                    errors += 1;
                    let line = e.to_string();
                    if line.contains('\n') || !line.contains(&*name) {
                        failures.push(format!("case {case} ({name}): unclear error: {line}"));
                    }
                }
            }
            if took > Duration::from_secs(5) {
                failures.push(format!("case {case} ({name}): took {took:?}"));
            }
            if failures.len() > failed_before {
                save_reproducer(case, path, &input);
            }
        }
    }
    eprintln!(
        "{case} mutated inputs in {:.1} s: {ok} imported, {errors} clean errors, {} failures",
        run_start.elapsed().as_secs_f64(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(errors > 0 && ok > 0, "the mutator produced no variety");
}

/// Keeps a failing input under `target/tmp/mutation-failures/` for a regression test.
fn save_reproducer(case: u64, path: &Path, bytes: &[u8]) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("mutation-failures");
    let _ = std::fs::create_dir_all(&dir);
    let name = format!("case{case}-{}", path.file_name().unwrap().to_string_lossy());
    let _ = std::fs::write(dir.join(name), bytes);
}
