//! Additive clips (issue 26): an additive clip made from a shared clip (the clip minus its
//! first frame, ACL's `additive1` space) on the rest pose is compressed with its own keys
//! stored and its error measured on rest ⊕ additive; decoded by the runtime and applied
//! with `apply_additive`, it holds the tolerance at every sample and midpoint against the
//! source layered by this test's own arithmetic. Its size is reported beside the same
//! motion compressed as a full clip.

mod common;

use glam::{DAffine3, Quat, Vec3};
use skelpack::codec::runtime::{to_joint_pose, to_transform};
use skelpack::container;
use skelpack::import;
use skelpack::metric::{exceeds, joint_error};
use skelpack::model::{Clip, Transform, local_to_object_f64};
use skelpack::settings::{AdditiveSettings, ClipSettings, Preset, Settings};
use skelpack_runtime::meta::AdditiveMode;
use skelpack_runtime::{JointPose, Skp, apply_additive};

/// `clip` minus its first frame in ACL's `additive1` space: translation difference,
/// rotation `first⁻¹ · r`, scale `s / first − 1`.
fn minus_first_frame(clip: &Clip, name: &str) -> Clip {
    let mut a = clip.clone();
    a.name = name.to_owned();
    for t in &mut a.tracks {
        let first = t.at(0);
        for f in 0..t.translations.len() {
            t.translations[f] -= first.translation;
            t.rotations[f] = (first.rotation.inverse() * t.rotations[f]).normalize();
            t.scales[f] = t.scales[f] / first.scale - Vec3::ONE;
        }
    }
    a
}

/// `base ⊕ additive` in `additive1` space, computed here (not by the runtime).
fn layered(base: &Transform, add: &Transform) -> Transform {
    Transform::new(
        base.translation + add.translation,
        (base.rotation * add.rotation).normalize(),
        base.scale * (Vec3::ONE + add.scale),
    )
}

/// Marks `clip` additive on `base` (a clip's name, or "rest") in `settings`, as the sidecar's
/// `[clips.NAME] additive = { base, frame, mode }` does.
fn set_additive(
    settings: &mut Settings,
    clip: String,
    base: String,
    frame: Option<u32>,
    mode: Option<String>,
) {
    settings.clips.insert(
        clip,
        ClipSettings {
            additive: Some(AdditiveSettings { base, frame, mode }),
            ..Default::default()
        },
    );
}

#[test]
fn an_additive_clip_holds_the_tolerance_on_its_base() {
    let mut asset = import::load(&common::asset("Fox.glb")).unwrap();
    let source = asset
        .clips
        .iter()
        .find(|c| c.name == "Survey")
        .unwrap()
        .clone();
    let additive = minus_first_frame(&source, "Survey_additive");
    asset.clips.push(additive.clone());
    let mut settings = Settings::from_preset(Preset::Acl);
    set_additive(
        &mut settings,
        additive.name.clone(),
        "rest".into(),
        None,
        Some("additive1".into()),
    );
    let resolved = settings.resolve(&asset, &additive.name);
    let c = common::compress(&asset, &additive, &settings);
    assert!(c.report.contract_met, "{:?}", c.report.failures);
    let a = c.report.playback.additive.as_ref().unwrap();
    assert_eq!(a.mode, "additive1");
    // The same motion as players show it (rest ⊕ additive), compressed as a full clip.
    let rest = asset.skeleton.rest_pose();
    let mut full = additive.clone();
    full.name = "Survey_layered".into();
    for (j, t) in full.tracks.iter_mut().enumerate() {
        for f in 0..t.translations.len() {
            let x = layered(&rest[j], &t.at(f));
            t.translations[f] = x.translation;
            t.rotations[f] = x.rotation;
            t.scales[f] = x.scale;
        }
    }
    let full_c = common::compress(&asset, &full, &Settings::from_preset(Preset::Acl));
    println!(
        "Fox Survey minus its first frame on the rest pose: additive {} B, as a full clip {} B (raw {} B)",
        c.report.payload_bytes, full_c.report.payload_bytes, c.report.raw_bytes
    );
    // The runtime decodes the stored additive keys; applied on the rest pose with weight 1
    // they show the layered source within tolerance at every sample and midpoint.
    let bytes = container::to_bytes(&asset.skeleton, std::slice::from_ref(&c));
    let skp = Skp::open(&bytes[..]).unwrap();
    let meta = skp.clip_meta(0).additive.as_ref().unwrap();
    assert_eq!(meta.mode, AdditiveMode::Additive1);
    let n = asset.skeleton.len();
    let rest_pose: Vec<JointPose> = rest.iter().map(to_joint_pose).collect();
    let mut add = vec![JointPose::default(); n];
    let mut src = vec![Transform::IDENTITY; n];
    let mut worst = 0.0f32;
    for half in 0..2 * additive.frame_count - 1 {
        let f = half as f32 * 0.5;
        skp.clip(0).sample(f, &mut add);
        let mut shown = rest_pose.clone();
        apply_additive(&mut shown, &add, 1.0, meta.mode);
        let dec: Vec<Transform> = shown.iter().map(to_transform).collect();
        additive.sample_local(f, &mut src);
        let want: Vec<Transform> = (0..n).map(|j| layered(&rest[j], &src[j])).collect();
        let (mut x, mut y) = (vec![DAffine3::IDENTITY; n], vec![DAffine3::IDENTITY; n]);
        local_to_object_f64(&asset.skeleton, &want, &mut x);
        local_to_object_f64(&asset.skeleton, &dec, &mut y);
        for j in 0..n {
            if !resolved.limits.evaluated[j] {
                continue;
            }
            let e = joint_error(&x[j], &y[j], resolved.limits.local_marker(j));
            let tol = resolved.limits.tolerance[j];
            worst = worst.max(e / tol);
            assert!(!exceeds(e, tol), "frame {f} joint {j}: {e} > {tol}");
        }
    }
    println!("worst error on the base: {worst:.3} of tolerance");
    // Weight 0 leaves the base; a half weight lies between.
    let mut same = rest_pose.clone();
    apply_additive(&mut same, &add, 0.0, meta.mode);
    assert_eq!(same, rest_pose);
    let mut half = rest_pose.clone();
    apply_additive(&mut half, &add, 0.5, meta.mode);
    for j in 0..n {
        let t0 = Vec3::from_array(rest_pose[j].translation);
        let t1 = t0 + Vec3::from_array(add[j].translation);
        let th = Vec3::from_array(half[j].translation);
        assert!((th - (t0 + t1) * 0.5).length() <= 1e-4 * (1.0 + t1.length()));
        let r = Quat::from_array(half[j].rotation);
        assert!(r.is_normalized());
    }
    // The C API applies the same layer, bit for bit.
    let mut via_c = rest_pose.clone();
    // SAFETY: both buffers hold `n` transforms and do not overlap.
    let status = unsafe {
        skelpack_runtime::capi::skp_apply_additive(
            via_c.as_mut_ptr(),
            add.as_ptr(),
            n,
            0.5,
            skelpack_runtime::capi::SKP_ADDITIVE_ADDITIVE1,
        )
    };
    assert_eq!(status, skelpack_runtime::capi::SkpStatus::SkpOk);
    assert_eq!(via_c, half);
}

#[test]
fn an_additive_base_the_asset_lacks_is_a_clear_error() {
    let asset = import::load(&common::asset("Fox.glb")).unwrap();
    let clip = &asset.clips[0];
    let mut settings = Settings::from_preset(Preset::Acl);
    set_additive(
        &mut settings,
        clip.name.clone(),
        "NoSuchClip".into(),
        Some(0),
        None,
    );
    let r = settings.resolve(&asset, &clip.name);
    let e = skelpack::codec::compress(&asset.skeleton, clip, &r, &skelpack::codec::Control::new())
        .unwrap_err()
        .to_string();
    assert!(e.contains("NoSuchClip") && !e.contains('\n'), "{e}");
    let (_, clips) = settings.unknown_names(&asset.skeleton, &["Survey", "Walk", "Run"]);
    assert_eq!(clips, vec!["NoSuchClip".to_owned()]);
}

/// Additive on a clip played in sync (`{ base = "Run" }`): Fox's Survey minus its first
/// frame on Fox's Run, frame by frame (clamped to Run's last frame), within tolerance of
/// the layered source at every sample and midpoint.
#[test]
fn an_additive_clip_on_a_clip_in_sync_holds_the_tolerance() {
    let mut asset = import::load(&common::asset("Fox.glb")).unwrap();
    let source = asset
        .clips
        .iter()
        .find(|c| c.name == "Survey")
        .unwrap()
        .clone();
    let base = asset
        .clips
        .iter()
        .find(|c| c.name == "Run")
        .unwrap()
        .clone();
    let additive = minus_first_frame(&source, "Survey_on_run");
    asset.clips.push(additive.clone());
    let mut settings = Settings::from_preset(Preset::Acl);
    set_additive(
        &mut settings,
        additive.name.clone(),
        "Run".into(),
        None,
        None,
    );
    let resolved = settings.resolve(&asset, &additive.name);
    let c = common::compress(&asset, &additive, &settings);
    assert!(c.report.contract_met, "{:?}", c.report.failures);
    let bytes = container::to_bytes(&asset.skeleton, std::slice::from_ref(&c));
    let skp = Skp::open(&bytes[..]).unwrap();
    assert_eq!(skp.additive_base_clip(0), Some("Run"));
    let n = asset.skeleton.len();
    let last = (base.frame_count - 1) as f32;
    let (mut add, mut b, mut src) = (
        vec![JointPose::default(); n],
        vec![Transform::IDENTITY; n],
        vec![Transform::IDENTITY; n],
    );
    let mut worst = 0.0f32;
    for half in 0..2 * additive.frame_count - 1 {
        let f = half as f32 * 0.5;
        base.sample_local(f.min(last), &mut b);
        skp.clip(0).sample(f, &mut add);
        let mut shown: Vec<JointPose> = b.iter().map(to_joint_pose).collect();
        apply_additive(&mut shown, &add, 1.0, AdditiveMode::Additive1);
        let dec: Vec<Transform> = shown.iter().map(to_transform).collect();
        additive.sample_local(f, &mut src);
        let want: Vec<Transform> = (0..n).map(|j| layered(&b[j], &src[j])).collect();
        let (mut x, mut y) = (vec![DAffine3::IDENTITY; n], vec![DAffine3::IDENTITY; n]);
        local_to_object_f64(&asset.skeleton, &want, &mut x);
        local_to_object_f64(&asset.skeleton, &dec, &mut y);
        for j in (0..n).filter(|&j| resolved.limits.evaluated[j]) {
            let e = joint_error(&x[j], &y[j], resolved.limits.local_marker(j));
            let tol = resolved.limits.tolerance[j];
            worst = worst.max(e / tol);
            assert!(!exceeds(e, tol), "frame {f} joint {j}: {e} > {tol}");
        }
    }
    println!(
        "Survey minus its first frame on Run in sync: {} B, worst {worst:.3} of tolerance",
        c.report.payload_bytes
    );
}

/// An ACL SJSON clip written with `additive_format` and its base clip in `base_tracks`
/// (ACL 13_07's tracks as both, `additive0`): read as an additive clip on its base played
/// in sync, compressed within ACL's `error_threshold` measured on base ⊕ additive, and the
/// runtime's layer on the source base holds it at every sample.
#[test]
fn an_acl_additive_clip_is_read_with_its_base() {
    let sjson = common::acl_additive_13_07_sjson();
    let asset =
        import::load_bytes(std::path::Path::new("additive.acl.sjson"), sjson.as_bytes()).unwrap();
    assert_eq!(asset.clips.len(), 2);
    assert_eq!(asset.clips[1].name, "13_07_base");
    let settings = Settings::default();
    let clip = &asset.clips[0];
    let r = settings.resolve(&asset, &clip.name);
    let a = r.additive.as_ref().expect("the clip is additive");
    assert_eq!(a.mode, AdditiveMode::Additive0);
    let c = common::compress(&asset, clip, &settings);
    assert!(c.report.contract_met, "{:?}", c.report.failures);
    let report = c.report.playback.additive.as_ref().unwrap();
    assert_eq!(report.mode, "additive0");
    let bytes = container::to_bytes(&asset.skeleton, std::slice::from_ref(&c));
    let skp = Skp::open(&bytes[..]).unwrap();
    assert_eq!(skp.additive_base_clip(0), Some("13_07_base"));
    let base = &asset.clips[1];
    let n = asset.skeleton.len();
    let (mut add, mut b, mut src) = (
        vec![JointPose::default(); n],
        vec![Transform::IDENTITY; n],
        vec![Transform::IDENTITY; n],
    );
    let mut worst = 0.0f32;
    for f in 0..clip.frame_count {
        base.sample_local(f as f32, &mut b);
        skp.clip(0).sample(f as f32, &mut add);
        let mut shown: Vec<JointPose> = b.iter().map(to_joint_pose).collect();
        apply_additive(&mut shown, &add, 1.0, AdditiveMode::Additive0);
        let dec: Vec<Transform> = shown.iter().map(to_transform).collect();
        clip.sample_local(f as f32, &mut src);
        // additive0: translation added, rotation composed, scale multiplied.
        let want: Vec<Transform> = (0..n)
            .map(|j| {
                Transform::new(
                    b[j].translation + src[j].translation,
                    (b[j].rotation * src[j].rotation).normalize(),
                    b[j].scale * src[j].scale,
                )
            })
            .collect();
        let (mut x, mut y) = (vec![DAffine3::IDENTITY; n], vec![DAffine3::IDENTITY; n]);
        local_to_object_f64(&asset.skeleton, &want, &mut x);
        local_to_object_f64(&asset.skeleton, &dec, &mut y);
        for j in (0..n).filter(|&j| r.limits.evaluated[j]) {
            let e = joint_error(&x[j], &y[j], r.limits.local_marker(j));
            let tol = r.limits.tolerance[j];
            worst = worst.max(e / tol);
            assert!(!exceeds(e, tol), "frame {f} joint {j}: {e} > {tol}");
        }
    }
    println!(
        "ACL 13_07 as additive0 on itself: {} B, worst {worst:.3} of tolerance",
        c.report.payload_bytes
    );
}

/// An additive clip's end sites (leaves without markers: BVH end sites) decode where the raw
/// composed pose puts them, in the codec's clip (what the app draws) and in the `.skp` the
/// runtime plays: CMU's walk taken as a `relative` layer on the rest pose (as
/// tests/app_curves.rs does), whose end-site keys are their offsets, not the additive
/// identity. Before, they decoded to the identity and sat on their parent's composed place
/// (a whole offset, 0.5-1.6 units, off); now within their parent's error carried out to
/// them (its tolerance times their lever over its marker offset) plus their own offset's.
#[test]
fn an_additive_clips_end_sites_are_where_the_raw_layer_puts_them() {
    use skelpack::codec::playback::Layer;
    use skelpack::metric::PoseSource;
    let asset = import::load(&common::asset("CMU_131_01.bvh")).unwrap();
    let clip = &asset.clips[0];
    let mut settings = Settings::from_preset(Preset::Acl);
    set_additive(
        &mut settings,
        clip.name.clone(),
        "rest".into(),
        None,
        Some("relative".into()),
    );
    let resolved = settings.resolve(&asset, &clip.name);
    let a = resolved.additive.as_ref().unwrap();
    let layer = Layer {
        mode: a.mode,
        base: resolved.additive_base.clone().unwrap(),
    };
    let s = &asset.skeleton;
    let n = s.len();
    let ends: Vec<usize> = (0..n)
        .filter(|&j| !resolved.limits.evaluated[j] && !s.joints.iter().any(|k| k.parent == Some(j)))
        .collect();
    assert!(ends.len() >= 5, "CMU's end sites: {ends:?}");
    let c = common::compress(&asset, clip, &settings);
    assert!(c.report.contract_met, "{:?}", c.report.failures);
    let bytes = container::to_bytes(s, std::slice::from_ref(&c));
    let skp = Skp::open(&bytes[..]).unwrap();
    let mode = skp.clip_meta(0).additive.as_ref().unwrap().mode;
    let rest: Vec<JointPose> = s.rest_pose().iter().map(to_joint_pose).collect();
    let (mut src, mut dec) = (vec![Transform::IDENTITY; n], vec![Transform::IDENTITY; n]);
    let mut add = vec![JointPose::default(); n];
    let mut worst = (0.0f64, 0.0f64);
    for half in 0..2 * clip.frame_count - 1 {
        let f = half as f32 * 0.5;
        clip.sample_local(f, &mut src);
        let want: Vec<Transform> = (0..n).map(|j| layer.compose(j, f, &src[j])).collect();
        c.sample_local(f, &mut dec);
        let app: Vec<Transform> = (0..n).map(|j| layer.compose(j, f, &dec[j])).collect();
        skp.clip(0).sample(f, &mut add);
        let mut shown = rest.clone();
        apply_additive(&mut shown, &add, 1.0, mode);
        let runtime: Vec<Transform> = shown.iter().map(to_transform).collect();
        let mut x = vec![DAffine3::IDENTITY; n];
        local_to_object_f64(s, &want, &mut x);
        for (k, got) in [(0, &app), (1, &runtime)] {
            let mut y = vec![DAffine3::IDENTITY; n];
            local_to_object_f64(s, got, &mut y);
            for &j in &ends {
                let e = (x[j].translation - y[j].translation).length();
                // Its parent's error (within the parent's tolerance at its markers, scaled
                // by the end site's lever over the marker offset) plus its own offset's.
                let p = s.joints[j].parent.unwrap();
                let lever = s.joints[j].rest.translation.length() as f64;
                let bound = resolved.limits.tolerance[j] as f64
                    + resolved.limits.tolerance[p] as f64 * lever.max(1e-9)
                        / resolved.limits.local_marker(p) as f64;
                let w = if k == 0 { &mut worst.0 } else { &mut worst.1 };
                *w = w.max(e / bound);
                assert!(
                    e <= bound * 1.0001,
                    "frame {f}: end site {} off by {e} over {bound} ({})",
                    s.joints[j].name,
                    ["codec clip", "runtime"][k]
                );
            }
        }
    }
    println!(
        "{} end sites: worst {:.3} (codec clip) / {:.3} (runtime) of their bound",
        ends.len(),
        worst.0,
        worst.1
    );
}
