//! `.skp` bytes through the validated decoder (the runtime crate, which the skelpack crate's
//! reader also uses), then every clip sampled at each frame, by random access and by the
//! forward cursor, in both clip layouts (prepared and compact), which must agree bit for
//! bit: an error or transforms, never a panic. The trailing CRC is recomputed over
//! the mutated body first, so mutations reach the parser behind it (a wrong CRC is refused
//! before any parsing; `tests/mutation.rs` covers that).
#![no_main]

use libfuzzer_sys::fuzz_target;
use skelpack_runtime::{ClipLayout, Cursor, JointPose, Skp};

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
    let compact = Skp::open_with(data, ClipLayout::Compact).expect("same validation");
    let mut out = vec![JointPose::default(); skp.joint_count()];
    let mut small = out.clone();
    for c in 0..skp.clip_count() {
        let (clip, compact) = (skp.clip(c), compact.clip(c));
        let mut cursor = Cursor::new(clip);
        let mut compact_cursor = Cursor::new(compact);
        for f in 0..clip.frame_count().min(64) {
            clip.sample(f as f32 + 0.5, &mut out);
            compact.sample(f as f32 + 0.5, &mut small);
            assert!(same(&out, &small), "layouts differ at clip {c} frame {f}.5");
            cursor.sample(f as f32, &mut out);
            compact_cursor.sample(f as f32, &mut small);
            assert!(same(&out, &small), "cursors differ at clip {c} frame {f}");
        }
    }
});

/// Bit for bit equal poses (NaN-safe).
fn same(a: &[JointPose], b: &[JointPose]) -> bool {
    let bits = |p: &JointPose| {
        let mut v = [0u32; 10];
        for (d, x) in v.iter_mut().zip(p.translation.iter().chain(&p.rotation).chain(&p.scale)) {
            *d = x.to_bits();
        }
        v
    };
    a.iter().zip(b).all(|(x, y)| bits(x) == bits(y))
}
