//! Decoded key curves: the contract between the fitter, the runtime decoder, the glTF
//! exporter and the GUI's curve plots. Every consumer evaluates a curve with the same math.
//!
//! * `Linear`: straight lines between keys; rotations by shortest-arc slerp (glTF LINEAR).
//! * `CatmullRom`: time-parameterized cubic Hermite whose tangent at a key is
//!   `(p[i+1] - p[i-1]) / (t[i+1] - t[i-1])` (one-sided at the ends). Rotations are
//!   interpolated component-wise after aligning every key to its predecessor's hemisphere,
//!   then normalized — exactly glTF CUBICSPLINE with those tangents.

use glam::Vec4;
use serde::Serialize;

use skelpack_runtime::curve as rt;
pub use skelpack_runtime::curve::{align_hemispheres, hermite};

/// How values between keys are produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Interpolation {
    Linear,
    CatmullRom,
}

/// Keys of one track at integer frame positions, values as `Vec4` (vectors use x, y, z).
#[derive(Clone, Debug, PartialEq)]
pub struct Curve {
    pub interpolation: Interpolation,
    pub is_rotation: bool,
    /// Strictly increasing frame indices; the first is 0 and the last is the clip's last frame.
    pub frames: Vec<u32>,
    /// One value per key; rotations are unit quaternions aligned to their predecessor's
    /// hemisphere (`q[i]·q[i-1] >= 0`).
    pub values: Vec<Vec4>,
}

impl Curve {
    /// A curve through `frames` / `values`, aligning rotation hemispheres.
    pub fn new(
        interpolation: Interpolation,
        is_rotation: bool,
        frames: Vec<u32>,
        mut values: Vec<Vec4>,
    ) -> Self {
        if is_rotation {
            align_hemispheres(&mut values);
        }
        Self {
            interpolation,
            is_rotation,
            frames,
            values,
        }
    }

    pub fn len(&self) -> usize {
        self.frames.len()
    }

    pub fn is_empty(&self) -> bool {
        self.frames.is_empty()
    }

    /// The index of the segment containing `frame` (the last key at or before it).
    #[inline]
    pub fn segment(&self, frame: f32) -> usize {
        let n = self.frames.len();
        if n < 2 {
            return 0;
        }
        let i = self.frames.partition_point(|&k| (k as f32) <= frame);
        i.saturating_sub(1).min(n - 2)
    }

    /// Tangent at key `i` in value units per frame.
    #[inline]
    pub fn tangent(&self, i: usize) -> Vec4 {
        let n = self.frames.len();
        if n < 2 {
            return Vec4::ZERO;
        }
        let (a, b) = if i == 0 {
            (0, 1)
        } else if i == n - 1 {
            (n - 2, n - 1)
        } else {
            (i - 1, i + 1)
        };
        (self.values[b] - self.values[a]) / (self.frames[b] as f32 - self.frames[a] as f32)
    }

    /// Evaluates at a fractional frame, clamped to the key range.
    #[inline]
    pub fn sample(&self, frame: f32) -> Vec4 {
        let n = self.frames.len();
        if n == 1 {
            return self.values[0];
        }
        let i = self.segment(frame);
        self.sample_segment(i, frame)
    }

    /// Evaluates inside segment `i` (keys `i` and `i + 1`).
    #[inline]
    pub fn sample_segment(&self, i: usize, frame: f32) -> Vec4 {
        eval_window(self.interpolation, self.is_rotation, &self.window(i), frame)
    }

    /// Segment `i`'s window of four keys (see [`eval_window`]). Always inline: a call per
    /// sample costs more than its four loads (LLVM kept it out of line in one build: +3.4 M
    /// instructions on 13_07 at `fast`).
    #[inline(always)]
    fn window(&self, i: usize) -> [(f32, Vec4); 4] {
        let n = self.frames.len();
        let key = |k: usize| (self.frames[k] as f32, self.values[k]);
        [
            key(i.saturating_sub(1)),
            key(i),
            key(i + 1),
            key((i + 2).min(n - 1)),
        ]
    }

    /// Appends to `out` the value at every sample `0..frames`, then at every midpoint
    /// `f + 0.5` (`frames - 1` of them): the values [`Curve::sample`] gives, in one walk
    /// over the segments. Key frames are whole, so a midpoint `f + 0.5` lies in the segment
    /// of sample `f`: each segment is prepared once ([`Segment`]) for both.
    pub fn sample_positions(&self, frames: usize, out: &mut Vec<Vec4>) {
        let n = self.frames.len();
        let mids = frames.saturating_sub(1);
        let start = out.len();
        if n == 1 {
            out.resize(start + frames + mids, self.values[0]);
            return;
        }
        out.resize(start + frames + mids, Vec4::ZERO);
        let (at_samples, at_mids) = out[start..].split_at_mut(frames);
        let mut i = 0;
        let mut segment = Segment::new(self.interpolation, self.is_rotation, &self.window(0));
        for (f, at_sample) in at_samples.iter_mut().enumerate() {
            let frame = f as f32;
            // Walk on to the segment `Curve::segment` finds: the one starting at the last
            // key at or before `frame`, at most the last segment.
            let mut next = i;
            while next + 2 < n && self.frames[next + 1] as f32 <= frame {
                next += 1;
            }
            if next != i {
                i = next;
                segment = Segment::new(self.interpolation, self.is_rotation, &self.window(i));
            }
            *at_sample = segment.eval(frame);
            if let Some(mid) = at_mids.get_mut(f) {
                *mid = segment.eval(frame + 0.5);
            }
        }
    }
}

/// Evaluates a segment from a window of four keys `(frame, value)`: the key before the
/// segment, its two ends, and the key after (repeat an end key where there is none, which
/// makes the Catmull-Rom tangent one-sided). The one function every decoder uses; it lives
/// in the runtime crate (`skelpack_runtime::curve`).
#[inline]
pub fn eval_window(
    interpolation: Interpolation,
    is_rotation: bool,
    k: &[(f32, Vec4); 4],
    frame: f32,
) -> Vec4 {
    rt::eval_window(interpolation.into(), is_rotation, k, frame)
}

/// One segment prepared from its window of four keys (see [`eval_window`]), for evaluation
/// at many frames: the slerp arc or the Hermite tangents are computed once.
#[derive(Clone, Copy, Debug)]
pub struct Segment(rt::Segment);

impl Segment {
    /// Prepares the segment between `k[1]` and `k[2]`.
    #[inline]
    pub fn new(interpolation: Interpolation, is_rotation: bool, k: &[(f32, Vec4); 4]) -> Self {
        Self(rt::Segment::new(interpolation.into(), is_rotation, k))
    }

    /// [`Segment::new`], with its sine inline when `INLINE` (the same values): for loops
    /// run through [`with_fma`].
    #[inline(always)]
    pub fn new_in<const INLINE: bool>(
        interpolation: Interpolation,
        is_rotation: bool,
        k: &[(f32, Vec4); 4],
    ) -> Self {
        let interpolation = interpolation.into();
        Self(if INLINE {
            rt::Segment::new_inline(interpolation, is_rotation, k)
        } else {
            rt::Segment::new(interpolation, is_rotation, k)
        })
    }

    /// The value at `frame`, clamped to the segment.
    #[inline]
    pub fn eval(&self, frame: f32) -> Vec4 {
        self.0.eval(frame)
    }

    /// [`Segment::eval`], with its sines inline when `INLINE` (the same values): for loops
    /// run through [`with_fma`].
    #[inline(always)]
    pub fn eval_in<const INLINE: bool>(&self, frame: f32) -> Vec4 {
        if INLINE {
            self.0.eval_inline(frame)
        } else {
            self.0.eval(frame)
        }
    }
}

/// `run(true)` compiled with FMA where the CPU has it, else `run(false)`: `run` evaluates
/// many points of curves, with [`Segment::new_in`] / [`Segment::eval_in`] taking their sines
/// inline when given `true`. Both give the same values; inline, a point costs no CPU check
/// and no call. `run` is inlined into the FMA copy: mark it, and every closure it hands the
/// per-point work to (such as `fit::visit_points`'), `#[inline(always)]` (a closure
/// compiled apart would call a software `fma` for the sine).
#[inline(always)]
pub fn with_fma<R>(run: impl FnOnce(bool) -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    if skelpack_runtime::cpu::has_fma() {
        #[target_feature(enable = "fma")]
        fn fused<R>(run: impl FnOnce(bool) -> R) -> R {
            run(true)
        }
        // SAFETY: the CPU has FMA.
        return unsafe { fused(run) };
    }
    run(false)
}

impl From<Interpolation> for rt::Interpolation {
    #[inline]
    fn from(i: Interpolation) -> Self {
        match i {
            Interpolation::Linear => Self::Linear,
            Interpolation::CatmullRom => Self::CatmullRom,
        }
    }
}

impl From<rt::Interpolation> for Interpolation {
    #[inline]
    fn from(i: rt::Interpolation) -> Self {
        match i {
            rt::Interpolation::Linear => Self::Linear,
            rt::Interpolation::CatmullRom => Self::CatmullRom,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn catmull_rom_passes_through_keys_and_is_exact_on_lines() {
        let frames = vec![0, 3, 4, 10];
        let values: Vec<Vec4> = frames
            .iter()
            .map(|&f| Vec4::splat(2.0 * f as f32 + 1.0))
            .collect();
        let c = Curve::new(Interpolation::CatmullRom, false, frames, values);
        for f in 0..=10 {
            let x = f as f32 + 0.25;
            let expect = 2.0 * x.min(10.0) + 1.0;
            assert!((c.sample(x).x - expect).abs() < 1e-4, "{x}");
        }
    }

    #[test]
    fn sampling_the_positions_gives_sample_bit_for_bit() {
        // Keys past the clip's last frame, and one short of it; a single key.
        for frames in [vec![0, 2, 3, 7, 12], vec![1, 4, 5], vec![3]] {
            let values: Vec<Vec4> = frames
                .iter()
                .map(|&f| {
                    Vec4::from(Quat::from_rotation_x(
                        0.2 * f as f32 + 0.02 * (f * f) as f32,
                    ))
                })
                .collect();
            for interpolation in [Interpolation::Linear, Interpolation::CatmullRom] {
                for is_rotation in [true, false] {
                    let c = Curve::new(interpolation, is_rotation, frames.clone(), values.clone());
                    for count in [0, 1, 2, 9, 12] {
                        let mut got = vec![Vec4::NAN];
                        c.sample_positions(count, &mut got);
                        let at = (0..count)
                            .map(|f| f as f32)
                            .chain((0..count.saturating_sub(1)).map(|f| f as f32 + 0.5));
                        let expect: Vec<[u32; 4]> = std::iter::once(Vec4::NAN)
                            .chain(at.map(|x| c.sample(x)))
                            .map(|v| v.to_array().map(f32::to_bits))
                            .collect();
                        let got: Vec<[u32; 4]> =
                            got.iter().map(|v| v.to_array().map(f32::to_bits)).collect();
                        assert_eq!(got, expect, "{frames:?} {interpolation:?} {count}");
                    }
                }
            }
        }
    }

    #[test]
    fn linear_rotation_uses_slerp() {
        let a = Quat::from_rotation_y(0.0);
        let b = Quat::from_rotation_y(1.0);
        let c = Curve::new(
            Interpolation::Linear,
            true,
            vec![0, 4],
            vec![Vec4::from(a), Vec4::from(b)],
        );
        let q = Quat::from_vec4(c.sample(1.0));
        assert!(q.angle_between(Quat::from_rotation_y(0.25)) < 1e-5);
    }
}
