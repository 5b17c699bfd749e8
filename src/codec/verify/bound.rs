//! A proven bound on how far one local change moves the markers below it, so that the
//! verifier can accept a position without composing it ([`super::Verifier::accept`]).
//!
//! Joint `j` below (or at) the changed joint `k` is posed at `B_j = P · M_k · C_j`: `P` the
//! object transform of `k`'s parent, `M_k` `k`'s local matrix, `C_j = M_{c₁} ⋯ M_j` the
//! local matrices from `k`'s child down to `j` (the identity for `j = k`). With `M_k`
//! replaced by `M'_k`, a marker `x` of `j` (in `j`'s space, `|x| = d_j`) moves by
//!
//! ```text
//! B'_j x − B_j x = lin(P) · (M'_k − M_k)(C_j x)
//!               = lin(P) · ((lin M'_k − lin M_k) y + (t'_k − t_k)),   y = C_j x
//! ```
//!
//! so `|B'_j x − B_j x| ≤ G_k (‖lin M'_k − lin M_k‖₂ · |y| + |t'_k − t_k|)` with
//! `G_k = Π g_a` over `k`'s ancestors, `g_a` a bound on the spectral norm of `a`'s linear
//! part at every position ([`LocalBounds`]), and `|y| ≤ T_j + H_j d_j` ([`Levers`]: `T`
//! sums each descendant's largest translation, `H` multiplies their gains). The marker error
//! of `j` is a largest distance to fixed reference markers, so by the triangle inequality it
//! grows by at most this much: a position where every joint's current error plus its bound
//! stays within the joint's tolerance passes without being composed.
//!
//! A local rotation decodes to `DMat3::from_quat(q)`, which for `q = λ q̂` (`q̂` unit) is
//! `λ² R(q̂) + (1 − λ²) I` (every entry of glam's formula is `1` or a product of two
//! components). So `‖lin M‖₂ ≤ (λ² + |1 − λ²|) · max|s|` and, with the scale unchanged,
//! `‖lin M' − lin M‖₂ ≤ (λ'² ‖R(q̂') − R(q̂)‖₂ + 2|λ'² − λ²|) · max|s|`, where
//! `‖R(q̂') − R(q̂)‖₂ = 2 sin φ ≤ 4 sin(φ/2) = 2|q̂' − σ q̂|` (φ the angle between the two
//! quaternions as 4-vectors, `σ = ±1` the sign of their dot product). The chord is computed
//! without cancellation, so small changes get tight bounds.
//!
//! Every quantity is computed in `f64` from `f32` inputs; the composition the verifier would
//! otherwise run rounds too. Both are covered by a margin of 10⁻⁹ of the pose's extent (its
//! largest object-space coordinate, plus one), far above the ~10⁻¹⁴ relative rounding of a
//! chain of `f64` products.

use glam::{Quat, Vec3};

use crate::model::Transform;

/// Bounds on one joint's decoded local transforms over every position.
#[derive(Clone, Copy, Debug, Default)]
pub struct LocalBounds {
    /// The largest translation length.
    pub reach: f64,
    /// The largest spectral norm of the linear part (a bound on it).
    pub gain: f64,
}

impl LocalBounds {
    /// The bounds over `locals`.
    pub fn over<'t>(locals: impl Iterator<Item = &'t Transform>) -> Self {
        locals.fold(Self::default(), |b, t| Self {
            reach: b.reach.max(t.translation.as_dvec3().length()),
            gain: b.gain.max(linear_gain(t)),
        })
    }
}

/// A bound on the spectral norm of `t.to_daffine()`'s linear part.
fn linear_gain(t: &Transform) -> f64 {
    let l2 = glam::Vec4::from(t.rotation).as_dvec4().length_squared();
    (l2 + (1.0 - l2).abs()) * largest_scale(t.scale) * (1.0 + 1e-12)
}

/// The largest absolute scale component.
fn largest_scale(s: Vec3) -> f64 {
    s.abs().max_element() as f64
}

/// A bound on `‖lin M' − lin M‖₂` for two local transforms differing in rotation only.
pub fn rotation_change(old: Quat, new: Quat, scale: Vec3) -> f64 {
    let (q, r) = (
        glam::Vec4::from(old).as_dvec4(),
        glam::Vec4::from(new).as_dvec4(),
    );
    let (l2, m2) = (q.length_squared(), r.length_squared());
    let (qh, rh) = (q / l2.sqrt(), r / m2.sqrt());
    let chord = if qh.dot(rh) >= 0.0 {
        (rh - qh).length()
    } else {
        (rh + qh).length()
    };
    (m2 * 2.0 * chord + 2.0 * (m2 - l2).abs()) * largest_scale(scale) * (1.0 + 1e-12)
}

/// `|t' − t|` for two local transforms differing in translation only.
pub fn translation_change(old: Vec3, new: Vec3) -> f64 {
    (new.as_dvec3() - old.as_dvec3()).length() * (1.0 + 1e-12)
}

/// Per member of a changed joint's subtree (parents first, as the verifier lists it): the
/// bound `T_j + H_j d_j` on `|C_j x|`, the lever of its markers about the changed joint.
pub fn levers(
    subtree: &[(usize, usize)],
    bounds: &[LocalBounds],
    marker: impl Fn(usize) -> f64,
    out: &mut Vec<f64>,
) {
    out.clear();
    // (T, H) per slot: the changed joint itself is (0, 1).
    let mut chain: Vec<(f64, f64)> = Vec::with_capacity(subtree.len());
    for (i, &(j, parent_slot)) in subtree.iter().enumerate() {
        let (t, h) = if i == 0 {
            (0.0, 1.0)
        } else {
            let (pt, ph) = chain[parent_slot];
            (pt + ph * bounds[j].reach, ph * bounds[j].gain)
        };
        chain.push((t, h));
        out.push((t + h * marker(j)) * (1.0 + 1e-12));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::{DAffine3, DVec3};

    /// The largest marker displacement between two local matrices, at lever `y`.
    fn moved(old: &Transform, new: &Transform, y: DVec3) -> f64 {
        (new.to_daffine().transform_point3(y) - old.to_daffine().transform_point3(y)).length()
    }

    #[test]
    fn a_rotation_change_bounds_the_displacement_and_is_tight_for_small_angles() {
        let scale = Vec3::new(1.0, 2.0, 0.5);
        let mut worst_ratio = 0.0f64;
        for i in 0..200 {
            let axis = Vec3::new((i as f32).sin(), (i as f32 * 0.7).cos(), 0.3).normalize();
            let angle = 1e-6 * (1.0 + i as f32) * (i as f32 * 0.1).exp().min(1e5);
            let base = Quat::from_rotation_y(0.1 * i as f32);
            let old = Transform::new(Vec3::ZERO, base, scale);
            // Not quite unit, as decoded quaternions are not.
            let turned = Quat::from_vec4((Quat::from_axis_angle(axis, angle) * base).into())
                * (1.0 + 3e-7 * ((i % 5) as f32 - 2.0));
            let new = Transform::new(Vec3::ZERO, turned, scale);
            let bound = rotation_change(old.rotation, new.rotation, scale);
            for y in [DVec3::X, DVec3::Y, DVec3::Z, DVec3::new(0.6, -0.8, 0.0)] {
                let d = moved(&old, &new, y);
                assert!(d <= bound * y.length(), "{i}: {d} > {bound}");
                worst_ratio = worst_ratio.max(d / (bound * y.length()));
            }
        }
        // Tight: some direction moves by most of the bound.
        assert!(worst_ratio > 0.4, "{worst_ratio}");
    }

    #[test]
    fn a_gain_bounds_the_linear_part() {
        let t = Transform::new(
            Vec3::new(1.0, 2.0, 3.0),
            Quat::from_vec4(Quat::from_rotation_x(0.7).into()) * 1.000_001,
            Vec3::new(0.5, -3.0, 1.0),
        );
        let b = LocalBounds::over([t].iter());
        let m: DAffine3 = t.to_daffine();
        for v in [DVec3::X, DVec3::Y, DVec3::Z, DVec3::ONE.normalize()] {
            assert!((m.matrix3 * v).length() <= b.gain);
        }
        assert!((b.gain - 3.0).abs() < 1e-4, "{}", b.gain);
        assert!((b.reach - 14f64.sqrt()).abs() < 1e-6);
    }

    #[test]
    fn a_lever_sums_the_chain_below() {
        // 0 changed, 1 below it, 2 below 1: reaches 0, 2, 3; gains 1, 2, 1.
        let bounds = [
            LocalBounds {
                reach: 0.0,
                gain: 1.0,
            },
            LocalBounds {
                reach: 2.0,
                gain: 2.0,
            },
            LocalBounds {
                reach: 3.0,
                gain: 1.0,
            },
        ];
        let mut out = Vec::new();
        levers(&[(0, 0), (1, 0), (2, 1)], &bounds, |_| 0.5, &mut out);
        // j = 0: 0.5; j = 1: 2 + 2·0.5 = 3; j = 2: 2 + 2·(3 + 1·0.5) = 9.
        for (got, want) in out.iter().zip([0.5, 3.0, 9.0]) {
            assert!((got - want).abs() < 1e-9, "{got} {want}");
        }
    }
}
