//! The facts `../shared/assets/README.md` lists, checked against the importers.

mod common;

use skelpack::import::{self, SourceFormat};
use skelpack::model::LengthUnit;

struct ClipFact {
    name: &'static str,
    duration: f32,
    frames: usize,
    rate: f32,
}

const fn c(name: &'static str, duration: f32, frames: usize, rate: f32) -> ClipFact {
    ClipFact {
        name,
        duration,
        frames,
        rate,
    }
}

fn check(file: &str, deforming: usize, unit: LengthUnit, clips: &[ClipFact]) -> import::Asset {
    let a = import::load(&common::asset(file)).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        a.skeleton.deforming_joints().count(),
        deforming,
        "{file}: deforming joints"
    );
    assert_eq!(
        a.units.unit, unit,
        "{file}: unit (extent {})",
        a.units.extent
    );
    assert_eq!(a.clips.len(), clips.len(), "{file}: clip count");
    for (clip, fact) in a.clips.iter().zip(clips) {
        assert_eq!(clip.name, fact.name, "{file}");
        assert!(
            (clip.duration() - fact.duration).abs() < 2e-3,
            "{file} {}: duration {} vs {}",
            fact.name,
            clip.duration(),
            fact.duration
        );
        assert_eq!(
            clip.frame_count, fact.frames,
            "{file} {}: frames",
            fact.name
        );
        assert_eq!(clip.sample_rate, fact.rate, "{file} {}: rate", fact.name);
    }
    a
}

#[test]
fn cesium_man() {
    let a = check(
        "CesiumMan.glb",
        19,
        LengthUnit::Metre,
        &[c("animation0", 1.9583, 48, 24.0)],
    );
    // First key at 1/24 s, not 0.
    assert!((a.clips[0].start_time - 1.0 / 24.0).abs() < 1e-4);
    assert_eq!(a.meshes.len(), 1);
    // 57 channels: T, R, S on all 19 joints.
    let ch: usize = a.clips[0]
        .tracks
        .iter()
        .map(|t| t.source_channels.iter().filter(|&&b| b).count())
        .sum();
    assert_eq!(ch, 57);
}

#[test]
fn fox_keeps_24_fps_and_hits_off_grid_keys() {
    let a = check(
        "Fox.glb",
        24,
        LengthUnit::Centimetre,
        &[
            c("Survey", 3.4167, 83, 24.0),
            c("Walk", 0.7083, 18, 24.0),
            c("Run", 1.1583, 140, 120.0),
        ],
    );
    assert!(
        a.warnings
            .iter()
            .any(|w| w.contains("'Run'") && w.contains("24 fps")),
        "{:?}",
        a.warnings
    );
    let ch: usize = a.clips[0]
        .tracks
        .iter()
        .map(|t| t.source_channels.iter().filter(|&&b| b).count())
        .sum();
    assert_eq!(ch, 21);
}

#[test]
fn simple_skin_embedded_buffers() {
    let a = check(
        "SimpleSkin.gltf",
        2,
        LengthUnit::Metre,
        &[c("animation0", 5.5, 133, 24.0)],
    );
    assert_eq!(a.format, SourceFormat::Gltf);
}

#[test]
fn rigged_simple_and_figure() {
    check(
        "RiggedSimple.glb",
        2,
        LengthUnit::Metre,
        &[c("animation0", 2.0417, 50, 24.0)],
    );
    check(
        "RiggedFigure.glb",
        19,
        LengthUnit::Metre,
        &[c("animation0", 1.25, 31, 24.0)],
    );
}

#[test]
fn interpolation_test_without_skin() {
    let names = [
        "Step Scale",
        "Linear Scale",
        "CubicSpline Scale",
        "Step Rotation",
        "CubicSpline Rotation",
        "Linear Rotation",
        "Step Translation",
        "CubicSpline Translation",
        "Linear Translation",
    ];
    let facts: Vec<ClipFact> = names.iter().map(|n| c(n, 2.0, 49, 24.0)).collect();
    let a = check("InterpolationTest.glb", 9, LengthUnit::Metre, &facts);
    // STEP holds the previous key until the next: at 0.5 s (frame 12) the Step Scale node
    // still shows key 0; LINEAR is halfway between keys 0 and 1 (keys at 0, 0.5, 1.0 ...).
    let step = &a.clips[0];
    let j = step
        .tracks
        .iter()
        .position(|t| t.source_channels[2])
        .unwrap();
    assert_eq!(step.tracks[j].scales[11], step.tracks[j].scales[0]);
    assert_ne!(step.tracks[j].scales[12], step.tracks[j].scales[0]);
}

#[test]
fn robot_expressive_two_skins_and_morph_weights() {
    let names = [
        ("Dance", 3.3333, 81),
        ("Death", 0.9583, 24),
        ("Idle", 3.3333, 81),
        ("Jump", 0.7083, 18),
        ("No", 1.6667, 41),
        ("Punch", 0.8333, 21),
        ("Running", 0.9583, 24),
        ("Sitting", 0.4167, 11),
        ("Standing", 0.4167, 11),
        ("ThumbsUp", 1.5833, 39),
        ("Walking", 0.9583, 24),
        ("WalkJump", 0.8333, 21),
        ("Wave", 1.8333, 45),
        ("Yes", 1.6667, 41),
    ];
    let facts: Vec<ClipFact> = names.iter().map(|(n, d, f)| c(n, *d, *f, 24.0)).collect();
    let a = check("RobotExpressive.glb", 43, LengthUnit::Metre, &facts);
    assert!(a.clips.iter().all(|c| c.morph_weight_channels == 1));
    // Sparse channel sets: Dance animates 11 T/R channels of 43 joints.
    let dance: usize = a.clips[0]
        .tracks
        .iter()
        .map(|t| t.source_channels.iter().filter(|&&b| b).count())
        .sum();
    assert_eq!(dance, 11);
}

#[test]
fn kaykit_step_linear_zero_scale_and_armature_root() {
    let a = import::load(&common::asset("KayKit_Med_General.glb")).unwrap();
    assert_eq!(a.skeleton.deforming_joints().count(), 23);
    assert_eq!(a.clips.len(), 15);
    assert!(
        a.clips
            .iter()
            .all(|c| c.sample_rate == 30.0 && (c.start_time - 1.0 / 30.0).abs() < 1e-4)
    );
    let root = a.skeleton.find("Rig_Medium").expect("armature root kept");
    assert!(!a.skeleton.joints[root].deforming);
    let spawn = a
        .clips
        .iter()
        .find(|c| c.name.ends_with("Spawn_Air"))
        .unwrap();
    let min_scale = spawn
        .tracks
        .iter()
        .flat_map(|t| &t.scales)
        .map(|s| s.min_element())
        .fold(f32::INFINITY, f32::min);
    assert!(
        min_scale.abs() < 1e-6,
        "Spawn_Air scales from 0: {min_scale}"
    );
    let death = a
        .clips
        .iter()
        .find(|c| c.name.ends_with("Death_A"))
        .unwrap();
    assert!((death.duration() - 0.8).abs() < 1e-3);
    assert_eq!(death.frame_count, 25);
}

#[test]
fn bvh_cmu_walk() {
    let a = import::load(&common::asset("CMU_131_01.bvh")).unwrap();
    assert_eq!(a.skeleton.deforming_joints().count(), 31);
    assert_eq!(a.skeleton.len(), 31 + 7, "31 joints + 7 End Sites");
    assert_eq!(
        a.skeleton.max_depth(),
        11,
        "nesting depth 11, End Sites included"
    );
    let c = &a.clips[0];
    assert_eq!((c.frame_count, c.sample_rate), (994, 120.0));
    assert!((c.duration() - 8.275).abs() < 1e-3);
}

#[test]
fn bvh_pirouette() {
    let a = import::load(&common::asset("pirouette.bvh")).unwrap();
    assert_eq!(a.skeleton.deforming_joints().count(), 43);
    assert_eq!(a.skeleton.len(), 43 + 14);
    assert_eq!(
        a.skeleton.max_depth(),
        10,
        "nesting depth 10, End Sites included"
    );
    let c = &a.clips[0];
    assert_eq!((c.frame_count, c.sample_rate), (592, 120.0));
    assert!((c.duration() - 4.925).abs() < 1e-3);
}

#[test]
fn acl_clips() {
    let facts = [
        ("09_02.acl.sjson", 26),
        ("09_02_with_zero_scale.acl.sjson", 26),
        ("09_02_multi_root.acl.sjson", 26),
        ("104_30.acl.sjson", 273),
        ("13_07.acl.sjson", 291),
        ("49_15.acl.sjson", 190),
        ("81_18.acl.sjson", 230),
        ("93_01_zero_range_extent.acl.sjson", 5),
        ("121_10.acl.sjson", 1),
    ];
    for (file, samples) in facts {
        let a = import::load(&common::asset(&format!("acl/{file}"))).unwrap();
        assert_eq!(a.skeleton.len(), 44, "{file}");
        assert_eq!(a.clips[0].frame_count, samples, "{file}");
        assert_eq!(a.clips[0].sample_rate, 24.0, "{file}");
        assert_eq!(a.source_tolerance, Some(0.01), "{file}");
        assert!(
            a.skeleton
                .joints
                .iter()
                .all(|j| j.source_marker_offset == Some(3.0)),
            "{file}"
        );
        assert_eq!(a.units.unit, LengthUnit::Centimetre, "{file}");
    }
    let multi = import::load(&common::asset("acl/09_02_multi_root.acl.sjson")).unwrap();
    assert!(
        multi
            .skeleton
            .joints
            .iter()
            .filter(|j| j.parent.is_none())
            .count()
            > 1
    );
}

#[test]
fn rigid_meshes_under_joints_follow_them() {
    // RobotExpressive's body plates are meshes parented to bones without a skin.
    let path = common::asset("RobotExpressive.glb");
    let a = import::load(&path).unwrap();
    let (doc, _, _) = gltf::import(&path).unwrap();
    let mut world = std::collections::HashMap::new();
    fn walk(
        n: gltf::Node,
        parent: glam::Mat4,
        out: &mut std::collections::HashMap<String, glam::Mat4>,
    ) {
        let m = parent * glam::Mat4::from_cols_array_2d(&n.transform().matrix());
        if n.mesh().is_some() && n.skin().is_none() {
            out.insert(n.mesh().unwrap().name().unwrap_or("mesh").to_owned(), m);
        }
        for c in n.children() {
            walk(c, m, out);
        }
    }
    for root in doc.default_scene().unwrap().nodes() {
        walk(root, glam::Mat4::IDENTITY, &mut world);
    }
    let rigid: Vec<_> = a
        .meshes
        .iter()
        .filter(|m| m.weights.iter().all(|w| *w == [1.0, 0.0, 0.0, 0.0]))
        .collect();
    assert!(rigid.len() >= 12, "{} rigid meshes", rigid.len());
    let mut rest = vec![glam::Affine3A::IDENTITY; a.skeleton.len()];
    skelpack::model::local_to_object(&a.skeleton, &a.skeleton.rest_pose(), &mut rest);
    for m in rigid {
        let expected = world[&m.name];
        let j = m.joints[0][0] as usize;
        let skinned = glam::Mat4::from(rest[j]) * m.inverse_bind[j];
        for v in m.positions.iter().step_by(17) {
            let (p, q) = (skinned.transform_point3(*v), expected.transform_point3(*v));
            assert!(
                (p - q).length() < 1e-3 * (1.0 + q.length()),
                "{}: {p} vs {q}",
                m.name
            );
        }
    }
}

/// The unit of every shared file, inferred from its proportions (a person is 1-2.5 m from
/// ankle to head joint; glTF declares metres), with how sure the inference is.
#[test]
fn every_shared_file_gets_its_unit() {
    use skelpack::model::Confidence::{High, Low, Medium};
    let asf = LengthUnit::PerMetre(0.45 / 0.0254);
    let mut expected = vec![
        ("CesiumMan.glb".to_string(), LengthUnit::Metre, High),
        ("Fox.glb".to_string(), LengthUnit::Centimetre, High),
        ("InterpolationTest.glb".to_string(), LengthUnit::Metre, High),
        (
            "KayKit_Med_General.glb".to_string(),
            LengthUnit::Metre,
            High,
        ),
        ("RiggedFigure.glb".to_string(), LengthUnit::Metre, High),
        ("RiggedSimple.glb".to_string(), LengthUnit::Metre, High),
        // A 3 m robot: tall for a humanoid, metres as declared.
        ("RobotExpressive.glb".to_string(), LengthUnit::Metre, Medium),
        ("SimpleSkin.gltf".to_string(), LengthUnit::Metre, High),
        // CMU capture in the ASF unit (1/0.45 inch): a 24-unit person is 1.36 m.
        ("CMU_131_01.bvh".to_string(), asf, Medium),
        ("pirouette.bvh".to_string(), LengthUnit::Centimetre, High),
    ];
    // FBX is read in metres (ufbx converts the file's unit). The assimp test character is
    // 73 m in metres (a 100x armature scale over a centimetre file): centimetres read right.
    // Single nodes (a cube, six rotation-order cubes) have no height to measure.
    for (name, unit, confidence) in [
        (
            "assimp_animation_with_skeleton",
            LengthUnit::Centimetre,
            Medium,
        ),
        (
            "blender440_shape_weight_anim_7400_binary",
            LengthUnit::Metre,
            Low,
        ),
        ("blender_293_barbarian_7400_binary", LengthUnit::Metre, High),
        (
            "maya_anim_interpolation_7700_binary",
            LengthUnit::Metre,
            Low,
        ),
        (
            "maya_anim_layers_over_acc_orders_7500_binary",
            LengthUnit::Metre,
            Low,
        ),
        (
            "maya_anim_no_inherit_scale_7700_ascii",
            LengthUnit::Metre,
            High,
        ),
        ("ozz_robot", LengthUnit::Metre, High),
        ("pab_arnaud", LengthUnit::Metre, High),
        ("pab_run", LengthUnit::Metre, High),
        ("pab_walk", LengthUnit::Metre, High),
    ] {
        expected.push((format!("fbx/{name}.fbx"), unit, confidence));
    }
    for f in std::fs::read_dir(common::asset("acl")).unwrap() {
        let name = f.unwrap().file_name().to_string_lossy().into_owned();
        if name.ends_with(".acl.sjson") && !name.starts_with("format_reference") {
            expected.push((format!("acl/{name}"), LengthUnit::Centimetre, High));
        }
    }
    assert!(expected.len() >= 19);
    let listed: Vec<&str> = expected.iter().map(|e| e.0.as_str()).collect();
    for p in common::all_assets() {
        let rel = p
            .strip_prefix(common::assets())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        assert!(listed.contains(&rel.as_str()), "{rel}: not in the list");
    }
    for (file, unit, confidence) in expected {
        let a = import::load(&common::asset(&file)).unwrap();
        assert_eq!(a.units.unit, unit, "{file}: {}", a.units.reason);
        assert_eq!(a.units.confidence, confidence, "{file}: {}", a.units.reason);
        assert!(
            a.units.implausible_with(unit).is_none() || confidence != High,
            "{file}"
        );
    }
}
