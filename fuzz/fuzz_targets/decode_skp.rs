//! `.skp` bytes through the validated decoder (the runtime crate, which the skelpack crate's
//! reader also uses), then every clip sampled at each frame, by random access and by the
//! forward cursor: an error or transforms, never a panic. The trailing CRC is recomputed over
//! the mutated body first, so mutations reach the parser behind it (a wrong CRC is refused
//! before any parsing; `tests/mutation.rs` covers that).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skelpack_runtime::{Cursor, JointPose, Skp};

fuzz_target!(|input: &[u8]| {
    let mut bytes = input.to_vec();
    if bytes.len() >= 4 {
        let body = bytes.len() - 4;
        let crc = crc32fast::hash(&bytes[..body]);
        bytes[body..].copy_from_slice(&crc.to_le_bytes());
    }
    let data = bytes.as_slice();
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
