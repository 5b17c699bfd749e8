//! The runtime decoder (skelpack-runtime, reading the container's bytes) agrees exactly
//! with the reference decoder, by random access and by the forward cursor, at every frame
//! and midpoint, including after seeking backwards.

mod common;

use skelpack::codec::RuntimeClip;
use skelpack::import;
use skelpack::metric::PoseSource;
use skelpack::model::Transform;
use skelpack::settings::{Preset, Settings};

#[test]
fn cursor_and_random_access_match_the_reference_decoder() {
    for file in [
        "CesiumMan.glb",
        "Fox.glb",
        "RobotExpressive.glb",
        "acl/81_18.acl.sjson",
        "InterpolationTest.glb",
    ] {
        let asset = import::load(&common::asset(file)).unwrap();
        let settings = Settings::from_preset(Preset::Acl);
        for clip in &asset.clips {
            let c = common::compress(&asset, clip, &settings);
            let rt = RuntimeClip::new(&c);
            let n = asset.skeleton.len();
            let (mut a, mut b, mut d) = (
                vec![Transform::IDENTITY; n],
                vec![Transform::IDENTITY; n],
                vec![Transform::IDENTITY; n],
            );
            let mut cursor = rt.cursor();
            let times: Vec<f32> = (0..clip.frame_count * 2).map(|i| i as f32 * 0.5).collect();
            for pass in 0..2 {
                for &t in &times {
                    c.sample_local(t, &mut a);
                    rt.sample(t, &mut b);
                    cursor.sample(t, &mut d);
                    assert_eq!(a, b, "{file} '{}' random access at {t}", clip.name);
                    assert_eq!(a, d, "{file} '{}' cursor at {t} (pass {pass})", clip.name);
                }
            }
            // Backwards jumps restart the cursor.
            for &t in times.iter().rev().step_by(7) {
                c.sample_local(t, &mut a);
                cursor.sample(t, &mut d);
                assert_eq!(a, d, "{file} '{}' cursor seeking back to {t}", clip.name);
            }
        }
    }
}
