//! `skelpack convert IN OUT.glb|.gltf [--unit U] [--force]`: writes any importable file (BVH,
//! ACL SJSON, glTF, FBX) as a new glTF scene: the skeleton as nodes, each clip as a LINEAR
//! animation, meshes with their skins when the source has them. A BVH or ACL source is
//! written in metres, converted from its inferred unit (as `inspect` shows it) or `--unit`
//! ([`crate::export::metres`]). A `.skp` container is decoded (every frame, at its clip's
//! rate) into the same kind of scene, in the container's own unit.
//!
//! With `--cache`, a conversion of a source that reads no other file is taken from the result
//! cache when the same bytes were converted with the same options by the same tool
//! ([`crate::cache::gltf_export`]), and stored there otherwise.

use std::path::PathBuf;

use anyhow::Context;

use crate::cache::{ResultCache, gltf_export};
use crate::export::{metres, write_scene};
use crate::import;
use crate::model::LengthUnit;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The file to convert (.bvh, .acl.sjson, .glb, .gltf, .skp).
    pub input: PathBuf,
    /// The glTF file to write (.glb or .gltf with an embedded buffer).
    pub output: PathBuf,
    /// Replace OUTPUT even when it is the input file.
    #[arg(long)]
    pub force: bool,
    /// The source's length unit (BVH / ACL): m, cm, mm, inch, or a number of units per
    /// metre. Default: the unit inferred from the character's proportions.
    #[arg(long)]
    pub unit: Option<String>,
    #[command(flatten)]
    pub cache: super::cache_args::CacheArgs,
    /// Split a take into a clip: `NAME=SOURCE:START-END` (source frames, both included;
    /// repeatable; as the sidecar's `[takes.NAME]`).
    #[arg(long = "take", value_name = "NAME=SOURCE:START-END")]
    pub takes: Vec<String>,
}

pub fn run(args: Args) -> anyhow::Result<i32> {
    if super::skp::is_container(&args.input) {
        let (joints, clips) = super::skp::convert(&args.input, &args.output, args.force)?;
        println!(
            "{} -> {}: {joints} joints, {clips} clip(s)",
            args.input.display(),
            args.output.display()
        );
        return Ok(0);
    }
    let unit = match &args.unit {
        Some(u) => Some(LengthUnit::parse(u).with_context(|| {
            format!("--unit '{u}': expected m, cm, mm, inch, or a number of units per metre")
        })?),
        None => None,
    };
    // The sidecar's takes and events (and `--take`) are written as the scene's clips.
    let sidecar = crate::settings::Settings::sidecar_path(&args.input);
    let mut settings = if sidecar.is_file() {
        crate::settings::Settings::load(&sidecar)?
    } else {
        crate::settings::Settings::default()
    };
    super::tuning::add_takes(&mut settings, &args.takes)?;
    let cache = args.cache.open()?;
    let ext = args
        .output
        .extension()
        .and_then(|e| e.to_str())
        .unwrap_or("")
        .to_ascii_lowercase();
    // The key holds what decides the scene: the source's bytes, the unit, the takes and
    // events of the sidecar and `--take`.
    let key = cache
        .as_ref()
        .and_then(|_| std::fs::read(&args.input).ok())
        .and_then(|bytes| {
            gltf_export::export_key(
                &args.input,
                &bytes,
                &format!("convert {}", settings.key_text()),
                &format!("{unit:?}"),
                &ext,
            )
        });
    let finish = |cache: &Option<ResultCache>| {
        if let Some(c) = cache {
            c.finish();
            eprintln!("{}", super::cache_args::summary_line(c));
        }
    };
    if let (Some(c), Some(key)) = (&cache, &key)
        && !crate::fsutil::same_file(&args.output, &args.input)
        && let Some(hit) = c.fetch_export(key, &ext)
        && let Ok(lines) = serde_json::from_str::<Vec<Vec<String>>>(&hit.report_json)
    {
        crate::fsutil::write_atomic(&args.output, &hit.output)
            .with_context(|| format!("{}: cannot write", args.output.display()))?;
        for w in &hit.warnings {
            eprintln!("warning: {w}");
        }
        for l in lines.concat() {
            println!(
                "{}",
                l.replace("{OUTPUT}", &args.output.display().to_string())
            );
        }
        finish(&cache);
        return Ok(0);
    }
    let mut asset = import::load(&args.input)?;
    let mut warnings = asset.warnings.clone();
    crate::settings::takes::split(&mut asset, &mut settings)
        .map_err(|m| anyhow::anyhow!("{}: {m}", args.input.display()))?;
    warnings.extend(settings.event_warnings(&asset));
    for w in &warnings {
        eprintln!("warning: {w}");
    }
    let events: Vec<_> = (asset.clips.iter())
        .map(|c| settings.events_for(&asset, &c.name).0)
        .collect();
    for (c, e) in asset.clips.iter_mut().zip(events) {
        c.events = e;
    }
    // A source curve that leaves the chord of its frames (CUBICSPLINE, or LINEAR keys
    // between frames) is written on the grid the codec would use for it (`codec::grid`),
    // fine enough to follow the curve between frames; the scene records the source's rate.
    let grids: Vec<u32> = (asset.clips.iter())
        .map(|c| {
            let limits = settings.resolve(&asset, &c.name).limits;
            crate::codec::grid::multiplier(&asset.skeleton, c, &limits)
        })
        .collect();
    for (c, n) in asset.clips.iter_mut().zip(grids) {
        if n > 1 {
            *c = crate::codec::grid::refine(c, n);
        }
    }
    let mut lines = Vec::new();
    // glTF has no additive flag: an additive clip is written as its base with it applied.
    let (asset, composed) = crate::export::additive::compose_additives(&asset, &settings);
    for (name, a) in &composed {
        lines.push(format!(
            "{}: additive clip '{name}' ({}) written composed on its base",
            args.input.display(),
            a.mode.name()
        ));
    }
    let from = unit.unwrap_or(asset.units.unit);
    let asset = if metres::converts(asset.format) {
        if from != LengthUnit::Metre {
            lines.push(format!(
                "{}: lengths converted from {} to metres",
                args.input.display(),
                from.name()
            ));
        }
        metres::in_metres(&asset, from)
    } else {
        asset
    };
    // Pieces start at time 0, where players start an animation.
    let asset = crate::export::gltf_animations::pieces_from_time_zero(&asset, &settings);
    write_scene(
        &args.output,
        &asset.skeleton,
        &asset.clips,
        &asset.meshes,
        Some(&args.input),
        args.force,
    )
    .with_context(|| format!("converting {}", args.input.display()))?;
    lines.push(format!(
        "{} -> {{OUTPUT}}: {} joints, {} clip(s)",
        args.input.display(),
        asset.skeleton.len(),
        asset.clips.len()
    ));
    for l in &lines {
        println!(
            "{}",
            l.replace("{OUTPUT}", &args.output.display().to_string())
        );
    }
    if let Some(c) = &cache {
        c.record_computed(1);
        if let (Some(key), Ok(output)) = (&key, std::fs::read(&args.output)) {
            c.put_export(
                key,
                &gltf_export::CachedExport {
                    // One entry: a cached conversion counts as one result.
                    report_json: serde_json::to_string(&[&lines])?,
                    warnings,
                    output,
                },
            );
        }
    }
    finish(&cache);
    Ok(0)
}
