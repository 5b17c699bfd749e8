//! Writes the decoded whole poses of every clip of a `.skp` as raw bits, for proving that a
//! change to the decoder keeps its values bit for bit: run it before and after the change
//! and compare the files with `cmp`. Per clip and per layout (prepared, compact): forward
//! playback at 59 Hz through a [`Cursor`] over the clip and a bit past its end, then random
//! access at the LCG times of `warm_decode` and at edge times (before the start, `-0.0`,
//! keys, the last frame and past it, NaN, infinities). Each pose is its joints' translation,
//! rotation and scale as little-endian `f32` bits.
//!
//!     cargo build --release -p skelpack-runtime --example pose_dump
//!     target/release/examples/pose_dump CLIP.skp OUT.bin [RANDOM_POSES]

use std::io::Write;

use skelpack_runtime::{ClipLayout, Cursor, JointPose, Skp};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if !(3..=4).contains(&args.len()) {
        eprintln!("usage: pose_dump FILE.skp OUT.bin [RANDOM_POSES]");
        std::process::exit(2);
    }
    let bytes = std::fs::read(&args[1]).expect("read the .skp");
    let random: u32 = args
        .get(3)
        .map_or(4000, |s| s.parse().expect("RANDOM_POSES"));
    let mut out = std::io::BufWriter::new(std::fs::File::create(&args[2]).expect("create OUT"));
    let mut poses = 0u64;
    for layout in [ClipLayout::Prepared, ClipLayout::Compact] {
        let skp = Skp::open_with(bytes.as_slice(), layout).expect("open the .skp");
        let mut pose = vec![JointPose::default(); skp.joint_count()];
        let mut put = |pose: &[JointPose], out: &mut std::io::BufWriter<std::fs::File>| {
            for j in pose {
                for v in j.translation.iter().chain(&j.rotation).chain(&j.scale) {
                    out.write_all(&v.to_bits().to_le_bytes()).unwrap();
                }
            }
            poses += 1;
        };
        for c in 0..skp.clip_count() {
            let clip = skp.clip(c);
            let last = (clip.frame_count() - 1) as f32;
            let step = clip.sample_rate() / 59.0;
            let mut cursor = Cursor::new(clip);
            let mut t = 0.0f32;
            while t <= last + 2.0 * step {
                cursor.sample(t, &mut pose);
                put(&pose, &mut out);
                t += step;
            }
            let mut k = 0u32;
            for _ in 0..random {
                k = k.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let t = (k >> 8) as f32 / (1u32 << 24) as f32 * last;
                clip.sample(t, &mut pose);
                put(&pose, &mut out);
            }
            let edges = [
                -1.0,
                -0.0,
                0.0,
                0.5,
                1.0,
                last - 0.5,
                last,
                last + 0.25,
                1e9,
            ];
            let special = [f32::NAN, f32::INFINITY, f32::NEG_INFINITY];
            for t in edges.into_iter().chain(special) {
                clip.sample(t, &mut pose);
                put(&pose, &mut out);
                cursor.sample(t, &mut pose);
                put(&pose, &mut out);
            }
            // Every quarter frame, forward then backward through the cursor.
            let quarters = (0..clip.frame_count() * 4).map(|i| i as f32 * 0.25);
            for t in quarters.clone().chain(quarters.rev()) {
                cursor.sample(t, &mut pose);
                put(&pose, &mut out);
            }
        }
    }
    out.flush().unwrap();
    println!("{} poses={poses}", args[1]);
}
