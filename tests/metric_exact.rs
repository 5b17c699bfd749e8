//! The visual-error metric is exact: zero for identical clips, and the closed form
//! 2·sin(θ/2)·reach for a rotation error θ placed on a chain.

mod common;

use glam::{Quat, Vec3};
use skelpack::import;
use skelpack::metric::{JointLimits, Reference, measure};
use skelpack::model::{Clip, Joint, Skeleton, Transform};

fn chain(lengths: &[f32]) -> Skeleton {
    let mut joints = vec![Joint::new("root", None, Transform::IDENTITY)];
    for (i, l) in lengths.iter().enumerate() {
        joints.push(Joint::new(
            format!("j{}", i + 1),
            Some(i),
            Transform::new(Vec3::new(*l, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE),
        ));
    }
    Skeleton::new(joints).unwrap()
}

#[test]
fn identical_clips_are_zero_on_every_shared_asset() {
    for path in common::all_assets() {
        let a = import::load(&path).unwrap();
        for clip in &a.clips {
            let limits = JointLimits::uniform(&a.skeleton, 3.0, 0.01);
            let r = Reference::new(&a.skeleton, clip, clip.frame_count);
            let e = measure(&a.skeleton, &r, clip, &limits, true);
            assert_eq!(e.samples.max, 0.0, "{} {}", path.display(), clip.name);
            assert_eq!(
                e.midpoints.map(|m| m.max),
                Some(0.0)
                    .filter(|_| clip.frame_count > 1)
                    .or(e.midpoints.map(|m| m.max))
            );
        }
    }
}

#[test]
fn rotation_error_on_a_chain_matches_closed_form() {
    // root -> j1 (1.0 along X) -> j2 (0.5 along X); markers 0.03 along each local axis.
    let s = chain(&[1.0, 0.5]);
    let raw = Clip::rest("raw", &s, 30.0, 3);
    let d = 0.03;
    for theta in [1e-4f32, 1e-3, 0.01, 0.1, 0.5] {
        for (joint, reach_to_leaf) in [(0usize, 1.5f32), (1, 0.5)] {
            let mut bad = raw.clone();
            for f in 0..3 {
                bad.tracks[joint].rotations[f] = Quat::from_rotation_z(theta);
            }
            let limits = JointLimits::uniform(&s, d, 1.0);
            let r = Reference::new(&s, &raw, 3);
            let e = measure(&s, &r, &bad, &limits, false);
            // The leaf's X marker sits at reach_to_leaf + d from the rotated joint, in the
            // plane of the rotation: the largest displacement.
            let expect = 2.0 * (theta / 2.0).sin() * (reach_to_leaf + d);
            let got = e.joint_max[2];
            assert!(
                (got - expect).abs() <= 2e-6 + expect * 1e-4,
                "theta {theta} at joint {joint}: {got} vs {expect}"
            );
            assert_eq!(e.samples.worst_joint, 2);
        }
    }
}

#[test]
fn translation_error_is_the_offset_itself() {
    let s = chain(&[1.0]);
    let raw = Clip::rest("raw", &s, 30.0, 2);
    let mut bad = raw.clone();
    bad.tracks[1].translations[1] += Vec3::new(0.0, 0.002, 0.0);
    let limits = JointLimits::uniform(&s, 0.03, 0.001);
    let e = measure(&s, &Reference::new(&s, &raw, 2), &bad, &limits, true);
    assert!((e.samples.max - 0.002).abs() < 1e-7);
    assert_eq!(e.samples.worst_frame, 1.0);
    assert_eq!(e.samples.violations, 1);
    // Halfway between frame 0 (exact) and 1 (off by 2 mm) the error is 1 mm.
    assert!((e.midpoints.unwrap().max - 0.001).abs() < 1e-7);
}
