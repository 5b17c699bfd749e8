//! `report --merge A.json B.json ...`: the shards' `--json` reports (`report --shard I/N
//! --json`) joined into the report one run over the same files writes: the clips in the
//! batch's file order and each file's clip order, the failed files once each, the totals
//! counted again. Every shard of the run must be given, once.

use std::collections::HashMap;
use std::path::PathBuf;

use anyhow::{Context, bail};
use serde_json::Value;

use super::report::{ClipEntry, Printer, ShardHeader, Totals};

struct ShardReport {
    header: ShardHeader,
    clips: Vec<ClipEntry>,
    failed: Vec<String>,
}

fn read(path: &PathBuf) -> anyhow::Result<ShardReport> {
    let text = std::fs::read_to_string(path).with_context(|| format!("{}", path.display()))?;
    let mut doc: Value = serde_json::from_str(&text)
        .with_context(|| format!("{}: not a JSON report", path.display()))?;
    let header: ShardHeader = serde_json::from_value(doc["shard"].take()).with_context(|| {
        format!(
            "{}: not a sharded report (write it with report --shard I/N --json)",
            path.display()
        )
    })?;
    // Typed, so every number is written back as the single run wrote it (f32 and f64 print
    // small values differently).
    let clips: Vec<ClipEntry> = serde_json::from_value(doc["clips"].take())
        .with_context(|| format!("{}: its \"clips\" are not a report's", path.display()))?;
    let failed = serde_json::from_value(doc["totals"]["failed_files"].take())
        .with_context(|| format!("{}: no totals.failed_files", path.display()))?;
    Ok(ShardReport {
        header,
        clips,
        failed,
    })
}

/// Merges the reports at `paths` and prints the result; returns the exit code a single run
/// would have had.
pub fn run(paths: &[PathBuf]) -> anyhow::Result<i32> {
    let shards = paths.iter().map(read).collect::<anyhow::Result<Vec<_>>>()?;
    let first = &shards[0].header;
    let mut seen = vec![false; first.count as usize];
    for (s, p) in shards.iter().zip(paths) {
        let h = &s.header;
        if h.count != first.count || h.files != first.files {
            bail!(
                "{}: a shard of another run (other files or shard count than {})",
                p.display(),
                paths[0].display()
            );
        }
        if std::mem::replace(&mut seen[h.index as usize], true) {
            bail!("{}: shard {}/{} given twice", p.display(), h.index, h.count);
        }
    }
    let missing: Vec<String> = (0..seen.len())
        .filter(|&i| !seen[i])
        .map(|i| format!("{i}/{}", first.count))
        .collect();
    if !missing.is_empty() {
        bail!("missing shards: {}", missing.join(", "));
    }
    let order: HashMap<&str, usize> = first
        .files
        .iter()
        .enumerate()
        .map(|(i, f)| (f.as_str(), i))
        .collect();
    let position = |file: &str| order.get(file).copied().unwrap_or(usize::MAX);

    let mut clips: Vec<&ClipEntry> = shards.iter().flat_map(|s| &s.clips).collect();
    clips.sort_by_key(|c| (position(&c.file), c.clip_index));
    let mut failed: Vec<&String> = shards.iter().flat_map(|s| &s.failed).collect();
    failed.sort_by_key(|f| position(f));
    failed.dedup();

    let mut totals = Totals::new();
    for c in &clips {
        let r = &c.report;
        totals.add(r.raw_bytes, r.payload_bytes, r.contract_met);
    }
    totals.failed_files = failed.into_iter().cloned().collect();
    totals.close();

    let mut printer = Printer::json(std::io::stdout().lock());
    printer.start(None)?;
    for c in clips {
        printer.json_entry(c)?;
    }
    printer.finish(&totals, None, 0.0)?;
    Ok(totals.exit_code())
}
