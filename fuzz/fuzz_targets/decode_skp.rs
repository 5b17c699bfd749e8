//! `.skp` bytes through the validated decoder, then every clip decoded at each frame:
//! an error or transforms, never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use skelpack::codec::RuntimeClip;
use skelpack::model::Transform;

fuzz_target!(|data: &[u8]| {
    let Ok(c) = skelpack::container::from_bytes(data) else {
        return;
    };
    for clip in &c.clips {
        let mut out = vec![Transform::IDENTITY; clip.tracks.len()];
        let rt = RuntimeClip::new(clip);
        for f in 0..clip.frame_count.min(64) {
            rt.sample(f as f32, &mut out);
        }
    }
});
