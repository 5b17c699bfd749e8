//! Incremental recompression: what one compression of a clip hands to the next compression
//! of the same clip. Every pass of the pipeline is a pure function of its inputs, so a pass
//! whose inputs did not change returns what it returned before: the reference poses (the
//! clip), the joints' floors (the markers and bit widths), and every track encoding (the
//! track's samples and its local tolerance). An edit to one joint changes the budgets of that
//! joint and its ancestors only, so only their tracks are encoded afresh; the result is the
//! full compression's, byte for byte, because it runs the same passes.

use std::hash::{Hash, Hasher};
use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::compressed::CompressedClip;
use super::control::Control;
use super::error::{CodecError, FirstPass};
use super::pipeline;
use super::reuse::{Codec, Memo};
use crate::metric::{ErrorReport, Reference};
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// Compresses one clip again and again under changing settings, reusing every encoding and
/// measurement whose inputs did not change. Memory is bounded by one compression's
/// encodings: entries the latest compression did not use are dropped.
#[derive(Default)]
pub struct Recompressor {
    /// A digest of the skeleton and clip the state belongs to. Another clip starts afresh,
    /// unless it is the same clip with some tracks changed (a reloaded source): then the
    /// encodings of the tracks whose inputs are unchanged are kept.
    clip: Option<u64>,
    /// The skeleton's shape and the clip's frames, and each track's own inputs (its
    /// samples and what a rest track decodes to), for that partial reuse.
    shape: Option<u64>,
    track_digests: Vec<u64>,
    memo: Memo,
    /// The error matrix of the latest compression's result.
    errors: Option<Arc<ErrorReport>>,
}

/// How much of the latest compression was reused.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Reuse {
    /// Track encodings taken from an earlier compression (or earlier in this one).
    pub encodings_reused: usize,
    /// Track encodings computed.
    pub encodings_computed: usize,
    /// Whether the reference poses and the floors were reused.
    pub reference_reused: bool,
    pub floors_reused: bool,
}

impl Recompressor {
    /// An empty state: the first compression is a full one.
    pub fn new() -> Self {
        Self::default()
    }

    /// Compresses `clip` under `settings`, exactly as [`super::compress`] does, reusing
    /// whatever the previous call on the same skeleton and clip computed that these settings
    /// need again.
    pub fn compress(
        &mut self,
        skeleton: &Skeleton,
        clip: &Clip,
        settings: &Resolved,
        control: &Control,
    ) -> Result<CompressedClip, CodecError> {
        self.compress_progressive(skeleton, clip, settings, control, None)
    }

    /// [`Recompressor::compress`], handing `first_pass` the first pass (every joint within
    /// its tolerance, before relaxation shrinks the clip) as soon as it exists: something
    /// to show while the rest runs, and any later preview (see [`FirstPass`]). The final
    /// result is the same either way.
    pub fn compress_progressive(
        &mut self,
        skeleton: &Skeleton,
        clip: &Clip,
        settings: &Resolved,
        control: &Control,
        first_pass: Option<FirstPass>,
    ) -> Result<CompressedClip, CodecError> {
        // The clip as compressed: a looping clip may have its first frame appended.
        let prepared = super::playback::prepare(skeleton, clip, settings);
        let tracks = track_digests(&prepared.clip, &prepared.rest);
        let digest = digest(skeleton, &prepared.clip, &tracks);
        if self.clip != Some(digest) {
            let shape = shape_digest(skeleton, &prepared.clip);
            if self.clip.is_some()
                && self.shape == Some(shape)
                && self.track_digests.len() == tracks.len()
            {
                // The same clip with some tracks changed: every pass runs again, but the
                // unchanged tracks' encodings (pure functions of their inputs and
                // tolerance) are kept.
                let changed: Vec<bool> = tracks
                    .iter()
                    .zip(&self.track_digests)
                    .map(|(a, b)| a != b)
                    .collect();
                self.memo.forget_clip(&changed);
                self.clip = Some(digest);
                self.errors = None;
            } else {
                *self = Self {
                    clip: Some(digest),
                    ..Self::default()
                };
            }
            self.shape = Some(shape);
            self.track_digests = tracks;
        }
        let codec = Codec {
            method: settings.method,
            bits: settings.bits,
        };
        self.memo.begin(codec, 3 * skeleton.len());
        self.errors = None;
        let result = pipeline::run(
            &mut self.memo,
            skeleton,
            &prepared,
            settings,
            control,
            first_pass,
        );
        self.memo.end(result.is_ok());
        let (clip, errors) = result?;
        self.errors = Some(Arc::new(errors));
        Ok(clip)
    }

    /// The error matrix of the latest compression's result, as `metric::measure` gives it
    /// for that result (its statistics are against the tolerances held, which differ from
    /// the ones asked only where a tolerance is below its joint's floor), so a caller need
    /// not measure the result again. None before a first compression, or after a failed one.
    pub fn errors(&self) -> Option<Arc<ErrorReport>> {
        self.errors.clone()
    }

    /// What the latest compression reused.
    pub fn reuse(&self) -> Reuse {
        let e = self.memo.encodings();
        Reuse {
            encodings_reused: e.reused.load(Ordering::Relaxed),
            encodings_computed: e.computed.load(Ordering::Relaxed),
            reference_reused: e.reference_reused,
            floors_reused: e.floors_reused,
        }
    }

    /// The reference poses (samples and midpoints) of the clip compressed last, if any.
    pub fn reference_poses(&self) -> Option<Arc<Reference>> {
        self.memo.reference_poses()
    }
}

/// A digest of the skeleton's shape and the clip's frames: two clips with the same one
/// differ only in their tracks' samples and rest values.
fn shape_digest(skeleton: &Skeleton, clip: &Clip) -> u64 {
    let mut h = hasher();
    for j in &skeleton.joints {
        j.parent.hash(&mut h);
        j.deforming.hash(&mut h);
        j.name.hash(&mut h);
    }
    clip.sample_rate.to_bits().hash(&mut h);
    clip.start_time.to_bits().hash(&mut h);
    clip.name.hash(&mut h);
    clip.frame_count.hash(&mut h);
    clip.tracks.len().hash(&mut h);
    h.finish()
}

/// The hasher of the digests: deterministic (a fixed seed) and fast over bulk bytes, with
/// the quality of a 64-bit hash (an accidental collision would reuse another clip's
/// encodings; nothing here is hashed from a party who could aim for one).
fn hasher() -> impl Hasher {
    use std::hash::BuildHasher;
    foldhash::quality::FixedState::with_seed(0x736b_656c_7061_636b).build_hasher()
}

/// Per track (`3 * joint + kind`), a digest of what its encodings read: its samples and
/// what a rest track decodes to (`rest`, per joint). The samples are hashed as their bytes
/// (the `f32` bits), a track at a time.
fn track_digests(clip: &Clip, rest: &[crate::model::Transform]) -> Vec<u64> {
    let mut out = Vec::with_capacity(3 * clip.tracks.len());
    for (j, t) in clip.tracks.iter().enumerate() {
        let r = rest
            .get(j)
            .copied()
            .unwrap_or(crate::model::Transform::IDENTITY);
        let digest = |values: &[u8], rest: &[f32]| {
            let mut h = hasher();
            h.write_usize(values.len());
            h.write(values);
            h.write(bytemuck::cast_slice(rest));
            h.finish()
        };
        out.push(digest(
            bytemuck::cast_slice(&t.translations),
            &r.translation.to_array(),
        ));
        out.push(digest(
            bytemuck::cast_slice(&t.rotations),
            &r.rotation.to_array(),
        ));
        out.push(digest(bytemuck::cast_slice(&t.scales), &r.scale.to_array()));
    }
    out
}

/// A digest of everything of the skeleton and clip that compression reads: the skeleton's
/// rest pose and hierarchy, the clip's timing, name and length, and its tracks through
/// their digests (`tracks`, [`track_digests`]).
fn digest(skeleton: &Skeleton, clip: &Clip, tracks: &[u64]) -> u64 {
    let mut h = hasher();
    for j in &skeleton.joints {
        let r = &j.rest;
        h.write(bytemuck::cast_slice(&r.translation.to_array()));
        h.write(bytemuck::cast_slice(&r.rotation.to_array()));
        h.write(bytemuck::cast_slice(&r.scale.to_array()));
        j.parent.hash(&mut h);
        j.deforming.hash(&mut h);
    }
    h.write(bytemuck::cast_slice(&[clip.sample_rate, clip.start_time]));
    h.write(bytemuck::cast_slice(tracks));
    clip.name.hash(&mut h);
    clip.frame_count.hash(&mut h);
    h.finish()
}
