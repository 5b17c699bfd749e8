//! The `.skp` container: exact round trips on real clips, the payload size the report
//! states, and no panic (nor huge allocation) on truncated or corrupted bytes; containers
//! from several assets, mutated (bytes, and huge-but-finite floats at any bit), are either
//! refused or decode every clip to finite transforms at every frame.

mod common;

use proptest::prelude::*;
use skelpack::codec::{self, Control, TrackData};
use skelpack::container;
use skelpack::import;
use skelpack::metric::{Reference, measure};
use skelpack::model::playback::{Additive, AdditiveBase, AdditiveMode, Playback, RootMotion};
use skelpack::settings::{Preset, Settings};

fn compressed(file: &str) -> (import::Asset, Vec<codec::CompressedClip>) {
    let asset = import::load(&common::asset(file)).unwrap();
    let settings = Settings::from_preset(Preset::Acl);
    let clips = asset
        .clips
        .iter()
        .map(|c| {
            codec::compress(
                &asset.skeleton,
                c,
                &settings.resolve(&asset, &c.name),
                &Control::new(),
            )
            .unwrap()
        })
        .collect();
    (asset, clips)
}

#[test]
fn round_trip_is_exact_and_sizes_match_the_report() {
    for file in [
        "acl/49_15.acl.sjson",
        "acl/93_01_zero_range_extent.acl.sjson",
        "acl/121_10.acl.sjson",
        "CesiumMan.glb",
        "Fox.glb",
        "KayKit_Med_General.glb",
    ] {
        let (asset, clips) = compressed(file);
        let bytes = container::to_bytes(&asset.skeleton, &clips);
        let back = container::from_bytes(&bytes).unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(back.skeleton.len(), asset.skeleton.len());
        for (a, b) in clips.iter().zip(&back.clips) {
            assert_eq!(a.name, b.name);
            assert_eq!(a.frame_count, b.frame_count);
            for (ja, jb) in a.tracks.iter().zip(&b.tracks) {
                for (ta, tb) in ja.iter().zip(jb) {
                    match (ta, tb) {
                        (TrackData::Animated(x), TrackData::Animated(y)) => {
                            assert_eq!(x.curve, y.curve, "{file} {}", a.name);
                            assert_eq!(x.codes, y.codes);
                        }
                        _ => assert_eq!(ta, tb, "{file} {}", a.name),
                    }
                }
            }
            let payload = skelpack::container::payload::write(a);
            assert_eq!(
                payload.len() as u64,
                a.report.payload_bytes,
                "{file} {}: payload size",
                a.name
            );
        }
        // The decoded container holds the contract on its own.
        for (clip, dec) in asset.clips.iter().zip(&back.clips) {
            let limits = Settings::from_preset(Preset::Acl)
                .resolve(&asset, &clip.name)
                .limits;
            let e = measure(
                &back.skeleton,
                &Reference::new(&asset.skeleton, clip, clip.frame_count),
                dec,
                &limits,
                false,
            );
            assert!(
                e.within_tolerance(),
                "{file} {}: {:?}",
                clip.name,
                e.samples
            );
        }
    }
}

/// Playback metadata on every record kind: looping, root motion on joint 0 (its source
/// start, a cycle delta), additive on a frame of the clip itself, two events, two scalar
/// tracks (unorm16 and float).
fn with_playback(mut clips: Vec<codec::CompressedClip>) -> Vec<codec::CompressedClip> {
    for c in &mut clips {
        let name = c.name.clone();
        c.playback = Playback {
            looping: true,
            root_motion: Some(RootMotion {
                joint: 0,
                start_translation: c.rest[0].translation.to_array(),
                start_rotation: c.rest[0].rotation.to_array(),
                cycle_translation: [0.0, 0.0, 1.25],
                cycle_rotation: glam::Quat::from_rotation_y(0.1).to_array(),
            }),
            additive: Some(Additive {
                mode: AdditiveMode::Additive1,
                base: AdditiveBase::Frame {
                    clip: name,
                    frame: 3,
                },
            }),
            events: vec![
                skelpack::model::Event {
                    name: "start".into(),
                    time: 0.0,
                    payload: None,
                },
                skelpack::model::Event {
                    name: "hit".into(),
                    time: c.frame_count.saturating_sub(1) as f32 / c.sample_rate,
                    payload: Some("sfx".into()),
                },
            ],
            scalar_tracks: vec![
                skelpack::model::StoredScalarTrack {
                    name: "Face".into(),
                    targets: 2,
                    times: vec![0.0, 0.5],
                    values: vec![0.0, 65535.0, 32768.0, 0.0],
                    storage: skelpack::model::scalar::ScalarStorage::Unorm16,
                    max_error: 2e-5,
                },
                skelpack::model::StoredScalarTrack {
                    name: "Body".into(),
                    targets: 1,
                    times: vec![0.0],
                    values: vec![-0.25],
                    storage: skelpack::model::scalar::ScalarStorage::Float,
                    max_error: 0.0,
                },
            ],
        };
    }
    clips
}

fn sample_bytes() -> Vec<u8> {
    let (asset, clips) = compressed("acl/93_01_zero_range_extent.acl.sjson");
    container::to_bytes(&asset.skeleton, &with_playback(clips))
}

#[test]
fn playback_metadata_round_trips_in_both_readers() {
    let (asset, clips) = compressed("Fox.glb");
    let mut clips = with_playback(clips);
    clips[1].playback = Playback::default();
    clips[2].playback.additive = Some(Additive {
        mode: AdditiveMode::Relative,
        base: AdditiveBase::Rest,
    });
    let bytes = container::to_bytes(&asset.skeleton, &clips);
    let back = container::from_bytes(&bytes).unwrap();
    let skp = skelpack_runtime::Skp::open(&bytes[..]).unwrap();
    for (c, (a, b)) in clips.iter().zip(&back.clips).enumerate() {
        assert_eq!(a.playback, b.playback, "{}", a.name);
        let m = skp.clip_meta(c);
        assert_eq!(m.looping, a.playback.looping);
        assert_eq!(m.root_motion, a.playback.root_motion);
        assert_eq!(skp.clip(c).is_looping(), a.playback.looping);
        let base = match a.playback.additive.as_ref().map(|x| &x.base) {
            Some(AdditiveBase::Frame { clip, .. }) => Some(clip.as_str()),
            _ => None,
        };
        assert_eq!(skp.additive_base_clip(c), base);
    }
    // Metadata is not payload: the sizes the report states are unchanged.
    for (a, b) in clips.iter().zip(&back.clips) {
        assert_eq!(
            container::payload::write(a),
            container::payload::write(b),
            "{}",
            a.name
        );
    }
}

/// `tests/fixtures/fox_v1.skp` was written by skelpack before `.skp` version 2 (main at
/// e4b2e2f: `skelpack compress Fox.glb --preset ozz`). It still opens, in both readers, and
/// still holds its tolerance against the source.
#[test]
fn version_1_files_still_open() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fox_v1.skp");
    let bytes = std::fs::read(&path).unwrap();
    assert_eq!(u16::from_le_bytes([bytes[4], bytes[5]]), 1);
    let c = container::from_bytes(&bytes).unwrap();
    let skp = skelpack_runtime::Skp::open(&bytes[..]).unwrap();
    let asset = import::load(&common::asset("Fox.glb")).unwrap();
    assert_eq!(c.clips.len(), asset.clips.len());
    assert_eq!(skp.clip_count(), asset.clips.len());
    let settings = Settings::from_preset(Preset::Ozz);
    for (i, (clip, dec)) in asset.clips.iter().zip(&c.clips).enumerate() {
        assert_eq!(dec.name, clip.name);
        assert_eq!(dec.playback, Playback::default());
        assert_eq!(skp.clip_meta(i), &skelpack_runtime::ClipMeta::default());
        let limits = settings.resolve(&asset, &clip.name).limits;
        let e = measure(
            &c.skeleton,
            &Reference::new(&asset.skeleton, clip, clip.frame_count),
            dec,
            &limits,
            false,
        );
        assert!(e.within_tolerance(), "{}: {:?}", clip.name, e.samples);
    }
    // Written again, it is a version-2 file holding the same payloads.
    let again = container::to_bytes(&c.skeleton, &c.clips);
    assert_eq!(u16::from_le_bytes([again[4], again[5]]), container::VERSION);
    let layout = skelpack_runtime::read::parse(&bytes).unwrap();
    for (rec, clip) in layout.clips.iter().zip(&c.clips) {
        assert_eq!(
            &bytes[rec.payload.clone()],
            &container::payload::write(clip)[..]
        );
    }
}

/// Re-seals the checksum so corrupted content reaches the structural checks.
fn reseal(mut b: Vec<u8>) -> Vec<u8> {
    if b.len() >= 8 {
        let n = b.len() - 4;
        let crc = crc32fast::hash(&b[..n]);
        b[n..].copy_from_slice(&crc.to_le_bytes());
    }
    b
}

#[test]
fn every_truncation_is_an_error() {
    let bytes = sample_bytes();
    for cut in 0..bytes.len() {
        assert!(
            container::from_bytes(&bytes[..cut]).is_err(),
            "cut at {cut}"
        );
        let _ = container::from_bytes(&reseal(bytes[..cut].to_vec()));
    }
}

#[test]
fn bad_magic_and_version() {
    let mut b = sample_bytes();
    b[4] = 9;
    assert!(matches!(
        container::from_bytes(&reseal(b)),
        Err(container::ContainerError::Version(9))
    ));
    assert!(matches!(
        container::from_bytes(b"GLTF...."),
        Err(container::ContainerError::BadMagic)
    ));
}

/// Containers made from several shared assets (ACL, glTF, BVH; animated and constant tracks,
/// ranged and smallest-three formats), compressed once per test run.
fn containers() -> &'static [Vec<u8>] {
    static C: std::sync::OnceLock<Vec<Vec<u8>>> = std::sync::OnceLock::new();
    C.get_or_init(|| {
        [
            "acl/93_01_zero_range_extent.acl.sjson",
            "acl/49_15.acl.sjson",
            "RiggedFigure.glb",
            "InterpolationTest.glb",
            "CesiumMan.glb",
            "Fox.glb",
        ]
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let (asset, clips) = compressed(f);
            // The last one carries every playback record (metadata blocks mutated too).
            let clips = if i == 5 { with_playback(clips) } else { clips };
            container::to_bytes(&asset.skeleton, &clips)
        })
        .collect()
    })
}

/// Every clip of an accepted container decodes to finite transforms at every frame and
/// between frames, by the reference decoder and by the runtime decoder.
fn assert_decodes_finite(c: &container::Container) {
    use skelpack::metric::PoseSource;
    let mut out = vec![skelpack::model::Transform::IDENTITY; c.skeleton.len()];
    for j in &c.skeleton.joints {
        assert!(j.rest.is_finite(), "rest of '{}'", j.name);
    }
    for clip in &c.clips {
        let runtime = skelpack::codec::RuntimeClip::new(clip);
        for f in 0..clip.frame_count * 2 {
            let frame = f as f32 * 0.5;
            clip.sample_local(frame, &mut out);
            assert!(
                out.iter().all(|t| t.is_finite()),
                "clip '{}' frame {frame}",
                clip.name
            );
            runtime.sample(frame, &mut out);
            assert!(
                out.iter().all(|t| t.is_finite()),
                "runtime '{}' frame {frame}",
                clip.name
            );
        }
    }
}

/// Writes `bits` (LSB first) at bit offset `at` of `b` (the container's bit streams are
/// not byte aligned), clipped to the body.
fn put_bits(b: &mut [u8], at: usize, bits: u32) {
    let end = b.len().saturating_sub(4) * 8;
    for i in 0..32 {
        let bit = at + i;
        if bit >= end {
            break;
        }
        let mask = 1u8 << (bit % 8);
        if bits >> i & 1 == 1 {
            b[bit / 8] |= mask;
        } else {
            b[bit / 8] &= !mask;
        }
    }
}

/// Floats that are finite but decode to overflow when used as a range or constant.
const HUGE: [f32; 6] = [f32::MAX, -f32::MAX, 1e30, -3e38, 1e16, 2.0];

#[test]
fn decoded_clips_of_unmutated_containers_are_finite() {
    for bytes in containers() {
        assert_decodes_finite(&container::from_bytes(bytes).unwrap());
    }
}

#[test]
fn huge_but_finite_values_are_refused() {
    // The first joint's rest translation x: after the header, its name and its parent.
    let bytes = &containers()[0];
    let name_len = u16::from_le_bytes([bytes[16], bytes[17]]) as usize;
    let at = 16 + 2 + name_len + 4;
    let mut b = bytes.clone();
    b[at..at + 4].copy_from_slice(&f32::MAX.to_le_bytes());
    let e = container::from_bytes(&reseal(b)).unwrap_err().to_string();
    assert!(e.contains("rest transform"), "{e}");
    // Huge floats written at every 7th bit: each accepted result decodes finitely.
    let mut accepted = 0;
    for bit in (0..(bytes.len() - 4) * 8).step_by(7) {
        for v in [f32::MAX, 1e30] {
            let mut b = bytes.clone();
            put_bits(&mut b, bit, v.to_bits());
            if let Ok(c) = container::from_bytes(&reseal(b)) {
                accepted += 1;
                assert_decodes_finite(&c);
            }
        }
    }
    // The sweep reaches the decoder (key-block codes accept any bits).
    assert!(accepted > 0);
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 1500, ..ProptestConfig::default() })]

    #[test]
    fn mutated_containers_are_refused_or_decode_finite(
        which in 0usize..6,
        flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 0..6),
        floats in proptest::collection::vec((any::<prop::sample::Index>(), 0usize..HUGE.len()), 0..3),
    ) {
        let mut b = containers()[which].clone();
        let body = b.len() - 4;
        for (i, v) in flips {
            b[i.index(body)] = v;
        }
        for (i, k) in floats {
            put_bits(&mut b, i.index(body * 8), HUGE[k].to_bits());
        }
        if let Ok(c) = container::from_bytes(&reseal(b)) {
            assert_decodes_finite(&c);
        }
    }

    #[test]
    fn random_bytes_never_panic(
        mut body in proptest::collection::vec(any::<u8>(), 0..512),
        version in 1u8..=2,
    ) {
        body.splice(0..0, [b'S', b'K', b'P', b'K', version, 0, 0, 0]);
        let _ = container::from_bytes(&reseal(body));
    }
}

/// Every byte of every clip's metadata block, set to a few values (checksum re-sealed): the
/// container is refused with an error or opens in both readers and decodes finitely.
#[test]
fn mutated_metadata_blocks_are_refused_or_decode_finite() {
    let bytes = &containers()[5];
    let layout = skelpack_runtime::read::parse(bytes).unwrap();
    let mut refused = 0;
    let mut tried = 0;
    for rec in &layout.clips {
        assert!(!rec.meta.is_empty());
        for at in rec.meta.clone() {
            for v in [0u8, 1, 2, 3, 0x7F, 0x80, 0xFF] {
                let mut b = bytes.clone();
                b[at] = v;
                let b = reseal(b);
                tried += 1;
                let runtime = skelpack_runtime::Skp::open(&b[..]);
                match container::from_bytes(&b) {
                    Ok(c) => {
                        assert!(runtime.is_ok());
                        assert_decodes_finite(&c);
                    }
                    Err(e) => {
                        refused += 1;
                        assert!(!e.to_string().contains('\n'), "{e}");
                        assert!(runtime.is_err());
                    }
                }
            }
        }
    }
    // Lengths, tags, modes and joints are checked: many mutations are refused.
    assert!(refused > tried / 10, "{refused} of {tried}");
}
