//! Where the time of one recompression after a single-joint tolerance edit goes: the codec
//! (incremental) and its first pass, the error measurement, the own / inherited split and the caused ratios,
//! each timed on its own, over alternating edits of the worst joint (what `view
//! --measure-edits` edits).
//!
//!     cargo run --release --example edit_breakdown -- [FILE] [ROUNDS]

use std::path::{Path, PathBuf};
use std::time::Instant;

use skelpack::character::{DEFAULT_CHARACTER_GLB, DEFAULT_CHARACTER_NAME};
use skelpack::codec::{Control, Recompressor};
use skelpack::import;
use skelpack::metric::{self, Reference};
use skelpack::settings::Settings;

fn main() {
    let mut args = std::env::args().skip(1);
    let asset = match args.next() {
        Some(f) => import::load(&PathBuf::from(f)).expect("load"),
        None => import::load_bytes(Path::new(DEFAULT_CHARACTER_NAME), DEFAULT_CHARACTER_GLB)
            .expect("default character"),
    };
    let rounds: usize = args.next().map_or(10, |r| r.parse().expect("rounds"));
    let clip = &asset.clips[0];
    let sk = &asset.skeleton;
    let base = Settings::default().resolve(&asset, &clip.name);
    let control = Control::new();
    let mut memo = Recompressor::new();
    let first = memo.compress(sk, clip, &base, &control).expect("compress");
    let reference = Reference::new(sk, clip, clip.frame_count);
    let errors = metric::measure(sk, &reference, &first, &base.limits, true);
    let worst = (0..sk.len())
        .max_by(|&a, &b| {
            let r = |j: usize| errors.joint_max[j] / base.limits.tolerance[j].max(1e-12);
            r(a).total_cmp(&r(b))
        })
        .unwrap();
    println!(
        "clip '{}', {} joints x {} frames; editing {}",
        clip.name,
        sk.len(),
        clip.frame_count,
        sk.joints[worst].name
    );
    let mut t = [0.0f64; 5];
    for round in 0..rounds {
        let mut s = base.clone();
        if round % 2 == 0 {
            s.limits.tolerance[worst] *= 0.5 + 0.01 * round as f32;
        }
        let a = Instant::now();
        let mut firsts: Vec<f64> = Vec::new();
        let mut first_pass = |_: skelpack::codec::CompressedClip, _: &Reference, _: &_| {
            firsts.push(a.elapsed().as_secs_f64() * 1e3)
        };
        let c = memo
            .compress_progressive(sk, clip, &s, &control, Some(&mut first_pass))
            .expect("recompress");
        let b = Instant::now();
        t[4] += firsts.first().copied().unwrap_or(0.0) / rounds as f64;
        if round < 4 {
            println!(
                "round {round}: {:?} first pass(es) at {firsts:.1?} ms, codec {:.1} ms",
                memo.reuse(),
                (b - a).as_secs_f64() * 1e3
            );
        }
        let e = metric::measure(sk, &reference, &c, &s.limits, true);
        let d = Instant::now();
        let _ = metric::attribute(sk, clip, &c, e.frames, &s.limits);
        let f = Instant::now();
        let _ = metric::caused_ratios(sk, clip, &c, e.frames, &s.limits, 4_000_000);
        let g = Instant::now();
        for (i, (x, y)) in [(a, b), (b, d), (d, f), (f, g)].into_iter().enumerate() {
            t[i] += (y - x).as_secs_f64() * 1e3 / rounds as f64;
        }
    }
    println!(
        "mean ms: first pass {:.1}  codec {:.1}  measure {:.1}  attribute {:.1}  caused {:.1}",
        t[4], t[0], t[1], t[2], t[3]
    );
}
