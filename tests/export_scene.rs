//! glTF scene export: every shared glTF asset re-imports to the same skeleton, clips and
//! meshes, and animeval sees no error between the original and the re-exported file.

mod common;

use std::path::Path;

use skelpack::export::write_scene;
use skelpack::import::{self, Asset};

fn close(a: &[f32], b: &[f32]) -> bool {
    a.iter().zip(b).all(|(x, y)| (x - y).abs() <= 1e-6)
}

fn assert_same(orig: &Asset, back: &Asset) {
    let (s, t) = (&orig.skeleton, &back.skeleton);
    assert_eq!(s.len(), t.len(), "joint count");
    for (a, b) in s.joints.iter().zip(&t.joints) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.parent, b.parent, "parent of {}", a.name);
        assert_eq!(a.deforming, b.deforming, "deforming flag of {}", a.name);
        assert!(
            close(
                &a.rest.translation.to_array(),
                &b.rest.translation.to_array()
            ) && close(&a.rest.rotation.to_array(), &b.rest.rotation.to_array())
                && close(&a.rest.scale.to_array(), &b.rest.scale.to_array()),
            "rest of {}",
            a.name
        );
    }
    assert_eq!(orig.clips.len(), back.clips.len());
    for (a, b) in orig.clips.iter().zip(&back.clips) {
        assert_eq!(a.name, b.name);
        assert_eq!(a.sample_rate, b.sample_rate, "{}", a.name);
        assert_eq!(a.frame_count, b.frame_count, "{}", a.name);
        assert!((a.start_time - b.start_time).abs() < 1e-6, "{}", a.name);
        for (j, (ta, tb)) in a.tracks.iter().zip(&b.tracks).enumerate() {
            assert_eq!(
                ta.source_channels, tb.source_channels,
                "{} joint {j}",
                a.name
            );
            for f in 0..a.frame_count {
                let (x, y) = (ta.at(f), tb.at(f));
                assert!(
                    close(&x.translation.to_array(), &y.translation.to_array())
                        && close(&x.rotation.to_array(), &y.rotation.to_array())
                        && close(&x.scale.to_array(), &y.scale.to_array()),
                    "{} joint {j} frame {f}: {x:?} vs {y:?}",
                    a.name
                );
            }
        }
        // A scene holds the clip's frames as LINEAR keys: between frames their chord, not
        // a CUBICSPLINE source's curve (docs/EXPORT.md, "Known limits": `convert`).
        let mut frames_only = a.clone();
        frames_only.between = Default::default();
        let e = common::max_error(
            &orig.skeleton,
            &frames_only,
            &back.skeleton,
            b,
            orig.units.from_metres(0.03),
        );
        assert!(
            e < 1e-5 * orig.units.extent.max(1.0),
            "{}: error {e}",
            a.name
        );
    }
    assert_eq!(orig.meshes.len(), back.meshes.len(), "mesh count");
    for (a, b) in orig.meshes.iter().zip(&back.meshes) {
        assert_eq!(a.positions, b.positions);
        assert_eq!(a.indices, b.indices);
        assert_eq!(a.base_color, b.base_color);
        for (ja, wa, jb, wb) in itertools(a, b) {
            for k in 0..4 {
                if wa[k] != 0.0 {
                    assert_eq!(ja[k], jb[k]);
                }
                assert_eq!(wa[k], wb[k]);
            }
        }
    }
}

type Influence = ([u16; 4], [f32; 4], [u16; 4], [f32; 4]);

fn itertools(a: &import::SkinnedMesh, b: &import::SkinnedMesh) -> Vec<Influence> {
    assert_eq!(a.joints.len(), b.joints.len());
    (0..a.joints.len())
        .map(|i| (a.joints[i], a.weights[i], b.joints[i], b.weights[i]))
        .collect()
}

fn round_trip(path: &Path, ext: &str) -> (Asset, tempfile::TempDir, std::path::PathBuf) {
    let (orig, back, dir, out) = common::scene_round_trip(path, ext);
    assert_same(&orig, &back);
    (orig, dir, out)
}

#[test]
fn shared_gltf_assets_round_trip_as_glb_and_gltf() {
    for path in common::gltf_assets() {
        round_trip(&path, "glb");
        round_trip(&path, "gltf");
    }
}

#[test]
fn animeval_sees_no_error_after_a_round_trip() {
    for name in ["CesiumMan.glb", "SimpleSkin.gltf", "Fox.glb"] {
        let path = common::asset(name);
        let (orig, _dir, out) = round_trip(&path, "glb");
        let shell = orig.units.from_metres(0.03);
        let Some(report) = common::animeval(&path, &out, shell) else {
            return;
        };
        let max = common::animeval_max(&report);
        assert!(
            max < 1e-5 * orig.units.extent.max(1.0) as f64,
            "{name}: animeval max error {max}"
        );
    }
}

#[test]
fn refuses_to_overwrite_its_input() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("in.glb");
    std::fs::copy(common::asset("RiggedSimple.glb"), &src).unwrap();
    let a = import::load(&src).unwrap();
    let e = write_scene(&src, &a.skeleton, &a.clips, &a.meshes, Some(&src), false).unwrap_err();
    assert!(e.to_string().contains("--force"), "{e}");
    write_scene(&src, &a.skeleton, &a.clips, &a.meshes, Some(&src), true).unwrap();
    assert!(import::load(&src).is_ok());
}

#[test]
fn rejects_an_unknown_extension() {
    let a = import::load(&common::asset("RiggedSimple.glb")).unwrap();
    let e = write_scene(
        Path::new("x.fbx"),
        &a.skeleton,
        &a.clips,
        &a.meshes,
        None,
        false,
    );
    assert!(e.unwrap_err().to_string().contains(".glb or .gltf"));
}
