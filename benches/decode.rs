//! Decoding speed: a whole pose by random access and by the forward cursor, beside the
//! baseline measured in the same run — sampling the uncompressed raw clip (a blend of two
//! stored poses).

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use skelpack::codec::{self, Control, RuntimeClip};
use skelpack::import;
use skelpack::model::Transform;
use skelpack::settings::{Preset, Settings};

fn asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../shared/assets")
        .join(name)
}

fn bench(c: &mut Criterion) {
    for name in [
        "acl/13_07.acl.sjson",
        "CMU_131_01.bvh",
        "RobotExpressive.glb",
    ] {
        let a = import::load(&asset(name)).unwrap();
        let clip = a.clips.iter().max_by_key(|c| c.frame_count).unwrap();
        let settings = Settings::from_preset(Preset::Acl).resolve(&a, &clip.name);
        let compressed = codec::compress(&a.skeleton, clip, &settings, &Control::new()).unwrap();
        let rt = RuntimeClip::new(&compressed);
        let n = a.skeleton.len();
        let frames = clip.frame_count as f32;
        let mut pose = vec![Transform::IDENTITY; n];
        // Playback at 59 Hz over the clip's own rate: always fractional frames, so the
        // baseline really blends two stored poses.
        let step = clip.sample_rate / 59.0;
        let mut g = c.benchmark_group(format!(
            "decode/{name} '{}' ({n} joints, {} frames)",
            clip.name, clip.frame_count
        ));
        let mut t = 0.0f32;
        g.bench_function("baseline: raw clip, blend of two poses", |b| {
            b.iter(|| {
                t = (t + step) % frames;
                clip.sample_local(black_box(t), &mut pose);
            })
        });
        let mut t = 0.0f32;
        let mut k = 0u32;
        g.bench_function("random access pose", |b| {
            b.iter(|| {
                // A scattered sequence of times (blends, seeks).
                k = k.wrapping_mul(1664525).wrapping_add(1013904223);
                t = (k >> 8) as f32 / (1u32 << 24) as f32 * frames;
                rt.sample(black_box(t), &mut pose);
            })
        });
        let mut cursor = rt.cursor();
        let mut t = 0.0f32;
        g.bench_function("forward cursor pose", |b| {
            b.iter(|| {
                t += step;
                if t >= frames - 1.0 {
                    t = 0.0;
                }
                cursor.sample(black_box(t), &mut pose);
            })
        });
        g.finish();
    }
}

criterion_group!(benches, bench);
criterion_main!(benches);
