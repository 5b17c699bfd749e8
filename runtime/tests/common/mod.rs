//! Shared by the runtime crate's tests and benches: the shared assets compressed into
//! `.skp` bytes with the skelpack library (at the ACL preset, as the CLI does by default).
#![allow(dead_code)]

use std::path::PathBuf;

use skelpack::codec::{self, CompressedClip, Control};
use skelpack::import::{self, Asset};
use skelpack::settings::{Preset, Settings};

/// A file of the shared assets (`../shared/assets` beside the checkout).
pub fn asset(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../shared/assets")
        .join(name)
}

/// Every clip of an asset (or only `clip`) compressed at the ACL preset.
pub fn compress(asset: &Asset, clip: Option<&str>) -> Vec<CompressedClip> {
    let settings = Settings::from_preset(Preset::Acl);
    asset
        .clips
        .iter()
        .filter(|c| clip.is_none_or(|n| c.name == n))
        .map(|c| {
            let r = settings.resolve(asset, &c.name);
            codec::compress(&asset.skeleton, c, &r, &Control::new()).unwrap()
        })
        .collect()
}

/// The asset, and a `.skp` of its clips (or only `clip`).
pub fn skp(name: &str, clip: Option<&str>) -> (Asset, Vec<u8>) {
    let a = import::load(&asset(name)).unwrap_or_else(|e| panic!("{name}: {e}"));
    let clips = compress(&a, clip);
    let bytes = skelpack::container::to_bytes(&a.skeleton, &clips);
    (a, bytes)
}

/// The shared assets whose clips the decoder tests cover (every format and interpolation).
pub const ASSETS: &[&str] = &[
    "CesiumMan.glb",
    "Fox.glb",
    "RobotExpressive.glb",
    "InterpolationTest.glb",
    "KayKit_Med_General.glb",
    "RiggedFigure.glb",
    "SimpleSkin.gltf",
    "CMU_131_01.bvh",
    "acl/13_07.acl.sjson",
    "acl/81_18.acl.sjson",
    "acl/93_01_zero_range_extent.acl.sjson",
];
