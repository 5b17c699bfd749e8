//! Clips encoded for glTF, remembered between exports of the same file in one process
//! (`skelpack watch`, the app's "Export on save"): after a save that changed one clip, the
//! others' encodings — the player fitting and verification that dominate a compressed glTF
//! export — are taken from here. Only [`super::gltf_compressed::encode_for_gltf`]'s result
//! is remembered, with the re-encodings `clip_switch` makes at tightened tolerances, and the
//! start-pose measure of each ordered pair of clips (keyed by both clips' encodings,
//! [`pair_key`]): a pair neither of whose clips changed is not measured again. Every entry is
//! a pure function of its key, so the file written is the one a fresh export writes.

use std::collections::HashMap;
use std::sync::Mutex;

use sha2::{Digest, Sha256};

use super::channels::Player;
use super::gltf_clip::{ClipToEncode, GltfClip, encode_for_gltf_at};
use super::start_states::AfterStops;
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
    /// Start-pose measures of ordered pairs of clips, by [`pair_key`]: kept from the last
    /// export, and used or made by this one.
    pairs_kept: HashMap<MemoKey, AfterStops>,
    pairs_used: HashMap<MemoKey, AfterStops>,
    pair_hits: usize,
}

impl ClipMemo {
    /// The key of encoding `clip` (its samples, settings, options and keyed properties),
    /// with the codec run first at `factor` when given ([`encode_for_gltf_at`]).
    pub fn key(clip: &ClipToEncode, factor: Option<f32>) -> MemoKey {
        let mut h = Sha256::new();
        h.update(crate::cache::key::clip_key(
            clip.skeleton,
            clip.raw,
            clip.settings,
        ));
        h.update(format!("\0{:?}\0{:?}", clip.options, clip.keyed).as_bytes());
        if let Some(factor) = factor {
            h.update(format!("\0factor {}", factor.to_bits()).as_bytes());
        }
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

    /// The remembered start-pose measure of the pair `key` ([`pair_key`]), if any.
    pub fn pair(&self, key: &MemoKey) -> Option<AfterStops> {
        let mut m = self.inner.lock().expect("memo");
        let found = m
            .pairs_kept
            .get(key)
            .or_else(|| m.pairs_used.get(key))
            .cloned();
        if let Some(f) = &found {
            m.pairs_used.insert(*key, f.clone());
            m.pair_hits += 1;
        }
        found
    }

    /// How many clip encodings the memo holds from its last finished export.
    pub fn kept(&self) -> usize {
        self.inner.lock().expect("memo").kept.len()
    }

    /// How many pair measures the export under way took from the memo.
    pub fn pair_hits(&self) -> usize {
        self.inner.lock().expect("memo").pair_hits
    }

    /// Remembers the start-pose measure of the pair `key`.
    pub fn put_pair(&self, key: MemoKey, after: &AfterStops) {
        let mut m = self.inner.lock().expect("memo");
        m.pairs_used.insert(key, after.clone());
    }

    /// Ends an export: only the encodings and pair measures it used are kept (memory stays
    /// one file's worth); returns how many encodings were taken from the memo.
    pub fn finish(&self) -> usize {
        let mut m = self.inner.lock().expect("memo");
        m.kept = std::mem::take(&mut m.used);
        m.pairs_kept = std::mem::take(&mut m.pairs_used);
        m.pair_hits = 0;
        std::mem::take(&mut m.hits)
    }
}

/// What one clip contributes to a start-pose measure, hashed: the skeleton, its samples and
/// the settings it is verified against (the result cache's clip key), which properties it
/// keys, the player, and its exported channels exactly as they are.
pub fn clip_state_key(
    skeleton: &Skeleton,
    raw: &Clip,
    verified_with: &Resolved,
    keyed: &[[bool; 3]],
    player: Player,
    clip: &GltfClip,
) -> MemoKey {
    let mut h = Sha256::new();
    h.update(crate::cache::key::clip_key(skeleton, raw, verified_with));
    h.update(format!("\0{keyed:?}\0{player:?}\0").as_bytes());
    let cc = &clip.compressed;
    h.update(format!("{:?} {}\0", cc.sample_rate, cc.frame_count).as_bytes());
    for c in &clip.channels {
        h.update(
            format!(
                "{} {} {:?} {:?} {} {} {} {}\0",
                c.joint,
                c.kind,
                c.interp,
                c.storage,
                c.held_end,
                c.ticks.len(),
                c.values.len(),
                c.tangents.len()
            )
            .as_bytes(),
        );
        h.update(bytemuck::cast_slice::<_, u8>(&c.ticks));
        for v in c.values.iter().chain(&c.tangents) {
            h.update(bytemuck::cast_slice::<_, u8>(&v.to_array()));
        }
    }
    h.finalize().into()
}

/// The key of clip `b` started from clip `a` stopped anywhere, from their
/// [`clip_state_key`]s.
pub fn pair_key(a: &MemoKey, b: &MemoKey) -> MemoKey {
    let mut h = Sha256::new();
    h.update(b"pair\0");
    h.update(a);
    h.update(b);
    h.finalize().into()
}

/// [`super::gltf_clip::encode_for_gltf_at`], taken from `memo` when it holds the same
/// clip encoded with the same settings, options, keyed channels and `factor` (and recorded
/// there when it does not).
pub(super) fn encode_for_gltf_memo(
    memo: Option<&ClipMemo>,
    clip: &ClipToEncode,
    factor: Option<f32>,
) -> Result<GltfClip, crate::codec::CodecError> {
    let encode = || encode_for_gltf_at(clip, factor);
    match memo {
        Some(m) => m.get_or(ClipMemo::key(clip, factor), encode),
        None => encode(),
    }
}
