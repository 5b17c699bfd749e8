//! Opening FBX against glTF: each shared FBX file imported (`import::load`, what `inspect`
//! and the app's open do before compressing), and the same scene written as glTF by
//! `skelpack convert` (in a temporary folder) imported the same way. docs/FBX.md has the
//! figures.

use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
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

fn bench(c: &mut Criterion) {
    let tmp = tempfile::tempdir().unwrap();
    for path in fbx_assets() {
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let a = import::load(&path).unwrap();
        let glb = tmp.path().join(format!("{name}.glb"));
        // A file without a take has no glTF counterpart worth comparing (no animation).
        let converted = !a.clips.is_empty()
            && skelpack::export::write_scene(&glb, &a.skeleton, &a.clips, &a.meshes, None, false)
                .is_ok();
        let mut g = c.benchmark_group(format!("open/{name}"));
        g.bench_function("fbx", |b| b.iter(|| import::load(&path).unwrap()));
        if converted {
            g.bench_function("gltf (converted)", |b| {
                b.iter(|| import::load(&glb).unwrap())
            });
        }
        g.finish();
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default()
        .sample_size(10)
        .warm_up_time(std::time::Duration::from_millis(500))
        .measurement_time(std::time::Duration::from_secs(2));
    targets = bench
}
criterion_main!(benches);
