//! `skelpack watch FILE... [--export OUT]... [settings flags] [--cache SPEC]`: the
//! headless save-to-game loop for a pipeline machine. Every FILE is exported once at
//! start, then again each time it or its sidecar is saved, with one line per export
//! saying what changed (clips added / removed / modified, size and worst error before and
//! after, and the time from the save to the rewritten export).
//!
//! A save is read once it is complete: DCCs write a temporary file and rename it over the
//! source, or write it in several pieces. After the last change seen, the file must keep
//! the same size and modification time for [`Args::settle_ms`] and then import; a file that
//! does not import yet is retried at the next change or settle period (a line says why).
//! Exports go through the atomic temporary-file-and-rename writer (`fsutil`), whose
//! Ctrl-C / SIGTERM handler removes a temporary file being written, so stopping the watch
//! leaves none. With `--cache`, clips whose samples and settings did not change are taken
//! from the result cache instead of being compressed again (`.skp`); a compressed glTF
//! export keeps the clips it encoded last time in memory ([`crate::export::clip_memo`])
//! and encodes again only those the save changed. The save detection and the change
//! summary are [`crate::live`]'s, shared with the app.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use super::cache_args::CacheArgs;
use super::tuning::TuningArgs;
use crate::cache::ResultCache;
use crate::import::{self, Asset};
use crate::live::{ClipChanges, FileWatch, Settle};
use crate::settings::Settings;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The files to watch (glTF, FBX, BVH, ACL).
    #[arg(required = true)]
    pub files: Vec<PathBuf>,
    /// Where each file is exported (`.skp`, `.glb`, `.gltf`), in the order of the files;
    /// default: `FILE.skp` beside it.
    #[arg(long = "export", value_name = "OUT")]
    pub exports: Vec<PathBuf>,
    /// How long a changed file must keep its size and modification time before it is read
    /// (milliseconds).
    #[arg(long, default_value_t = 150)]
    pub settle_ms: u64,
    #[command(flatten)]
    pub tuning: TuningArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// What one export held: per clip, its cache key (samples + settings), and the file's size
/// and worst error (scene units, with the unit's name for printing).
#[derive(Default)]
struct Exported {
    clips: BTreeMap<String, crate::cache::Key>,
    bytes: u64,
    max_error_mm: f64,
    /// Clip encodings taken from the last export's (compressed glTF).
    reused: usize,
}

/// One watched file.
struct Target {
    file: PathBuf,
    sidecar: PathBuf,
    out: PathBuf,
    last: Option<Exported>,
    /// A save not yet read (complete once still for the settle period).
    settle: Settle,
    /// The last reason it could not be read, said once.
    said: Option<String>,
    /// The last compressed-glTF export's clip encodings (unchanged clips are not encoded
    /// again), for the final export and for the quick one written first.
    memo: crate::export::clip_memo::ClipMemo,
    quick_memo: crate::export::clip_memo::ClipMemo,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if args.exports.len() > args.files.len() {
        bail!(
            "more --export than files ({} > {})",
            args.exports.len(),
            args.files.len()
        );
    }
    let mut targets = Vec::new();
    let settle = Duration::from_millis(args.settle_ms);
    for (i, f) in args.files.iter().enumerate() {
        let file = crate::live::watcher::resolve(f)?;
        let out = args.exports.get(i).cloned().unwrap_or_else(|| {
            let mut s = file.as_os_str().to_owned();
            s.push(".skp");
            PathBuf::from(s)
        });
        if out.canonicalize().ok().as_ref() == Some(&file) {
            bail!(
                "{}: refusing to export over the watched file",
                out.display()
            );
        }
        crate::fsutil::check_output(&out).map_err(|e| anyhow::anyhow!("{}: {e}", out.display()))?;
        targets.push(Target {
            sidecar: Settings::sidecar_path(&file),
            file,
            out,
            last: None,
            settle: Settle::new(settle),
            said: None,
            memo: Default::default(),
            quick_memo: Default::default(),
        });
    }
    let cache = args.cache.open_with(args.tuning.settings.as_deref())?;
    let files: Vec<PathBuf> = targets.iter().map(|t| t.file.clone()).collect();
    let watch = FileWatch::new(&files, || {})?;
    for t in &mut targets {
        if let Err(e) = export(t, &args.tuning, cache.as_ref(), None) {
            println!("{}: {e:#}", t.file.display());
        }
    }
    println!("watching {} file(s); Ctrl-C to stop", targets.len());
    loop {
        if let Some(paths) = watch.wait(Duration::from_millis(25))? {
            let now = Instant::now();
            for t in &mut targets {
                if paths.iter().any(|p| *p == t.file || *p == t.sidecar) {
                    t.settle.changed(&t.file, now);
                }
            }
            continue;
        }
        let now = Instant::now();
        for t in &mut targets {
            let Some(first) = t.settle.ready(&t.file, now) else {
                continue;
            };
            match export(t, &args.tuning, cache.as_ref(), Some(first)) {
                Ok(()) => t.said = None,
                Err(e) => {
                    // Not complete yet (or broken): say so once, try again later.
                    let msg = format!("{e:#}");
                    if t.said.as_ref() != Some(&msg) {
                        println!("{}: not exported yet: {msg}", t.file.display());
                        t.said = Some(msg);
                    }
                    t.settle.retry(first, now);
                }
            }
        }
    }
}

/// Imports `t.file` with its settings, exports it, and prints what changed since the
/// last export (`saved`: when the save was first seen).
fn export(
    t: &mut Target,
    tuning: &TuningArgs,
    cache: Option<&ResultCache>,
    saved: Option<Instant>,
) -> anyhow::Result<()> {
    let mut asset = import::load(&t.file)?;
    let (mut settings, _) = tuning.settings_for(&t.file)?;
    crate::settings::takes::split(&mut asset, &mut settings)
        .map_err(|m| anyhow::anyhow!("{}: {m}", t.file.display()))?;
    let took = |saved: Option<Instant>| {
        saved.map_or(String::new(), |s| {
            format!(", {} ms after the save", s.elapsed().as_millis())
        })
    };
    // A compressed glTF is written first at `fast` effort (within the same tolerance, a
    // few percent larger, in a fraction of the time), then at the effort in force, which
    // replaces it. (At start too: each pass's memo then holds the file's clips.)
    if let Some(quick) = crate::live::quick_settings(&t.out, &settings) {
        let now = write(&asset, &quick, &t.out, cache, &t.quick_memo)?;
        let line = change_line(t.last.as_ref(), &now);
        println!(
            "{} -> {} (fast, the final export follows): {line}{}",
            t.file.display(),
            t.out.display(),
            took(saved)
        );
    }
    let now = write(&asset, &settings, &t.out, cache, &t.memo)?;
    let line = change_line(t.last.as_ref(), &now);
    println!(
        "{} -> {}: {line}{}",
        t.file.display(),
        t.out.display(),
        took(saved)
    );
    t.last = Some(now);
    Ok(())
}

/// Compresses and writes `asset` to `out` (`.skp`, or a compressed `.glb` / `.gltf`).
fn write(
    asset: &Asset,
    settings: &Settings,
    out: &Path,
    cache: Option<&ResultCache>,
    memo: &crate::export::clip_memo::ClipMemo,
) -> anyhow::Result<Exported> {
    let ext = out
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let unit = match ext.as_str() {
        "skp" => settings.unit_for(asset),
        _ => crate::export::metres::gltf_unit(asset, settings),
    };
    let to_mm = |e: f32| e as f64 / unit.per_metre() as f64 * 1000.0;
    let mut done = Exported {
        clips: crate::live::changes::clip_keys(asset, settings),
        ..Default::default()
    };
    match ext.as_str() {
        "skp" => {
            let clips = super::compress::compress_all(asset, settings, cache)?;
            done.bytes = crate::container::write(out, &asset.skeleton, &clips)
                .with_context(|| format!("{}: cannot write", out.display()))?;
            done.max_error_mm = clips
                .iter()
                .map(|c| to_mm(c.report.error_samples.max.max(c.report.error_midpoints.max)))
                .fold(0.0, f64::max);
        }
        "glb" | "gltf" => {
            let options = crate::export::GltfOptions::default();
            let r = crate::export::compress_to_gltf_memo(
                asset,
                &settings.without_playback(),
                out,
                &options,
                false,
                Some(memo),
            );
            done.reused = memo.finish();
            let r = r?;
            done.bytes = std::fs::metadata(out).map(|m| m.len()).unwrap_or(0);
            done.max_error_mm = r
                .animations
                .iter()
                .map(|a| to_mm(a.max_error))
                .fold(0.0, f64::max);
        }
        _ => bail!(
            "{}: unknown output type '.{ext}' (use .skp, .glb or .gltf)",
            out.display()
        ),
    }
    Ok(done)
}

/// `3 clips (modified: Walk), 12345 -> 12400 bytes, max error 0.081 -> 0.079 mm`.
fn change_line(before: Option<&Exported>, now: &Exported) -> String {
    let Some(b) = before else {
        return format!(
            "{} clip(s), {} bytes, max error {:.4} mm",
            now.clips.len(),
            now.bytes,
            now.max_error_mm
        );
    };
    let changes = ClipChanges::between(&b.clips, &now.clips);
    let reused = if now.reused > 0 {
        format!(", {} clip encoding(s) reused", now.reused)
    } else {
        String::new()
    };
    format!(
        "{} clip(s) ({changes}), {} -> {} bytes, max error {:.4} -> {:.4} mm{reused}",
        now.clips.len(),
        b.bytes,
        now.bytes,
        b.max_error_mm,
        now.max_error_mm
    )
}
