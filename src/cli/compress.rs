//! `skelpack compress INPUT [-o OUT.skp|.glb|.gltf] [settings flags] [--player portable|gltf]
//! [--drop-rest-channels] [--fit-kb N] [--json] [--force] [--cache DIR|URL]`: compress every
//! clip of one file, print the report, write the result atomically.
//!
//! Several inputs or a folder, with `--out-dir DIR [--format skp|glb|gltf] [--shard I/N]
//! [--jsonl]`, make a batch run ([`super::compress_batch`]).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use rayon::prelude::*;
use serde::Serialize;

use super::cache_args::{CacheArgs, summary_line};
use super::table;
use super::tuning::TuningArgs;
use crate::cache::{ResultCache, gltf_export};
use crate::codec::{self, ClipReport, CompressedClip, Control};
use crate::import::{self, Asset};
use crate::model::format_mm;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The file to compress (glTF, BVH, ACL clip or FBX); several files or folders with
    /// `--out-dir`.
    #[arg(required = true)]
    pub inputs: Vec<PathBuf>,
    /// Output: `.skp` (default: beside the input), or `.glb` / `.gltf` for a compressed glTF.
    #[arg(short, long)]
    pub output: Option<PathBuf>,
    /// Print the report as JSON.
    #[arg(long)]
    pub json: bool,
    /// Allow overwriting the input file.
    #[arg(long)]
    pub force: bool,
    /// glTF output: the players it must hold in. `portable` (default): verified under
    /// slerp (the glTF spec), nlerp (Blender's per-component rotation curves, most game
    /// runtimes) and key values used as stored (three.js with quantized keys); LINEAR
    /// channels only. `gltf`: verified under the spec only (slerp, CUBICSPLINE tangents),
    /// smaller, for players that follow it exactly.
    #[arg(long, default_value = "portable", value_parser = ["portable", "gltf"])]
    pub player: String,
    /// glTF output: drop channels that hold the rest pose even where the source animated
    /// the property (smaller; players that keep the previous clip's value on un-keyed
    /// bones then show it when switching clips).
    #[arg(long)]
    pub drop_rest_channels: bool,
    /// glTF output: byte-compress the animation data with EXT_meshopt_compression
    /// (lossless; meshoptimizer's codec). `required` (default when given without a value):
    /// smallest, only meshopt-aware loaders (three.js with MeshoptDecoder, Babylon.js,
    /// gltfpack-aware engines) open it; `fallback`: the uncompressed data is kept too and
    /// the extension is optional, so any loader plays it.
    #[arg(long, num_args = 0..=1, default_missing_value = "required", value_parser = ["required", "fallback"])]
    pub meshopt: Option<String>,
    /// Fit the file's clips in this many KiB of animation payload: every tolerance is
    /// scaled by one factor (per-joint ratios kept), searched for the tightest that fits.
    /// `.skp` output only.
    #[arg(long, value_name = "KIB")]
    pub fit_kb: Option<f64>,
    #[command(flatten)]
    pub tuning: TuningArgs,
    /// Take unchanged results from a cache: `.skp` output clip by clip, glTF output file by
    /// file (sources that read no other file); not used by `--fit-kb`.
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub batch: super::compress_batch::BatchArgs,
}

#[derive(Serialize)]
struct Output<'a> {
    input: String,
    output: String,
    output_bytes: u64,
    settings_file: Option<String>,
    clips: Vec<&'a ClipReport>,
    /// Where `--fit-kb` landed (scale on every tolerance, bytes, error; every probe).
    #[serde(skip_serializing_if = "Option::is_none")]
    fit: Option<&'a codec::size_budget::Fit>,
}

/// Compresses every clip of `asset` with `settings` in parallel, taking unchanged clips from
/// `cache` when there is one.
pub fn compress_all(
    asset: &Asset,
    settings: &crate::settings::Settings,
    cache: Option<&ResultCache>,
) -> anyhow::Result<Vec<CompressedClip>> {
    Ok(compress_all_counted(asset, settings, cache)?
        .into_iter()
        .map(|(c, _)| c)
        .collect())
}

/// [`compress_all`], each clip with whether it came from the cache.
pub fn compress_all_counted(
    asset: &Asset,
    settings: &crate::settings::Settings,
    cache: Option<&ResultCache>,
) -> anyhow::Result<Vec<(CompressedClip, bool)>> {
    asset
        .clips
        .par_iter()
        .map(|clip| {
            let resolved = settings.resolve(asset, &clip.name);
            // Sampled finer where the source's curve leaves the chord of its frames.
            let fine = codec::grid::for_codec(&asset.skeleton, clip, &resolved.limits);
            let clip: &crate::model::Clip = &fine;
            let control = Control::new();
            match cache {
                Some(c) => c.compress(&asset.skeleton, clip, &resolved, &control),
                None => codec::compress(&asset.skeleton, clip, &resolved, &control)
                    .map(|out| (out, false)),
            }
            .with_context(|| {
                format!(
                    "{}: clip '{}'",
                    asset.path.display(),
                    crate::quote::clipped(&clip.name)
                )
            })
        })
        .collect()
}

fn default_output(input: &Path) -> PathBuf {
    with_output_ext(input, "skp")
}

/// `input` with its extension (`.acl.sjson` as one) replaced by `ext`.
pub(super) fn with_output_ext(input: &Path, ext: &str) -> PathBuf {
    let name = input
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let stem = name
        .strip_suffix(".acl.sjson")
        .map(str::to_owned)
        .unwrap_or_else(|| {
            Path::new(&name)
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or(name.clone())
        });
    input.with_file_name(format!("{stem}.{ext}"))
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    let single = args.inputs.len() == 1 && !args.inputs[0].is_dir();
    if !single || args.batch.out_dir.is_some() {
        return super::compress_batch::run(&args);
    }
    let input = args.inputs[0].clone();
    let (asset, settings, settings_file) = load(&args, &input, "")?;
    let output = args
        .output
        .clone()
        .unwrap_or_else(|| default_output(&input));
    check_target(&args, &input, &output)?;
    let ext = output
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    if (ext == "glb" || ext == "gltf") && args.fit_kb.is_some() {
        bail!("--fit-kb writes a .skp (use -o OUT.skp)");
    }
    let cache = args.cache.open_with(args.tuning.settings.as_deref())?;
    let finish = |cache: &Option<ResultCache>| {
        if let Some(c) = cache {
            c.finish();
            eprintln!("{}", summary_line(c));
        }
    };
    if ext == "glb" || ext == "gltf" {
        let written = export_gltf(&args, &asset, &settings, &output, cache.as_ref());
        finish(&cache);
        return print_gltf(&args, &asset, &settings, &output, written?);
    }
    if ext != "skp" {
        bail!(
            "{}: unknown output type '.{ext}' (use .skp, .glb or .gltf)",
            output.display()
        );
    }
    let (clips, fit) = match args.fit_kb {
        Some(kib) => {
            let (fit, clips) = fit_in(&asset, &settings, kib)?;
            (clips, Some(fit))
        }
        None => {
            let clips = compress_all(&asset, &settings, cache.as_ref());
            finish(&cache);
            (clips?, None)
        }
    };
    let mut clips = clips;
    mark_held(&asset, &mut clips);
    let output_bytes = write_skp(&asset, &clips, &output)?;
    let ok = clips.iter().all(|c| c.report.contract_met);
    if args.json {
        let out = Output {
            input: input.display().to_string(),
            output: output.display().to_string(),
            output_bytes,
            settings_file: settings_file.map(|p| p.display().to_string()),
            clips: clips.iter().map(|c| &c.report).collect(),
            fit: fit.as_ref(),
        };
        println!("{}", serde_json::to_string_pretty(&out)?);
    } else {
        println!("{}", table::header());
        // Tolerances as compressed: scaled when fitted to a size.
        let scale = fit
            .as_ref()
            .and_then(|f| f.reached())
            .map_or(1.0, |p| p.scale);
        for c in &clips {
            let resolved = settings.resolve(&asset, &c.name);
            let first = asset.skeleton.deforming_joints().next().unwrap_or(0);
            println!(
                "{}",
                table::row(
                    &c.name,
                    &c.report,
                    resolved.unit,
                    resolved.limits.tolerance[first] * scale
                )
            );
            for f in &c.report.failures {
                println!(
                    "  cannot meet tolerance at joint '{}': {} over {} (the tightest it can reach, its floor: {})",
                    f.joint,
                    format_mm(table::mm(f.max_error, resolved.unit)),
                    format_mm(table::mm(f.tolerance, resolved.unit)),
                    format_mm(table::mm(f.floor, resolved.unit))
                );
            }
        }
        if let Some(fit) = &fit {
            println!("{}", fit_line(fit, settings.unit_for(&asset)));
        }
        println!("wrote {} ({} bytes)", output.display(), output_bytes);
    }
    let fits = fit.as_ref().is_none_or(|f| f.best.is_some());
    Ok(if ok && fits { 0 } else { 1 })
}

/// Imports `input` and finds its settings, printing the import's and the settings' warnings
/// (each line after `prefix`).
pub(super) fn load(
    args: &Args,
    input: &Path,
    prefix: &str,
) -> anyhow::Result<(Asset, crate::settings::Settings, Option<PathBuf>)> {
    let mut asset = import::load(input)?;
    for w in &asset.warnings {
        eprintln!("warning: {prefix}{w}");
    }
    let (mut settings, settings_file) = args.tuning.settings_for(input)?;
    crate::settings::takes::split(&mut asset, &mut settings)
        .map_err(|m| anyhow::anyhow!("{}: {m}", input.display()))?;
    for w in settings.event_warnings(&asset) {
        eprintln!("warning: {prefix}{w}");
    }
    if let Some(w) = settings.unit_warning(&asset) {
        eprintln!("warning: {prefix}{w}");
    }
    let names: Vec<&str> = asset.clips.iter().map(|c| c.name.as_str()).collect();
    let (unknown_joints, unknown_clips) = settings.unknown_names(&asset.skeleton, &names);
    if !unknown_joints.is_empty() {
        eprintln!(
            "warning: {prefix}settings name joints the skeleton does not have: {}",
            unknown_joints.join(", ")
        );
    }
    if !unknown_clips.is_empty() {
        eprintln!(
            "warning: {prefix}settings name clips the file does not have: {}",
            unknown_clips.join(", ")
        );
    }
    Ok((asset, settings, settings_file))
}

/// Refuses an output that is the input (without `--force`) or cannot be written.
pub(super) fn check_target(args: &Args, input: &Path, output: &Path) -> anyhow::Result<()> {
    if crate::fsutil::same_file(output, input) && !args.force {
        bail!(
            "{}: refusing to overwrite the input (use --force)",
            output.display()
        );
    }
    crate::fsutil::check_output(output).map_err(|e| anyhow::anyhow!("{}: {e}", output.display()))
}

/// Compresses every clip with its tolerances scaled to fit `kib` KiB of payload together.
fn fit_in(
    asset: &Asset,
    settings: &crate::settings::Settings,
    kib: f64,
) -> anyhow::Result<(codec::size_budget::Fit, Vec<CompressedClip>)> {
    if !(kib.is_finite() && kib > 0.0) {
        bail!("--fit-kb must be a positive number of KiB, not {kib}");
    }
    let budget = (kib * 1024.0).min(u64::MAX as f64) as u64;
    let fine: Vec<_> = asset
        .clips
        .iter()
        .map(|c| {
            let resolved = settings.resolve(asset, &c.name);
            let fine = codec::grid::for_codec(&asset.skeleton, c, &resolved.limits);
            (fine, resolved)
        })
        .collect();
    let clips: Vec<_> = fine.iter().map(|(c, r)| (&**c, r.clone())).collect();
    Ok(codec::size_budget::fit_clips(
        &asset.skeleton,
        &clips,
        budget,
        &Control::new(),
    )?)
}

/// One line on where the search landed.
fn fit_line(fit: &codec::size_budget::Fit, unit: crate::model::LengthUnit) -> String {
    let Some(p) = fit.reached() else {
        return "fit: no clip to fit".into();
    };
    format!(
        "fit in {:.1} KiB: {} at tolerances x{:.3} ({} B, max error {}, {} compressions){}",
        fit.budget_bytes as f64 / 1024.0,
        if fit.best.is_some() {
            "fits"
        } else {
            "DOES NOT FIT"
        },
        p.scale,
        p.bytes,
        format_mm(table::mm(p.max_error, unit)),
        fit.probes.len(),
        if fit.best.is_some() {
            ""
        } else {
            " (the smallest size reached)"
        }
    )
}

/// Marks the clips in which the import held a joint at storable values (its warning names
/// the joint and frames): they miss their tolerance at those frames.
pub(super) fn mark_held(asset: &Asset, clips: &mut [CompressedClip]) {
    for c in clips {
        if asset.held.iter().any(|(name, _)| *name == c.name) {
            c.report.contract_met = false;
        }
    }
}

/// Writes `clips` as a `.skp` container; its size in bytes.
pub(super) fn write_skp(
    asset: &Asset,
    clips: &[CompressedClip],
    output: &Path,
) -> anyhow::Result<u64> {
    crate::container::write(output, &asset.skeleton, clips)
        .with_context(|| format!("{}: cannot write", output.display()))
}

/// One animation of a glTF export, as the summary table shows it (read back from the
/// exporter's JSON report, which a cached export keeps).
#[derive(serde::Deserialize)]
pub(super) struct AnimationLine {
    pub name: String,
    pub original_bytes: usize,
    pub exported_bytes: usize,
    pub stored_bytes: usize,
    pub max_error: f32,
    pub worst_ratio: f32,
}

/// A glTF export as written (or taken from the cache).
pub(super) struct GltfWritten {
    /// The exporter's JSON report, exactly as `--json` prints it.
    pub report_json: String,
    pub animations: Vec<AnimationLine>,
    pub warnings: Vec<String>,
    pub from_cache: bool,
}

impl GltfWritten {
    /// Whether every animation holds its tolerance.
    pub fn ok(&self) -> bool {
        self.animations.iter().all(|a| a.worst_ratio <= 1.0)
    }
}

/// The export options the flags ask for.
fn gltf_options(args: &Args) -> crate::export::GltfOptions {
    crate::export::GltfOptions {
        player: crate::export::Player::parse(&args.player).unwrap_or_default(),
        drop_rest_channels: args.drop_rest_channels,
        meshopt: args.meshopt.as_deref().map(|m| match m {
            "fallback" => crate::export::meshopt::Fallback::Kept,
            _ => crate::export::meshopt::Fallback::None,
        }),
    }
}

/// Writes a compressed glTF (the input file with its animations replaced), verified as a
/// glTF player will evaluate it, or copies the export a cache holds for the same source,
/// settings, options and tool.
pub(super) fn export_gltf(
    args: &Args,
    asset: &Asset,
    settings: &crate::settings::Settings,
    output: &Path,
    cache: Option<&ResultCache>,
) -> anyhow::Result<GltfWritten> {
    // glTF has no loop, root-motion or additive flag: its clips are the source's frames.
    let settings = settings.without_playback();
    let options = gltf_options(args);
    let ext = output
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    let key = cache
        .and_then(|_| std::fs::read(&asset.path).ok())
        .and_then(|bytes| {
            gltf_export::export_key(
                &asset.path,
                &bytes,
                &settings.key_text(),
                &format!("{options:?}"),
                &ext,
            )
        });
    let read = |report_json: String, warnings: Vec<String>, from_cache: bool| {
        let animations =
            serde_json::from_str(&report_json).context("the export's report does not read back")?;
        anyhow::Ok(GltfWritten {
            report_json,
            animations,
            warnings,
            from_cache,
        })
    };
    if let (Some(cache), Some(key)) = (cache, &key)
        && let Some(hit) = cache.fetch_export(key, &ext)
    {
        crate::fsutil::write_atomic(output, &hit.output)
            .with_context(|| format!("{}: cannot write", output.display()))?;
        return read(hit.report_json, hit.warnings, true);
    }
    let result = crate::export::compress_to_gltf(asset, &settings, output, &options, args.force)?;
    let report_json = serde_json::to_string_pretty(&result.animations)?;
    if let Some(cache) = cache {
        cache.record_computed(result.animations.len() as u64);
    }
    if let (Some(cache), Some(key)) = (cache, &key)
        && let Ok(bytes) = std::fs::read(output)
    {
        cache.put_export(
            key,
            &gltf_export::CachedExport {
                report_json: report_json.clone(),
                warnings: result.warnings.clone(),
                output: bytes,
            },
        );
    }
    read(report_json, result.warnings, false)
}

/// Prints what [`export_gltf`] wrote: animation bytes as `animeval.py` counts them.
fn print_gltf(
    args: &Args,
    asset: &Asset,
    settings: &crate::settings::Settings,
    output: &Path,
    written: GltfWritten,
) -> anyhow::Result<i32> {
    for w in &written.warnings {
        eprintln!("warning: {}: {w}", output.display());
    }
    if args.json {
        println!("{}", written.report_json);
    } else {
        let unit = crate::export::metres::gltf_unit(asset, settings);
        println!(
            "{:<40} {:>12} {:>12} {:>10} {:>8} {:>10} {:>6}  ok",
            "animation", "original B", "exported B", "stored B", "ratio", "max err", "ratio"
        );
        for a in &written.animations {
            println!(
                "{:<40} {:>12} {:>12} {:>10} {:>7.2}x {:>8.4}mm {:>6.2}  {}",
                a.name,
                a.original_bytes,
                a.exported_bytes,
                a.stored_bytes,
                a.original_bytes as f64 / a.stored_bytes.max(1) as f64,
                table::mm(a.max_error, unit),
                a.worst_ratio,
                if a.worst_ratio <= 1.0 { "yes" } else { "NO" }
            );
        }
        let bytes = std::fs::metadata(output).map(|m| m.len()).unwrap_or(0);
        println!("wrote {} ({bytes} bytes)", output.display());
    }
    // A joint held at storable values (the import's warning names it) misses its
    // tolerance at those frames.
    Ok(if written.ok() && asset.held.is_empty() {
        0
    } else {
        1
    })
}
