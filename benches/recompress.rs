//! Recompression after one single-joint tolerance edit (`codec::Recompressor`) beside a full
//! compression of the same clip and settings, on the default character (what the app opens
//! with) and ACL 104_30, with the app's default settings.

use std::path::{Path, PathBuf};

use criterion::{Criterion, criterion_group, criterion_main};
use skelpack::character::{DEFAULT_CHARACTER_GLB, DEFAULT_CHARACTER_NAME};
use skelpack::codec::{self, Control, Recompressor};
use skelpack::import::{self, Asset};
use skelpack::settings::{Resolved, Settings};

fn shared(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets")
        .join(name)
}

/// The settings before and after halving the tolerance of one joint: the deforming joint
/// halfway down the joint list (a mid-chain joint with ancestors and descendants).
fn before_and_after(asset: &Asset, clip: &str) -> (Resolved, Resolved, String) {
    let before = Settings::default().resolve(asset, clip);
    let deforming: Vec<usize> = (0..asset.skeleton.len())
        .filter(|&j| asset.skeleton.joints[j].deforming)
        .collect();
    let j = deforming[deforming.len() / 2];
    let mut after = before.clone();
    after.limits.tolerance[j] *= 0.5;
    (before, after, asset.skeleton.joints[j].name.clone())
}

fn bench(c: &mut Criterion) {
    let assets = [
        (
            "default character",
            import::load_bytes(Path::new(DEFAULT_CHARACTER_NAME), DEFAULT_CHARACTER_GLB).unwrap(),
        ),
        (
            "acl/104_30",
            import::load(&shared("acl/104_30.acl.sjson")).unwrap(),
        ),
    ];
    for (name, asset) in &assets {
        let clip = &asset.clips[0];
        let skeleton = &asset.skeleton;
        let (before, after, joint) = before_and_after(asset, &clip.name);
        println!(
            "{name}: clip '{}', {} joints x {} frames; the edit halves {joint}'s tolerance",
            clip.name,
            skeleton.len(),
            clip.frame_count
        );
        let mut g = c.benchmark_group(format!("recompress/{name}"));
        g.sample_size(10);
        let control = Control::new();
        g.bench_function("full compression", |b| {
            b.iter(|| codec::compress(skeleton, clip, &after, &control).unwrap())
        });
        // Alternating between the two settings: every call is a recompression after one
        // edit, with the state the previous settings left.
        let mut memo = Recompressor::new();
        memo.compress(skeleton, clip, &before, &control).unwrap();
        let mut flip = false;
        g.bench_function("recompression after the edit", |b| {
            b.iter(|| {
                flip = !flip;
                let settings = if flip { &after } else { &before };
                memo.compress(skeleton, clip, settings, &control).unwrap()
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
