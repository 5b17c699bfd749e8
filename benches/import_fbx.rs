//! Opening FBX against glTF: each shared FBX file imported (`import::load`, what `inspect`
//! and the app's open do before compressing), and the same scene written as glTF by
//! `skelpack convert` (in a temporary folder) imported the same way; and ufbx's parse of the
//! FBX file alone; each as wall time (`open/`) and as the process's CPU time (`cpu/`), which a
//! loaded machine disturbs less. docs/FBX.md has the figures.

use std::path::PathBuf;

use criterion::measurement::{Measurement, ValueFormatter};
use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use skelpack::import;

fn fbx_assets() -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/fbx");
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "fbx"))
        .collect();
    v.sort();
    v
}

/// The process's CPU time (every thread, user + system) in nanoseconds: on a machine other
/// builds load, what an import costs rather than how long it waited for a core. Wall time
/// is the `open/` groups, CPU time the `cpu/` groups.
struct CpuTime;

fn process_cpu_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the timespec it is given; the clock id is valid on Linux.
    let r = unsafe { libc::clock_gettime(libc::CLOCK_PROCESS_CPUTIME_ID, &mut ts) };
    assert_eq!(r, 0, "CLOCK_PROCESS_CPUTIME_ID");
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

impl Measurement for CpuTime {
    type Intermediate = u64;
    type Value = u64;
    fn start(&self) -> u64 {
        process_cpu_ns()
    }
    fn end(&self, start: u64) -> u64 {
        process_cpu_ns().saturating_sub(start)
    }
    fn add(&self, a: &u64, b: &u64) -> u64 {
        a + b
    }
    fn zero(&self) -> u64 {
        0
    }
    fn to_f64(&self, v: &u64) -> f64 {
        *v as f64
    }
    fn formatter(&self) -> &dyn ValueFormatter {
        &CpuFormatter
    }
}

/// Nanoseconds shown in ms or µs of CPU time.
struct CpuFormatter;

impl ValueFormatter for CpuFormatter {
    fn scale_values(&self, typical: f64, values: &mut [f64]) -> &'static str {
        let (factor, unit) = if typical < 1e6 {
            (1e-3, "µs cpu")
        } else {
            (1e-6, "ms cpu")
        };
        values.iter_mut().for_each(|v| *v *= factor);
        unit
    }
    fn scale_throughputs(&self, _: f64, _: &Throughput, _: &mut [f64]) -> &'static str {
        "unused"
    }
    fn scale_for_machines(&self, _: &mut [f64]) -> &'static str {
        "ns"
    }
}

fn bench_wall(c: &mut Criterion) {
    bench(c, "open");
}

fn bench_cpu(c: &mut Criterion<CpuTime>) {
    bench(c, "cpu");
}

fn bench<M: Measurement>(c: &mut Criterion<M>, group: &str) {
    let tmp = tempfile::tempdir().unwrap();
    for path in fbx_assets() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let a = import::load(&path).unwrap();
        let glb = tmp.path().join(format!("{name}.glb"));
        // A file without a take has no glTF counterpart worth comparing (no animation).
        let converted = !a.clips.is_empty()
            && skelpack::export::write_scene(&glb, &a.skeleton, &a.clips, &a.meshes, None, false)
                .is_ok();
        let bytes = std::fs::read(&path).unwrap();
        let mut g = c.benchmark_group(format!("{group}/{name}"));
        g.bench_function("fbx", |b| b.iter(|| import::load(&path).unwrap()));
        // ufbx's parse with skelpack's options: the part of `fbx` no skelpack code runs in.
        g.bench_function("ufbx parse alone", |b| {
            b.iter(|| import::fbx::load_scene(&bytes).unwrap())
        });
        if converted {
            g.bench_function("gltf (converted)", |b| {
                b.iter(|| import::load(&glb).unwrap())
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = wall;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench_wall
}
criterion_group! {
    name = cpu;
    config = Criterion::default()
        .with_measurement(CpuTime)
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench_cpu
}
criterion_main!(wall, cpu);
