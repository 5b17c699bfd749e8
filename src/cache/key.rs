//! A clip result's cache key: SHA-256 over everything that decides the result.

use sha2::{Digest, Sha256};

use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// A cache key (SHA-256).
pub type Key = [u8; 32];

/// The fingerprint of the sources that decide a result (codec, metric, model, container,
/// the runtime's reader, `Cargo.lock`), computed by `build.rs`.
pub const CODEC_FINGERPRINT: &str = env!("SKELPACK_CODEC_FINGERPRINT");

/// The key of `clip`'s result on `skeleton` under `settings`: the codec's version and
/// fingerprint, the skeleton (names, parents, rest pose, flags), the resolved settings, the
/// clip's name, timing, dense samples and source curves between frames. Not the file's bytes: the same motion saved again,
/// or written by another exporter, has the same key.
pub fn clip_key(skeleton: &Skeleton, clip: &Clip, settings: &Resolved) -> Key {
    let mut h = Sha256::new();
    h.update(b"skelpack clip result 1\0");
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update(b"\0");
    h.update(CODEC_FINGERPRINT.as_bytes());
    // Debug output prints every f32 exactly (shortest round-trip form) and every field.
    h.update(format!("\0{skeleton:?}\0{settings:?}\0").as_bytes());
    let Clip {
        name,
        sample_rate,
        frame_count,
        start_time,
        tracks,
        morph_weight_channels,
        between,
        grid,
        events,
        scalar_tracks,
    } = clip;
    h.update(
        format!(
            "{name:?} {sample_rate:?} {frame_count} {start_time:?} {morph_weight_channels} {grid} {} {events:?} {scalar_tracks:?}\0",
            tracks.len()
        )
        .as_bytes(),
    );
    for t in tracks {
        h.update(bytemuck::cast_slice::<_, u8>(&t.translations));
        h.update(bytemuck::cast_slice::<_, u8>(&t.rotations));
        h.update(bytemuck::cast_slice::<_, u8>(&t.scales));
        h.update([
            t.translations.len() as u8,
            t.source_channels[0] as u8,
            t.source_channels[1] as u8,
            t.source_channels[2] as u8,
        ]);
    }
    // The source's own curves between frames (CUBICSPLINE, keys between frames).
    h.update(format!("{between:?}\0").as_bytes());
    h.finalize().into()
}

/// Lower-case hex of a key or digest.
pub fn hex(bytes: &[u8; 32]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
