//! The lane kernel (`runtime/src/lanes.rs`: linear rotation tracks eight at a time in SIMD
//! lanes, and in clips with fewer the rotations' normalizations two per register, on x86-64
//! CPUs with FMA) against the scalar path it replaces
//! ([`Clip::sample_one_by_one`]), bit for bit, on every clip of several shared assets: random
//! access, forward playback and a pose buffer shorter than the skeleton. The encoder verifies
//! its error bound against the runtime's decode, so the two must never differ in one bit.
//! Skipped (with a note) where `../shared/assets` is absent.

mod common;

use skelpack_runtime::{Cursor, JointPose, Skp};

/// Assets with many linear rotation tracks (full groups of eight lanes), large arcs between
/// sparse keys (InterpolationTest, Fox), and every source format.
const LANE_ASSETS: &[&str] = &[
    "CesiumMan.glb",
    "RobotExpressive.glb",
    "Fox.glb",
    "InterpolationTest.glb",
    "CMU_131_01.bvh",
    "acl/13_07.acl.sjson",
    "acl/104_30.acl.sjson",
];

/// Every float of a pose as bits.
fn bits(pose: &[JointPose]) -> Vec<u32> {
    pose.iter()
        .flat_map(|j| j.translation.iter().chain(&j.rotation).chain(&j.scale))
        .map(|v| v.to_bits())
        .collect()
}

/// Times to sample a clip of `frames` frames at: every quarter frame, scattered times from
/// an LCG, and edges (before the start, `-0.0`, past the end, NaN, infinities).
fn times(frames: u32) -> Vec<f32> {
    let last = (frames - 1) as f32;
    let mut t: Vec<f32> = (0..frames * 4).map(|i| i as f32 * 0.25).collect();
    let mut k = 7u32;
    for _ in 0..500 {
        k = k.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        t.push((k >> 8) as f32 / (1u32 << 24) as f32 * last);
    }
    t.extend([
        -1.0,
        -0.0,
        last + 0.5,
        1e9,
        f32::NAN,
        f32::INFINITY,
        -f32::INFINITY,
    ]);
    t
}

#[test]
fn lanes_equal_the_scalar_path_bit_for_bit() {
    let (mut clips, mut poses, mut laned) = (0, 0u64, 0);
    for name in LANE_ASSETS {
        if !common::asset(name).exists() {
            eprintln!("skipped {name}: ../shared/assets is absent");
            continue;
        }
        let (_, bytes) = common::skp(name, None);
        let skp = Skp::open(bytes.as_slice()).unwrap();
        let n = skp.joint_count();
        for c in 0..skp.clip_count() {
            let clip = skp.clip(c);
            clips += 1;
            // At least one full group of eight tracks (the clip may have other kinds too).
            laned += usize::from(clip.animated_tracks() >= 8);
            let mut cursor = Cursor::new(clip);
            let (mut want, mut got, mut fwd) = (
                vec![JointPose::default(); n],
                vec![JointPose::default(); n],
                vec![JointPose::default(); n],
            );
            for t in times(clip.frame_count()) {
                clip.sample_one_by_one(t, &mut want);
                clip.sample(t, &mut got);
                cursor.sample(t, &mut fwd);
                let w = bits(&want);
                assert_eq!(w, bits(&got), "{name} clip {c} at {t}: random access");
                assert_eq!(w, bits(&fwd), "{name} clip {c} at {t}: forward");
                // A buffer short of the skeleton: tracks past it are left out alike.
                let short = n * 2 / 3;
                clip.sample_one_by_one(t, &mut want[..short]);
                clip.sample(t, &mut got[..short]);
                assert_eq!(
                    bits(&want[..short]),
                    bits(&got[..short]),
                    "{name} {c} short"
                );
                poses += 1;
            }
        }
    }
    if clips == 0 {
        return;
    }
    assert!(laned >= 3, "only {laned} clips had a full group of lanes");
    eprintln!("{clips} clips, {poses} poses, {laned} clips with lanes: identical");
}
