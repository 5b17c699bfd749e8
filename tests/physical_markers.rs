//! Markers are physical (DESIGN §2): `d / s_j` along each joint's axes, `s_j` its rest-pose
//! scale in the scene. An armature scaled 0.01 or 100 (Blender unit mix-ups) compresses to
//! the same result as the unscaled file once the unit follows the scale, and an impossible
//! tolerance on one joint is reported with its floor without hurting any other joint.

mod common;

use skelpack::character::{DEFAULT_CHARACTER_GLB, DEFAULT_CHARACTER_NAME};
use skelpack::import;
use skelpack::model::LengthUnit;
use skelpack::settings::{JointSettings, Preset, Settings};

/// Compresses every clip; returns (payload bytes, worst error / tolerance over all joints,
/// samples and midpoints, measured independently of the codec's report).
fn compress_all(asset: &import::Asset, settings: &Settings) -> (u64, f32) {
    let mut bytes = 0;
    let mut worst = 0.0f32;
    for clip in &asset.clips {
        let (c, e, r) = common::compress_measured(asset, clip, settings);
        assert!(
            c.report.contract_met,
            "{}: {:?}",
            clip.name, c.report.failures
        );
        bytes += c.report.payload_bytes;
        for j in 0..asset.skeleton.len() {
            if r.limits.evaluated[j] {
                worst = worst.max(e.joint_max[j] / r.limits.tolerance[j]);
            }
        }
    }
    (bytes, worst)
}

#[test]
fn a_scaled_armature_compresses_like_the_unscaled_file() {
    let path = common::asset("CesiumMan.glb");
    let plain = import::load(&path).unwrap();
    let acl = Settings::from_preset(Preset::Acl);
    let (bytes, worst) = compress_all(&plain, &acl);
    assert!(worst <= 1.0);
    let dir = tempfile::tempdir().unwrap();
    for factor in [0.01f32, 100.0] {
        let name = format!("CesiumMan_x{factor}.glb");
        let scaled_path =
            common::scaled_node_copy(&path, "Armature", factor as f64, dir.path(), &name);
        let scaled = import::load(&scaled_path).unwrap();
        // Markers sit 3 cm from every joint whatever the armature's scale.
        let r = acl.resolve(&scaled, &scaled.clips[0].name);
        let s = scaled.skeleton.rest_scales();
        let hand = scaled.skeleton.find("Skeleton_arm_joint_R__3_").unwrap();
        let physical = r.limits.local_marker(hand) * s[hand];
        assert!(
            (physical - r.limits.marker_offset[hand]).abs() < 1e-6 * physical,
            "x{factor}: marker {physical} vs offset {}",
            r.limits.marker_offset[hand]
        );
        // With the unit following the scale, the problem is the same one.
        let mut same = acl.clone();
        same.unit = Some(LengthUnit::PerMetre(factor));
        let (b, w) = compress_all(&scaled, &same);
        assert!(w <= 1.0, "x{factor}: worst error {w} of tolerance");
        let change = b as f64 / bytes as f64;
        assert!(
            (0.95..=1.05).contains(&change),
            "x{factor}: {b} B against {bytes} B unscaled"
        );
    }
}

#[test]
fn an_impossible_fingertip_is_reported_with_its_floor_and_hurts_no_other_joint() {
    let asset = import::load_bytes(
        std::path::Path::new(DEFAULT_CHARACTER_NAME),
        DEFAULT_CHARACTER_GLB,
    )
    .unwrap();
    let acl = Settings::from_preset(Preset::Acl);
    let mut tight = acl.clone();
    tight.joints.insert(
        "RightHandIndex3".into(),
        JointSettings {
            tolerance_mm: Some(0.00001),
            ..Default::default()
        },
    );
    let tip = asset.skeleton.find("RightHandIndex3").unwrap();
    let (mut before, mut after) = (0, 0);
    for clip in &asset.clips {
        let (base, _, _) = common::compress_measured(&asset, clip, &acl);
        let (c, e, r) = common::compress_measured(&asset, clip, &tight);
        before += base.report.payload_bytes;
        after += c.report.payload_bytes;
        for j in 0..asset.skeleton.len() {
            if j != tip && r.limits.evaluated[j] {
                assert!(
                    e.joint_max[j] <= r.limits.tolerance[j],
                    "{}: {} over its tolerance ({} > {})",
                    clip.name,
                    asset.skeleton.joints[j].name,
                    e.joint_max[j],
                    r.limits.tolerance[j]
                );
            }
        }
        let f = &c.report.failures;
        assert_eq!(f.len(), 1, "{}: {f:?}", clip.name);
        assert_eq!(f[0].joint, "RightHandIndex3");
        assert!(f[0].floor > f[0].tolerance, "{:?}", f[0]);
        assert_eq!(c.report.floors[tip], f[0].floor);
        // Held just above its floor: no tighter than it can be, no looser than needed.
        assert!(
            e.joint_max[tip] <= 2.0 * f[0].floor,
            "{}: tip {} against floor {}",
            clip.name,
            e.joint_max[tip],
            f[0].floor
        );
    }
    assert!(
        (after as f64) < 1.6 * before as f64,
        "{after} B against {before} B without the fingertip"
    );
}
