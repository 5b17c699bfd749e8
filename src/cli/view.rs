//! `skelpack view FILE [--clip NAME] [--frame N] [--screenshot OUT.png]`: opens the app on a
//! file, waits until the compressed result is shown, saves a screenshot of the window
//! (eframe's viewport screenshot) and exits. `--measure-frames N` plays N frames first and
//! prints the frame times (the viewport's cost on this machine's renderer); `--measure-edits N`
//! makes N tolerance edits and prints how long each took to show its recompressed result.

use std::path::PathBuf;

use crate::app::{StartOptions, run_auto};

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The file to open (glTF, BVH, ACL SJSON, FBX).
    pub file: PathBuf,
    /// The clip to show (default: the first).
    #[arg(long)]
    pub clip: Option<String>,
    /// The joint to select (its curves and errors are shown).
    #[arg(long)]
    pub joint: Option<String>,
    /// The frame to show.
    #[arg(long)]
    pub frame: Option<f32>,
    /// Where to save the screenshot (PNG).
    #[arg(long)]
    pub screenshot: Option<PathBuf>,
    /// Play this many frames and print frame-time statistics before exiting.
    #[arg(long)]
    pub measure_frames: Option<usize>,
    /// Make this many settings edits (halve the selected joint's tolerance, undo, ...) and
    /// print how long each took from the edit to the recompressed result on screen.
    #[arg(long)]
    pub measure_edits: Option<usize>,
    /// Draw markers and error vectors on the selected joint only.
    #[arg(long)]
    pub markers_on_selection: bool,
    /// Sit idle this many seconds (nothing changes, no playback) and print how many frames
    /// the window painted and the CPU it used meanwhile.
    #[arg(long, value_name = "SECONDS")]
    pub measure_idle: Option<f32>,
    /// Open the clip dashboard (the screenshot waits for every clip's result).
    #[arg(long)]
    pub dashboard: bool,
    /// Turn on "Export on save": after the file is saved and reloaded, redo the exports
    /// remembered in its sidecar (`[[exports]]`).
    #[arg(long)]
    pub export_on_save: bool,
    /// The window's size in points, `WIDTHxHEIGHT` (default 1600x960).
    #[arg(long, value_parser = parse_size)]
    pub window: Option<[f32; 2]>,
    /// The shared result cache: final results of unchanged clips are taken from it, and
    /// those computed are stored.
    #[command(flatten)]
    pub cache: super::cache_args::CacheArgs,
}

fn parse_size(s: &str) -> Result<[f32; 2], String> {
    let (w, h) = s
        .split_once(['x', 'X'])
        .ok_or_else(|| format!("'{s}': expected WIDTHxHEIGHT, e.g. 1280x720"))?;
    let p = |v: &str| {
        v.trim()
            .parse::<f32>()
            .ok()
            .filter(|v| (320.0..=8192.0).contains(v))
            .ok_or_else(|| format!("'{s}': each side must be 320 to 8192"))
    };
    Ok([p(w)?, p(h)?])
}

pub fn run(a: Args) -> anyhow::Result<i32> {
    let opts = StartOptions {
        file: Some(a.file.clone()),
        clip: a.clip,
        frame: a.frame,
        joint: a.joint,
        screenshot: a.screenshot,
        measure_frames: a.measure_frames.or(Some(0)),
        measure_edits: a.measure_edits,
        markers_on_selection: a.markers_on_selection,
        ignore_storage: true,
        dashboard: a.dashboard,
        export_on_save: a.export_on_save,
        measure_idle: a.measure_idle,
        window: a.window,
        cache: a.cache.spec(),
    };
    let outcome = run_auto(opts).map_err(anyhow::Error::msg)?;
    if let (Some(first), Some(last)) = (outcome.open_first_ms, outcome.open_final_ms) {
        println!(
            "open: first result shown {first:.0} ms after the file started to be read, final \
             result {last:.0} ms"
        );
    }
    if !outcome.frame_times_ms.is_empty() {
        let s = stats(&outcome.frame_times_ms);
        let b = stats(&outcome.build_times_ms);
        println!(
            "frames: {}  frame time ms: mean {:.2}  median {:.2}  p95 {:.2}  ({:.1} fps)  scene build ms: mean {:.3}",
            outcome.frame_times_ms.len(),
            s.0,
            s.1,
            s.2,
            1000.0 / s.0,
            b.0
        );
        if !outcome.frame_cpu_ms.is_empty() {
            let c = stats(&outcome.frame_cpu_ms);
            println!(
                "frame CPU ms (process, all threads): mean {:.1}  median {:.1}  p95 {:.1}",
                c.0, c.1, c.2
            );
        }
    }
    if let Some(i) = &outcome.idle {
        println!(
            "idle: {} frames painted in {:.1} s; CPU {:.0} ms ({:.1} ms per second)",
            i.frames,
            i.seconds,
            i.cpu_ms,
            i.cpu_ms / i.seconds.max(1e-9)
        );
    }
    if !outcome.edit_latency_ms.is_empty() {
        let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
        let l = stats(&outcome.edit_latency_ms);
        let f = stats(&outcome.edit_final_ms);
        let c = stats(&outcome.edit_compress_ms);
        println!(
            "edits: {}  edit to result shown ms: mean {:.1}  median {:.1}  max {:.1}  \
             (the first pass, within every tolerance)",
            outcome.edit_latency_ms.len(),
            l.0,
            l.1,
            max(&outcome.edit_latency_ms),
        );
        println!(
            "edits: {}  edit to final result shown ms: mean {:.1}  median {:.1}  max {:.1}  \
             (compression alone: mean {:.1})",
            outcome.edit_final_ms.len(),
            f.0,
            f.1,
            max(&outcome.edit_final_ms),
            c.0,
        );
    }
    if !outcome.undo_latency_ms.is_empty() {
        let u = stats(&outcome.undo_latency_ms);
        println!(
            "undos: {}  undo to result shown ms: mean {:.1}  median {:.1}  max {:.1}  \
             (an earlier result, kept)",
            outcome.undo_latency_ms.len(),
            u.0,
            u.1,
            outcome.undo_latency_ms.iter().copied().fold(0.0, f64::max),
        );
    }
    if let Some(p) = &outcome.screenshot {
        println!("screenshot: {}", p.display());
    }
    match outcome.error {
        Some(e) => {
            eprintln!("error: {e}");
            Ok(2)
        }
        None => Ok(0),
    }
}

/// (mean, median, p95).
fn stats(v: &[f64]) -> (f64, f64, f64) {
    if v.is_empty() {
        return (0.0, 0.0, 0.0);
    }
    let mut s = v.to_vec();
    s.sort_by(f64::total_cmp);
    let mean = s.iter().sum::<f64>() / s.len() as f64;
    let at = |q: f64| s[((s.len() - 1) as f64 * q).round() as usize];
    (mean, at(0.5), at(0.95))
}
