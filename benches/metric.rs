//! Visual-error measurement speed on real clips (it runs inside the compressor's loop), and
//! the app's error attribution (own / inherited, once per result shown).

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use skelpack::import;
use skelpack::metric::{JointLimits, Reference, attribute, caused_ratios, measure};

fn asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets")
        .join(name)
}

fn bench(c: &mut Criterion) {
    for name in ["acl/104_30.acl.sjson", "CMU_131_01.bvh"] {
        let a = import::load(&asset(name)).unwrap();
        let clip = &a.clips[0];
        let limits = JointLimits::uniform(&a.skeleton, 3.0, 0.01);
        let r = Reference::new(&a.skeleton, clip, clip.frame_count);
        let cells = clip.frame_count * a.skeleton.len();
        let mut g = c.benchmark_group(format!(
            "metric/{name} ({} joints x {} frames = {cells})",
            a.skeleton.len(),
            clip.frame_count
        ));
        g.bench_function("measure samples", |b| {
            b.iter(|| measure(&a.skeleton, &r, clip, &limits, false))
        });
        g.bench_function("measure samples+midpoints", |b| {
            b.iter(|| measure(&a.skeleton, &r, clip, &limits, true))
        });
        // Attribution compares the raw clip with its compressed result (default settings).
        let resolved = skelpack::settings::Settings::default().resolve(&a, &clip.name);
        let control = skelpack::codec::Control::new();
        let decoded = skelpack::codec::compress(&a.skeleton, clip, &resolved, &control).unwrap();
        let (frames, rl) = (clip.frame_count, &resolved.limits);
        g.bench_function("attribution own / inherited (once per result)", |b| {
            b.iter(|| attribute(&a.skeleton, clip, &decoded, frames, rl))
        });
        g.bench_function("caused ratios (once per result)", |b| {
            b.iter(|| caused_ratios(&a.skeleton, clip, &decoded, frames, rl, usize::MAX))
        });
        g.bench_function("reference (once per clip)", |b| {
            b.iter(|| Reference::new(&a.skeleton, clip, clip.frame_count))
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
