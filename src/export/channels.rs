//! Compressed tracks as glTF animation channels, and a player that evaluates them the ways
//! real players do ([`Rule`]: the spec's slerp, nlerp, key values used as stored), so the
//! exporter can measure what viewers will show, storage rounding included.

use glam::{Quat, Vec4};

use crate::codec::{CompressedClip, Interpolation, TrackData};
use crate::metric::PoseSource;
use crate::model::{SlerpArc, Transform};

/// glTF sampler interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interp {
    Linear,
    CubicSpline,
}

/// How a player turns stored rotation keys into a rotation (`animeval.py --player`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rule {
    /// The glTF spec: slerp between keys, Hermite then normalize for cubic.
    Slerp,
    /// Component-wise lerp on the shorter arc, then normalize (many game runtimes, and
    /// Blender's per-component rotation curves).
    Nlerp,
    /// Slerp between keys, but a key's value used exactly as stored, never normalized, and
    /// its matrix built from the raw quaternion (`animeval.py`'s "raw").
    Raw,
    /// What [`Rule::Raw`] shows just beside a key: the limit it approaches from between keys
    /// (slerp of the normalized keys, so a key itself normalized, at and inside a channel's
    /// key range; the stored value outside it and for a one-key channel). `Raw` is
    /// discontinuous at every key (the stored key at the key, normalized keys on either side),
    /// so its largest error over an interval may be this limit, which no point between keys
    /// reaches exactly and no check at the key sees (KayKit's PickUp: 0.0904 mm at frame 7,
    /// 0.1013 mm 1/256 frame later under `animeval --oversample 256`). Verified beside `Raw`.
    RawLimit,
    /// three.js' `AnimationMixer` ([`super::slerp_flat`]): `slerpFlat` on the stored values
    /// from a key to the next (slerp *not* normalized for keys over about 3.6 degrees apart,
    /// lerp then normalize for closer ones, so a key itself comes out normalized or not by
    /// its next key's distance), the stored value before the first key and from the last key
    /// on, and a one-key channel as stored. Within one pose, some rotations are normalized and
    /// some are not: the mix is what three.js shows.
    Three,
}

/// Which players an export is verified for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Player {
    /// Blender, three.js, game runtimes: slerp, nlerp and raw keys all hold the tolerance;
    /// rotations and everything else are LINEAR (no CUBICSPLINE).
    #[default]
    Portable,
    /// Players that follow the glTF spec exactly (slerp, CUBICSPLINE tangents).
    Gltf,
}

impl Player {
    /// The rules an export for this player is verified under.
    pub fn rules(self) -> &'static [Rule] {
        match self {
            Player::Portable => &[
                Rule::Slerp,
                Rule::Nlerp,
                Rule::Raw,
                Rule::RawLimit,
                Rule::Three,
            ],
            Player::Gltf => &[Rule::Slerp],
        }
    }

    /// Whether CUBICSPLINE channels may be written.
    pub fn allows_cubic(self) -> bool {
        self == Player::Gltf
    }

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "portable" => Some(Player::Portable),
            "gltf" => Some(Player::Gltf),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Player::Portable => "portable",
            Player::Gltf => "gltf",
        }
    }
}

/// How a channel's output values are stored.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Storage {
    Float,
    /// Normalized signed 16-bit (rotations only; every stored value within [-1, 1]).
    Short,
    /// Normalized signed 16-bit holding what meshoptimizer's QUATERNION filter at this many
    /// bits decodes to (LINEAR rotations of `--meshopt` exports only): the meshopt pass
    /// stores them filtered, far smaller once byte-compressed.
    Quat(u8),
}

/// Key times in ticks: a tick is `1 / TICKS` of a frame, so keys may sit between frames
/// where nlerp needs them (a player's nlerp between two source frames far apart).
pub const TICKS: u32 = 16;

/// Where within a segment nlerp leaves slerp's path most, as fractions of it: its lag
/// `u - nlerp angle / angle` is about `u (1 - u) (1 - 2 u) theta^2 / 6` for a small arc
/// `theta`, largest at `u = 1/2 -+ 1/(2 sqrt 3)` (moving towards the ends as the arc grows).
pub const NLERP_WORST: [f32; 2] = [0.211_324_87, 0.788_675_1];

/// One glTF channel's data: keys at clip ticks ([`TICKS`] per frame), values and (cubic)
/// tangents in value units per frame, as the file will hold them after storage rounding.
#[derive(Clone, Debug, PartialEq)]
pub struct Channel {
    pub joint: usize,
    /// 0 translation, 1 rotation, 2 scale.
    pub kind: usize,
    pub interp: Interp,
    /// Key times in ticks (`frame * TICKS`).
    pub ticks: Vec<u32>,
    pub values: Vec<Vec4>,
    /// Tangents (per frame) at each key, for CUBICSPLINE; in == out.
    pub tangents: Vec<Vec4>,
    pub storage: Storage,
    /// Whether a player may hold the last key (switching to a clip that does not key this
    /// property): then it is stored at full precision (the QUATERNION filter's 16 bits).
    pub held_end: bool,
}

impl Channel {
    /// The channel for a compressed track, or `None` for a rest track.
    pub fn from_track(joint: usize, kind: usize, track: &TrackData) -> Option<Self> {
        let (interp, frames, values, tangents) = match track {
            TrackData::Rest => return None,
            TrackData::Constant { value, .. } => (Interp::Linear, vec![0], vec![*value], vec![]),
            TrackData::Animated(a) => {
                let c = &a.curve;
                match c.interpolation {
                    Interpolation::Linear => (
                        Interp::Linear,
                        to_ticks(&c.frames),
                        c.values.clone(),
                        vec![],
                    ),
                    Interpolation::CatmullRom => (
                        Interp::CubicSpline,
                        to_ticks(&c.frames),
                        c.values.clone(),
                        (0..c.len()).map(|i| c.tangent(i)).collect(),
                    ),
                }
            }
        };
        Some(Self {
            joint,
            kind,
            interp,
            ticks: frames,
            values,
            tangents,
            storage: Storage::Float,
            held_end: true,
        })
    }

    pub fn is_rotation(&self) -> bool {
        self.kind == 1
    }

    /// Whether every value the file would hold fits a normalized SHORT.
    pub fn short_eligible(&self, rate: f32) -> bool {
        self.is_rotation()
            && self.values.iter().all(|v| v.abs().max_element() <= 1.0)
            && self
                .tangents
                .iter()
                .all(|t| (*t * rate).abs().max_element() <= 1.0)
    }

    /// The output accessor's elements as stored: `[in, value, out]` per key for cubic.
    pub fn output(&self, rate: f32) -> Vec<Vec4> {
        match self.interp {
            Interp::Linear => self.values.clone(),
            Interp::CubicSpline => self
                .values
                .iter()
                .zip(&self.tangents)
                .flat_map(|(&v, &t)| [t * rate, v, t * rate])
                .collect(),
        }
    }

    /// The output accessor's normalized SHORT components, rounded as [`Self::as_stored`]
    /// reads them back (values by [`short_codes_unit`], tangents to the nearest step).
    pub fn short_output(&self, rate: f32) -> Vec<i16> {
        let tangent = |t: Vec4| (t * rate).to_array().map(to_short);
        match self.interp {
            Interp::Linear => match self.storage {
                Storage::Quat(bits) => (0..self.values.len())
                    .flat_map(|i| quat_filter_codes(self.values[i], self.quat_bits(i, bits)))
                    .collect(),
                _ => self
                    .values
                    .iter()
                    .flat_map(|&v| short_codes_unit(v))
                    .collect(),
            },
            Interp::CubicSpline => self
                .values
                .iter()
                .zip(&self.tangents)
                .flat_map(|(&v, &t)| [tangent(t), short_codes_unit(v), tangent(t)])
                .flatten()
                .collect(),
        }
    }

    /// Bits of key `i` under `Storage::Quat(bits)`: the last key, which a player switching
    /// clips holds on joints the next clip does not key, at the filter's full 16 bits
    /// (where [`Self::held_end`]).
    pub fn quat_bits(&self, i: usize, bits: u8) -> u8 {
        if self.held_end && i + 1 == self.values.len() {
            16
        } else {
            bits
        }
    }

    /// This channel as a player reads it back: storage rounding applied.
    pub fn as_stored(&self, rate: f32) -> Channel {
        let mut c = self.clone();
        if let Storage::Quat(bits) = self.storage {
            c.values = (0..c.values.len())
                .map(|i| {
                    let codes = quat_filter_codes(c.values[i], self.quat_bits(i, bits));
                    Vec4::from_array(codes.map(|c| f32::from(c) / 32767.0))
                })
                .collect();
        }
        if self.storage == Storage::Short {
            c.values = c.values.iter().map(|&v| short_round_unit(v)).collect();
            c.tangents = c
                .tangents
                .iter()
                .map(|&t| short_round(t * rate) / rate)
                .collect();
        }
        c
    }

    /// Evaluates at a fractional frame with glTF semantics (clamped outside the keys).
    pub fn sample(&self, frame: f32) -> Vec4 {
        self.sample_as(frame, Rule::Slerp)
    }

    /// Evaluates at a fractional frame as a player following `rule` does (clamped outside
    /// the keys). Rotations come back normalized except under [`Rule::Raw`] and
    /// [`Rule::Three`].
    pub fn sample_as(&self, frame: f32, rule: Rule) -> Vec4 {
        self.sample_with(frame, rule, &[])
    }

    /// The slerp arc of each segment of a LINEAR rotation channel (empty for any other), for
    /// [`Self::sample_with`]: the arc's angle is computed once per segment instead of once
    /// per evaluation.
    pub fn segment_arcs(&self) -> Vec<SlerpArc> {
        if self.interp != Interp::Linear || !self.is_rotation() {
            return Vec::new();
        }
        (0..self.ticks.len().saturating_sub(1))
            .map(|i| self.segment_arc(i))
            .collect()
    }

    /// The slerp arc of segment `i` (keys `i` and `i + 1`) as [`Self::sample_as`] builds it.
    fn segment_arc(&self, i: usize) -> SlerpArc {
        SlerpArc::new(
            Quat::from_vec4(self.values[i]).normalize(),
            Quat::from_vec4(self.values[i + 1]).normalize(),
        )
    }

    /// [`Self::sample_as`] with the segments' arcs from [`Self::segment_arcs`] (or none:
    /// then each slerp builds its arc), bit for bit the same value.
    pub fn sample_with(&self, frame: f32, rule: Rule, arcs: &[SlerpArc]) -> Vec4 {
        let rot = self.is_rotation();
        if rule == Rule::Three && rot && self.interp == Interp::Linear {
            return self.sample_three(frame);
        }
        if rule == Rule::RawLimit && rot && self.interp == Interp::Linear {
            return self.sample_raw_limit(frame, arcs);
        }
        let n = self.ticks.len();
        let last = tick_frame(*self.ticks.last().expect("channels have keys"));
        if n == 1 || frame <= tick_frame(self.ticks[0]) {
            return self.finish(self.values[0], rule);
        }
        if frame >= last {
            return self.finish(self.values[n - 1], rule);
        }
        let i = self.ticks.partition_point(|&k| tick_frame(k) <= frame) - 1;
        self.sample_in(i, frame, rule, arcs.get(i))
    }

    /// A sampled value as `rule` returns it: rotations normalized except under
    /// [`Rule::Raw`] and [`Rule::RawLimit`].
    fn finish(&self, v: Vec4, rule: Rule) -> Vec4 {
        if self.is_rotation() && !matches!(rule, Rule::Raw | Rule::RawLimit) {
            v.normalize_or(Vec4::W)
        } else {
            v
        }
    }

    /// [`Self::sample_as`] at `frame` inside segment `i` (keys `i` and `i + 1`, `frame`
    /// at or after key `i` and before key `i + 1`), `arc` that segment's slerp arc if known.
    fn sample_in(&self, i: usize, frame: f32, rule: Rule, arc: Option<&SlerpArc>) -> Vec4 {
        let (f0, f1) = (tick_frame(self.ticks[i]), tick_frame(self.ticks[i + 1]));
        let dt = f1 - f0;
        let u = (frame - f0) / dt;
        let (p0, p1) = (self.values[i], self.values[i + 1]);
        match self.interp {
            Interp::Linear if self.is_rotation() => {
                if u == 0.0 {
                    return self.finish(p0, rule);
                }
                match rule {
                    Rule::Nlerp => {
                        let p1 = if p0.dot(p1) < 0.0 { -p1 } else { p1 };
                        self.finish(p0.lerp(p1, u), rule)
                    }
                    Rule::Slerp | Rule::Raw | Rule::RawLimit | Rule::Three => {
                        let at = |arc: &SlerpArc| Vec4::from(arc.at(u));
                        arc.map_or_else(|| at(&self.segment_arc(i)), at)
                    }
                }
            }
            Interp::Linear => p0.lerp(p1, u),
            Interp::CubicSpline => self.finish(
                crate::codec::curve::hermite(
                    p0,
                    self.tangents[i] * dt,
                    p1,
                    self.tangents[i + 1] * dt,
                    u,
                ),
                rule,
            ),
        }
    }

    /// A LINEAR rotation channel under [`Rule::RawLimit`]: slerp (normalized) at and
    /// between its first and last keys, the stored value outside them and for one key.
    fn sample_raw_limit(&self, frame: f32, arcs: &[SlerpArc]) -> Vec4 {
        let n = self.ticks.len();
        let (first, last) = (tick_frame(self.ticks[0]), tick_frame(self.ticks[n - 1]));
        if n == 1 || frame < first {
            return self.values[0];
        }
        if frame > last {
            return self.values[n - 1];
        }
        self.sample_with(frame, Rule::Slerp, arcs)
    }

    /// A LINEAR rotation channel as three.js' `QuaternionLinearInterpolant` plays it
    /// ([`Rule::Three`]): the stored value before the first key and from the last key on,
    /// `slerpFlat` from key `i` to key `i + 1` at and after key `i`.
    fn sample_three(&self, frame: f32) -> Vec4 {
        let n = self.ticks.len();
        if n == 1 || frame < tick_frame(self.ticks[0]) {
            return self.values[0];
        }
        if frame >= tick_frame(self.ticks[n - 1]) {
            return self.values[n - 1];
        }
        let i = self.ticks.partition_point(|&k| tick_frame(k) <= frame) - 1;
        let (f0, f1) = (tick_frame(self.ticks[i]), tick_frame(self.ticks[i + 1]));
        let u = (f64::from(frame) - f64::from(f0)) / (f64::from(f1) - f64::from(f0));
        super::slerp_flat::slerp_flat(self.values[i], self.values[i + 1], u).as_vec4()
    }

    /// Inserts keys into a LINEAR rotation channel, on the slerp curve (which it leaves
    /// unchanged), until nlerp stays within `max_chord` (quaternion chord, about half the
    /// rotation angle) of slerp at every eighth of a frame and at [`NLERP_WORST`] of each
    /// segment: at the middle frame of a segment, or between frames (down to a sixteenth)
    /// when a segment is one frame long or less. Returns whether keys were added.
    pub fn split_for_nlerp(&mut self, max_chord: f32) -> bool {
        self.split_for_nlerp_at(max_chord, true)
    }

    /// [`Self::split_for_nlerp`]; with `fine` false, as before issue 24 item 3: only segments
    /// of a quarter frame or more, measured at the eighths of a frame only.
    pub fn split_for_nlerp_at(&mut self, max_chord: f32, fine: bool) -> bool {
        if self.interp != Interp::Linear || !self.is_rotation() || self.ticks.len() < 2 {
            return false;
        }
        let mut added = false;
        let mut i = 0;
        while i + 1 < self.ticks.len() {
            let (f0, f1) = (self.ticks[i], self.ticks[i + 1]);
            let shortest = if fine { 2 } else { TICKS / 4 };
            if f1 - f0 >= shortest && self.nlerp_divergence(i, fine) > max_chord {
                let mid = split_tick(f0, f1);
                let v = self.sample_as(tick_frame(mid), Rule::Slerp);
                let v = if v.dot(self.values[i]) < 0.0 { -v } else { v };
                self.ticks.insert(i + 1, mid);
                self.values.insert(i + 1, v);
                added = true;
            } else {
                i += 1;
            }
        }
        added
    }

    /// Splits, on the slerp curve, each segment (at least two ticks long) that holds one of
    /// the frame positions `at` strictly inside and whose nlerp leaves slerp by more than
    /// `max_chord` (at the eighths of a frame and [`NLERP_WORST`]): where a joint below was
    /// measured over under nlerp. `checked` remembers the segments found within `max_chord`,
    /// so that asking again with the same keys and chord (for another joint below) does not
    /// measure them again. Returns whether keys were added.
    pub fn split_short_segments_at(
        &mut self,
        at: &[f32],
        max_chord: f32,
        checked: &mut CheckedSegments,
    ) -> bool {
        if self.interp != Interp::Linear || !self.is_rotation() || self.ticks.len() < 2 {
            return false;
        }
        checked.for_keys(self.ticks.len(), max_chord);
        // Each segment holding a point once (many points of one segment are often over),
        // last first so that the insertions leave the earlier indices as they are.
        let mut segments: Vec<usize> = at
            .iter()
            .filter_map(|&x| {
                let i = self.ticks.partition_point(|&k| tick_frame(k) <= x);
                (i > 0 && i < self.ticks.len() && tick_frame(self.ticks[i - 1]) != x)
                    .then_some(i - 1)
            })
            .filter(|&i| !checked.within[i])
            .collect();
        segments.sort_unstable();
        segments.dedup();
        let mut added = false;
        for &i in segments.iter().rev() {
            let (f0, f1) = (self.ticks[i], self.ticks[i + 1]);
            if f1 - f0 < 2 || self.nlerp_divergence(i, true) <= max_chord {
                checked.within[i] = true;
                continue;
            }
            let mid = split_tick(f0, f1);
            let v = self.sample_as(tick_frame(mid), Rule::Slerp);
            let v = if v.dot(self.values[i]) < 0.0 { -v } else { v };
            self.ticks.insert(i + 1, mid);
            self.values.insert(i + 1, v);
            added = true;
        }
        if added {
            // The segments moved: the next call checks them afresh.
            checked.for_keys(0, max_chord);
        }
        added
    }

    /// The largest chord between nlerp and slerp at the eighths of a frame inside
    /// segment `i` and at [`NLERP_WORST`] of the segment, where nlerp leaves slerp most (at
    /// the segment's midpoint the two agree: a quarter-frame segment's only eighth).
    pub fn nlerp_divergence_of(&self, i: usize) -> f32 {
        if self.interp != Interp::Linear || !self.is_rotation() {
            return 0.0;
        }
        self.nlerp_divergence(i, true)
    }

    /// [`Self::nlerp_divergence_of`], at the eighths only where `fine` is false.
    ///
    /// A LINEAR rotation segment's divergence is a pure function of its two keys (times and
    /// values, bit for bit) and `fine`: every point lies inside it or on one of its keys
    /// (`sample_as` there reads that key alone, the ticks increasing). Each fit and each key
    /// pruning asks it again for the same segments, so it is remembered per thread in a
    /// direct-mapped table ([`NlerpMemo`]).
    fn nlerp_divergence(&self, i: usize, fine: bool) -> f32 {
        let (f0, f1) = (self.ticks[i], self.ticks[i + 1]);
        if self.interp != Interp::Linear || !self.is_rotation() || f0 >= f1 {
            return self.nlerp_divergence_uncached(i, fine);
        }
        let key = NlerpMemo::key(f0, f1, self.values[i], self.values[i + 1], fine);
        NlerpMemo::get_or(key, || self.nlerp_divergence_uncached(i, fine))
    }

    /// [`Self::nlerp_divergence`], computed.
    fn nlerp_divergence_uncached(&self, i: usize, fine: bool) -> f32 {
        let (f0, f1) = (self.ticks[i], self.ticks[i + 1]);
        let step = TICKS / 8;
        let (a, b) = (tick_frame(f0), tick_frame(f1));
        // Every point lies inside segment `i`: its arc is built once (the same values as
        // `sample_as`, which finds the segment and builds the arc at each point).
        let arc = self.segment_arc(i);
        let inside = |f: f32| f > a && f < b;
        (f0 + 1..f1)
            .filter(|t| t % step == 0)
            .map(tick_frame)
            .chain(NLERP_WORST.iter().filter(|_| fine).map(|u| a + u * (b - a)))
            .map(|f| {
                let (a, b) = if inside(f) {
                    (
                        self.sample_in(i, f, Rule::Slerp, Some(&arc)),
                        self.sample_in(i, f, Rule::Nlerp, None),
                    )
                } else {
                    (
                        self.sample_as(f, Rule::Slerp),
                        self.sample_as(f, Rule::Nlerp),
                    )
                };
                let b = if a.dot(b) < 0.0 { -b } else { b };
                (a - b).length()
            })
            .fold(0.0, f32::max)
    }

    /// The same motion as LINEAR keys at every frame of a CUBICSPLINE channel (for players
    /// that ignore tangents); `self` when already LINEAR.
    pub fn to_linear(&self) -> Channel {
        if self.interp == Interp::Linear {
            return self.clone();
        }
        let (first, last) = (self.ticks[0], *self.ticks.last().expect("keys"));
        let ticks: Vec<u32> = (first..=last).step_by(TICKS as usize).collect();
        let mut values: Vec<Vec4> = ticks.iter().map(|&t| self.sample(tick_frame(t))).collect();
        if self.is_rotation() {
            crate::codec::curve::align_hemispheres(&mut values);
        }
        Channel {
            interp: Interp::Linear,
            ticks,
            values,
            tangents: vec![],
            ..self.clone()
        }
    }
}

/// Where a rotation segment from tick `f0` to `f1` is split for nlerp: on a whole frame
/// while it spans several, then at its middle.
fn split_tick(f0: u32, f1: u32) -> u32 {
    if f1 - f0 >= 2 * TICKS {
        (f0 + (f1 - f0) / 2) / TICKS * TICKS
    } else {
        f0 + (f1 - f0) / 2
    }
}

/// Clip frames as ticks.
pub fn to_ticks(frames: &[u32]) -> Vec<u32> {
    frames.iter().map(|&f| f * TICKS).collect()
}

/// A tick as a (fractional) clip frame.
pub fn tick_frame(tick: u32) -> f32 {
    tick as f32 / TICKS as f32
}

/// Rounds each component to the nearest normalized SHORT and back.
pub fn short_round(v: Vec4) -> Vec4 {
    Vec4::from_array(v.to_array().map(|x| f32::from(to_short(x)) / 32767.0)).max(Vec4::NEG_ONE)
}

/// A unit quaternion as normalized SHORTs: each component rounded down or up (never more
/// than one step off), choosing the combination whose stored quaternion is closest to unit
/// length and to `v`'s direction, since some players use stored keys without normalizing.
/// The score is what such a player's matrix is off by: a quaternion of length l gives
/// `l² R + (1 - l²) I`, off by `|1 - l²| |I - R|` with `|I - R| = 2 |xyz|`, plus twice the
/// direction's chord for the rotation itself.
pub fn short_codes_unit(v: Vec4) -> [i16; 4] {
    // A pure function of `v`'s bits, asked again and again for the same keys (each fit of
    // a layout and each key pruning stores the channels anew): remembered per thread in a
    // small direct-mapped table.
    let key = v.to_array().map(f32::to_bits);
    let slot = (key[0] ^ key[1].rotate_left(7) ^ key[2].rotate_left(14) ^ key[3].rotate_left(21))
        .wrapping_mul(0x9E37_79B1)
        >> (32 - SHORT_CODES_BITS);
    if let Some(codes) = SHORT_CODES.with(|t| match t.borrow().get(slot as usize) {
        Some(Some((k, codes))) if *k == key => Some(*codes),
        _ => None,
    }) {
        return codes;
    }
    let codes = short_codes_unit_uncached(v);
    SHORT_CODES.with(|t| {
        let mut t = t.borrow_mut();
        if t.is_empty() {
            t.resize(1 << SHORT_CODES_BITS, None);
        }
        t[slot as usize] = Some((key, codes));
    });
    codes
}

/// Entries of [`short_codes_unit`]'s table: `2^SHORT_CODES_BITS`.
const SHORT_CODES_BITS: u32 = 16;

type ShortCodesEntry = Option<([u32; 4], [i16; 4])>;

thread_local! {
    static SHORT_CODES: std::cell::RefCell<Vec<ShortCodesEntry>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

/// [`Channel::nlerp_divergence`] of LINEAR rotation segments, remembered per thread: a
/// direct-mapped table keyed by the segment's key ticks, its two values' bits and `fine`.
struct NlerpMemo;

/// A segment's key in [`NlerpMemo`]: both ticks, both values' bits, `fine` (0 or 1).
type NlerpKey = [u32; 11];

/// Entries of [`NlerpMemo`]'s table: `2^NLERP_MEMO_BITS`.
const NLERP_MEMO_BITS: u32 = 17;

thread_local! {
    static NLERP_MEMO: std::cell::RefCell<Vec<Option<(NlerpKey, f32)>>> =
        const { std::cell::RefCell::new(Vec::new()) };
}

impl NlerpMemo {
    fn key(t0: u32, t1: u32, v0: Vec4, v1: Vec4, fine: bool) -> NlerpKey {
        let (a, b) = (
            v0.to_array().map(f32::to_bits),
            v1.to_array().map(f32::to_bits),
        );
        [
            t0,
            t1,
            a[0],
            a[1],
            a[2],
            a[3],
            b[0],
            b[1],
            b[2],
            b[3],
            u32::from(fine),
        ]
    }

    /// The remembered value for `key`, or `compute`'s (then remembered).
    fn get_or(key: NlerpKey, compute: impl FnOnce() -> f32) -> f32 {
        let hash = key.iter().fold(0u32, |h, &k| {
            (h.rotate_left(5) ^ k).wrapping_mul(0x9E37_79B1)
        });
        let slot = (hash >> (32 - NLERP_MEMO_BITS)) as usize;
        if let Some(d) = NLERP_MEMO.with(|t| match t.borrow().get(slot) {
            Some(Some((k, d))) if *k == key => Some(*d),
            _ => None,
        }) {
            return d;
        }
        let d = compute();
        NLERP_MEMO.with(|t| {
            let mut t = t.borrow_mut();
            if t.is_empty() {
                t.resize(1 << NLERP_MEMO_BITS, None);
            }
            t[slot] = Some((key, d));
        });
        d
    }
}

/// [`short_codes_unit`], computed: of the 16 floor / ceiling combinations of the scaled
/// components, the first with the smallest score (length error along the axis plus
/// direction error). Each component's two candidates and their squares are computed once,
/// and a combination repeating an earlier one (a component already on a step, so floor ==
/// ceiling) is skipped: it would score the same and lose the tie. Every score is the same
/// f64 arithmetic as [`short_codes_unit_reference`]'s (the same operations in the same
/// order), so the same codes.
fn short_codes_unit_uncached(v: Vec4) -> [i16; 4] {
    let v = v.to_array();
    let scaled = v.map(|x| x.clamp(-1.0, 1.0) * 32767.0);
    // Per component: [floor, ceil] codes, their values and squares.
    let code = |x: f32| x.clamp(-32767.0, 32767.0) as i16;
    let codes: [[i16; 2]; 4] = scaled.map(|x| [code(x.floor()), code(x.ceil())]);
    let q: [[f64; 2]; 4] = codes.map(|c| c.map(|c| c as f64 / 32767.0));
    let sq: [[f64; 2]; 4] = q.map(|q| q.map(|x| x * x));
    let v64 = v.map(f64::from);
    let mut best = [0i16; 4];
    let mut best_score = f64::INFINITY;
    for combo in 0..16usize {
        let pick: [usize; 4] = std::array::from_fn(|k| (combo >> k) & 1);
        // A ceiling equal to its floor repeats the combination without that bit.
        if (0..4).any(|k| pick[k] == 1 && codes[k][0] == codes[k][1]) {
            continue;
        }
        let xyz2 = sq[0][pick[0]] + sq[1][pick[1]] + sq[2][pick[2]];
        let len = (xyz2 + sq[3][pick[3]]).sqrt();
        if len == 0.0 {
            continue;
        }
        let d = |k: usize| (q[k][pick[k]] / len - v64[k]).powi(2);
        let dir = (((d(0) + d(1)) + d(2)) + d(3)).sqrt();
        let xyz = xyz2.sqrt() / len;
        let score = (len * len - 1.0).abs() * xyz + dir;
        if score < best_score {
            best_score = score;
            best = std::array::from_fn(|k| codes[k][pick[k]]);
        }
    }
    best
}

/// [`short_codes_unit_uncached`] as first written (every combination computed from its
/// codes): the oracle its tests compare with.
#[cfg(test)]
fn short_codes_unit_reference(v: Vec4) -> [i16; 4] {
    let scaled = v.to_array().map(|x| x.clamp(-1.0, 1.0) * 32767.0);
    let mut best = [0i16; 4];
    let mut best_score = f64::INFINITY;
    for combo in 0..16u32 {
        let codes: [i16; 4] = std::array::from_fn(|k| {
            let x = scaled[k];
            let c = if combo & (1 << k) != 0 {
                x.ceil()
            } else {
                x.floor()
            };
            c.clamp(-32767.0, 32767.0) as i16
        });
        let q = codes.map(|c| c as f64 / 32767.0);
        let len = q.iter().map(|x| x * x).sum::<f64>().sqrt();
        if len == 0.0 {
            continue;
        }
        let dir: f64 = q
            .iter()
            .zip(v.to_array())
            .map(|(a, b)| (a / len - b as f64).powi(2))
            .sum::<f64>()
            .sqrt();
        let xyz = (q[0] * q[0] + q[1] * q[1] + q[2] * q[2]).sqrt() / len;
        let score = (len * len - 1.0).abs() * xyz + dir;
        if score < best_score {
            best_score = score;
            best = codes;
        }
    }
    best
}

/// A unit quaternion as a player reads it back from [`short_codes_unit`].
pub fn short_round_unit(v: Vec4) -> Vec4 {
    Vec4::from_array(short_codes_unit(v).map(|c| f32::from(c) / 32767.0))
}

/// The normalized SHORT codes meshoptimizer's QUATERNION filter at `bits` (4..=16) decodes
/// `v` to (the encoder then the decoder of the `meshopt` crate, as a player decodes it).
pub fn quat_filter_codes(v: Vec4, bits: u8) -> [i16; 4] {
    let q = v.normalize_or(Vec4::W);
    let mut enc =
        meshopt::encoding::encode_filter_quat(&[q.to_array()], i32::from(bits.clamp(4, 16)));
    meshopt::encoding::decode_filter_quat(&mut enc);
    enc[0]
}

/// A component as a normalized SHORT.
pub fn to_short(x: f32) -> i16 {
    (x.clamp(-1.0, 1.0) * 32767.0).round() as i16
}

/// Builds the channels of a compressed clip, one per non-rest track.
pub fn channels_of(clip: &CompressedClip) -> Vec<Channel> {
    let mut out = Vec::new();
    for (j, tracks) in clip.tracks.iter().enumerate() {
        for (k, t) in tracks.iter().enumerate() {
            out.extend(Channel::from_track(j, k, t));
        }
    }
    out
}

/// The segments of a channel that [`Channel::split_short_segments_at`] found within a chord,
/// valid while the channel keeps the same number of keys and the chord stays the same.
#[derive(Clone, Debug, Default)]
pub struct CheckedSegments {
    keys: usize,
    chord: u32,
    /// Per segment: found within the chord.
    within: Vec<bool>,
}

impl CheckedSegments {
    /// Forgets what was checked unless it was for `keys` keys and `chord`.
    fn for_keys(&mut self, keys: usize, chord: f32) {
        if self.keys != keys || self.chord != chord.to_bits() {
            self.keys = keys;
            self.chord = chord.to_bits();
            self.within.clear();
            self.within.resize(keys.saturating_sub(1), false);
        }
    }
}

/// A clip as glTF players will evaluate the exported channels (rest where there is none).
pub struct Played<'a> {
    pub rest: &'a [Transform],
    /// How rotation keys become rotations.
    pub rule: Rule,
    /// Per joint, per T/R/S: the stored channel, if any.
    pub tracks: Vec<[Option<Channel>; 3]>,
    pub frame_count: usize,
    /// Per joint, its rotation channel's [`Channel::segment_arcs`] (built once).
    arcs: Vec<Vec<SlerpArc>>,
}

impl<'a> Played<'a> {
    /// The clip under the glTF spec's rule (slerp).
    pub fn new(rest: &'a [Transform], channels: &[Channel], rate: f32, frame_count: usize) -> Self {
        Self::with_rule(rest, channels, rate, frame_count, Rule::Slerp)
    }

    /// The clip as a player following `rule` evaluates it.
    pub fn with_rule(
        rest: &'a [Transform],
        channels: &[Channel],
        rate: f32,
        frame_count: usize,
        rule: Rule,
    ) -> Self {
        let mut tracks: Vec<[Option<Channel>; 3]> = vec![[None, None, None]; rest.len()];
        for c in channels {
            tracks[c.joint][c.kind] = Some(c.as_stored(rate));
        }
        let arcs = tracks
            .iter()
            .map(|[_, r, _]| r.as_ref().map(Channel::segment_arcs).unwrap_or_default())
            .collect();
        Self {
            rest,
            rule,
            tracks,
            frame_count,
            arcs,
        }
    }
}

impl PoseSource for Played<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        let f = frame.clamp(0.0, self.frame_count.saturating_sub(1) as f32);
        for (j, o) in out.iter_mut().enumerate() {
            let rest = self.rest[j];
            let [t, r, s] = &self.tracks[j];
            *o = Transform::new(
                t.as_ref()
                    .map_or(rest.translation, |c| c.sample(f).truncate()),
                // Under `Rule::Raw` / `Rule::Three` the quaternion may stay as stored: the metric builds its
                // matrix without normalizing, as such players do.
                r.as_ref().map_or(rest.rotation, |c| {
                    Quat::from_vec4(c.sample_with(f, self.rule, &self.arcs[j]))
                }),
                s.as_ref().map_or(rest.scale, |c| c.sample(f).truncate()),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Curve;

    #[test]
    fn cubic_channel_matches_the_codec_curve() {
        let frames = vec![0, 4, 9, 20];
        let values: Vec<Vec4> = [0.0f32, 0.5, 0.2, 1.3]
            .iter()
            .map(|&x| Vec4::new(x, -x, 2.0 * x, 0.0))
            .collect();
        let curve = Curve::new(Interpolation::CatmullRom, false, frames, values);
        let track = TrackData::Animated(Box::new(crate::codec::Animated {
            curve: curve.clone(),
            format: crate::codec::quantize::Format::SmallestThree48,
            range: Default::default(),
            codes: vec![],
            insert_order: vec![],
        }));
        let ch = Channel::from_track(0, 0, &track).unwrap();
        for i in 0..=40 {
            let f = i as f32 * 0.5;
            assert!((ch.sample(f) - curve.sample(f)).length() < 1e-5, "{f}");
        }
    }

    fn rotation(frames: Vec<u32>, values: Vec<Vec4>) -> Channel {
        Channel {
            joint: 0,
            kind: 1,
            interp: Interp::Linear,
            ticks: to_ticks(&frames),
            values,
            tangents: vec![],
            storage: Storage::Float,
            held_end: true,
        }
    }

    #[test]
    fn sampling_with_prepared_arcs_is_bit_for_bit_sample_as() {
        let q = |a: f32, b: f32| Vec4::from(Quat::from_euler(glam::EulerRot::XYZ, a, b, 0.3));
        let values = vec![
            q(0.1, 0.2),
            q(1.4, -0.3),
            -q(2.9, 0.5),
            q(3.0, 0.51),
            q(-1.0, 2.0),
        ];
        let c = rotation(vec![0, 2, 3, 7, 9], values);
        let arcs = c.segment_arcs();
        assert_eq!(arcs.len(), 4);
        for rule in Player::Portable.rules() {
            for i in -4..=44 {
                let f = i as f32 * 0.23;
                let (a, b) = (c.sample_as(f, *rule), c.sample_with(f, *rule, &arcs));
                assert_eq!(
                    a.to_array().map(f32::to_bits),
                    b.to_array().map(f32::to_bits)
                );
            }
        }
    }

    #[test]
    fn short_codes_computed_once_per_component_equal_the_reference() {
        // Rotations of every kind, components on a SHORT step (0, ±1, k / 32767, so
        // floor == ceiling), just off one, and unnormalized inputs.
        let mut values: Vec<Vec4> = (0..20_000)
            .map(|i| {
                let a = i as f32 * 0.731;
                let q =
                    Quat::from_euler(glam::EulerRot::YXZ, a.sin() * 3.1, a * 0.37, a.cos() * 1.7);
                Vec4::from(q)
            })
            .collect();
        let step = 1.0 / 32767.0;
        for &x in &[
            0.0,
            1.0,
            -1.0,
            0.5,
            12.0 * step,
            12.5 * step,
            1.0 - step,
            -0.0,
        ] {
            for k in 0..4 {
                let mut v = Vec4::new(0.1, -0.7, 0.3, 0.6).normalize();
                v[k] = x;
                values.extend([v, v.normalize_or(Vec4::W), Vec4::W, Vec4::X * x, v * 1.01]);
            }
        }
        for v in values {
            assert_eq!(
                short_codes_unit_uncached(v),
                short_codes_unit_reference(v),
                "{v:?}"
            );
        }
    }

    #[test]
    fn short_codes_are_the_same_from_the_table() {
        for i in 0..2000 {
            let v = Vec4::from(Quat::from_euler(
                glam::EulerRot::XYZ,
                i as f32 * 0.013,
                -(i as f32) * 0.007,
                1.0 + i as f32 * 0.001,
            ));
            // Asked twice: computed, then from the table.
            let want = short_codes_unit_uncached(v);
            assert_eq!(short_codes_unit(v), want);
            assert_eq!(short_codes_unit(v), want);
        }
    }

    #[test]
    fn unit_short_rounding_keeps_length_and_direction() {
        // What a player using the stored key unnormalized is off by, per marker distance.
        let raw_error = |stored: Vec4, v: Vec4| {
            let m = glam::DMat3::from_quat(glam::DQuat::from_vec4(stored.as_dvec4()));
            let r = glam::DMat3::from_quat(glam::DQuat::from_vec4(v.as_dvec4()));
            let d = m - r;
            [d.x_axis, d.y_axis, d.z_axis]
                .map(|c| c.length())
                .into_iter()
                .fold(0.0, f64::max)
        };
        let (mut nearest, mut unit) = ((0.0f64, 0.0f64), (0.0f64, 0.0f64));
        for i in 0..2000 {
            let a = i as f32 * 0.37;
            let q = Quat::from_euler(glam::EulerRot::XYZ, a.sin() * 3.0, a.cos() * 2.0, a * 0.1);
            let v = Vec4::from(q);
            let len = |x: Vec4| (x.as_dvec4().length() - 1.0).abs();
            let (n, u) = (short_round(v), short_round_unit(v));
            nearest = (nearest.0 + len(n), nearest.1.max(raw_error(n, v)));
            unit = (unit.0 + len(u), unit.1.max(raw_error(u, v)));
            // Never more than one step from the value.
            assert!((u - v).abs().max_element() <= 1.0 / 32767.0 + 1e-7);
        }
        assert!(
            unit.0 < nearest.0 * 0.75,
            "mean length error {unit:?} vs {nearest:?}"
        );
        assert!(unit.1 < nearest.1, "matrix error {unit:?} vs {nearest:?}");
    }

    #[test]
    fn raw_rule_keeps_stored_keys_unnormalized() {
        let v = Vec4::new(0.0, 0.0, 0.0, 0.5);
        let c = rotation(vec![0, 4], vec![v, Vec4::new(0.0, 0.0, 0.6, 0.8)]);
        assert_eq!(c.sample_as(0.0, Rule::Raw), v);
        assert_eq!(c.sample_as(0.0, Rule::Slerp), Vec4::W);
        // Between keys every rule but three.js' returns a unit quaternion.
        for rule in [Rule::Slerp, Rule::Nlerp, Rule::Raw] {
            assert!((c.sample_as(1.0, rule).length() - 1.0).abs() < 1e-6);
        }
    }

    #[test]
    fn raw_limit_is_the_normalized_key_inside_the_range_and_stored_outside() {
        let (a, b, c) = (
            Vec4::new(0.0, 0.0, 0.0, 0.5),
            Vec4::new(0.0, 0.0, 0.6, 0.8) * 1.01,
            Vec4::new(0.0, 0.0, 0.8, 0.6) * 0.99,
        );
        let ch = rotation(vec![1, 2, 3], vec![a, b, c]);
        // At an inner key Raw shows it as stored, and RawLimit what Raw shows beside it.
        assert_eq!(ch.sample_as(2.0, Rule::Raw), b);
        let beside = ch.sample_as(2.0 + 1e-4, Rule::Raw);
        let limit = ch.sample_as(2.0, Rule::RawLimit);
        assert!((limit - b.normalize()).length() < 1e-6);
        assert!((limit - beside).length() < 1e-3);
        // At the end keys from inside as well; outside the range and for one key as stored.
        assert!((ch.sample_as(1.0, Rule::RawLimit).length() - 1.0).abs() < 1e-6);
        assert!((ch.sample_as(3.0, Rule::RawLimit).length() - 1.0).abs() < 1e-6);
        assert_eq!(ch.sample_as(0.5, Rule::RawLimit), a);
        assert_eq!(ch.sample_as(4.0, Rule::RawLimit), c);
        let one = rotation(vec![0], vec![a]);
        assert_eq!(one.sample_as(0.0, Rule::RawLimit), a);
    }

    #[test]
    fn a_segments_remembered_nlerp_divergence_is_its_own_whatever_the_channel() {
        // Keys at uneven ticks (a frame, an eighth, three frames), large and small arcs.
        let q = |a: f32| Vec4::from(Quat::from_euler(glam::EulerRot::XYZ, a, a * 0.7, 0.3 - a));
        let ticks: Vec<u32> = [0, 16, 18, 64, 80, 81, 97]
            .into_iter()
            .map(|t| t * TICKS / 16)
            .collect();
        let values: Vec<Vec4> = (0..ticks.len()).map(|k| q(k as f32 * 0.45)).collect();
        let c = Channel {
            ticks: ticks.clone(),
            values: values.clone(),
            ..rotation(vec![0], vec![Vec4::W])
        };
        for fine in [true, false] {
            for i in 0..ticks.len() - 1 {
                let want = c.nlerp_divergence_uncached(i, fine);
                // The segment alone, as a two-key channel.
                let alone = Channel {
                    ticks: ticks[i..i + 2].to_vec(),
                    values: values[i..i + 2].to_vec(),
                    ..c.clone()
                };
                assert_eq!(
                    alone.nlerp_divergence_uncached(0, fine).to_bits(),
                    want.to_bits()
                );
                // Computed, then remembered; and remembered for the other channel.
                assert_eq!(c.nlerp_divergence(i, fine).to_bits(), want.to_bits());
                assert_eq!(c.nlerp_divergence(i, fine).to_bits(), want.to_bits());
                assert_eq!(alone.nlerp_divergence(0, fine).to_bits(), want.to_bits());
            }
        }
        // Another value, or another time, is another entry.
        let mut moved = c.clone();
        moved.values[1] = q(2.0);
        assert_eq!(
            moved.nlerp_divergence(0, true).to_bits(),
            moved.nlerp_divergence_uncached(0, true).to_bits()
        );
        moved.ticks[1] += 1;
        assert_eq!(
            moved.nlerp_divergence(0, true).to_bits(),
            moved.nlerp_divergence_uncached(0, true).to_bits()
        );
    }

    #[test]
    fn short_segments_are_split_where_measured_over_only() {
        // 60 degrees in a quarter frame: the eighths see only its middle, where nlerp and
        // slerp agree.
        let a = Vec4::from(Quat::IDENTITY);
        let b = Vec4::from(Quat::from_rotation_z(1.0));
        let mut c = rotation(vec![0], vec![a]);
        c.ticks = vec![0, TICKS / 4];
        c.values = vec![a, b];
        assert!(!c.clone().split_for_nlerp_at(1e-4, false));
        assert!(c.nlerp_divergence(0, true) > 1e-3);
        let mut checked = CheckedSegments::default();
        assert!(!c.split_short_segments_at(&[], 1e-4, &mut checked));
        assert!(
            !c.split_short_segments_at(&[0.5], 1e-4, &mut checked),
            "outside the segment"
        );
        // Found within a looser chord, then over a tighter one: the chord is in the key.
        assert!(!c.split_short_segments_at(&[0.05], 1.0, &mut checked));
        assert!(c.split_short_segments_at(&[0.05], 1e-4, &mut checked));
        assert_eq!(c.ticks, vec![0, TICKS / 8, TICKS / 4]);
        assert!((c.sample(0.1) - c.sample_as(0.1, Rule::Slerp)).length() < 1e-6);
    }

    #[test]
    fn three_rule_normalizes_a_key_only_when_the_next_key_is_close() {
        // What three.js showed on KayKit's Hit_A (--meshopt): at a key time, animated
        // channels whose next key is close come out normalized, one-key channels as stored.
        let long = 1.0 + 1e-4;
        let a = Vec4::from(Quat::from_rotation_z(0.3)) * long;
        let near = Vec4::from(Quat::from_rotation_z(0.32)) * long;
        let far = Vec4::from(Quat::from_rotation_z(1.3)) * long;
        let close = rotation(vec![0, 4], vec![a, near]);
        let wide = rotation(vec![0, 4], vec![a, far]);
        let one = rotation(vec![0], vec![a]);
        assert!((close.sample_as(0.0, Rule::Three).length() - 1.0).abs() < 1e-6);
        assert_eq!(wide.sample_as(0.0, Rule::Three), a);
        assert_eq!(one.sample_as(2.0, Rule::Three), a);
        // From the last key on, the stored value; between wide keys, not normalized.
        assert_eq!(close.sample_as(4.0, Rule::Three), near);
        let mid = wide.sample_as(2.0, Rule::Three).length();
        assert!(mid > 1.0 + 4e-5 && mid < long, "{mid}");
    }

    #[test]
    fn nlerp_splits_keep_the_slerp_curve_and_bound_the_divergence() {
        let a = Vec4::from(Quat::IDENTITY);
        let b = Vec4::from(Quat::from_rotation_z(2.0));
        let mut c = rotation(vec![0, 40], vec![a, b]);
        let before: Vec<Vec4> = (0..=160).map(|i| c.sample(i as f32 / 4.0)).collect();
        assert!(c.nlerp_divergence(0, true) > 1e-2);
        assert!(c.split_for_nlerp(1e-4));
        assert!(c.ticks.len() > 2 && c.ticks.len() < 40, "{:?}", c.ticks);
        for (i, v) in before.iter().enumerate() {
            assert!((c.sample(i as f32 / 4.0) - *v).length() < 1e-5);
            let n = c.sample_as(i as f32 / 4.0, Rule::Nlerp);
            assert!((n - *v).length() <= 1e-4 + 1e-6, "{i}");
        }
    }

    #[test]
    fn short_rounding_is_within_half_a_step() {
        let v = Vec4::new(0.123456, -0.99999, 1.0, -1.0);
        let r = short_round(v);
        assert!((r - v).abs().max_element() <= 0.5 / 32767.0 + 1e-7);
        assert_eq!(to_short(-1.0), -32767);
    }
}
