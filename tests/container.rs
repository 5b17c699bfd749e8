//! The `.skp` container: exact round trips on real clips, the payload size the report
//! states, and no panic (nor huge allocation) on truncated or corrupted bytes.

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

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn mutated_bytes_never_panic(flips in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..8)) {
        let mut b = sample_bytes();
        for (i, v) in flips {
            let at = i.index(b.len() - 4);
            b[at] = v;
        }
        let _ = container::from_bytes(&reseal(b));
    }

    #[test]
    fn random_bytes_never_panic(mut body in proptest::collection::vec(any::<u8>(), 0..512)) {
        body.splice(0..0, b"SKPK\x01\x00\x00\x00".iter().copied());
        let _ = container::from_bytes(&reseal(body));
    }
}
