//! Compression time per clip on real assets (acl preset).

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use skelpack::codec::{self, Control};
use skelpack::import;
use skelpack::settings::{Preset, Settings};

fn asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets")
        .join(name)
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("compress");
    g.sample_size(10);
    for name in ["CesiumMan.glb", "acl/49_15.acl.sjson", "CMU_131_01.bvh"] {
        let a = import::load(&asset(name)).unwrap();
        let clip = a.clips.iter().max_by_key(|c| c.frame_count).unwrap();
        let settings = Settings::from_preset(Preset::Acl).resolve(&a, &clip.name);
        g.bench_function(
            format!(
                "{name} '{}' ({} joints x {} frames)",
                clip.name,
                a.skeleton.len(),
                clip.frame_count
            ),
            |b| b.iter(|| codec::compress(&a.skeleton, clip, &settings, &Control::new()).unwrap()),
        );
    }
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
