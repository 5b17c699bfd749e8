//! `.skp` bytes through the validated decoder (the runtime crate, which the skelpack crate's
//! reader also uses), then every clip sampled at each frame, by random access and by the
//! forward cursor: an error or transforms, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skelpack_runtime::{Cursor, JointPose, Skp};

fuzz_target!(|data: &[u8]| {
    // The full reader (skeleton and clips as the encoder's types) must agree on acceptance.
    let full = skelpack::container::from_bytes(data);
    let Ok(skp) = Skp::open(data) else {
        assert!(full.is_err(), "the runtime refused what the reader accepted");
        return;
    };
    assert!(full.is_ok(), "the reader refused what the runtime accepted");
    let mut out = vec![JointPose::default(); skp.joint_count()];
    for c in 0..skp.clip_count() {
        let clip = skp.clip(c);
        let mut cursor = Cursor::new(clip);
        for f in 0..clip.frame_count().min(64) {
            clip.sample(f as f32 + 0.5, &mut out);
            cursor.sample(f as f32, &mut out);
        }
    }
});
