//! Incremental recompression: what one compression of a clip hands to the next compression
//! of the same clip. Every pass of the pipeline is a pure function of its inputs, so a pass
//! whose inputs did not change returns what it returned before: the reference poses (the
//! clip), the joints' floors (the markers and bit widths), and every track encoding (the
//! track's samples and its local tolerance). An edit to one joint changes the budgets of that
//! joint and its ancestors only, so only their tracks are encoded afresh; the result is the
//! full compression's, byte for byte, because it runs the same passes.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use super::compress::{CodecError, FirstPass, compress_with};
use super::compressed::CompressedClip;
use super::control::Control;
use super::track::{EncoderState, TrackData, TrackEncoder, TrackInput};
use crate::metric::{ErrorReport, JointLimits, Reference};
use crate::model::{Clip, Skeleton};
use crate::settings::{Bits, Method, Resolved};

/// Compresses one clip again and again under changing settings, reusing every encoding and
/// measurement whose inputs did not change. Memory is bounded by one compression's
/// encodings: entries the latest compression did not use are dropped.
#[derive(Default)]
pub struct Recompressor {
    /// A digest of the skeleton and clip the state belongs to; another clip starts afresh.
    clip: Option<u64>,
    reference: Option<Arc<Reference>>,
    floors: Option<Floors>,
    encodings: Encodings,
    /// The error matrix of the latest compression's result.
    errors: Option<Arc<ErrorReport>>,
}

/// Each joint's floor and what it depends on besides the clip.
struct Floors {
    bits: Bits,
    markers: Vec<(bool, u32)>,
    /// Each socket's weight against its joint's tolerance (a floor includes it).
    socket_weights: Vec<u32>,
    floors: Vec<f32>,
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
    /// to show while the rest runs. The final result is the same either way.
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
        let digest = digest(skeleton, &prepared.clip);
        if self.clip != Some(digest) {
            *self = Self {
                clip: Some(digest),
                ..Self::default()
            };
        }
        self.encodings
            .begin(settings.method, settings.bits, 3 * skeleton.len());
        self.errors = None;
        let result = compress_with(self, skeleton, &prepared, settings, control, first_pass);
        self.encodings.end(result.is_ok());
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
        Reuse {
            encodings_reused: self.encodings.reused.load(Ordering::Relaxed),
            encodings_computed: self.encodings.computed.load(Ordering::Relaxed),
            reference_reused: self.encodings.reference_reused,
            floors_reused: self.encodings.floors_reused,
        }
    }

    /// The reference poses (samples and midpoints) of the clip compressed last, if any.
    pub fn reference_poses(&self) -> Option<Arc<Reference>> {
        self.reference.clone()
    }

    /// The clip's reference poses (samples and midpoints) of `frames` frames of `source`
    /// (the clip, or an additive clip on its base), computed once.
    pub(super) fn reference(
        &mut self,
        skeleton: &Skeleton,
        source: &dyn crate::metric::PoseSource,
        frames: usize,
    ) -> Arc<Reference> {
        self.encodings.reference_reused = self.reference.is_some();
        self.reference
            .get_or_insert_with(|| Arc::new(Reference::new(skeleton, source, frames)))
            .clone()
    }

    /// The joints' floors under `limits`' markers: `compute()` when they changed.
    pub(super) fn floors(
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
    pub(super) fn encodings(&self) -> &Encodings {
        &self.encodings
    }
}

/// What a track's encoding depends on besides its samples: the joint and kind, the
/// tolerance (exact bits) and whether key values were refined.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct Key {
    joint: usize,
    kind: usize,
    tolerance: u32,
    refined: bool,
}

/// Track encodings of the previous compression and of the one under way, and per track
/// (`3 * joint + kind`) its encoder's state, so an encoding at a new tolerance replays
/// recorded fits instead of fitting again.
#[derive(Default)]
pub(super) struct Encodings {
    codec: Option<(Method, Bits)>,
    previous: HashMap<Key, TrackData>,
    current: Mutex<HashMap<Key, TrackData>>,
    encoders: Vec<Mutex<Option<EncoderState>>>,
    reused: AtomicUsize,
    computed: AtomicUsize,
    reference_reused: bool,
    floors_reused: bool,
}

impl Encodings {
    fn begin(&mut self, method: Method, bits: Bits, tracks: usize) {
        if self.codec != Some((method, bits)) || self.encoders.len() != tracks {
            self.previous.clear();
            self.current_mut().clear();
            self.encoders = (0..tracks).map(|_| Mutex::new(None)).collect();
            self.codec = Some((method, bits));
        }
        self.reused.store(0, Ordering::Relaxed);
        self.computed.store(0, Ordering::Relaxed);
    }

    /// After a compression: keep what it used (all of it, with the older entries, when it
    /// was cancelled half way).
    fn end(&mut self, finished: bool) {
        let current = std::mem::take(self.current_mut());
        if finished {
            self.previous = current;
        } else {
            self.previous.extend(current);
        }
    }

    fn current_mut(&mut self) -> &mut HashMap<Key, TrackData> {
        self.current.get_mut().unwrap_or_else(|e| e.into_inner())
    }

    /// Track `kind` of `joint` encoded at `tolerance` (with refined key values when
    /// `refined`): from `samples` (the track's own, which never change for this clip; a new
    /// encoder records its fits down to `finest`) unless an earlier call computed it, or by
    /// `varying()` every time when `samples` is `None` (a pinned joint, whose samples are
    /// re-derived from its decoded ancestors).
    pub(super) fn get(
        &self,
        joint: usize,
        kind: usize,
        tolerance: f32,
        refined: bool,
        samples: Option<(TrackInput, f32)>,
        varying: impl FnOnce() -> TrackData,
    ) -> TrackData {
        let Some((input, finest)) = samples else {
            self.computed.fetch_add(1, Ordering::Relaxed);
            return varying();
        };
        let key = Key {
            joint,
            kind,
            tolerance: tolerance.to_bits(),
            refined,
        };
        let lock = || self.current.lock().unwrap_or_else(|e| e.into_inner());
        let known = lock()
            .get(&key)
            .or_else(|| self.previous.get(&key))
            .cloned();
        let track = match known {
            Some(t) => {
                self.reused.fetch_add(1, Ordering::Relaxed);
                t
            }
            None => {
                self.computed.fetch_add(1, Ordering::Relaxed);
                self.encode(3 * joint + kind, input, finest, tolerance, refined)
            }
        };
        lock().insert(key, track.clone());
        track
    }
}

impl Encodings {
    /// Encodes a track with its kept encoder state (made on first use).
    fn encode(
        &self,
        track: usize,
        input: TrackInput,
        finest: f32,
        tolerance: f32,
        refined: bool,
    ) -> TrackData {
        let (method, bits) = self.codec.expect("encodings begun");
        let mut slot = self.encoders[track]
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let mut encoder = match slot.take() {
            Some(state) => TrackEncoder::resume(input, state),
            None => TrackEncoder::new(input, method, bits, finest),
        };
        let encoded = if refined {
            encoder.encode_refined(tolerance)
        } else {
            encoder.encode(tolerance)
        };
        *slot = Some(encoder.into_state());
        encoded
    }
}

/// A digest of everything of the skeleton and clip that compression reads.
fn digest(skeleton: &Skeleton, clip: &Clip) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    let mut floats = |v: &[f32]| v.iter().for_each(|x| x.to_bits().hash(&mut h));
    for j in &skeleton.joints {
        let r = &j.rest;
        floats(&r.translation.to_array());
        floats(&r.rotation.to_array());
        floats(&r.scale.to_array());
    }
    floats(&[clip.sample_rate, clip.start_time]);
    for t in &clip.tracks {
        t.translations.iter().for_each(|v| floats(&v.to_array()));
        t.rotations.iter().for_each(|q| floats(&q.to_array()));
        t.scales.iter().for_each(|v| floats(&v.to_array()));
    }
    for j in &skeleton.joints {
        j.parent.hash(&mut h);
        j.deforming.hash(&mut h);
    }
    clip.name.hash(&mut h);
    clip.frame_count.hash(&mut h);
    h.finish()
}
