//! `skelpack convert IN OUT.glb|.gltf [--unit U] [--force]`: writes any importable file (BVH,
//! ACL SJSON, glTF) as a new glTF scene: the skeleton as nodes, each clip as a LINEAR
//! animation, meshes with their skins when the source has them. A BVH or ACL source is
//! written in metres, converted from its inferred unit (as `inspect` shows it) or `--unit`
//! ([`crate::export::metres`]). A `.skp` container is decoded (every frame, at its clip's
//! rate) into the same kind of scene, in the container's own unit.

use std::path::PathBuf;

use anyhow::Context;

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
    let mut asset = import::load(&args.input)?;
    for w in &asset.warnings {
        eprintln!("warning: {w}");
    }
    // The sidecar's takes and events (and `--take`) are written as the scene's clips.
    let sidecar = crate::settings::Settings::sidecar_path(&args.input);
    let mut settings = if sidecar.is_file() {
        crate::settings::Settings::load(&sidecar)?
    } else {
        crate::settings::Settings::default()
    };
    super::tuning::add_takes(&mut settings, &args.takes)?;
    crate::settings::takes::split(&mut asset, &mut settings)
        .map_err(|m| anyhow::anyhow!("{}: {m}", args.input.display()))?;
    for w in settings.event_warnings(&asset) {
        eprintln!("warning: {w}");
    }
    let events: Vec<_> = (asset.clips.iter())
        .map(|c| settings.events_for(&asset, &c.name).0)
        .collect();
    for (c, e) in asset.clips.iter_mut().zip(events) {
        c.events = e;
    }
    let from = unit.unwrap_or(asset.units.unit);
    let asset = if metres::converts(asset.format) {
        if from != LengthUnit::Metre {
            println!(
                "{}: lengths converted from {} to metres",
                args.input.display(),
                from.name()
            );
        }
        metres::in_metres(&asset, from)
    } else {
        asset
    };
    write_scene(
        &args.output,
        &asset.skeleton,
        &asset.clips,
        &asset.meshes,
        Some(&args.input),
        args.force,
    )
    .with_context(|| format!("converting {}", args.input.display()))?;
    println!(
        "{} -> {}: {} joints, {} clip(s)",
        args.input.display(),
        args.output.display(),
        asset.skeleton.len(),
        asset.clips.len()
    );
    Ok(0)
}
