//! Decoded key curves: the contract between the fitter, the runtime decoder, the glTF
//! exporter and the GUI's curve plots. Every consumer evaluates a curve with the same math.
//!
//! * `Linear`: straight lines between keys; rotations by shortest-arc slerp (glTF LINEAR).
//! * `CatmullRom`: time-parameterized cubic Hermite whose tangent at a key is
//!   `(p[i+1] - p[i-1]) / (t[i+1] - t[i-1])` (one-sided at the ends). Rotations are
//!   interpolated component-wise after aligning every key to its predecessor's hemisphere,
//!   then normalized — exactly glTF CUBICSPLINE with those tangents.

use glam::{Quat, Vec4};
use serde::Serialize;

use crate::model::SlerpArc;

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
        let n = self.frames.len();
        let key = |k: usize| (self.frames[k] as f32, self.values[k]);
        let window = [
            key(i.saturating_sub(1)),
            key(i),
            key(i + 1),
            key((i + 2).min(n - 1)),
        ];
        eval_window(self.interpolation, self.is_rotation, &window, frame)
    }
}

/// Evaluates a segment from a window of four keys `(frame, value)`: the key before the
/// segment, its two ends, and the key after (repeat an end key where there is none, which
/// makes the Catmull-Rom tangent one-sided). The one function every decoder uses.
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
        let (f0, p0) = k[1];
        let (f1, p1) = k[2];
        let dt = f1 - f0;
        let shape = match interpolation {
            Interpolation::Linear if is_rotation => {
                Shape::Slerp(SlerpArc::new(Quat::from_vec4(p0), Quat::from_vec4(p1)))
            }
            Interpolation::Linear => Shape::Lerp(p0, p1),
            Interpolation::CatmullRom => Shape::Hermite(hermite_ends(is_rotation, k), is_rotation),
        };
        Self { f0, dt, shape }
    }

    /// The value at `frame`, clamped to the segment.
    #[inline]
    pub fn eval(&self, frame: f32) -> Vec4 {
        let u = if self.dt > 0.0 {
            ((frame - self.f0) / self.dt).clamp(0.0, 1.0)
        } else {
            0.0
        };
        match self.shape {
            Shape::Slerp(arc) => Vec4::from(arc.at(u)),
            Shape::Lerp(p0, p1) => p0.lerp(p1, u),
            Shape::Hermite([p0, m0, p1, m1], normalize) => {
                let v = hermite(p0, m0, p1, m1, u);
                if normalize {
                    v.normalize_or(Vec4::W)
                } else {
                    v
                }
            }
        }
    }
}

/// Catmull-Rom ends of the segment `k[1]..k[2]`: `[p0, m0 * dt, p1, m1 * dt]`, rotations
/// aligned to the hemisphere of their predecessor.
#[inline]
fn hermite_ends(is_rotation: bool, k: &[(f32, Vec4); 4]) -> [Vec4; 4] {
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

#[cfg(test)]
mod tests {
    use super::*;

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
