//! What one compression of a clip keeps for the next compression of the same clip: the
//! reference poses (they depend on the clip only), the joints' floors (the markers and bit
//! widths), and every track encoding (the track's samples and its local tolerance), with
//! each track's encoder state. The pipeline reads and fills a [`Memo`]; the
//! [`Recompressor`](super::Recompressor) owns one per clip and drops it for another clip.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::track::{EncoderState, TrackData, TrackEncoder, TrackInput, Variant};
use crate::metric::{JointLimits, PoseSource, Reference};
use crate::model::Skeleton;
use crate::settings::{Bits, Method};

/// The stored results of earlier passes on one clip.
#[derive(Default)]
pub(super) struct Memo {
    reference: Option<Arc<Reference>>,
    floors: Option<Floors>,
    encodings: Encodings,
}

/// Each joint's floor and what it depends on besides the clip.
struct Floors {
    bits: Bits,
    markers: Vec<(bool, u32)>,
    /// Each socket's weight against its joint's tolerance (a floor includes it).
    socket_weights: Vec<u32>,
    floors: Vec<f32>,
}

impl Memo {
    /// Starts a compression of `tracks` tracks under `codec`: encodings made under another
    /// method or bit-width rule are dropped.
    pub fn begin(&mut self, codec: Codec, tracks: usize) {
        self.encodings.begin(codec, tracks);
    }

    /// The clip changed in the tracks marked `changed` (`3 * joint + kind`): its reference
    /// poses and floors are computed again, and those tracks' encodings and encoder states
    /// dropped; the other tracks' are kept.
    pub fn forget_clip(&mut self, changed: &[bool]) {
        self.reference = None;
        self.floors = None;
        self.encodings.forget_tracks(changed);
    }

    /// Ends a compression: keeps what it used (all of it, with the older entries, when it
    /// was cancelled half way).
    pub fn end(&mut self, finished: bool) {
        self.encodings.end(finished);
    }

    /// The clip's reference poses (samples and midpoints) of `frames` frames of `source`
    /// (the clip, or an additive clip on its base), computed once.
    pub fn reference(
        &mut self,
        skeleton: &Skeleton,
        source: &dyn PoseSource,
        frames: usize,
    ) -> Arc<Reference> {
        self.encodings.reference_reused = self.reference.is_some();
        self.reference
            .get_or_insert_with(|| Arc::new(Reference::new(skeleton, source, frames)))
            .clone()
    }

    /// The reference poses computed last, if any.
    pub fn reference_poses(&self) -> Option<Arc<Reference>> {
        self.reference.clone()
    }

    /// The joints' floors under `limits`' markers: `compute()` when they changed.
    pub fn floors(
        &mut self,
        limits: &JointLimits,
        bits: Bits,
        compute: impl FnOnce() -> Vec<f32>,
    ) -> Vec<f32> {
        let markers: Vec<(bool, u32)> = (0..limits.len())
            .map(|j| (limits.evaluated[j], limits.local_marker(j).to_bits()))
            .collect();
        let socket_weights: Vec<u32> = (0..limits.len())
            .flat_map(|j| {
                limits.sockets[j]
                    .iter()
                    .map(|s| s.tolerance_ratio.to_bits())
            })
            .collect();
        let same = |f: &&Floors| {
            f.bits == bits && f.markers == markers && f.socket_weights == socket_weights
        };
        if let Some(f) = self.floors.as_ref().filter(same) {
            self.encodings.floors_reused = true;
            return f.floors.clone();
        }
        self.encodings.floors_reused = false;
        let floors = compute();
        self.floors = Some(Floors {
            bits,
            markers,
            socket_weights,
            floors: floors.clone(),
        });
        floors
    }

    /// The encodings of the compression under way.
    pub fn encodings(&self) -> &Encodings {
        &self.encodings
    }
}

/// What every track encoding of a compression depends on besides its track and tolerance
/// (not the effort: it decides which encodings are asked for, not what they are).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct Codec {
    pub method: Method,
    pub bits: Bits,
}

/// What a track's encoding depends on besides its samples (the track is where it is kept):
/// the tolerance (exact bits) and the variant: refined keys, the width search, the
/// interpolations fitted (the encoder states serve every variant; an encoding is kept per
/// variant, so the default's result after a fast one is the default's own).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Key {
    tolerance: u32,
    variant: Variant,
}

/// One track's encodings by [`Key`], in the order they were made: a track has a few per
/// compression (one per tolerance a pass tries), so a list searched in order is cheaper than
/// a hash map, and it takes no memory until the track is encoded.
type ByKey = Vec<(Key, TrackData)>;

/// What is kept of one track (`3 * joint + kind`): its encoder's state, so an encoding at a
/// new tolerance replays recorded fits instead of fitting again, and its encodings of the
/// previous compression and of the one under way.
#[derive(Default)]
struct TrackMemo {
    state: Option<EncoderState>,
    previous: ByKey,
    current: ByKey,
}

impl TrackMemo {
    /// The encoding made at `key` in this compression or the previous one.
    fn find(&self, key: &Key) -> Option<&TrackData> {
        found(&self.current, key).or_else(|| found(&self.previous, key))
    }

    /// Ends a compression: its encodings become the previous ones (added to them, the
    /// newer ones first, when it was cancelled half way).
    fn end(&mut self, finished: bool) {
        let current = std::mem::take(&mut self.current);
        if finished {
            self.previous = current;
        } else {
            self.previous
                .retain(|(k, _)| current.iter().all(|(c, _)| c != k));
            self.previous.splice(0..0, current);
        }
    }
}

/// The encoding at `key` in `list`.
fn found<'a>(list: &'a ByKey, key: &Key) -> Option<&'a TrackData> {
    list.iter().find(|(k, _)| k == key).map(|(_, t)| t)
}

/// Per track (`3 * joint + kind`), what the memo keeps of it ([`TrackMemo`]), each behind
/// its own lock: the passes encode different tracks in parallel.
#[derive(Default)]
pub(super) struct Encodings {
    codec: Option<Codec>,
    tracks: Vec<Mutex<TrackMemo>>,
    pub(super) reused: AtomicUsize,
    pub(super) computed: AtomicUsize,
    pub(super) reference_reused: bool,
    pub(super) floors_reused: bool,
}

impl Encodings {
    fn begin(&mut self, codec: Codec, tracks: usize) {
        if self.codec != Some(codec) || self.tracks.len() != tracks {
            self.tracks = (0..tracks).map(|_| Mutex::default()).collect();
            self.codec = Some(codec);
        }
        self.reused.store(0, Ordering::Relaxed);
        self.computed.store(0, Ordering::Relaxed);
    }

    /// Drops the encodings and encoder states of the tracks marked `changed`.
    fn forget_tracks(&mut self, changed: &[bool]) {
        for (i, slot) in self.tracks.iter_mut().enumerate() {
            if changed.get(i).copied().unwrap_or(true) {
                *slot.get_mut().unwrap_or_else(|e| e.into_inner()) = TrackMemo::default();
            }
        }
    }

    fn end(&mut self, finished: bool) {
        for slot in &mut self.tracks {
            slot.get_mut()
                .unwrap_or_else(|e| e.into_inner())
                .end(finished);
        }
    }

    /// Track `kind` of `joint` encoded at `tolerance` as `variant` says: from `samples` (the track's own, which never change for this clip; a new
    /// encoder records its fits down to `finest`) unless an earlier call computed it, or by
    /// `varying()` every time when `samples` is `None` (a pinned joint, whose samples are
    /// re-derived from its decoded ancestors).
    pub fn get(
        &self,
        joint: usize,
        kind: usize,
        tolerance: f32,
        variant: Variant,
        samples: Option<(TrackInput, f32)>,
        varying: impl FnOnce() -> TrackData,
    ) -> TrackData {
        let Some((input, finest)) = samples else {
            self.computed.fetch_add(1, Ordering::Relaxed);
            return varying();
        };
        let key = Key {
            tolerance: tolerance.to_bits(),
            variant,
        };
        let mut memo = self.tracks[3 * joint + kind]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if let Some(t) = memo.find(&key) {
            self.reused.fetch_add(1, Ordering::Relaxed);
            let t = t.clone();
            if found(&memo.current, &key).is_none() {
                memo.current.push((key, t.clone()));
            }
            return t;
        }
        self.computed.fetch_add(1, Ordering::Relaxed);
        let track = self.encode(&mut memo.state, input, finest, tolerance, variant);
        memo.current.push((key, track.clone()));
        track
    }

    /// Encodes a track with its kept encoder `state` (made on first use, left there).
    fn encode(
        &self,
        state: &mut Option<EncoderState>,
        input: TrackInput,
        finest: f32,
        tolerance: f32,
        variant: Variant,
    ) -> TrackData {
        let codec = self.codec.expect("encodings begun");
        let mut encoder = match state.take() {
            Some(state) => TrackEncoder::resume(input, state),
            None => TrackEncoder::new(input, codec.method, codec.bits, finest),
        };
        let encoded = encoder.encode_as(tolerance, variant);
        *state = Some(encoder.into_state());
        encoded
    }
}
