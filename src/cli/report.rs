//! `skelpack report PATH... [--json] [--preset NAME]`: compress every clip of every file
//! (folders recursively) and print a table per clip and the totals.
//!
//! Streaming: files are loaded, compressed and printed a batch at a time (one file per
//! worker thread; a file's clips are compressed in parallel), and only the totals are kept,
//! so memory does not grow with the number of files. Output order is the file order.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use indicatif::{ProgressBar, ProgressStyle};
use rayon::prelude::*;
use serde::Serialize;

use super::table;
use super::tuning::TuningArgs;
use crate::codec::{self, ClipReport, Control};
use crate::import;
use crate::model::LengthUnit;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// Files or folders (searched recursively for .glb, .gltf, .bvh, .acl.sjson).
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Print JSON instead of a table.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub tuning: TuningArgs,
}

/// One clip's line in the JSON output.
#[derive(Serialize)]
pub struct ClipEntry {
    pub file: String,
    pub unit: LengthUnit,
    pub tolerance: f32,
    pub marker_offset: f32,
    pub report: ClipReport,
}

#[derive(Serialize, Default)]
struct Totals {
    clips: usize,
    raw_bytes: u64,
    payload_bytes: u64,
    ratio: f64,
    contract_met: bool,
    failed_files: Vec<String>,
}

/// Loads one file and compresses its clips (in parallel); the asset is dropped on return.
fn process(path: &Path, tuning: &TuningArgs) -> anyhow::Result<Vec<ClipEntry>> {
    let asset = import::load(path)?;
    let (settings, _) = tuning.settings_for(path)?;
    asset
        .clips
        .par_iter()
        .map(|clip| {
            let resolved = settings.resolve(&asset, &clip.name);
            let out = codec::compress(&asset.skeleton, clip, &resolved, &Control::new())
                .with_context(|| {
                    format!(
                        "{}: clip '{}'",
                        path.display(),
                        crate::quote::clipped(&clip.name)
                    )
                })?;
            let first = asset.skeleton.deforming_joints().next().unwrap_or(0);
            Ok(ClipEntry {
                file: asset.path.display().to_string(),
                unit: resolved.unit,
                tolerance: resolved.limits.tolerance[first],
                marker_offset: resolved.limits.marker_offset[first],
                report: out.report,
            })
        })
        .collect()
}

/// Prints entries as they come (a table, or one JSON document written piecewise).
struct Printer<W: Write> {
    out: W,
    json: bool,
    first: bool,
}

impl<W: Write> Printer<W> {
    fn start(&mut self) -> std::io::Result<()> {
        if self.json {
            writeln!(self.out, "{{\n  \"clips\": [")
        } else {
            writeln!(self.out, "{}", table::header())
        }
    }

    fn file(&mut self, entries: &[ClipEntry]) -> anyhow::Result<()> {
        if !self.json
            && let Some(e) = entries.first()
        {
            writeln!(self.out, "{}", e.file)?;
        }
        for e in entries {
            if self.json {
                let text = serde_json::to_string_pretty(e)?;
                let sep = if std::mem::take(&mut self.first) {
                    ""
                } else {
                    ",\n"
                };
                write!(self.out, "{sep}{}", indent(&text, "    "))?;
            } else {
                let row = table::row(
                    &format!("  {}", e.report.name),
                    &e.report,
                    e.unit,
                    e.tolerance,
                );
                writeln!(self.out, "{row}")?;
            }
        }
        Ok(self.out.flush()?)
    }

    fn finish(&mut self, totals: &Totals) -> anyhow::Result<()> {
        if self.json {
            let t = serde_json::to_string_pretty(totals)?;
            writeln!(
                self.out,
                "\n  ],\n  \"totals\": {}\n}}",
                indent(&t, "  ").trim_start()
            )?;
        } else {
            writeln!(
                self.out,
                "total: {} clips, raw {} B, payload {} B, ratio {:.2}x, all within tolerance: {}",
                totals.clips,
                totals.raw_bytes,
                totals.payload_bytes,
                totals.ratio,
                if totals.contract_met { "yes" } else { "NO" }
            )?;
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
    let mut files = Vec::new();
    for p in &args.paths {
        files
            .extend(import::collect_files(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?);
    }
    let bar = if std::io::stderr().is_terminal() && !args.json {
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
        json: args.json,
        first: true,
    };
    printer.start()?;
    let mut totals = Totals {
        contract_met: true,
        ..Totals::default()
    };
    // One batch of files per round: at most one file per worker in memory at a time.
    for batch in files.chunks(rayon::current_num_threads().max(1)) {
        let results: Vec<_> = batch
            .par_iter()
            .map(|f| {
                let r = process(f, &args.tuning);
                bar.inc(1);
                r
            })
            .collect();
        for (f, r) in batch.iter().zip(results) {
            match r {
                Ok(entries) => {
                    bar.suspend(|| printer.file(&entries))?;
                    totals.clips += entries.len();
                    for e in &entries {
                        totals.raw_bytes += e.report.raw_bytes;
                        totals.payload_bytes += e.report.payload_bytes;
                        totals.contract_met &= e.report.contract_met;
                    }
                }
                Err(e) => {
                    bar.suspend(|| eprintln!("error: {e:#}"));
                    totals.failed_files.push(f.display().to_string());
                }
            }
        }
    }
    bar.finish_and_clear();
    totals.ratio = totals.raw_bytes as f64 / totals.payload_bytes.max(1) as f64;
    printer.finish(&totals)?;
    Ok(if !totals.failed_files.is_empty() {
        2
    } else if totals.contract_met {
        0
    } else {
        1
    })
}
