//! The runtime opened on `.skp` bytes agrees bit for bit with skelpack's reference decoder
//! (the encoder's own curves), by random access and by the cursor, on every clip of the
//! shared assets; corrupt bytes give an error, never a panic, and the same verdict as the
//! skelpack crate's reader.

mod common;

use skelpack::metric::PoseSource;
use skelpack::model::Transform;
use skelpack_runtime::{ClipLayout, Cursor, JointPose, Skp};

fn same(a: &Transform, b: &JointPose) -> bool {
    a.translation.to_array() == b.translation
        && a.rotation.to_array() == b.rotation
        && a.scale.to_array() == b.scale
}

#[test]
fn runtime_matches_the_reference_decoder_on_every_shared_asset() {
    for name in common::ASSETS {
        let (a, bytes) = common::skp(name, None);
        for layout in [ClipLayout::Prepared, ClipLayout::Compact] {
            check_asset(name, &a, &bytes, layout);
        }
    }
}

/// Every clip of one asset's `.skp`, opened in `layout`, against the reference decoder.
fn check_asset(name: &str, a: &skelpack::import::Asset, bytes: &[u8], layout: ClipLayout) {
    {
        let reference = skelpack::container::from_bytes(bytes).unwrap();
        let owned = Skp::open_with(bytes.to_vec(), layout).unwrap();
        let skp = Skp::open_with(bytes, layout).unwrap();
        assert_eq!(skp.joint_count(), a.skeleton.len());
        assert_eq!(skp.clip_count(), reference.clips.len());
        for (j, joint) in a.skeleton.joints.iter().enumerate() {
            assert_eq!(skp.joint_name(j), joint.name);
            assert_eq!(skp.joint_parent(j), joint.parent);
            assert_eq!(
                skp.find_joint(&joint.name).map(|k| skp.joint_name(k)),
                Some(&*joint.name)
            );
        }
        let n = skp.joint_count();
        let mut want = vec![Transform::IDENTITY; n];
        let (mut got, mut fwd) = (vec![JointPose::default(); n], vec![JointPose::default(); n]);
        for (c, rc) in reference.clips.iter().enumerate() {
            assert_eq!(skp.clip_name(c), rc.name);
            let clip = skp.clip(c);
            assert_eq!(clip.frame_count() as usize, rc.frame_count);
            let mut cursor = Cursor::new(clip);
            let times = (0..rc.frame_count * 4).map(|i| i as f32 * 0.25 - 0.5);
            for t in times.clone().chain(times.rev().step_by(5)) {
                rc.sample_local(t, &mut want);
                clip.sample(t, &mut got);
                cursor.sample(t, &mut fwd);
                for j in 0..n {
                    assert!(
                        same(&want[j], &got[j]),
                        "{name} '{}' {layout:?} joint {j} at {t}",
                        rc.name
                    );
                    assert!(
                        same(&want[j], &fwd[j]),
                        "{name} '{}' {layout:?} cursor {j} at {t}",
                        rc.name
                    );
                }
                owned.clip(c).sample(t, &mut got);
                assert!(same(&want[0], &got[0]));
            }
        }
    }
}

#[test]
fn the_compact_layout_holds_a_clip_in_about_its_payload_size() {
    for name in ["acl/13_07.acl.sjson", "CesiumMan.glb", "Fox.glb"] {
        let (_, bytes) = common::skp(name, None);
        let prepared = Skp::open(bytes.as_slice()).unwrap();
        let compact = Skp::open_with(bytes.as_slice(), ClipLayout::Compact).unwrap();
        for c in 0..compact.clip_count() {
            let clip = compact.clip(c);
            assert_eq!(clip.layout(), ClipLayout::Compact);
            // Beyond the fixed pose and one description per animated track, the keys and
            // tables take at most twice the payload's bytes.
            let overhead = 40 * compact.joint_count() + 160 * clip.animated_tracks() + 256;
            let payload = compact.clip_records()[c].payload.len();
            let (small, big) = (clip.memory_bytes(), prepared.clip(c).memory_bytes());
            assert!(
                small <= 2 * payload + overhead,
                "{name} clip {c}: {small} bytes for a {payload}-byte payload"
            );
            assert!(
                small < big,
                "{name} clip {c}: compact {small} vs prepared {big}"
            );
        }
    }
}

#[test]
fn every_single_byte_corruption_is_refused_or_decodes_finite_poses() {
    let (_, bytes) = common::skp("SimpleSkin.gltf", None);
    let mut accepted = 0;
    for at in 0..bytes.len() {
        for flip in [0x01u8, 0x80, 0xFF] {
            let mut b = bytes.clone();
            b[at] ^= flip;
            // Fix the checksum so the mutation reaches the parser behind it.
            let n = b.len() - 4;
            let crc = crc32fast_hash(&b[..n]);
            b[n..].copy_from_slice(&crc.to_le_bytes());
            let full = skelpack::container::from_bytes(&b);
            match Skp::open(b.as_slice()) {
                Err(e) => {
                    assert!(full.is_err(), "byte {at}^{flip:#x}: runtime refused ({e})");
                    assert!(!e.to_string().is_empty());
                }
                Ok(skp) => {
                    assert!(full.is_ok(), "byte {at}^{flip:#x}: runtime accepted");
                    accepted += 1;
                    let compact = Skp::open_with(b.as_slice(), ClipLayout::Compact).unwrap();
                    let mut pose = vec![JointPose::default(); skp.joint_count()];
                    let mut small = pose.clone();
                    for c in 0..skp.clip_count() {
                        let clip = skp.clip(c);
                        let mut cursor = Cursor::new(clip);
                        for i in 0..clip.frame_count() * 2 {
                            clip.sample(i as f32 * 0.5, &mut pose);
                            compact.clip(c).sample(i as f32 * 0.5, &mut small);
                            let bits = |p: &[JointPose]| {
                                p.iter()
                                    .flat_map(|j| {
                                        j.translation.iter().chain(&j.rotation).chain(&j.scale)
                                    })
                                    .map(|x| x.to_bits())
                                    .collect::<Vec<_>>()
                            };
                            assert_eq!(bits(&pose), bits(&small), "byte {at}^{flip:#x}");
                            cursor.sample(i as f32 * 0.5, &mut pose);
                            let finite = pose.iter().all(|p| {
                                p.translation
                                    .iter()
                                    .chain(&p.rotation)
                                    .chain(&p.scale)
                                    .all(|x| x.is_finite())
                            });
                            assert!(finite, "byte {at}^{flip:#x} clip {c} frame {i}");
                        }
                    }
                }
            }
        }
    }
    assert!(accepted > 0, "some mutations (float bits) decode");
}

fn crc32fast_hash(b: &[u8]) -> u32 {
    // The container's CRC-32 (IEEE), bitwise: the test does not depend on the library's.
    let mut crc = !0u32;
    for &x in b {
        crc ^= x as u32;
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}
