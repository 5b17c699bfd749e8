//! Samples a `.skp` clip many times, for instruction counts per pose under
//! `valgrind --tool=callgrind` (run it with 0 and with N poses; the difference over N is
//! the cost of one pose) and for profiling with perf. Prints the clip's memory.
//!
//!     cargo build --release -p skelpack-runtime --example pose_cost
//!     valgrind --tool=callgrind target/release/examples/pose_cost FILE.skp CLIP random 20000
//!
//! A sixth argument `compact` opens the file in the compact layout.
//! Modes: `random` (scattered frames, as `benches/decode.rs`), `forward` (a cursor at 59 Hz
//! over the clip's rate), `open` (only opens the file).

use std::hint::black_box;

use skelpack_runtime::{ClipLayout, Cursor, JointPose, Skp};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 5 && args.len() != 6 {
        eprintln!("usage: pose_cost FILE.skp CLIP|- random|forward|open POSES [compact]");
        std::process::exit(2);
    }
    let bytes = std::fs::read(&args[1]).expect("read the .skp");
    let layout = match args.get(5).map(String::as_str) {
        Some("compact") => ClipLayout::Compact,
        _ => ClipLayout::Prepared,
    };
    let skp = Skp::open_with(bytes.as_slice(), layout).expect("open the .skp");
    let c = if args[2] == "-" {
        0
    } else {
        skp.find_clip(&args[2]).expect("no clip of that name")
    };
    let poses: u32 = args[4].parse().expect("POSES is a number");
    let clip = skp.clip(c);
    let frames = clip.frame_count() as f32;
    let mut pose = vec![JointPose::default(); skp.joint_count()];
    let mut checksum = 0.0f32;
    match args[3].as_str() {
        "random" => {
            let mut k = 0u32;
            for _ in 0..poses {
                k = k.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let t = (k >> 8) as f32 / (1u32 << 24) as f32 * frames;
                clip.sample(black_box(t), &mut pose);
                checksum += pose[0].rotation[0];
            }
        }
        "forward" => {
            let step = clip.sample_rate() / 59.0;
            let mut cursor = Cursor::new(clip);
            let mut t = 0.0f32;
            for _ in 0..poses {
                t += step;
                if t >= frames - 1.0 {
                    t = 0.0;
                }
                cursor.sample(black_box(t), &mut pose);
                checksum += pose[0].rotation[0];
            }
        }
        "open" => {}
        m => panic!("unknown mode {m}"),
    }
    println!(
        "{} clip '{}' ({layout:?}): {} joints, {} animated tracks, file {} B, clip payload {} B, clip in memory {} B, cursor {} B, checksum {checksum}",
        args[1],
        skp.clip_name(c),
        skp.joint_count(),
        clip.animated_tracks(),
        bytes.len(),
        skp.clip_records()[c].payload.len(),
        clip.memory_bytes(),
        clip.cursor_state().memory_bytes()
    );
}
