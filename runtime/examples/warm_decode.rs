//! Warm-cache whole-pose decoding of a `.skp` clip, timed the way ACL's harness
//! (`../shared/tools/acl/acl_warm_decomp.cpp`) times ACL: the clip opened once, then batches
//! of poses, each batch timed whole, the median over batches of nanoseconds per pose, after
//! one warm-up batch. Two access patterns, as there:
//!
//! * `forward59`: playback at 59 Hz over the clip's duration, through a [`Cursor`];
//! * `random`: times from the same LCG as ACL's harness (and `benches/decode.rs`).
//!
//! Prints the same `NAME median_ns_per_pose=…` lines as `acl_warm_decomp`, so that
//! `tools/acl/versus_acl_decode.py` reads both tools alike.
//!
//!     cargo build --release -p skelpack-runtime --example warm_decode
//!     target/release/examples/warm_decode CLIP.skp CLIP|- [ITERATIONS [BATCHES]]

use std::hint::black_box;
use std::time::Instant;

use skelpack_runtime::{Cursor, JointPose, Skp};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(3..=5).contains(&args.len()) {
        eprintln!("usage: warm_decode FILE.skp CLIP|- [ITERATIONS [BATCHES]]");
        std::process::exit(2);
    }
    let bytes = std::fs::read(&args[1]).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[1]);
        std::process::exit(2)
    });
    let iters: u32 = args
        .get(3)
        .map_or(20_000, |s| s.parse().expect("ITERATIONS"));
    let batches: usize = args.get(4).map_or(15, |s| s.parse().expect("BATCHES"));
    let skp = Skp::open(bytes.as_slice()).unwrap_or_else(|e| {
        eprintln!("{}: {e}", args[1]);
        std::process::exit(2)
    });
    let c = if args[2] == "-" {
        0
    } else {
        skp.find_clip(&args[2]).expect("no clip of that name")
    };
    let clip = skp.clip(c);
    // Time in frames: the clip's duration is its last frame.
    let duration = (clip.frame_count() - 1) as f32;
    let step = clip.sample_rate() / 59.0;
    let mut pose = vec![JointPose::default(); skp.joint_count()];
    println!(
        "file={} bytes={} joints={} frames={} rate={}",
        args[1],
        bytes.len(),
        skp.joint_count(),
        clip.frame_count(),
        clip.sample_rate()
    );
    let mut sink = 0.0f32;
    for pattern in ["forward59", "random"] {
        let mut ns = Vec::with_capacity(batches);
        let mut cursor = Cursor::new(clip);
        let (mut t, mut k) = (0.0f32, 0u32);
        for b in 0..=batches {
            let start = Instant::now();
            for _ in 0..iters {
                if pattern == "forward59" {
                    t += step;
                    if t >= duration {
                        t = 0.0;
                    }
                    cursor.sample(black_box(t), &mut pose);
                } else {
                    k = k.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                    t = (k >> 8) as f32 / (1u32 << 24) as f32 * duration;
                    clip.sample(black_box(t), &mut pose);
                }
                sink += pose[pose.len() - 1].translation[0];
            }
            // Batch 0 warms the caches, as ACL's harness's batch -1 does.
            if b > 0 {
                ns.push(start.elapsed().as_nanos() as f64 / f64::from(iters));
            }
        }
        ns.sort_by(f64::total_cmp);
        println!(
            "{pattern} median_ns_per_pose={:.1} min={:.1} max={:.1} batches={batches} iters={iters}",
            ns[ns.len() / 2],
            ns[0],
            ns[ns.len() - 1]
        );
    }
    black_box(sink);
}
