//! FBX accumulate (additive) layers as additive clips (issue 26; import/fbx_layers.rs), on
//! ufbx's layered test file: a take of a base layer, an accumulate layer `X` and an override
//! layer `Y` with an animated weight, six nodes each in a different rotation order. The take's
//! own clip is ufbx's full evaluation; `Take 001/X` is additive on `Take 001/X.base`, and
//! base ⊕ additive — applied by the runtime's `apply_additive`, as a game does — is ufbx's
//! evaluation of the layers up to `X` (`ufbx_create_anim` with those layers), raw and after
//! compression.

mod common;
use common::player::skelpack_ok;

use std::path::PathBuf;

use glam::{DAffine3, DVec3, Quat, Vec3};
use serde_json::Value;
use skelpack::import::{self, fbx};
use skelpack::model::{Skeleton, Transform, local_to_object_f64};
use skelpack_runtime::{JointPose, Skp, apply_additive};

const FILE: &str = "maya_anim_layers_over_acc_orders_7500_binary.fbx";

fn path() -> PathBuf {
    common::asset("fbx").join(FILE)
}

fn pose(t: &Transform) -> JointPose {
    JointPose {
        translation: t.translation.to_array(),
        rotation: t.rotation.to_array(),
        scale: t.scale.to_array(),
    }
}

fn transform(p: &JointPose) -> Transform {
    Transform::new(
        Vec3::from_array(p.translation),
        Quat::from_array(p.rotation),
        Vec3::from_array(p.scale),
    )
}

fn world(m: &ufbx::Matrix) -> DAffine3 {
    fbx::affine(m)
}

/// The largest distance between two joints' frames: their origins and the tips of their
/// axes scaled to `lever` (a marker `lever` away along each axis).
fn frame_distance(a: &DAffine3, b: &DAffine3, lever: f64) -> f64 {
    let mut d = (a.translation - b.translation).length();
    for axis in [DVec3::X, DVec3::Y, DVec3::Z] {
        d = d.max((a.transform_point3(axis * lever) - b.transform_point3(axis * lever)).length());
    }
    d
}

/// Per joint, the marker lever of skelpack's metric (DESIGN.md §2): `offset / s_j`, `s_j`
/// the mean axis length of the joint's rest-pose frame (this file's root is scaled by 2).
fn levers(skeleton: &Skeleton, offset: f64) -> Vec<f64> {
    let mut rest = vec![DAffine3::IDENTITY; skeleton.len()];
    local_to_object_f64(skeleton, &skeleton.rest_pose(), &mut rest);
    rest.iter()
        .map(|m| {
            let s =
                (m.matrix3.x_axis.length() + m.matrix3.y_axis.length() + m.matrix3.z_axis.length())
                    / 3.0;
            offset / s
        })
        .collect()
}

/// Object-space frames of `locals`.
fn objects(skeleton: &Skeleton, locals: &[JointPose]) -> Vec<DAffine3> {
    let t: Vec<Transform> = locals.iter().map(transform).collect();
    let mut out = vec![DAffine3::IDENTITY; skeleton.len()];
    local_to_object_f64(skeleton, &t, &mut out);
    out
}

/// ufbx's world frame of every joint (by its node) at time `t` of `anim`.
fn ufbx_worlds(
    scene: &ufbx::Scene,
    anim: &ufbx::Anim,
    skeleton: &Skeleton,
    t: f64,
) -> Vec<DAffine3> {
    let eval = ufbx::evaluate_scene(scene, anim, t, Default::default()).unwrap();
    skeleton
        .joints
        .iter()
        .map(|j| {
            let node = eval
                .nodes
                .iter()
                .find(|n| n.element.name.as_ref() == j.name)
                .unwrap();
            world(&node.node_to_world)
        })
        .collect()
}

/// The layers of the take up to and including `X`, as ufbx evaluates them.
fn anim_up_to_x(scene: &ufbx::Scene) -> ufbx::AnimRoot {
    let stack = &scene.anim_stacks[0];
    let k = stack
        .layers
        .iter()
        .position(|l| l.element.name.as_ref() == "X")
        .unwrap();
    assert!(stack.layers[k].additive && k >= 1);
    assert!(k + 1 < stack.layers.len(), "an override layer lies above X");
    let ids: Vec<u32> = stack
        .layers
        .iter()
        .take(k + 1)
        .map(|l| l.element.typed_id)
        .collect();
    ufbx::create_anim(
        scene,
        ufbx::AnimOpts {
            layer_ids: ufbx::ListOpt::Ref(&ids),
            ..Default::default()
        },
    )
    .unwrap()
}

#[test]
fn the_take_is_ufbxs_full_evaluation_and_base_plus_additive_its_layers_up_to_x() {
    let a = import::load(&path()).unwrap();
    let bytes = std::fs::read(path()).unwrap();
    let scene = fbx::load_scene(&bytes).unwrap();
    let stack = &scene.anim_stacks[0];
    let fps = scene.settings.frames_per_second;
    let names: Vec<&str> = a.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["Take 001", "Take 001/X.base", "Take 001/X"]);
    let additive = &a
        .source_additive
        .iter()
        .find(|(n, _)| n == "Take 001/X")
        .unwrap()
        .1;
    assert_eq!(
        additive.base,
        skelpack::model::playback::AdditiveBase::Clip {
            clip: "Take 001/X.base".into()
        }
    );
    let (full, base, add) = (&a.clips[0], &a.clips[1], &a.clips[2]);
    let up_to_x = anim_up_to_x(&scene);
    let n = a.skeleton.len();
    let lever = levers(&a.skeleton, 0.03);
    let (mut worst_full, mut worst_layered, mut differs) = (0.0f64, 0.0f64, 0.0f64);
    for f in 0..full.frame_count {
        let t = stack.time_begin + f as f64 / fps;
        let at = |clip: &skelpack::model::Clip| -> Vec<JointPose> {
            (0..n).map(|j| pose(&clip.tracks[j].at(f))).collect()
        };
        // The take's own clip: every layer, as ufbx evaluates the whole take.
        let ours = objects(&a.skeleton, &at(full));
        let theirs = ufbx_worlds(&scene, &stack.anim, &a.skeleton, t);
        for j in 0..n {
            worst_full = worst_full.max(frame_distance(&ours[j], &theirs[j], lever[j]));
        }
        // Base ⊕ additive, as the runtime applies it.
        let mut shown = at(base);
        apply_additive(&mut shown, &at(add), 1.0, additive.mode);
        let ours = objects(&a.skeleton, &shown);
        let layered = ufbx_worlds(&scene, &up_to_x, &a.skeleton, t);
        for j in 0..n {
            worst_layered = worst_layered.max(frame_distance(&ours[j], &layered[j], lever[j]));
            differs = differs.max(frame_distance(&layered[j], &theirs[j], lever[j]));
        }
    }
    println!(
        "full take against ufbx: {worst_full:.2e} m; base + additive against ufbx's layers up \
         to X: {worst_layered:.2e} m; the override layer Y moves frames up to {differs:.3} m"
    );
    assert!(worst_full < 1e-5, "{worst_full}");
    assert!(worst_layered < 1e-5, "{worst_layered}");
    // The additive is not a copy of the full take: the override layer above X matters.
    assert!(differs > 1e-3, "{differs}");
    // And X adds something to its base.
    let moved = (0..full.frame_count)
        .flat_map(|f| (0..n).map(move |j| (f, j)))
        .map(|(f, j)| {
            let t = add.tracks[j].at(f);
            t.translation.length() as f64 + t.rotation.xyz().length() as f64
        })
        .fold(0.0, f64::max);
    assert!(moved > 1e-3, "{moved}");
}

#[test]
fn compressed_base_plus_additive_holds_the_tolerance_in_the_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let skp_path = dir.path().join("layers.skp");
    let out = skelpack_ok(
        &["compress", "--preset", "acl", "--json", "-o"],
        &[&skp_path, &path()],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clip = report["clips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Take 001/X")
        .unwrap();
    assert_eq!(clip["additive"]["mode"], "additive0", "{clip}");
    assert_eq!(clip["additive"]["base"]["clip"], "Take 001/X.base");
    let a = import::load(&path()).unwrap();
    let bytes = std::fs::read(&skp_path).unwrap();
    let skp = Skp::open(bytes.as_slice()).unwrap();
    let (cb, ca) = (
        skp.find_clip("Take 001/X.base").unwrap(),
        skp.find_clip("Take 001/X").unwrap(),
    );
    assert_eq!(skp.additive_base_clip(ca), Some("Take 001/X.base"));
    let mode = skp.clip_meta(ca).additive.as_ref().unwrap().mode;
    let scene = fbx::load_scene(&std::fs::read(path()).unwrap()).unwrap();
    let up_to_x = anim_up_to_x(&scene);
    let stack = &scene.anim_stacks[0];
    let fps = scene.settings.frames_per_second;
    let n = a.skeleton.len();
    let (base_src, frames) = (&a.clips[1], a.clips[1].frame_count);
    let (mut base, mut add) = (vec![JointPose::default(); n], vec![JointPose::default(); n]);
    // 0.1 mm at markers 3 cm out (the acl preset), with float arithmetic's guard.
    let (tolerance, lever) = (1e-4 * 1.001, levers(&a.skeleton, 0.03));
    let (mut on_source_base, mut on_decoded_base) = (0.0f64, 0.0f64);
    for f in 0..frames {
        let t = stack.time_begin + f as f64 / fps;
        let layered = ufbx_worlds(&scene, &up_to_x, &a.skeleton, t);
        skp.clip(ca).sample(f as f32, &mut add);
        // ACL's rule: the stored additive on the source's base.
        let mut shown: Vec<JointPose> = (0..n).map(|j| pose(&base_src.tracks[j].at(f))).collect();
        apply_additive(&mut shown, &add, 1.0, mode);
        let ours = objects(&a.skeleton, &shown);
        // What a game shows: the decoded additive on the decoded base.
        skp.clip(cb).sample(f as f32, &mut base);
        apply_additive(&mut base, &add, 1.0, mode);
        let game = objects(&a.skeleton, &base);
        for j in 0..n {
            on_source_base = on_source_base.max(frame_distance(&ours[j], &layered[j], lever[j]));
            on_decoded_base = on_decoded_base.max(frame_distance(&game[j], &layered[j], lever[j]));
        }
    }
    println!(
        "against ufbx's layers up to X: additive on the source base {on_source_base:.2e} m, on \
         the decoded base {on_decoded_base:.2e} m (tolerance 1e-4 each)"
    );
    assert!(on_source_base <= tolerance, "{on_source_base}");
    // Each clip holds its own tolerance; together at most their sum.
    assert!(on_decoded_base <= 2.0 * tolerance, "{on_decoded_base}");
}

#[test]
fn inspect_shows_the_layer_clip_additive_on_its_base() {
    let out = skelpack_ok(&["inspect", "--json"], &[&path()]);
    let info: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clips = info[0]["clips"].as_array().unwrap();
    let by_name = |n: &str| clips.iter().find(|c| c["name"] == n).unwrap();
    assert_eq!(by_name("Take 001")["additive"], Value::Null);
    assert_eq!(by_name("Take 001/X.base")["additive"], Value::Null);
    let x = &by_name("Take 001/X")["additive"];
    assert_eq!(x["mode"], "additive0", "{x}");
    assert_eq!(x["base"]["kind"], "clip");
    assert_eq!(x["base"]["clip"], "Take 001/X.base");
    // The layers the take was read from are listed with the take.
    let layers = by_name("Take 001")["layers"].as_array().unwrap();
    let names: Vec<&str> = layers.iter().map(|l| l["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["BaseLayer", "X", "Y"]);
}
