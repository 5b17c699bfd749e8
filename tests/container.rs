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

fn sample_bytes() -> Vec<u8> {
    let (asset, clips) = compressed("acl/93_01_zero_range_extent.acl.sjson");
    container::to_bytes(&asset.skeleton, &clips)
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
        ]
        .iter()
        .map(|f| {
            let (asset, clips) = compressed(f);
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
        which in 0usize..5,
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
    fn random_bytes_never_panic(mut body in proptest::collection::vec(any::<u8>(), 0..512)) {
        body.splice(0..0, b"SKPK\x01\x00\x00\x00".iter().copied());
        let _ = container::from_bytes(&reseal(body));
    }
}
