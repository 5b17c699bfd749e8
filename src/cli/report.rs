//! `skelpack report PATH... [--json] [--preset NAME]`: compress every clip of every file
//! (folders recursively) in parallel and print a table per clip and the totals.

use std::io::IsTerminal;
use std::path::PathBuf;

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

#[derive(Serialize)]
struct Totals {
    clips: usize,
    raw_bytes: u64,
    payload_bytes: u64,
    ratio: f64,
    contract_met: bool,
    failed_files: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let mut files = Vec::new();
    for p in &args.paths {
        files
            .extend(import::collect_files(p).map_err(|e| anyhow::anyhow!("{}: {e}", p.display()))?);
    }
    let mut failed_files = Vec::new();
    let mut jobs = Vec::new();
    for f in &files {
        match import::load(f) {
            Ok(asset) => {
                let (settings, _) = args.tuning.settings_for(f)?;
                let asset = std::sync::Arc::new(asset);
                for c in 0..asset.clips.len() {
                    jobs.push((asset.clone(), settings.clone(), c));
                }
            }
            Err(e) => {
                eprintln!("error: {e}");
                failed_files.push(f.display().to_string());
            }
        }
    }
    let bar = if std::io::stderr().is_terminal() && !args.json {
        let b = ProgressBar::new(jobs.len() as u64);
        b.set_style(
            ProgressStyle::with_template("{bar:40} {pos}/{len} clips {elapsed}").expect("template"),
        );
        b
    } else {
        ProgressBar::hidden()
    };
    let results: Vec<anyhow::Result<ClipEntry>> = jobs
        .par_iter()
        .map(|(asset, settings, c)| {
            let clip = &asset.clips[*c];
            let resolved = settings.resolve(asset, &clip.name);
            let out = codec::compress(&asset.skeleton, clip, &resolved, &Control::new())?;
            bar.inc(1);
            let first = asset.skeleton.deforming_joints().next().unwrap_or(0);
            Ok(ClipEntry {
                file: asset.path.display().to_string(),
                unit: resolved.unit,
                tolerance: resolved.limits.tolerance[first],
                marker_offset: resolved.limits.marker_offset[first],
                report: out.report,
            })
        })
        .collect();
    bar.finish_and_clear();
    let mut entries = Vec::new();
    for r in results {
        entries.push(r?);
    }
    let totals = Totals {
        clips: entries.len(),
        raw_bytes: entries.iter().map(|e| e.report.raw_bytes).sum(),
        payload_bytes: entries.iter().map(|e| e.report.payload_bytes).sum(),
        ratio: 0.0,
        contract_met: entries.iter().all(|e| e.report.contract_met),
        failed_files,
    };
    let totals = Totals {
        ratio: totals.raw_bytes as f64 / totals.payload_bytes.max(1) as f64,
        ..totals
    };
    if args.json {
        #[derive(Serialize)]
        struct Out<'a> {
            clips: &'a [ClipEntry],
            totals: &'a Totals,
        }
        println!(
            "{}",
            serde_json::to_string_pretty(&Out {
                clips: &entries,
                totals: &totals
            })?
        );
    } else {
        println!("{}", table::header());
        let mut last_file = String::new();
        for e in &entries {
            if e.file != last_file {
                println!("{}", e.file);
                last_file = e.file.clone();
            }
            println!(
                "{}",
                table::row(
                    &format!("  {}", e.report.name),
                    &e.report,
                    e.unit,
                    e.tolerance
                )
            );
        }
        println!(
            "total: {} clips, raw {} B, payload {} B, ratio {:.2}x, all within tolerance: {}",
            totals.clips,
            totals.raw_bytes,
            totals.payload_bytes,
            totals.ratio,
            if totals.contract_met { "yes" } else { "NO" }
        );
    }
    Ok(if !totals.failed_files.is_empty() {
        2
    } else if totals.contract_met {
        0
    } else {
        1
    })
}
