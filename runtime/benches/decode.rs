//! Decoding speed per whole pose: random access and the forward cursor of the runtime
//! (opened from `.skp` bytes, as an engine does), beside the baseline measured in the same
//! run: sampling the uncompressed raw clip (a blend of two stored poses); both clip layouts
//! (prepared, the default, and compact). Clips: ACL's
//! regression clips 13_07 and 104_30, CesiumMan, RobotExpressive's Idle.
//!
//!     cargo bench -p skelpack-runtime --bench decode
//!
//! (builds the skelpack library without the app, and never replaces `target/release/skelpack`).

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;

use criterion::measurement::WallTime;
use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main};
use skelpack::model::Transform;
use skelpack_runtime::{Clip, ClipLayout, Cursor, JointPose, Skp};

const CLIPS: &[(&str, Option<&str>)] = &[
    ("acl/13_07.acl.sjson", None),
    ("acl/104_30.acl.sjson", None),
    ("CesiumMan.glb", None),
    ("RobotExpressive.glb", Some("Idle")),
];

fn bench(c: &mut Criterion) {
    for &(name, only) in CLIPS {
        let (a, bytes) = common::skp(name, only);
        let raw = a
            .clips
            .iter()
            .find(|c| only.is_none_or(|n| c.name == n))
            .unwrap();
        let skp = Skp::open(bytes.as_slice()).unwrap();
        let clip = skp.clip(0);
        let n = skp.joint_count();
        eprintln!(
            "{name} '{}': .skp {} bytes (clip payload {} bytes), clip in memory {} bytes, \
             cursor {} bytes ({} animated tracks)",
            raw.name,
            bytes.len(),
            skp.clip_records()[0].payload.len(),
            clip.memory_bytes(),
            clip.cursor_state().memory_bytes(),
            clip.animated_tracks()
        );
        let frames = clip.frame_count() as f32;
        let mut raw_pose = vec![Transform::IDENTITY; n];
        let mut pose = vec![JointPose::default(); n];
        // Playback at 59 Hz over the clip's own rate: always fractional frames, so the
        // baseline really blends two stored poses.
        let step = clip.sample_rate() / 59.0;
        let mut g = c.benchmark_group(format!(
            "decode/{name} '{}' ({n} joints, {} frames, {} animated tracks)",
            raw.name,
            clip.frame_count(),
            clip.animated_tracks()
        ));
        let mut t = 0.0f32;
        g.bench_function("baseline: raw clip, blend of two poses", |b| {
            b.iter(|| {
                t = (t + step) % frames;
                raw.sample_local(black_box(t), &mut raw_pose);
            })
        });
        bench_layout(&mut g, "", clip, step, &mut pose);
        let compact = Skp::open_with(bytes.as_slice(), ClipLayout::Compact).unwrap();
        let small = compact.clip(0);
        eprintln!(
            "  compact layout: clip in memory {} bytes",
            small.memory_bytes()
        );
        bench_layout(&mut g, "compact: ", small, step, &mut pose);
        g.finish();
    }
}

/// Random access (a scattered sequence of times: blends, seeks) and forward playback by
/// `step` frames per pose, on one clip layout; `label` prefixes the benchmark names.
fn bench_layout(
    g: &mut BenchmarkGroup<'_, WallTime>,
    label: &str,
    clip: &Clip,
    step: f32,
    pose: &mut [JointPose],
) {
    let frames = clip.frame_count() as f32;
    let mut k = 0u32;
    g.bench_function(format!("{label}random access pose"), |b| {
        b.iter(|| {
            k = k.wrapping_mul(1664525).wrapping_add(1013904223);
            let t = (k >> 8) as f32 / (1u32 << 24) as f32 * frames;
            clip.sample(black_box(t), pose);
        })
    });
    let mut cursor = Cursor::new(clip);
    let mut t = 0.0f32;
    g.bench_function(format!("{label}forward cursor pose"), |b| {
        b.iter(|| {
            t += step;
            if t >= frames - 1.0 {
                t = 0.0;
            }
            cursor.sample(black_box(t), pose);
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
