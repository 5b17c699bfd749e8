//! Key values that leave the samples. Greedy insertion puts every key exactly on its
//! quantized sample; refinement then
//!
//! 1. nudges each key by a least-squares step over the segments it shapes, re-quantized,
//!    kept when the largest error around it shrinks;
//! 2. drops keys (in insertion order) where the curve without them, after nudging their
//!    neighbours, still holds the tolerance: greedy insertion keeps early keys that later
//!    ones made redundant;
//! 3. squeezes the predictive coding (`predict.rs`): per 16-key segment and component, codes
//!    that stray from their prediction move towards it, one bit of residual width at a time,
//!    while the tolerance holds. On noisy capture, where nearly every frame is a key, this
//!    is where most of the saving is.
//!
//! Every check evaluates the quantized curve at samples and midpoints, as the fitter does,
//! so a refined track holds its local tolerance exactly like a fitted one.

use std::f32::consts::FRAC_PI_2;
use std::ops::ControlFlow;

use glam::Vec4;

use super::curve::{Interpolation, Segment, with_fma};
use super::fit::{Fit, Target, distance, segment_error_until, segment_in, visit_points};
use super::predict::{SEGMENT_KEYS, best_order, predict, stored_components, width_of, zigzag};
use super::quantize::{Codes, Format, Range, decode, encode};

/// Nudging rounds over every key before pruning, and over a removed key's neighbours.
const ROUNDS: usize = 1;

/// A track's keys while they are refined: values and codes per frame (only key frames used).
#[derive(Clone)]
struct Keys<'a> {
    raw: &'a [Vec4],
    mids: Option<&'a [Vec4]>,
    is_rotation: bool,
    interpolation: Interpolation,
    format: Format,
    range: Range,
    frames: Vec<u32>,
    values: Vec<Vec4>,
    codes: Vec<Codes>,
}

/// [`nudge_keys`], then [`refine_nudged`].
#[cfg(test)]
pub fn refine(
    target: &Target,
    interpolation: Interpolation,
    tolerance: f32,
    fit: &Fit,
    codes: &[Codes],
    format: Format,
    range: Range,
) -> (Fit, Vec<Codes>, Vec<Vec4>) {
    let nudged = nudge_keys(target, interpolation, fit, codes, format, range);
    refine_nudged(
        target,
        interpolation,
        tolerance,
        fit,
        codes,
        format,
        range,
        &nudged,
    )
}

/// Each key's value and code.
pub type KeyValues = Vec<(Vec4, Codes)>;

/// The value and code of every key of `fit` after the nudging rounds that start a
/// refinement: they do not depend on the tolerance, so a caller refining the same fit at
/// several tolerances nudges once ([`refine_nudged`]).
pub fn nudge_keys(
    target: &Target,
    interpolation: Interpolation,
    fit: &Fit,
    codes: &[Codes],
    format: Format,
    range: Range,
) -> KeyValues {
    let mut keys = Keys::new(target, interpolation, fit, codes, format, range);
    // A nudge changes only the segments its key shapes: the errors around the next key are
    // mostly known already.
    let mut known = KnownErrors(vec![None; keys.frames.len().saturating_sub(1)]);
    for _ in 0..ROUNDS {
        for i in 0..keys.frames.len() {
            keys.nudge_known(i, &mut known);
        }
    }
    keys.frames
        .iter()
        .map(|&f| (keys.values[f as usize], keys.codes[f as usize]))
        .collect()
}

/// Refines `fit` (a fit of `target` at `tolerance`, with `codes` the quantized codes of
/// every frame) from the keys [`nudge_keys`] gave for it: returns the kept keys, and their
/// codes and decoded values.
#[allow(clippy::too_many_arguments)]
pub fn refine_nudged(
    target: &Target,
    interpolation: Interpolation,
    tolerance: f32,
    fit: &Fit,
    codes: &[Codes],
    format: Format,
    range: Range,
    nudged: &[(Vec4, Codes)],
) -> (Fit, Vec<Codes>, Vec<Vec4>) {
    let mut keys = Keys::new(target, interpolation, fit, codes, format, range);
    for (&f, &(value, code)) in fit.frames.iter().zip(nudged) {
        keys.values[f as usize] = value;
        keys.codes[f as usize] = code;
    }
    for &frame in fit.insert_order.iter().skip(2) {
        keys.try_remove(frame, tolerance);
    }
    let order = best_order(format, &range, &keys.kept_codes(), &keys.frames);
    keys.squeeze(tolerance, order);
    let frames = keys.frames;
    let insert_order = fit
        .insert_order
        .iter()
        .copied()
        .filter(|f| frames.binary_search(f).is_ok())
        .collect();
    let kept_codes = frames.iter().map(|&f| keys.codes[f as usize]).collect();
    let kept_values = frames.iter().map(|&f| keys.values[f as usize]).collect();
    (
        Fit {
            frames,
            insert_order,
        },
        kept_codes,
        kept_values,
    )
}

impl<'a> Keys<'a> {
    /// `fit`'s keys at their quantized samples.
    fn new(
        target: &Target<'a>,
        interpolation: Interpolation,
        fit: &Fit,
        codes: &[Codes],
        format: Format,
        range: Range,
    ) -> Self {
        Keys {
            raw: target.raw,
            mids: target.mids,
            is_rotation: target.is_rotation,
            interpolation,
            format,
            range,
            frames: fit.frames.clone(),
            values: target.key_values.to_vec(),
            codes: codes.to_vec(),
        }
    }
}

impl Keys<'_> {
    fn reach(&self) -> usize {
        usize::from(self.interpolation == Interpolation::CatmullRom)
    }

    /// Largest error over the segments keys `a..=b` shape, and at those keys themselves.
    fn local_error(&self, a: usize, b: usize) -> f32 {
        self.local_error_until(a, b, f32::INFINITY)
    }

    /// The segments [`Keys::local_error`] covers for keys `a..=b`.
    fn covered(&self, a: usize, b: usize) -> (usize, usize) {
        let reach = self.reach();
        (
            a.saturating_sub(1 + reach),
            (b + reach).min(self.frames.len() - 2),
        )
    }

    /// The local errors around keys `k` and `k + 1`: of both, and of each.
    fn around(&self, k: usize) -> Around {
        let (lo, hi) = self.covered(k, k + 1);
        let target = self.target();
        let mut segments = [0.0f32; 5];
        for s in lo..=hi {
            segments[s - lo] =
                segment_error_until(&target, self.interpolation, &self.frames, s, f32::INFINITY);
        }
        let key = |k: usize| {
            let f = self.frames[k] as usize;
            distance(self.is_rotation, self.raw[f], self.values[f])
        };
        let local = |a: usize| {
            let (l, h) = self.covered(a, a);
            segments[l - lo..=h - lo]
                .iter()
                .fold(key(a), |m, &e| m.max(e))
        };
        Around {
            first: local(k),
            second: local(k + 1),
        }
    }

    /// [`Keys::local_error`], or as soon as one point's error exceeds `limit`, that error:
    /// enough to compare the local error with `limit`.
    fn local_error_until(&self, a: usize, b: usize, limit: f32) -> f32 {
        self.local_error_recording(a, b, limit, |_, _| {})
    }

    /// [`Keys::local_error_until`], handing each segment's error to `record` as it is
    /// measured (`(segment, error)`): when the result is not above `limit`, every segment
    /// was measured whole, so each error handed over is the segment's own.
    fn local_error_recording(
        &self,
        a: usize,
        b: usize,
        limit: f32,
        mut record: impl FnMut(usize, f32),
    ) -> f32 {
        let reach = self.reach();
        let lo = a.saturating_sub(1 + reach);
        let hi = (b + reach).min(self.frames.len() - 2);
        let target = self.target();
        let mut worst = 0.0f32;
        for &f in &self.frames[a..=b] {
            let f = f as usize;
            worst = worst.max(distance(self.is_rotation, self.raw[f], self.values[f]));
            if worst > limit {
                return worst;
            }
        }
        for s in lo..=hi {
            let e = segment_error_until(&target, self.interpolation, &self.frames, s, limit);
            record(s, e);
            worst = worst.max(e);
            if worst > limit {
                return worst;
            }
        }
        worst
    }

    /// [`Keys::local_error`] of key `i`, measuring only the segments whose errors `known`
    /// lacks (and keeping them there).
    fn local_error_known(&self, i: usize, known: &mut KnownErrors) -> f32 {
        let (lo, hi) = self.covered(i, i);
        let target = self.target();
        let f = self.frames[i] as usize;
        let own = distance(self.is_rotation, self.raw[f], self.values[f]);
        (lo..=hi).fold(own, |worst, s| {
            let e = *known.0[s].get_or_insert_with(|| {
                segment_error_until(&target, self.interpolation, &self.frames, s, f32::INFINITY)
            });
            worst.max(e)
        })
    }

    /// [`Keys::nudge`] with the segments' errors `known` before it, and kept there after
    /// it (a kept nudge measured every segment it changed whole).
    fn nudge_known(&mut self, i: usize, known: &mut KnownErrors) -> bool {
        let before = self.local_error_known(i, known);
        let mut measured = [None; 4];
        let (lo, _) = self.covered(i, i);
        let kept = self.nudge_recording(i, before, |s, e| measured[s - lo] = Some(e));
        if kept {
            for (s, e) in (lo..).zip(measured) {
                if let Some(e) = e {
                    known.0[s] = Some(e);
                }
            }
        }
        kept
    }

    /// One least-squares step on key `i` (or half of it), kept when the largest error
    /// around the key drops. Returns whether it was kept.
    fn nudge(&mut self, i: usize) -> bool {
        let before = self.local_error(i, i);
        self.nudge_from(i, before)
    }

    /// [`Keys::nudge`], given the local error around key `i` (`local_error(i, i)`).
    fn nudge_from(&mut self, i: usize, before: f32) -> bool {
        self.nudge_recording(i, before, |_, _| {})
    }

    /// [`Keys::nudge_from`], handing the segments' errors of each step it tries to `record`
    /// ([`Keys::local_error_recording`]): the last ones handed over are the kept step's.
    fn nudge_recording(
        &mut self,
        i: usize,
        before: f32,
        mut record: impl FnMut(usize, f32),
    ) -> bool {
        let f = self.frames[i] as usize;
        let step = self.step(i);
        let (old_value, old_codes) = (self.values[f], self.codes[f]);
        for scale in [1.0, 0.5] {
            let mut v = old_value + step * scale;
            if self.is_rotation {
                v = v.normalize_or(old_value);
            }
            let c = encode(self.format, &self.range, v);
            let q = decode(self.format, &self.range, c);
            if c == old_codes {
                continue;
            }
            self.values[f] = q;
            self.codes[f] = c;
            if self.local_error_recording(i, i, before, &mut record) < before {
                return true;
            }
        }
        self.values[f] = old_value;
        self.codes[f] = old_codes;
        false
    }

    /// The least-squares change of key `i` that best cancels the errors of its two
    /// segments, each point weighted by how much the key moves it (linear hat weights).
    fn step(&self, i: usize) -> Vec4 {
        with_fma(
            #[inline(always)]
            |inline| {
                if inline {
                    self.step_in::<true>(i)
                } else {
                    self.step_in::<false>(i)
                }
            },
        )
    }

    /// [`Keys::step`], its curves' sines inline when `INLINE` ([`with_fma`]).
    #[inline(always)]
    fn step_in<const INLINE: bool>(&self, i: usize) -> Vec4 {
        let n = self.frames.len();
        let target = self.target();
        let f = self.frames[i] as usize;
        let mut num = self.reference(self.raw[f], self.values[f]) - self.values[f];
        let mut den = 1.0f32;
        let segments = i.checked_sub(1).into_iter().chain((i + 1 < n).then_some(i));
        for s in segments {
            let (k0, k1) = (self.frames[s], self.frames[s + 1]);
            let curve = segment_in::<INLINE>(&target, self.interpolation, &self.frames, s);
            let span = (k1 - k0) as f32;
            let _: ControlFlow<()> = visit_points(
                &target,
                k0,
                k1,
                #[inline(always)]
                |x, reference| {
                    let w = if s == i {
                        (k1 as f32 - x) / span
                    } else {
                        (x - k0 as f32) / span
                    };
                    let c = curve.eval_in::<INLINE>(x);
                    num += (self.reference(reference, c) - c) * w;
                    den += w * w;
                    ControlFlow::Continue(())
                },
            );
        }
        num / den
    }

    /// `reference` in the hemisphere of `value` (rotations), to subtract one from the other.
    fn reference(&self, reference: Vec4, value: Vec4) -> Vec4 {
        if self.is_rotation && reference.dot(value) < 0.0 {
            -reference
        } else {
            reference
        }
    }

    fn target(&self) -> Target<'_> {
        Target {
            raw: self.raw,
            mids: self.mids,
            key_values: &self.values,
            is_rotation: self.is_rotation,
        }
    }

    /// Codes of the kept keys.
    fn kept_codes(&self) -> Vec<Codes> {
        self.frames
            .iter()
            .map(|&f| self.codes[f as usize])
            .collect()
    }

    /// Narrows the residual widths of the predictive coding (docs/FORMAT.md): per segment
    /// and component, moves codes that stray from their prediction (of `order`) towards it
    /// while every point they shape holds `tolerance`, one bit of width at a time.
    fn squeeze(&mut self, tolerance: f32, order: u8) {
        let bits = match self.format {
            Format::RangedRotation { bits } | Format::RangedVector { bits } => bits as u32,
            _ => return,
        };
        let comps = stored_components(self.format, &self.range);
        let mut codes = self.kept_codes();
        for start in (0..self.frames.len()).step_by(SEGMENT_KEYS) {
            let end = (start + SEGMENT_KEYS).min(self.frames.len());
            let segment = Squeeze {
                start,
                end,
                max: (1u64 << bits) - 1,
                order,
            };
            for &c in &comps {
                // A width that fits leaves the residuals within it: try one bit less next.
                let mut width = segment.width(&codes, &self.frames, c);
                while width > 0 && self.fit_width(&mut codes, segment, c, width - 1, tolerance) {
                    width -= 1;
                }
            }
        }
    }

    /// Moves codes of component `c` in `segment` so every residual fits `w` bits; restores
    /// them and returns false when that breaks `tolerance`. `codes` are the kept keys'.
    fn fit_width(
        &mut self,
        codes: &mut [Codes],
        segment: Squeeze,
        c: usize,
        w: u32,
        tolerance: f32,
    ) -> bool {
        let Squeeze { start, end, .. } = segment;
        let (lo, hi) = if w == 0 {
            (0, 0)
        } else {
            (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1)
        };
        let saved: Vec<(Vec4, Codes)> = self.frames[start..end]
            .iter()
            .map(|&f| (self.values[f as usize], self.codes[f as usize]))
            .collect();
        for i in start + 1..end {
            let p = segment.predict(codes, &self.frames, i, c);
            let r = codes[i][c] as i64 - p;
            if (lo..=hi).contains(&r) {
                continue;
            }
            codes[i][c] = (p + r.clamp(lo, hi)).clamp(0, segment.max as i64) as u32;
            let f = self.frames[i] as usize;
            self.codes[f] = codes[i];
            self.values[f] = decode(self.format, &self.range, codes[i]);
            if self.local_error_until(i, i, tolerance) > tolerance {
                for (k, (v, code)) in (start..end).zip(saved) {
                    let f = self.frames[k] as usize;
                    self.values[f] = v;
                    self.codes[f] = code;
                    codes[k] = code;
                }
                return false;
            }
        }
        true
    }

    /// Drops the key at `frame` if, after nudging its neighbours, every point they shape
    /// holds `tolerance` ([`Keys::remove_if_held`]), unless that is bound to fail
    /// ([`Keys::removal_cannot_hold`]).
    fn try_remove(&mut self, frame: u32, tolerance: f32) {
        let Ok(i) = self.frames.binary_search(&frame) else {
            return;
        };
        if !self.removal_cannot_hold(i, tolerance) {
            self.remove_if_held(i, tolerance);
        }
    }

    /// Drops key `i` if, after nudging its neighbours, every point they shape holds
    /// `tolerance`; otherwise restores it and its neighbours.
    fn remove_if_held(&mut self, i: usize, tolerance: f32) {
        let frame = self.frames[i];
        let saved = [i - 1, i + 1].map(|k| {
            let f = self.frames[k] as usize;
            (f, self.values[f], self.codes[f])
        });
        self.frames.remove(i);
        let around = self.around(i - 1);
        if around.both() <= tolerance {
            return;
        }
        for round in 0..ROUNDS {
            // The first round starts from the errors just measured (its second nudge only
            // when the first changed nothing).
            if round > 0 {
                self.nudge(i - 1);
                self.nudge(i);
            } else if self.nudge_from(i - 1, around.first()) {
                self.nudge(i);
            } else {
                self.nudge_from(i, around.second());
            }
        }
        let reach = self.reach();
        let a = (i - 1).saturating_sub(reach);
        let b = (i + reach).min(self.frames.len() - 1);
        if self.local_error_until(a, b, tolerance) <= tolerance {
            return;
        }
        for (f, v, c) in saved {
            self.values[f] = v;
            self.codes[f] = c;
        }
        self.frames.insert(i, frame);
    }

    /// Whether dropping key `i` is bound to fail [`Keys::try_remove`]'s check, whatever its
    /// nudges do: a test of one point instead of the nudges and segments it would evaluate.
    /// Linear keys only. The check passes only if both neighbours end within `tolerance` of
    /// their samples, so neither moves by more than `tolerance` plus its present deviation
    /// (`moved`). Moving the ends of a line by at most `moved` each moves any point of it by
    /// at most `moved`. On a slerp arc of angle `θ` (on the unit sphere of quaternions, half
    /// the rotation), the point at `u` moves by at most `sin(uθ) / sin θ` times its end's
    /// move, and `sin((1 - u)θ) / sin θ` times its start's, whose sum is at most
    /// `1 / cos(θ / 2)`: under 1.1 while the arc stays under `π/4 + 0.05` (a quarter turn
    /// between the keys, and `moved` at most 0.05 rad). So the dropped key's own sample,
    /// inside the merged segment, ends within `tolerance` only if it is now within
    /// `tolerance + 1.1 * moved` (`moved` for vectors). The test allows 1% more, and a margin
    /// for rounding (2e-6 rad, about eight times the largest difference between this slerp
    /// in `f32` and the exact one found on 500,000 random arcs).
    fn removal_cannot_hold(&self, i: usize, tolerance: f32) -> bool {
        if self.interpolation != Interpolation::Linear || i == 0 || i + 1 >= self.frames.len() {
            return false;
        }
        let rot = self.is_rotation;
        let [p, r, n] = [i - 1, i, i + 1].map(|k| self.frames[k] as usize);
        let deviation = |f: usize| distance(rot, self.raw[f], self.values[f]);
        let moved = tolerance + deviation(p).max(deviation(n));
        let (spread, rounding) = if rot {
            (1.1, 2e-6)
        } else {
            let size = self.raw[r].length() + self.values[p].length() + self.values[n].length();
            (1.0, 2e-6 * size)
        };
        if rot && (moved > 0.05 || distance(rot, self.values[p], self.values[n]) > FRAC_PI_2) {
            return false;
        }
        let reach = 1.01 * (tolerance + spread * moved) + rounding;
        let ends = [(p, p), (p, p), (n, n), (n, n)].map(|(f, v)| (f as f32, self.values[v]));
        let merged = Segment::new(Interpolation::Linear, rot, &ends);
        distance(rot, self.raw[r], merged.eval(r as f32)) > reach
    }
}

/// Each segment's whole error ([`segment_error_until`] without a limit) for the keys as they
/// are, where measured (`None` where not, or changed since).
struct KnownErrors(Vec<Option<f32>>);

/// [`Keys::local_error`] around two neighbouring keys, each on its own.
struct Around {
    first: f32,
    second: f32,
}

impl Around {
    /// `local_error(k, k + 1)`.
    fn both(&self) -> f32 {
        self.first.max(self.second)
    }

    /// `local_error(k, k)`.
    fn first(&self) -> f32 {
        self.first
    }

    /// `local_error(k + 1, k + 1)`.
    fn second(&self) -> f32 {
        self.second
    }
}

/// One prediction segment of keys `start..end`, with codes up to `max`.
#[derive(Clone, Copy)]
struct Squeeze {
    start: usize,
    end: usize,
    max: u64,
    order: u8,
}

impl Squeeze {
    fn predict(&self, codes: &[Codes], frames: &[u32], i: usize, c: usize) -> i64 {
        predict(codes, frames, self.start, i, c, self.max, self.order)
    }

    /// Residual width of component `c`.
    fn width(&self, codes: &[Codes], frames: &[u32], c: usize) -> u32 {
        (self.start + 1..self.end)
            .map(|i| {
                width_of(zigzag(
                    codes[i][c] as i64 - self.predict(codes, frames, i, c),
                ))
            })
            .max()
            .unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::super::curve::Curve;
    use super::super::fit::fit;
    use super::super::predict::value_bits;
    use super::*;

    /// A slow wave with deterministic jitter, like noisy capture.
    fn noisy(n: usize) -> Vec<Vec4> {
        (0..n)
            .map(|f| {
                let x = f as f32;
                let jitter = ((f * 7919 % 101) as f32 / 101.0 - 0.5) * 2e-3;
                Vec4::new((x * 0.05).sin() + jitter, (x * 0.02).cos(), 0.01 * x, 0.0)
            })
            .collect()
    }

    /// Every sample's code and the value it decodes to.
    fn quantized(raw: &[Vec4], format: Format, range: Range) -> (Vec<Codes>, Vec<Vec4>) {
        let codes: Vec<Codes> = raw.iter().map(|v| encode(format, &range, *v)).collect();
        let values = codes.iter().map(|c| decode(format, &range, *c)).collect();
        (codes, values)
    }

    /// Tracks of linear keys on every frame: smooth rotations or vectors at several speeds,
    /// with jitter, at quantization widths whose rounding is near the tolerances tested.
    fn jittered_tracks() -> impl Iterator<Item = (bool, Vec<Vec4>, Format)> {
        (0..48).map(|case| {
            let is_rotation = case % 2 == 0;
            let speed = 0.03 * (1 + case % 5) as f32;
            let jitter = [0.0, 1e-4, 1e-3, 1e-2][case % 4];
            let noise = |f: usize, c: usize| {
                ((f * 7919 + c * 104_729 + case * 31) % 1009) as f32 / 1009.0 - 0.5
            };
            let raw = (0..24)
                .map(|f| {
                    let x = f as f32 * speed;
                    let v = |c: usize, base: f32| base + jitter * noise(f, c);
                    if is_rotation {
                        let q = glam::Quat::from_euler(
                            glam::EulerRot::YXZ,
                            v(0, x.sin()),
                            v(1, 0.5 * x),
                            v(2, 0.3 * x.cos()),
                        );
                        Vec4::from(q)
                    } else {
                        Vec4::new(v(0, 40.0 + 3.0 * x.sin()), v(1, x), v(2, -0.2 * x * x), 0.0)
                    }
                })
                .collect();
            let format = if is_rotation {
                Format::SmallestThree48
            } else {
                Format::RangedVector {
                    bits: 10 + (case % 7) as u8 * 2,
                }
            };
            (is_rotation, raw, format)
        })
    }

    /// The range a track is quantized in: none for rotations (smallest three).
    fn track_range(is_rotation: bool, raw: &[Vec4]) -> Range {
        if is_rotation {
            Range::default()
        } else {
            Range::of(raw.iter().map(|v| v.truncate().to_array()))
        }
    }

    #[test]
    fn a_removal_ruled_out_is_one_that_fails() {
        let (mut ruled_out, mut removed, mut failed) = (0, 0, 0);
        for (case, (is_rotation, raw, format)) in jittered_tracks().enumerate() {
            let mids: Vec<Vec4> = raw
                .windows(2)
                .map(|w| Curve::new(Interpolation::Linear, is_rotation, vec![0, 1], w.to_vec()))
                .map(|c| c.sample(0.5))
                .collect();
            let range = track_range(is_rotation, &raw);
            let (codes, values) = quantized(&raw, format, range);
            let target = Target {
                raw: &raw,
                mids: Some(&mids),
                key_values: &values,
                is_rotation,
            };
            let frames: Vec<u32> = (0..raw.len() as u32).collect();
            let fit = Fit {
                frames: frames.clone(),
                insert_order: frames.clone(),
            };
            let mut keys = Keys::new(&target, Interpolation::Linear, &fit, &codes, format, range);
            if case % 3 == 0 {
                // Nudged keys, off their samples, as refinement removes from.
                for i in 0..frames.len() {
                    keys.nudge(i);
                }
            }
            for tolerance in (0..18).map(|e| 1e-6 * 2f32.powi(e)) {
                for i in 1..frames.len() - 1 {
                    let mut trial = keys.clone();
                    trial.remove_if_held(i, tolerance);
                    let dropped = trial.frames.len() < frames.len();
                    if keys.removal_cannot_hold(i, tolerance) {
                        assert!(!dropped, "case {case}, key {i}, tolerance {tolerance}");
                        ruled_out += 1;
                    } else if dropped {
                        removed += 1;
                    } else {
                        failed += 1;
                    }
                }
            }
        }
        // Both outcomes occur, and the test rules out most failures without nudging.
        assert!(removed > 500, "{removed} removed");
        assert!(
            ruled_out > 5 * failed,
            "{ruled_out} ruled out, {failed} failed anyway"
        );
    }

    #[test]
    fn nudging_with_known_segment_errors_nudges_like_measuring_each_key_afresh() {
        let (mut kept, mut tried) = (0, 0);
        for (case, (is_rotation, raw, format)) in jittered_tracks().enumerate() {
            let mids: Vec<Vec4> = raw.windows(2).map(|w| (w[0] + w[1]) * 0.5).collect();
            let range = track_range(is_rotation, &raw);
            let (codes, values) = quantized(&raw, format, range);
            let target = Target {
                raw: &raw,
                mids: Some(&mids),
                key_values: &values,
                is_rotation,
            };
            for interp in [Interpolation::Linear, Interpolation::CatmullRom] {
                // Every frame a key, and a sparse fit (segments of several points).
                let step = 1 + case as u32 % 4;
                let mut frames: Vec<u32> = (0..raw.len() as u32).step_by(step as usize).collect();
                if frames.last() != Some(&(raw.len() as u32 - 1)) {
                    frames.push(raw.len() as u32 - 1);
                }
                let fit = Fit {
                    insert_order: frames.clone(),
                    frames,
                };
                let nudged = nudge_keys(&target, interp, &fit, &codes, format, range);
                let mut afresh = Keys::new(&target, interp, &fit, &codes, format, range);
                for i in 0..fit.frames.len() {
                    kept += usize::from(afresh.nudge(i));
                    tried += 1;
                }
                let expected: KeyValues = fit
                    .frames
                    .iter()
                    .map(|&f| (afresh.values[f as usize], afresh.codes[f as usize]))
                    .collect();
                let bits = |k: &KeyValues| {
                    k.iter()
                        .map(|(v, c)| (v.to_array().map(f32::to_bits), *c))
                        .collect::<Vec<_>>()
                };
                assert_eq!(bits(&nudged), bits(&expected), "case {case}, {interp:?}");
            }
        }
        // Both outcomes occur, so the known errors are kept after a nudge and after none.
        assert!(
            kept > 50 && tried - kept > 50,
            "{kept} of {tried} nudges kept"
        );
    }

    #[test]
    fn refined_keys_hold_the_tolerance_in_fewer_bits() {
        let raw = noisy(200);
        let mids: Vec<Vec4> = raw.windows(2).map(|w| (w[0] + w[1]) * 0.5).collect();
        let format = Format::RangedVector { bits: 14 };
        let range = Range::of(raw.iter().map(|v| v.truncate().to_array()));
        let (codes, values) = quantized(&raw, format, range);
        let target = Target {
            raw: &raw,
            mids: Some(&mids),
            key_values: &values,
            is_rotation: false,
        };
        let tolerance = 2e-3;
        for interp in [Interpolation::Linear, Interpolation::CatmullRom] {
            let plain = fit(&target, interp, tolerance).unwrap();
            let plain_codes: Vec<Codes> = plain.frames.iter().map(|&f| codes[f as usize]).collect();
            let (refined, kept, kept_values) =
                refine(&target, interp, tolerance, &plain, &codes, format, range);
            assert!(refined.frames.len() <= plain.frames.len());
            assert_eq!(refined.insert_order.len(), refined.frames.len());
            let bits = |frames: &[u32], c: &[Codes]| value_bits(format, &range, c, frames);
            assert!(
                bits(&refined.frames, &kept) < bits(&plain.frames, &plain_codes),
                "{interp:?}"
            );
            let curve = Curve::new(interp, false, refined.frames.clone(), kept_values);
            for (f, r) in raw.iter().enumerate() {
                assert!((curve.sample(f as f32) - *r).length() <= tolerance);
            }
            for (f, m) in mids.iter().enumerate() {
                assert!((curve.sample(f as f32 + 0.5) - *m).length() <= tolerance);
            }
            for (&f, c) in refined.frames.iter().zip(&kept) {
                assert_eq!(curve.sample(f as f32), decode(format, &range, *c));
            }
        }
    }
}
