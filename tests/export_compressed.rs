//! Compressed glTF export (issue 6): per shared glTF asset at the `acl` preset, compress every
//! clip, export, then check the file two ways: skelpack's importer + metric, and the
//! independent `animeval.py`. Prints the animation bytes table that docs/EXPORT.md quotes
//! (`cargo test --no-default-features --release --test export_compressed -- --nocapture`).

mod common;

use std::path::Path;

use skelpack::codec::Control;
use skelpack::export::{CompressedGltf, GltfClip, encode_for_gltf, export_gltf};
use skelpack::import::{self, Asset};
use skelpack::metric::{Reference, measure};
use skelpack::settings::{Preset, Resolved, Settings};

fn compress_all(asset: &Asset) -> (Vec<GltfClip>, Vec<Resolved>) {
    let settings = Settings::from_preset(Preset::Acl);
    let mut clips = Vec::new();
    let mut resolved = Vec::new();
    for clip in &asset.clips {
        let r = settings.resolve(asset, &clip.name);
        clips.push(encode_for_gltf(&asset.skeleton, clip, &r, &Control::new()).unwrap());
        resolved.push(r);
    }
    (clips, resolved)
}

/// Exports `path` compressed; returns the export, the temp dir and the output path.
struct Exported {
    asset: Asset,
    result: CompressedGltf,
    clips: Vec<GltfClip>,
    resolved: Vec<Resolved>,
    /// Keeps the output alive.
    dir: tempfile::TempDir,
    out: std::path::PathBuf,
}

fn export(path: &Path, ext: &str) -> Exported {
    let asset = import::load(path).unwrap();
    let (clips, resolved) = compress_all(&asset);
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join(format!("compressed.{ext}"));
    let result = export_gltf(path, &out, &asset, &clips, false).unwrap();
    Exported {
        asset,
        result,
        clips,
        resolved,
        dir,
        out,
    }
}

/// Re-imports the exported file and measures every clip against the original.
fn verify_with_skelpack(asset: &Asset, resolved: &[Resolved], out: &Path) {
    let back = import::load(out).unwrap();
    assert_eq!(back.skeleton.len(), asset.skeleton.len());
    assert_eq!(back.clips.len(), asset.clips.len());
    for ((orig, got), r) in asset.clips.iter().zip(&back.clips).zip(resolved) {
        assert_eq!(orig.name, got.name);
        assert_eq!(orig.sample_rate, got.sample_rate, "{}: rate", orig.name);
        assert_eq!(orig.frame_count, got.frame_count, "{}: frames", orig.name);
        let cand = common::remap(&back.skeleton, got, &asset.skeleton);
        let reference = Reference::new(&asset.skeleton, orig, orig.frame_count);
        let e = measure(&asset.skeleton, &reference, &cand, &r.limits, false);
        assert!(
            e.samples.worst_ratio <= 1.0,
            "{} '{}': error {} is {:.3}x the tolerance at joint {} frame {}",
            asset.path.display(),
            orig.name,
            e.samples.max,
            e.samples.worst_ratio,
            asset.skeleton.joints[e.samples.worst_joint].name,
            e.samples.worst_frame
        );
    }
}

#[test]
fn every_shared_gltf_exports_within_tolerance() {
    let mut rows = Vec::new();
    for path in common::gltf_assets() {
        let ext = if path.extension().is_some_and(|e| e == "gltf") {
            "gltf"
        } else {
            "glb"
        };
        let Exported {
            asset,
            result,
            clips,
            resolved,
            out,
            dir: _dir,
        } = export(&path, ext);
        for (a, c) in result.animations.iter().zip(&clips) {
            assert!(a.worst_ratio <= 1.0, "{}: {a:?}", path.display());
            assert!(
                c.compressed.report.contract_met,
                "{} '{}'",
                path.display(),
                a.name
            );
        }
        verify_with_skelpack(&asset, &resolved, &out);
        let tol = resolved[0].limits.tolerance[0] as f64;
        let shell = resolved[0].limits.marker_offset[0];
        let Some(report) = common::animeval(&path, &out, shell) else {
            continue;
        };
        let max = common::animeval_max(&report);
        let (mut ob, mut cb) = (0u64, 0u64);
        for a in report["animations"].as_array().unwrap() {
            ob += a["size"]["original"]["bytes"].as_u64().unwrap();
            cb += a["size"]["compressed"]["bytes"].as_u64().unwrap();
        }
        let file = std::fs::metadata(&out).unwrap().len();
        rows.push(format!(
            "| {} | {} | {ob} | {cb} | {:.1}x | {:.4} | {:.4} | {} | {} |",
            path.file_name().unwrap().to_string_lossy(),
            asset.clips.len(),
            ob as f64 / cb.max(1) as f64,
            max * 1000.0 / asset.units.unit.per_metre() as f64,
            tol * 1000.0 / asset.units.unit.per_metre() as f64,
            std::fs::metadata(&path).unwrap().len(),
            file,
        ));
        // animeval oversamples 4x between the original's keys, in f64: the exporter verifies
        // the same points against a 1% guard band, so the tolerance holds as it measures.
        assert!(
            max <= tol,
            "{}: animeval max error {max} > tolerance {tol}",
            path.display()
        );
    }
    println!(
        "| asset | clips | original anim bytes | exported anim bytes | ratio | max error (mm) | tolerance (mm) | original file | exported file |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|");
    for r in rows {
        println!("{r}");
    }
}

#[test]
fn morph_weight_channels_are_carried_over() {
    let path = common::asset("RobotExpressive.glb");
    let Exported {
        result,
        out,
        dir: _dir,
        ..
    } = export(&path, "glb");
    let bytes = std::fs::read(&out).unwrap();
    let doc = skelpack::export::GltfDoc::from_bytes(&out, &bytes).unwrap();
    let orig =
        skelpack::export::GltfDoc::from_bytes(&path, &std::fs::read(&path).unwrap()).unwrap();
    for (a, b) in orig.array("animations").iter().zip(doc.array("animations")) {
        let weights = |x: &serde_json::Value| {
            x["channels"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["target"]["path"] == "weights")
                .count()
        };
        assert!(weights(a) > 0);
        assert_eq!(weights(a), weights(b), "{}", a["name"]);
    }
    // Meshes, skins, materials and node names are untouched.
    for key in ["meshes", "skins", "materials", "nodes"] {
        let strip = |v: &serde_json::Value| {
            let mut v = v.clone();
            // Accessor indices may be renumbered by compaction; compare everything else.
            if result.compacted && key == "meshes" {
                return serde_json::Value::Null;
            }
            if result.compacted && key == "skins" {
                for s in v.as_array_mut().unwrap() {
                    s.as_object_mut().unwrap().remove("inverseBindMatrices");
                }
            }
            v
        };
        assert_eq!(strip(&orig.json[key]), strip(&doc.json[key]), "{key}");
    }
}

#[test]
fn cesium_man_is_smaller_than_the_reference_optimizers() {
    let path = common::asset("CesiumMan.glb");
    let Exported { result, .. } = export(&path, "glb");
    let bytes: usize = result.animations.iter().map(|a| a.exported_bytes).sum();
    assert!(bytes < 10_144, "{bytes} animation bytes");
    assert!(result.compacted);
}

#[test]
fn refuses_to_overwrite_the_input() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("RiggedSimple.glb");
    std::fs::copy(common::asset("RiggedSimple.glb"), &src).unwrap();
    let asset = import::load(&src).unwrap();
    let (clips, _resolved) = compress_all(&asset);
    let e = export_gltf(&src, &src, &asset, &clips, false).unwrap_err();
    assert!(e.to_string().contains("--force"));
    export_gltf(&src, &src, &asset, &clips, true).unwrap();
    assert_eq!(import::load(&src).unwrap().clips.len(), 1);
}

#[test]
fn cli_entry_points_write_verified_files() {
    let dir = tempfile::tempdir().unwrap();
    let asset = import::load(&common::asset("RiggedSimple.glb")).unwrap();
    let settings = Settings::from_preset(Preset::Acl);
    let out = dir.path().join("a.gltf");
    let r = skelpack::export::compress_to_gltf(&asset, &settings, &out, false).unwrap();
    assert!(r.animations[0].worst_ratio <= 1.0);
    assert_eq!(import::load(&out).unwrap().clips.len(), 1);
    let resolved = settings.resolve(&asset, &asset.clips[0].name);
    let cc =
        skelpack::codec::compress(&asset.skeleton, &asset.clips[0], &resolved, &Control::new())
            .unwrap();
    let out = dir.path().join("b.glb");
    let r = skelpack::export::write_compressed_gltf(&asset, &[cc], &settings, &out, false).unwrap();
    assert!(r.animations[0].worst_ratio <= 1.0 + 1e-3);
    assert!(import::load(&out).is_ok());
}
