//! Evaluating one segment of a key curve: the one interpolation every skelpack decoder uses
//! (the encoder's verifier, the reference decoder, this runtime, the exporters).
//!
//! * `Linear`: straight lines between keys; rotations by shortest-arc slerp (glTF LINEAR).
//! * `CatmullRom`: time-parameterized cubic Hermite whose tangent at a key is
//!   `(p[i+1] - p[i-1]) / (t[i+1] - t[i-1])` (one-sided at the ends). Rotations are
//!   interpolated component-wise after aligning every key to its predecessor's hemisphere,
//!   then normalized — exactly glTF CUBICSPLINE with those tangents.

use glam::{Quat, Vec4};

use crate::sin::{sin, sin_inline};

/// How values between keys are produced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Interpolation {
    Linear,
    CatmullRom,
}

/// Evaluates a segment from a window of four keys `(frame, value)`: the key before the
/// segment, its two ends, and the key after (repeat an end key where there is none, which
/// makes the Catmull-Rom tangent one-sided).
#[inline]
pub fn eval_window(
    interpolation: Interpolation,
    is_rotation: bool,
    k: &[(f32, Vec4); 4],
    frame: f32,
) -> Vec4 {
    Segment::new(interpolation, is_rotation, k).eval(frame)
}

/// One segment prepared from its window of four keys (see [`eval_window`]), for evaluation
/// at many frames: the slerp arc or the Hermite tangents are computed once.
#[derive(Clone, Copy, Debug)]
pub struct Segment {
    f0: f32,
    dt: f32,
    shape: Shape,
}

#[derive(Clone, Copy, Debug)]
enum Shape {
    Slerp(SlerpArc),
    Lerp(Vec4, Vec4),
    /// End values and end tangents scaled by the segment length; normalized for rotations.
    Hermite([Vec4; 4], bool),
}

impl Segment {
    /// Prepares the segment between `k[1]` and `k[2]`.
    #[inline]
    pub fn new(interpolation: Interpolation, is_rotation: bool, k: &[(f32, Vec4); 4]) -> Self {
        Self::make::<false>(interpolation, is_rotation, k)
    }

    /// [`Segment::new`] with its sine inline ([`sin_inline`]), the same values: for loops
    /// compiled with `#[target_feature(enable = "fma")]` on CPUs that have it (elsewhere each
    /// multiply-add is a library call).
    #[inline(always)]
    pub fn new_inline(
        interpolation: Interpolation,
        is_rotation: bool,
        k: &[(f32, Vec4); 4],
    ) -> Self {
        Self::make::<true>(interpolation, is_rotation, k)
    }

    #[inline(always)]
    fn make<const INLINE: bool>(
        interpolation: Interpolation,
        is_rotation: bool,
        k: &[(f32, Vec4); 4],
    ) -> Self {
        let (f0, p0) = k[1];
        let (f1, p1) = k[2];
        let dt = f1 - f0;
        let shape = match interpolation {
            Interpolation::Linear if is_rotation => {
                let (a, b) = (Quat::from_vec4(p0), Quat::from_vec4(p1));
                Shape::Slerp(if INLINE {
                    SlerpArc::new_inline(a, b)
                } else {
                    SlerpArc::new(a, b)
                })
            }
            Interpolation::Linear => Shape::Lerp(p0, p1),
            Interpolation::CatmullRom => Shape::Hermite(hermite_ends(is_rotation, k), is_rotation),
        };
        Self { f0, dt, shape }
    }

    /// The value at `frame`, clamped to the segment.
    #[inline]
    pub fn eval(&self, frame: f32) -> Vec4 {
        self.value::<false>(frame)
    }

    /// [`Segment::eval`] with its sines inline ([`sin_inline`]), the same values: for loops
    /// compiled with `#[target_feature(enable = "fma")]`, as [`Segment::new_inline`].
    #[inline(always)]
    pub fn eval_inline(&self, frame: f32) -> Vec4 {
        self.value::<true>(frame)
    }

    #[inline(always)]
    fn value<const INLINE: bool>(&self, frame: f32) -> Vec4 {
        let u = segment_u(self.f0, self.dt, frame);
        match self.shape {
            Shape::Slerp(arc) if INLINE => Vec4::from(arc.at_inline(u)),
            Shape::Slerp(arc) => Vec4::from(arc.at(u)),
            Shape::Lerp(p0, p1) => p0.lerp(p1, u),
            Shape::Hermite(ends, normalize) => eval_hermite(&ends, normalize, u),
        }
    }
}

/// The fraction `u` of a segment starting at frame `f0` and `dt` frames long, clamped to
/// `[0, 1]` (0 for an empty segment).
#[inline(always)]
pub fn segment_u(f0: f32, dt: f32, frame: f32) -> f32 {
    if dt > 0.0 {
        ((frame - f0) / dt).clamp(0.0, 1.0)
    } else {
        0.0
    }
}

/// A Catmull-Rom segment from its ends ([`hermite_ends`]) at fraction `u`; rotations
/// (`normalize`) normalized.
#[inline(always)]
pub fn eval_hermite(ends: &[Vec4; 4], normalize: bool, u: f32) -> Vec4 {
    let [p0, m0, p1, m1] = *ends;
    let v = hermite(p0, m0, p1, m1, u);
    if normalize {
        v.normalize_or(Vec4::W)
    } else {
        v
    }
}

/// Catmull-Rom ends of the segment `k[1]..k[2]`: `[p0, m0 * dt, p1, m1 * dt]`, rotations
/// aligned to the hemisphere of their predecessor.
#[inline]
pub fn hermite_ends(is_rotation: bool, k: &[(f32, Vec4); 4]) -> [Vec4; 4] {
    let (f0, p0) = k[1];
    let (f1, p1) = k[2];
    let dt = f1 - f0;
    let align = |prev: Vec4, x: Vec4| {
        if is_rotation && prev.dot(x) < 0.0 {
            -x
        } else {
            x
        }
    };
    let p1 = align(p0, p1);
    let (fa, a) = (k[0].0, align(p0, k[0].1));
    let (fb, b) = (k[3].0, align(p1, k[3].1));
    // Tangents (per frame): central where a neighbour exists, one-sided otherwise.
    let m0 = if fa < f0 {
        (p1 - a) / (f1 - fa)
    } else {
        (p1 - p0) / dt
    };
    let m1 = if fb > f1 {
        (b - p0) / (fb - f0)
    } else {
        (p1 - p0) / dt
    };
    [p0, m0 * dt, p1, m1 * dt]
}

/// Cubic Hermite basis (glTF CUBICSPLINE).
#[inline]
pub fn hermite(p0: Vec4, m0: Vec4, p1: Vec4, m1: Vec4, u: f32) -> Vec4 {
    let (u2, u3) = (u * u, u * u * u);
    p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
        + m0 * (u3 - 2.0 * u2 + u)
        + p1 * (-2.0 * u3 + 3.0 * u2)
        + m1 * (u3 - u2)
}

/// Flips quaternions so each lies in the hemisphere of its predecessor.
pub fn align_hemispheres(values: &mut [Vec4]) {
    for i in 1..values.len() {
        if values[i].dot(values[i - 1]) < 0.0 {
            values[i] = -values[i];
        }
    }
}

/// The shorter arc between two rotations, prepared for evaluation at many `u`: the angle
/// and its sine are computed once.
#[derive(Clone, Copy, Debug)]
pub struct SlerpArc {
    a: Quat,
    b: Quat,
    theta: f32,
    sin_theta: f32,
}

impl SlerpArc {
    /// The arc from `a` to `b` or `-b`, whichever is closer.
    #[inline]
    pub fn new(a: Quat, b: Quat) -> Self {
        Self::make::<false>(a, b)
    }

    /// [`SlerpArc::new`] with its sine inline ([`sin_inline`]: for code compiled with FMA).
    #[inline(always)]
    pub(crate) fn new_inline(a: Quat, b: Quat) -> Self {
        Self::make::<true>(a, b)
    }

    #[inline(always)]
    fn make<const INLINE: bool>(a: Quat, b: Quat) -> Self {
        let mut d = a.dot(b);
        let b = if d < 0.0 {
            d = -d;
            -b
        } else {
            b
        };
        let d = d.min(1.0);
        let theta = d.acos();
        Self {
            a,
            b,
            theta,
            sin_theta: if INLINE {
                sin_inline(theta)
            } else {
                sin(theta)
            },
        }
    }

    /// The rotation at fraction `u` of the arc.
    #[inline]
    pub fn at(&self, u: f32) -> Quat {
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::has_fma() {
            // SAFETY: the CPU has FMA.
            return unsafe { self.at_fma(u) };
        }
        self.at_inline(u)
    }

    /// [`SlerpArc::at`] with FMA instructions (for [`sin_inline`]).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    fn at_fma(&self, u: f32) -> Quat {
        self.at_inline(u)
    }

    /// [`SlerpArc::at`] with its sines inline ([`sin_inline`]: for code compiled with FMA).
    #[inline(always)]
    pub(crate) fn at_inline(&self, u: f32) -> Quat {
        slerp(self.a, self.b, self.theta, self.sin_theta, u)
    }

    /// The arc's ends, angle and the angle's sine (for layouts that store them their way).
    #[inline]
    pub fn parts(&self) -> (Quat, Quat, f32, f32) {
        (self.a, self.b, self.theta, self.sin_theta)
    }
}

/// The rotation at fraction `u` of the arc from `a` to `b` of angle `theta`
/// (`sin_theta` its sine), as [`SlerpArc::at`] gives it. Its sines are [`sin_inline`]: call
/// it from code compiled with the `fma` target feature where the CPU has it.
#[inline(always)]
pub fn slerp(a: Quat, b: Quat, theta: f32, sin_theta: f32, u: f32) -> Quat {
    slerp_mix(a, b, theta, sin_theta, u).normalize()
}

/// [`slerp`] before its normalization: `a * w0 + b * w1` with the slerp's weights at `u`
/// (for the lane kernel, which normalizes several tracks' mixes at once:
/// [`crate::lanes::normalize_rotations`]).
#[inline(always)]
pub fn slerp_mix(a: Quat, b: Quat, theta: f32, sin_theta: f32, u: f32) -> Quat {
    let (w0, w1) = if sin_theta < 1e-6 {
        (1.0 - u, u)
    } else {
        (
            sin_inline((1.0 - u) * theta) / sin_theta,
            sin_inline(u * theta) / sin_theta,
        )
    };
    a * w0 + b * w1
}
