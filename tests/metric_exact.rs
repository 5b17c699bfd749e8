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

/// `exceeds` as it was defined before it compared without dividing: the rounded quotient
/// over 1 (infinite for a positive error against a zero tolerance).
fn exceeds_by_quotient(error: f32, tolerance: f32) -> bool {
    let ratio = if tolerance > 0.0 {
        error / tolerance
    } else if error > 0.0 {
        f32::INFINITY
    } else {
        0.0
    };
    ratio > 1.0
}

/// An `f32` from raw bits biased towards the values where the comparisons are delicate:
/// the tolerance itself and its neighbours, powers of two, subnormals, zero, infinities, NaN.
fn near(t: f32, pick: u8, bits: u32) -> f32 {
    match pick % 8 {
        0 => t,
        1 => f32::from_bits(t.to_bits().wrapping_add(1 + bits % 3)),
        2 => f32::from_bits(t.to_bits().wrapping_sub(1 + bits % 3)),
        3 => [
            0.0,
            -0.0,
            f32::MIN_POSITIVE,
            1e-45,
            f32::INFINITY,
            f32::NAN,
            1.0,
            2.0,
        ][bits as usize % 8],
        _ => f32::from_bits(bits),
    }
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(20_000))]

    /// `exceeds` compares without a division and decides exactly as the quotient did, for
    /// every pair of `f32` (NaN, infinities, subnormals, zero and negative tolerances too).
    #[test]
    fn exceeds_is_the_quotient_over_one(t_bits: u32, e_bits: u32, pick: u8) {
        let t = f32::from_bits(t_bits);
        let e = near(t, pick, e_bits);
        proptest::prop_assert_eq!(skelpack::metric::exceeds(e, t), exceeds_by_quotient(e, t), "e {:e} t {:e}", e, t);
    }

    /// `marker_within` (the verifier's test, from the squared distance where that decides)
    /// is exactly `!exceeds(marker_error(..))`, also for errors within a few units in the
    /// last place of the tolerance, where only the rounded root decides.
    #[test]
    fn marker_within_is_the_error_within_the_tolerance(
        angle in 0.0f64..1e-2,
        axis in (-1.0f64..1.0, -1.0f64..1.0, 0.1f64..1.0),
        shift in (-1e-3f64..1e-3, -1e-3f64..1e-3, -1e-3f64..1e-3),
        marker in 0.5f32..20.0,
        ulps in -4i32..=4,
        scale_tolerance in 0.2f32..2.0,
    ) {
        use glam::{DAffine3, DQuat, DVec3};
        use skelpack::metric::{exceeds, marker_error, marker_within};
        let skeleton = chain(&[]);
        let limits = JointLimits::uniform(&skeleton, marker, 1.0);
        let a = DAffine3::from_translation(DVec3::new(0.3, -1.2, 2.0));
        let axis = DVec3::new(axis.0, axis.1, axis.2).normalize();
        let b = a * DAffine3::from_rotation_translation(
            DQuat::from_axis_angle(axis, angle),
            DVec3::new(shift.0, shift.1, shift.2),
        );
        let e = marker_error(&limits, 0, &a, &b);
        // Tolerances around the error itself (where the square and the root disagree most
        // easily), and at a share of it either side.
        for t in [
            f32::from_bits((e.to_bits() as i32 + ulps).max(0) as u32),
            e * scale_tolerance,
            e,
        ] {
            proptest::prop_assert_eq!(
                marker_within(&limits, 0, &a, &b, t),
                !exceeds(e, t),
                "error {:e} tolerance {:e}", e, t
            );
        }
    }
}
