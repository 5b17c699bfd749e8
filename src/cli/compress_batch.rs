//! `skelpack compress PATH... --out-dir DIR [--format skp|glb|gltf] [--shard I/N] [--jsonl]`:
//! compress every file of a batch (files and folder trees), each to its own output under `DIR`
//! with the folders below each input folder kept.
//!
//! A shard of a compress run is a set of *files*, chosen by a hash of each file's path as the
//! batch lists it (stable under adding files): an output file holds all of its source's clips,
//! so a file is the unit one machine writes. A farm that wants clip-level balance runs
//! `report --shard I/N --cache URL` first (shared by clip), then `compress --shard I/N --cache
//! URL`, which takes every clip from the cache (docs/PIPELINE.md).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::bail;
use rayon::prelude::*;
use serde::Serialize;

use super::cache_args::summary_line;
use super::compress::{
    Args, check_target, compress_all_counted, export_gltf, load, mark_held, with_output_ext,
    write_skp,
};
use super::shard::Shard;
use crate::cache::{CacheStats, ResultCache};
use crate::import;

/// The flags of a batch run.
#[derive(clap::Args, Debug, Clone, Default)]
pub struct BatchArgs {
    /// Several inputs or a folder: write each file's output under DIR, keeping the folders
    /// below each input folder (a file given by itself lands at DIR's top).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["output", "fit_kb"])]
    pub out_dir: Option<PathBuf>,
    /// With --out-dir: the output type of every file.
    #[arg(long, value_name = "TYPE", default_value = "skp", value_parser = ["skp", "glb", "gltf"], requires = "out_dir")]
    pub format: String,
    /// With --out-dir: this machine's share of the files (I/N, 0 <= I < N), chosen by a hash
    /// of each file's path, so N machines running 0/N .. N-1/N write every file once.
    #[arg(long, value_name = "I/N", requires = "out_dir")]
    pub shard: Option<Shard>,
    /// With --out-dir: one JSON line per file as it finishes, then a summary line.
    #[arg(long, requires = "out_dir")]
    pub jsonl: bool,
}

/// One file of the batch: where it is read from and written to.
#[derive(Clone, Debug)]
struct Job {
    input: PathBuf,
    output: PathBuf,
}

/// What became of one file.
#[derive(Serialize)]
struct FileLine {
    input: String,
    output: String,
    /// `written`; `skipped` for a file with no clip (a character in its rest pose: nothing
    /// to compress, nothing written); or `failed` (then `error` says why and nothing was
    /// written).
    status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    clips: usize,
    /// Clips (`.skp`) or animations (glTF) whose result came from the cache.
    from_cache: usize,
    output_bytes: u64,
    contract_met: bool,
}

/// The batch's last line.
#[derive(Serialize, Default)]
struct Summary {
    /// Files in the whole batch, and in this run's share.
    batch_files: usize,
    files: usize,
    written: usize,
    skipped: usize,
    failed: Vec<String>,
    clips: usize,
    output_bytes: u64,
    contract_met: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    shard: Option<Shard>,
    #[serde(skip_serializing_if = "Option::is_none")]
    cache: Option<CacheStats>,
    seconds: f64,
}

/// Lists the batch's files and their outputs; refuses two inputs that would write one output.
fn jobs(inputs: &[PathBuf], out_dir: &Path, format: &str) -> anyhow::Result<Vec<Job>> {
    let mut jobs = Vec::new();
    for root in inputs {
        let files =
            import::collect_files(root).map_err(|e| anyhow::anyhow!("{}: {e}", root.display()))?;
        for input in files {
            let below = if root.is_dir() {
                input.strip_prefix(root).unwrap_or(&input).to_path_buf()
            } else {
                PathBuf::from(input.file_name().unwrap_or_default())
            };
            let output = out_dir.join(with_output_ext(&below, format));
            jobs.push(Job { input, output });
        }
    }
    let mut by_output: Vec<&Job> = jobs.iter().collect();
    by_output.sort_by(|a, b| a.output.cmp(&b.output));
    for pair in by_output.windows(2) {
        if pair[0].output == pair[1].output {
            bail!(
                "{} and {} would both write {}",
                pair[0].input.display(),
                pair[1].input.display(),
                pair[0].output.display()
            );
        }
    }
    Ok(jobs)
}

/// What one file's compression made: clips, clips from the cache, output bytes, whether
/// every clip holds its tolerance; `None` for a file with no clip.
type Made = Option<(usize, usize, u64, bool)>;

/// Compresses one file of the batch to its output.
fn compress_file(args: &Args, job: &Job, cache: Option<&ResultCache>) -> anyhow::Result<Made> {
    let prefix = format!("{}: ", job.input.display());
    let (asset, settings, _) = load(args, &job.input, &prefix)?;
    if asset.clips.is_empty() {
        return Ok(None);
    }
    if let Some(dir) = job.output.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| anyhow::anyhow!("{}: cannot create the folder: {e}", dir.display()))?;
    }
    check_target(args, &job.input, &job.output)?;
    if args.batch.format == "skp" {
        let clips = compress_all_counted(&asset, &settings, cache)?;
        let from_cache = clips.iter().filter(|(_, hit)| *hit).count();
        let mut clips: Vec<_> = clips.into_iter().map(|(c, _)| c).collect();
        mark_held(&asset, &mut clips);
        let bytes = write_skp(&asset, &clips, &job.output)?;
        let ok = clips.iter().all(|c| c.report.contract_met);
        Ok(Some((clips.len(), from_cache, bytes, ok)))
    } else {
        let written = export_gltf(args, &asset, &settings, &job.output, cache)?;
        for w in &written.warnings {
            eprintln!("warning: {}: {w}", job.output.display());
        }
        let bytes = std::fs::metadata(&job.output).map_or(0, |m| m.len());
        let n = written.animations.len();
        let from_cache = if written.from_cache { n } else { 0 };
        Ok(Some((
            n,
            from_cache,
            bytes,
            written.ok() && asset.held.is_empty(),
        )))
    }
}

fn line(job: &Job, result: anyhow::Result<Made>) -> FileLine {
    let (status, error, (clips, from_cache, output_bytes, contract_met)) = match result {
        Ok(Some(r)) => ("written", None, r),
        Ok(None) => ("skipped", None, (0, 0, 0, true)),
        Err(e) => ("failed", Some(format!("{e:#}")), (0, 0, 0, false)),
    };
    FileLine {
        input: job.input.display().to_string(),
        output: job.output.display().to_string(),
        status,
        error,
        clips,
        from_cache,
        output_bytes,
        contract_met,
    }
}

fn print_line(out: &mut impl Write, l: &FileLine, jsonl: bool) -> anyhow::Result<()> {
    if jsonl {
        writeln!(out, "{}", serde_json::to_string(l)?)?;
    } else if let Some(e) = &l.error {
        writeln!(out, "{}: FAILED: {e}", l.input)?;
    } else if l.status == "skipped" {
        writeln!(out, "{}: no clip, nothing written", l.input)?;
    } else {
        writeln!(
            out,
            "{} -> {}: {} clip(s), {} bytes, {}{}",
            l.input,
            l.output,
            l.clips,
            l.output_bytes,
            if l.contract_met {
                "within tolerance"
            } else {
                "TOLERANCE NOT MET"
            },
            if l.from_cache > 0 {
                format!(" ({} from the cache)", l.from_cache)
            } else {
                String::new()
            }
        )?;
    }
    out.flush()?;
    Ok(())
}

/// Runs a batch: every file of the share, a few at a time (one per worker in memory).
pub fn run(args: &Args) -> anyhow::Result<i32> {
    let started = Instant::now();
    let Some(out_dir) = &args.batch.out_dir else {
        bail!("several inputs or a folder: give --out-dir DIR for the outputs");
    };
    if args.json {
        bail!("--json prints one file's report; a batch prints --jsonl");
    }
    let all = jobs(&args.inputs, out_dir, &args.batch.format)?;
    let shard = args.batch.shard;
    let mine: Vec<Job> = all
        .iter()
        .filter(|j| shard.is_none_or(|s| s.takes(&j.input.display().to_string(), "")))
        .cloned()
        .collect();
    let cache = args.cache.open_with(args.tuning.settings.as_deref())?;
    let mut out = std::io::stdout().lock();
    let mut summary = Summary {
        batch_files: all.len(),
        files: mine.len(),
        contract_met: true,
        shard,
        ..Summary::default()
    };
    for batch in mine.chunks(rayon::current_num_threads().max(1)) {
        let lines: Vec<FileLine> = batch
            .par_iter()
            .map(|job| line(job, compress_file(args, job, cache.as_ref())))
            .collect();
        for l in &lines {
            print_line(&mut out, l, args.batch.jsonl)?;
            if l.error.is_some() {
                summary.failed.push(l.input.clone());
            } else if l.status == "skipped" {
                summary.skipped += 1;
            } else {
                summary.written += 1;
                summary.clips += l.clips;
                summary.output_bytes += l.output_bytes;
                summary.contract_met &= l.contract_met;
            }
        }
    }
    if let Some(c) = &cache {
        c.finish();
    }
    summary.cache = cache.as_ref().map(|c| c.stats());
    summary.seconds = started.elapsed().as_secs_f64();
    if args.batch.jsonl {
        writeln!(
            out,
            "{}",
            serde_json::to_string(&serde_json::json!({ "summary": &summary }))?
        )?;
    } else {
        writeln!(
            out,
            "{} of {} file(s){}: {} written, {} without clips, {} failed, {} clip(s), {} bytes, {:.1} s",
            summary.files,
            summary.batch_files,
            shard.map_or(String::new(), |s| format!(
                " (shard {}/{})",
                s.index, s.count
            )),
            summary.written,
            summary.skipped,
            summary.failed.len(),
            summary.clips,
            summary.output_bytes,
            summary.seconds
        )?;
    }
    if let Some(c) = &cache {
        eprintln!("{}", summary_line(c));
    }
    Ok(if !summary.failed.is_empty() {
        2
    } else if summary.contract_met {
        0
    } else {
        1
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn outputs_keep_the_folders_below_each_input_and_collisions_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let lib = dir.path().join("lib");
        std::fs::create_dir_all(lib.join("walk")).unwrap();
        for f in ["walk/a.bvh", "b.acl.sjson", "c.glb"] {
            std::fs::write(lib.join(f), b"x").unwrap();
        }
        let out = dir.path().join("out");
        let jobs = jobs(std::slice::from_ref(&lib), &out, "skp").unwrap();
        let outputs: Vec<_> = jobs
            .iter()
            .map(|j| j.output.strip_prefix(&out).unwrap().to_path_buf())
            .collect();
        assert_eq!(
            outputs,
            [
                PathBuf::from("b.skp"),
                PathBuf::from("c.skp"),
                PathBuf::from("walk/a.skp")
            ]
        );
        std::fs::write(lib.join("c.bvh"), b"x").unwrap();
        let err = super::jobs(&[lib], &out, "skp").unwrap_err().to_string();
        assert!(err.contains("would both write"), "{err}");
    }
}
