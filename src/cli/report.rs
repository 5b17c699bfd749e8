//! `skelpack report PATH... [--json|--jsonl] [--preset NAME] [--cache DIR|URL] [--shard I/N]`:
//! compress every clip of every file (folders recursively) and print a table per clip and the
//! totals; `report --merge A.json B.json ...` joins the JSON reports of shards into the one a
//! single run writes, byte for byte.
//!
//! Streaming: files are loaded, compressed and printed a batch at a time (one file per
//! worker thread; a file's clips are compressed in parallel), and only the totals are kept,
//! so memory does not grow with the number of files. Output order is the file order.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::time::Instant;

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use super::cache_args::{CacheArgs, summary_line};
use super::report_merge;
use super::shard::Shard;
use super::table;
use super::tuning::TuningArgs;
use crate::cache::{CacheStats, ResultCache, file_report};
use crate::codec::{self, ClipReport, Control};
use crate::import;
use crate::metric::{Reference, SocketError, socket_errors, worst_socket};
use crate::model::LengthUnit;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files or folders (searched recursively for .glb, .gltf, .bvh, .acl.sjson, .fbx).
    #[arg(required_unless_present = "merge")]
    pub paths: Vec<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    /// Print one JSON line per clip as it finishes, then a summary line (for farm logs).
    #[arg(long, conflicts_with = "json")]
    pub jsonl: bool,
    /// Take only share I of N of the clips (0 <= I < N), chosen by hashing each clip's file
    /// path and name; with --json the report can be merged with the others' (`--merge`).
    #[arg(long, value_name = "I/N")]
    pub shard: Option<Shard>,
    /// Join the --json reports of the shards of one run into the report a single run writes.
    #[arg(long, value_name = "REPORT.json", num_args = 1.., conflicts_with_all = ["paths", "shard", "jsonl"])]
    pub merge: Vec<PathBuf>,
    #[command(flatten)]
    pub tuning: TuningArgs,
    #[command(flatten)]
    pub cache: CacheArgs,
}

/// One clip's entry in the JSON output.
#[derive(Serialize, serde::Deserialize)]
pub struct ClipEntry {
    pub file: String,
    /// The clip's position in its file.
    pub clip_index: usize,
    pub unit: LengthUnit,
    pub tolerance: f32,
    pub marker_offset: f32,
    pub report: ClipReport,
    /// Morph-weight channels of the clip (scalar tracks). `.skp` files do not store them;
    /// a glTF export compresses them (`compress -o X.glb --json`: `scalar_tracks`).
    pub scalar_tracks: usize,
    /// Sockets measured with their joints (non-joint nodes hanging from joints).
    pub sockets: usize,
    /// The socket whose error is the largest share of its tolerance, with that error.
    pub worst_socket: Option<SocketError>,
    /// Whether the result came from the cache (in `--jsonl` lines only).
    #[serde(skip)]
    pub cached: bool,
}

/// The totals closing a report.
#[derive(Serialize, Default)]
pub struct Totals {
    pub clips: usize,
    pub raw_bytes: u64,
    pub payload_bytes: u64,
    pub ratio: f64,
    pub contract_met: bool,
    pub failed_files: Vec<String>,
}

impl Totals {
    /// Totals before any clip.
    pub fn new() -> Self {
        Self {
            contract_met: true,
            ..Self::default()
        }
    }

    /// Counts one clip.
    pub fn add(&mut self, raw_bytes: u64, payload_bytes: u64, contract_met: bool) {
        self.clips += 1;
        self.raw_bytes += raw_bytes;
        self.payload_bytes += payload_bytes;
        self.contract_met &= contract_met;
    }

    /// Sets the ratio once every clip is counted.
    pub fn close(&mut self) {
        self.ratio = self.raw_bytes as f64 / self.payload_bytes.max(1) as f64;
    }

    /// The exit code: 2 when a file failed, 1 when a clip missed its tolerance, else 0.
    pub fn exit_code(&self) -> i32 {
        if !self.failed_files.is_empty() {
            2
        } else if self.contract_met {
            0
        } else {
            1
        }
    }
}

/// Which share of the batch a sharded `--json` report holds, and the batch's file order
/// (what `--merge` needs to put the shares' clips back in a single run's order).
#[derive(Serialize, serde::Deserialize)]
pub struct ShardHeader {
    pub index: u64,
    pub count: u64,
    pub files: Vec<String>,
}

/// Loads one file and compresses the clips of this share (in parallel). With a cache, an
/// unchanged file's report is taken whole from it, without importing the file.
fn process(
    path: &Path,
    tuning: &TuningArgs,
    cache: Option<&ResultCache>,
    shard: Option<Shard>,
) -> anyhow::Result<Vec<ClipEntry>> {
    let (mut settings, _) = tuning.settings_for(path)?;
    let file = path.display().to_string();
    let in_share = |e: &ClipEntry| shard.is_none_or(|s| s.takes(&file, &e.report.name));
    let file_key = cache
        .and_then(|_| std::fs::read(path).ok())
        .and_then(|bytes| file_report::file_key(path, &bytes, &settings.key_text()));
    if let (Some(cache), Some(key)) = (cache, &file_key)
        && let Some(json) = cache.fetch_file_report(key)
    {
        match serde_json::from_slice::<Vec<ClipEntry>>(&json) {
            Ok(all) => {
                let mine: Vec<ClipEntry> = all
                    .into_iter()
                    .map(|e| ClipEntry {
                        file: file.clone(),
                        cached: true,
                        ..e
                    })
                    .filter(in_share)
                    .collect();
                cache.record_hits(mine.len() as u64);
                return Ok(mine);
            }
            Err(e) => cache.refuse(format!("a file report does not parse: {e}")),
        }
    }
    let mut asset = import::load(path)?;
    crate::settings::takes::split(&mut asset, &mut settings)
        .map_err(|m| anyhow::anyhow!("{}: {m}", path.display()))?;
    let chosen: Vec<usize> = (0..asset.clips.len())
        .filter(|&i| shard.is_none_or(|s| s.takes(&file, &asset.clips[i].name)))
        .collect();
    let entries = chosen
        .par_iter()
        .map(|&clip_index| {
            let resolved = settings.resolve(&asset, &asset.clips[clip_index].name);
            // Sampled finer where the source's curve leaves the chord of its frames.
            let fine =
                codec::grid::for_codec(&asset.skeleton, &asset.clips[clip_index], &resolved.limits);
            let clip: &crate::model::Clip = &fine;
            let control = Control::new();
            let (out, cached) = match cache {
                Some(c) => c.compress(&asset.skeleton, clip, &resolved, &control),
                None => {
                    codec::compress(&asset.skeleton, clip, &resolved, &control).map(|o| (o, false))
                }
            }
            .with_context(|| {
                format!(
                    "{}: clip '{}'",
                    path.display(),
                    crate::quote::clipped(&clip.name)
                )
            })?;
            // A joint held at storable values misses its tolerance at those frames.
            let mut out = out;
            for (_, line) in asset.held.iter().filter(|(c, _)| *c == clip.name) {
                out.report.contract_met = false;
                eprintln!("warning: {}: {line}", path.display());
            }
            let first = asset.skeleton.deforming_joints().next().unwrap_or(0);
            let sockets = resolved.limits.socket_count();
            let worst_socket = (sockets > 0)
                .then(|| {
                    let reference = Reference::new(&asset.skeleton, clip, clip.frame_count);
                    let errors = socket_errors(&asset.skeleton, &reference, &out, &resolved.limits);
                    worst_socket(&errors).cloned()
                })
                .flatten();
            Ok(ClipEntry {
                file: file.clone(),
                clip_index,
                unit: resolved.unit,
                tolerance: resolved.limits.tolerance[first],
                marker_offset: resolved.limits.marker_offset[first],
                report: out.report,
                scalar_tracks: clip.scalar_tracks.len(),
                sockets,
                worst_socket,
                cached,
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    // A whole file's report is stored only when this run computed all of it.
    if let (Some(cache), Some(key), None) = (cache, &file_key, shard) {
        cache.put_file_report(key, &serde_json::to_vec(&entries)?);
    }
    Ok(entries)
}

/// How the report is printed.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Style {
    Table,
    Json,
    JsonLines,
}

/// Prints entries as they come (a table, one JSON document written piecewise, or JSON lines).
pub struct Printer<W: Write> {
    out: W,
    style: Style,
    first: bool,
}

impl<W: Write> Printer<W> {
    /// A printer of one JSON document.
    pub fn json(out: W) -> Self {
        Self {
            out,
            style: Style::Json,
            first: true,
        }
    }

    /// Opens the output; a sharded JSON report starts with its shard header.
    pub fn start(&mut self, shard: Option<&ShardHeader>) -> anyhow::Result<()> {
        match self.style {
            Style::Json => {
                writeln!(self.out, "{{")?;
                if let Some(h) = shard {
                    let text = serde_json::to_string(h)?;
                    writeln!(self.out, "  \"shard\": {text},")?;
                }
                writeln!(self.out, "  \"clips\": [")?;
            }
            Style::Table => writeln!(self.out, "{}", table::header())?,
            Style::JsonLines => {}
        }
        Ok(())
    }

    /// One entry of the JSON document.
    pub fn json_entry(&mut self, entry: &impl Serialize) -> anyhow::Result<()> {
        let text = serde_json::to_string_pretty(entry)?;
        let sep = if std::mem::take(&mut self.first) {
            ""
        } else {
            ",\n"
        };
        write!(self.out, "{sep}{}", indent(&text, "    "))?;
        Ok(())
    }

    fn file(&mut self, entries: &[ClipEntry]) -> anyhow::Result<()> {
        if self.style == Style::Table
            && let Some(e) = entries.first()
        {
            writeln!(self.out, "{}", e.file)?;
        }
        for e in entries {
            match self.style {
                Style::Json => self.json_entry(e)?,
                Style::JsonLines => {
                    let line = serde_json::json!({
                        "file": e.file,
                        "clip": e.report.name,
                        "clip_index": e.clip_index,
                        "frames": e.report.frames,
                        "raw_bytes": e.report.raw_bytes,
                        "payload_bytes": e.report.payload_bytes,
                        "max_error": e.report.error_samples.max.max(e.report.error_midpoints.max),
                        "tolerance": e.tolerance,
                        "contract_met": e.report.contract_met,
                        "cached": e.cached,
                        "compress_ms": e.report.compress_ms,
                    });
                    writeln!(self.out, "{line}")?;
                }
                Style::Table => {
                    let row = table::row(
                        &format!("  {}", e.report.name),
                        &e.report,
                        e.unit,
                        e.tolerance,
                    );
                    writeln!(self.out, "{row}")?;
                }
            }
        }
        Ok(self.out.flush()?)
    }

    fn failed(&mut self, file: &Path, error: &anyhow::Error) -> anyhow::Result<()> {
        if self.style == Style::JsonLines {
            let line = serde_json::json!({
                "error": { "file": file.display().to_string(), "message": format!("{error:#}") }
            });
            writeln!(self.out, "{line}")?;
        } else {
            eprintln!("error: {error:#}");
        }
        Ok(())
    }

    /// Closes the output with the totals (and, for JSON lines, the run's summary).
    pub fn finish(
        &mut self,
        totals: &Totals,
        cache: Option<CacheStats>,
        seconds: f64,
    ) -> anyhow::Result<()> {
        match self.style {
            Style::Json => {
                let t = serde_json::to_string_pretty(totals)?;
                writeln!(
                    self.out,
                    "\n  ],\n  \"totals\": {}\n}}",
                    indent(&t, "  ").trim_start()
                )?;
            }
            Style::JsonLines => {
                let line = serde_json::json!({
                    "summary": { "totals": totals, "cache": cache, "seconds": seconds }
                });
                writeln!(self.out, "{line}")?;
            }
            Style::Table => writeln!(
                self.out,
                "total: {} clips, raw {} B, payload {} B, ratio {:.2}x, all within tolerance: {}",
                totals.clips,
                totals.raw_bytes,
                totals.payload_bytes,
                totals.ratio,
                if totals.contract_met { "yes" } else { "NO" }
            )?,
        }
        Ok(self.out.flush()?)
    }
}

fn indent(text: &str, pad: &str) -> String {
    text.lines()
        .map(|l| format!("{pad}{l}"))
        .collect::<Vec<_>>()
        .join("\n")
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if !args.merge.is_empty() {
        return report_merge::run(&args.merge);
    }
    let started = Instant::now();
    let mut files = Vec::new();
    for p in &args.paths {
        files
            .extend(import::collect_files(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?);
    }
    let cache = args.cache.open_with(args.tuning.settings.as_deref())?;
    let style = if args.json {
        Style::Json
    } else if args.jsonl {
        Style::JsonLines
    } else {
        Style::Table
    };
    let bar = if std::io::stderr().is_terminal() && style == Style::Table {
        let b = ProgressBar::new(files.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} files {elapsed}").expect("template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let mut printer = Printer {
        out: std::io::stdout().lock(),
        style,
        first: true,
    };
    let header = args.shard.map(|s| ShardHeader {
        index: s.index,
        count: s.count,
        files: files.iter().map(|f| f.display().to_string()).collect(),
    });
    printer.start(header.as_ref())?;
    let mut totals = Totals::new();
    // One batch of files per round: at most one file per worker in memory at a time.
    for batch in files.chunks(rayon::current_num_threads().max(1)) {
        let results: Vec<_> = batch
            .par_iter()
            .map(|f| {
                let r = process(f, &args.tuning, cache.as_ref(), args.shard);
                bar.inc(1);
                r
            })
            .collect();
        for (f, r) in batch.iter().zip(results) {
            match r {
                Ok(entries) => {
                    bar.suspend(|| printer.file(&entries))?;
                    for e in &entries {
                        let r = &e.report;
                        totals.add(r.raw_bytes, r.payload_bytes, r.contract_met);
                    }
                }
                Err(e) => {
                    bar.suspend(|| printer.failed(f, &e))?;
                    totals.failed_files.push(f.display().to_string());
                }
            }
        }
    }
    bar.finish_and_clear();
    totals.close();
    if let Some(c) = &cache {
        c.finish();
    }
    let stats = cache.as_ref().map(|c| c.stats());
    printer.finish(&totals, stats, started.elapsed().as_secs_f64())?;
    if let Some(c) = &cache {
        eprintln!("{}", summary_line(c));
    }
    Ok(totals.exit_code())
}
