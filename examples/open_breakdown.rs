//! Where the time of opening a file and of its first edits goes, without the window: the
//! import, the reference poses, the codec's first pass and its whole first compression, the
//! app's own work on a result (error statistics, the own / inherited split, the caused
//! ratios), then four edits of the worst joint (halved, restored) with the codec's first pass
//! and total. Each figure as wall and process CPU time (every thread), since this machine is
//! shared and the wall clock says more about the load than about the work.
//!
//!     cargo run --release --example open_breakdown -- FILE

use std::path::PathBuf;
use std::time::Instant;

use skelpack::app::cpu_time::process_cpu;
use skelpack::codec::{CompressedClip, Control, Recompressor};
use skelpack::metric::{self, ErrorReport, Reference};
use skelpack::settings::Settings;

/// Wall and CPU milliseconds since a start.
struct Clock(Instant, f64);

impl Clock {
    fn start() -> Self {
        Self(Instant::now(), cpu())
    }
    fn ms(&self) -> String {
        format!(
            "{:.0} ms (CPU {:.0} ms)",
            self.0.elapsed().as_secs_f64() * 1e3,
            cpu() - self.1
        )
    }
}

fn cpu() -> f64 {
    process_cpu().map_or(0.0, |d| d.as_secs_f64() * 1e3)
}

fn main() {
    let file = std::env::args().nth(1).expect("FILE");
    let t = Clock::start();
    let asset = skelpack::import::load(&PathBuf::from(&file)).expect("load");
    println!("import: {}", t.ms());
    let clip = &asset.clips[0];
    let sk = &asset.skeleton;
    println!("{} joints x {} frames", sk.len(), clip.frame_count);
    let s = Settings::default().resolve(&asset, &clip.name);
    let t = Clock::start();
    drop(Reference::new(sk, clip, clip.frame_count));
    println!("reference poses: {}", t.ms());
    let mut memo = Recompressor::new();
    let t = Clock::start();
    let mut first = None;
    let mut keep = |c: CompressedClip, _: &Reference, _: &ErrorReport| {
        println!("open: codec first pass at {}", t.ms());
        first = Some(c);
    };
    let last = memo
        .compress_progressive(sk, clip, &s, &Control::new(), Some(&mut keep))
        .expect("compress");
    println!("open: codec done at {}", t.ms());
    let reference = memo.reference_poses().expect("reference");
    for (name, c) in [("first pass", first.as_ref()), ("final", Some(&last))] {
        let Some(c) = c else { continue };
        let t = Clock::start();
        let e = metric::measure(sk, &reference, c, &s.limits, true);
        let measure = t.ms();
        let t = Clock::start();
        let _ = metric::attribute(sk, clip, c, e.frames, &s.limits);
        let attribute = t.ms();
        let t = Clock::start();
        let _ = metric::caused_ratios(sk, clip, c, e.frames, &s.limits, 4_000_000);
        println!(
            "{name}: measure {measure}, attribute {attribute}, caused {}",
            t.ms()
        );
    }
    let worst = memo.errors().expect("errors").samples.worst_joint;
    for round in 0..4 {
        let mut edited = s.clone();
        if round % 2 == 0 {
            edited.limits.tolerance[worst] *= 0.5 - 0.01 * round as f32;
        }
        let t = Clock::start();
        let mut at = String::new();
        let mut keep = |_: CompressedClip, _: &Reference, _: &ErrorReport| at = t.ms();
        memo.compress_progressive(sk, clip, &edited, &Control::new(), Some(&mut keep))
            .expect("recompress");
        println!("edit {round}: codec first pass at {at}, done at {}", t.ms());
    }
}
