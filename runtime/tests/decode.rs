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

/// CesiumMan's clip with every key frame multiplied by `stretch`: a long clip whose tracks
/// hold few keys, as a parsed payload (the reference decoder and both layouts read it).
fn stretched(stretch: u32) -> (skelpack_runtime::payload::PayloadRecord, Vec<JointPose>) {
    use skelpack_runtime::payload::{TrackRecord, parse};
    let (_, bytes) = common::skp("CesiumMan.glb", None);
    let skp = Skp::open(bytes.as_slice()).unwrap();
    let record = &skp.clip_records()[0];
    let mut p = parse(
        &skp.bytes()[record.payload.clone()],
        "stretched",
        skp.joint_count(),
    )
    .unwrap();
    p.frame_count = (p.frame_count - 1) * stretch + 1;
    for t in p.tracks.iter_mut().flatten() {
        if let TrackRecord::Animated(a) = t {
            a.frames.iter_mut().for_each(|f| *f *= stretch);
        }
    }
    let rest = (0..skp.joint_count()).map(|j| skp.joint_rest(j)).collect();
    (p, rest)
}

#[test]
fn a_long_clip_with_few_keys_keeps_small_tables_and_samples_as_the_reference() {
    use skelpack_runtime::Clip;
    // 940,001 frames; every track keeps its (at most 48) keys.
    let (p, rest) = stretched(20_000);
    let keys: usize = p
        .tracks
        .iter()
        .flatten()
        .map(|t| match t {
            skelpack_runtime::payload::TrackRecord::Animated(a) => a.frames.len(),
            _ => 0,
        })
        .sum();
    let rest_t: Vec<Transform> = rest
        .iter()
        .map(|r| Transform {
            translation: r.translation.into(),
            rotation: glam::Quat::from_array(r.rotation),
            scale: r.scale.into(),
        })
        .collect();
    let reference = skelpack::container::payload::from_record(p.clone(), "stretched", &rest_t);
    let n = rest.len();
    let mut want = vec![Transform::IDENTITY; n];
    let mut got = vec![JointPose::default(); n];
    let mut fwd = got.clone();
    for layout in [ClipLayout::Prepared, ClipLayout::Compact] {
        let clip = Clip::with_layout(&p, &rest, layout);
        // Dense tables would take a 4-byte entry per 4 frames per track (about 13 MB); the
        // tables are bounded by the keys: at most 256 entries or 16 per key, per track.
        let tables_bound = 4 * (256 * clip.animated_tracks() + 16 * keys);
        let prepared_keys = 64 * keys;
        assert!(
            clip.memory_bytes() < tables_bound + prepared_keys + 64 * 1024,
            "{layout:?}: {} bytes",
            clip.memory_bytes()
        );
        // Random frames, every key's frame and its neighbours, forward then backward.
        let mut x = 12_345u32;
        let mut times: Vec<f32> = (0..2_000)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 8) as f32 / (1 << 24) as f32 * p.frame_count as f32
            })
            .collect();
        times.extend((0..48u32).flat_map(|k| {
            let f = (k * 20_000) as f32;
            [f - 1.0, f - 0.5, f, f + 0.25, f + 1.0]
        }));
        times.sort_by(f32::total_cmp);
        let mut cursor = Cursor::new(&clip);
        for &t in times.iter().chain(times.iter().rev().step_by(7)) {
            reference.sample_local(t, &mut want);
            clip.sample(t, &mut got);
            cursor.sample(t, &mut fwd);
            for j in 0..n {
                assert!(same(&want[j], &got[j]), "{layout:?} joint {j} at {t}");
                assert!(
                    same(&want[j], &fwd[j]),
                    "{layout:?} cursor joint {j} at {t}"
                );
            }
        }
    }
}

#[test]
fn a_ranged_track_that_varies_in_no_component_is_refused_by_both_readers() {
    // Its keys would take no bits: a few bytes could declare millions of keys.
    use skelpack::codec::{TrackData, quantize::Format};
    let (a, _) = common::skp("CesiumMan.glb", None);
    let mut clips = common::compress(&a, None);
    let ranged = clips[0].tracks.iter_mut().flatten().find_map(|t| match t {
        TrackData::Animated(x) if matches!(x.format, Format::RangedVector { .. }) => Some(x),
        _ => None,
    });
    let track = ranged.expect("CesiumMan has a ranged vector track");
    track.range.extent = [0.0; 3];
    track.codes.iter_mut().for_each(|c| *c = [0; 3]);
    let bytes = skelpack::container::to_bytes(&a.skeleton, &clips);
    let e = Skp::open(bytes.as_slice()).unwrap_err();
    assert!(e.to_string().contains("invalid format"), "{e}");
    assert!(skelpack::container::from_bytes(&bytes).is_err());
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
