//! Clips encoded for glTF, remembered between exports of the same file in one process
//! (`skelpack watch`, the app's "Export on save"): after a save that changed one clip, the
//! others' encodings — the player fitting and verification that dominate a compressed glTF
//! export — are taken from here. Only [`super::gltf_compressed::encode_for_gltf`]'s result
//! is remembered: the start-pose checks across clips (`clip_switch`) still run on every
//! export, so the file written is the one a fresh export writes.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::gltf_compressed::{GltfClip, GltfOptions, Keyed};
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// What an encoding depends on, hashed: the skeleton, the clip's samples and resolved
/// settings (the result cache's clip key), the export options and which properties this
/// and the file's other animations drive.
pub type MemoKey = [u8; 32];

/// The encodings of the last export, by [`MemoKey`].
#[derive(Default)]
pub struct ClipMemo {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    kept: HashMap<MemoKey, GltfClip>,
    /// Encodings used or made by the export under way (kept by [`ClipMemo::finish`]).
    used: HashMap<MemoKey, GltfClip>,
    hits: usize,
}

impl ClipMemo {
    /// The key of encoding `clip` under `settings` and `options`, driving `keyed`.
    pub fn key(
        skeleton: &Skeleton,
        clip: &Clip,
        settings: &Resolved,
        options: &GltfOptions,
        keyed: Option<Keyed<'_>>,
    ) -> MemoKey {
        let mut h = Sha256::new();
        h.update(crate::cache::key::clip_key(skeleton, clip, settings));
        h.update(format!("\0{options:?}\0{keyed:?}").as_bytes());
        h.finalize().into()
    }

    /// The remembered encoding for `key`, else `encode`'s (remembered if it succeeds).
    pub fn get_or<E>(
        &self,
        key: MemoKey,
        encode: impl FnOnce() -> Result<GltfClip, E>,
    ) -> Result<GltfClip, E> {
        let found = {
            let mut m = self.inner.lock().expect("memo");
            let found = m.kept.get(&key).or_else(|| m.used.get(&key)).cloned();
            if found.is_some() {
                m.hits += 1;
            }
            found
        };
        let clip = match found {
            Some(c) => c,
            None => encode()?,
        };
        self.inner
            .lock()
            .expect("memo")
            .used
            .insert(key, clip.clone());
        Ok(clip)
    }

    /// Ends an export: only the encodings it used are kept (memory stays one file's worth);
    /// returns how many were taken from the memo.
    pub fn finish(&self) -> usize {
        let mut m = self.inner.lock().expect("memo");
        m.kept = std::mem::take(&mut m.used);
        std::mem::take(&mut m.hits)
    }
}
