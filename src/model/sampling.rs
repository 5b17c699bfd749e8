//! Spec-exact evaluation of glTF animation samplers (STEP, LINEAR with slerp for rotations,
//! CUBICSPLINE Hermite), clamped outside the key range — the semantics `animeval.py` uses.

use glam::{Quat, Vec4};

use super::slerp_shortest;

/// glTF sampler interpolation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    Step,
    Linear,
    CubicSpline,
}

/// One sampler's keys; vectors use `x, y, z` of a `Vec4`, rotations all four (x, y, z, w).
/// For CUBICSPLINE, `values` holds `[in-tangent, value, out-tangent]` per key.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyframes {
    pub times: Vec<f32>,
    pub values: Vec<Vec4>,
    pub interpolation: Interpolation,
    pub is_rotation: bool,
}

impl Keyframes {
    /// Checks counts, ordering and finiteness.
    pub fn validate(&self) -> Result<(), String> {
        let per_key = if self.interpolation == Interpolation::CubicSpline {
            3
        } else {
            1
        };
        if self.times.is_empty() {
            return Err("sampler has no keys".into());
        }
        if self.values.len() != self.times.len() * per_key {
            return Err(format!(
                "sampler has {} keys but {} output values (expected {})",
                self.times.len(),
                self.values.len(),
                self.times.len() * per_key
            ));
        }
        if let Some(i) = self.times.iter().position(|t| !t.is_finite()) {
            return Err(format!("key time {i} is not finite"));
        }
        if let Some(i) = self.times.windows(2).position(|w| w[1] <= w[0]) {
            return Err(format!(
                "key times are not strictly increasing at key {} ({} after {})",
                i + 1,
                self.times[i + 1],
                self.times[i]
            ));
        }
        if let Some(i) = self.values.iter().position(|v| !v.is_finite()) {
            return Err(format!("output value {i} is not finite"));
        }
        Ok(())
    }

    /// Evaluates at time `t` (seconds).
    pub fn sample(&self, t: f32) -> Vec4 {
        let n = self.times.len();
        let cubic = self.interpolation == Interpolation::CubicSpline;
        let value = |k: usize| {
            if cubic {
                self.values[3 * k + 1]
            } else {
                self.values[k]
            }
        };
        let out = if n == 1 {
            value(0)
        } else {
            let tc = t.clamp(self.times[0], self.times[n - 1]);
            // Last key whose time is <= tc (numpy searchsorted side='right' minus one).
            let j = self
                .times
                .partition_point(|&k| k <= tc)
                .saturating_sub(1)
                .min(n - 1);
            let i = j.min(n - 2);
            let dt = self.times[i + 1] - self.times[i];
            let u = if dt > 0.0 {
                ((tc - self.times[i]) / dt).clamp(0.0, 1.0)
            } else {
                0.0
            };
            match self.interpolation {
                Interpolation::Step => value(j),
                Interpolation::Linear if self.is_rotation => {
                    let a = Quat::from_vec4(value(i)).normalize();
                    let b = Quat::from_vec4(value(i + 1)).normalize();
                    Vec4::from(slerp_shortest(a, b, u))
                }
                Interpolation::Linear => value(i).lerp(value(i + 1), u),
                Interpolation::CubicSpline => {
                    let (u2, u3) = (u * u, u * u * u);
                    let p0 = self.values[3 * i + 1];
                    let m0 = self.values[3 * i + 2] * dt;
                    let p1 = self.values[3 * (i + 1) + 1];
                    let m1 = self.values[3 * (i + 1)] * dt;
                    p0 * (2.0 * u3 - 3.0 * u2 + 1.0)
                        + m0 * (u3 - 2.0 * u2 + u)
                        + p1 * (-2.0 * u3 + 3.0 * u2)
                        + m1 * (u3 - u2)
                }
            }
        };
        if self.is_rotation {
            let q = Quat::from_vec4(out);
            let len = q.length();
            if len > 0.0 {
                Vec4::from(q / len)
            } else {
                Vec4::W
            }
        } else {
            out
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(interpolation: Interpolation, values: Vec<Vec4>) -> Keyframes {
        Keyframes {
            times: vec![0.0, 1.0, 2.0],
            values,
            interpolation,
            is_rotation: false,
        }
    }

    #[test]
    fn step_holds_until_next_key() {
        let k = keys(
            Interpolation::Step,
            vec![Vec4::ZERO, Vec4::ONE, Vec4::splat(2.0)],
        );
        assert_eq!(k.sample(0.99), Vec4::ZERO);
        assert_eq!(k.sample(1.0), Vec4::ONE);
        assert_eq!(k.sample(5.0), Vec4::splat(2.0));
    }

    #[test]
    fn linear_clamps_and_interpolates() {
        let k = keys(
            Interpolation::Linear,
            vec![Vec4::ZERO, Vec4::ONE, Vec4::ZERO],
        );
        assert_eq!(k.sample(-1.0), Vec4::ZERO);
        assert!((k.sample(0.25) - Vec4::splat(0.25)).length() < 1e-6);
        assert!((k.sample(1.5) - Vec4::splat(0.5)).length() < 1e-6);
    }

    #[test]
    fn cubic_hits_values_and_uses_tangents() {
        // value 0 -> 1 with zero tangents: smoothstep, 0.5 at the midpoint.
        let v = vec![
            Vec4::ZERO,
            Vec4::ZERO,
            Vec4::ZERO,
            Vec4::ZERO,
            Vec4::ONE,
            Vec4::ZERO,
            Vec4::ZERO,
            Vec4::ONE,
            Vec4::ZERO,
        ];
        let k = keys(Interpolation::CubicSpline, v);
        assert_eq!(k.sample(1.0), Vec4::ONE);
        assert!((k.sample(0.5) - Vec4::splat(0.5)).length() < 1e-6);
        assert!((k.sample(0.25).x - (3.0 * 0.0625 - 2.0 * 0.015625)).abs() < 1e-6);
    }
}
