//! `skelpack convert IN OUT.glb|.gltf [--force]`: writes any importable file (BVH, ACL SJSON,
//! glTF) as a new glTF scene: the skeleton as nodes, each clip as a LINEAR animation, meshes
//! with their skins when the source has them. A `.skp` container is decoded (every frame, at
//! its clip's rate) into the same kind of scene.

use std::path::PathBuf;

use anyhow::Context;

use crate::export::write_scene;
use crate::import;

#[derive(clap::Args, Debug)]
pub struct Args {
    /// The file to convert (.bvh, .acl.sjson, .glb, .gltf, .skp).
    pub input: PathBuf,
    /// The glTF file to write (.glb or .gltf with an embedded buffer).
    pub output: PathBuf,
    /// Replace OUTPUT even when it is the input file.
    #[arg(long)]
    pub force: bool,
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
    let asset = import::load(&args.input)?;
    for w in &asset.warnings {
        eprintln!("warning: {w}");
    }
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
