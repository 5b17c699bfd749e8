//! A proven upper bound on clip b's error when started from clip a stopped anywhere, from
//! each clip's samples alone (not their product): a pair whose bound holds the tolerance
//! needs no enumeration of a's stops times b's points ([`after_every_stop`]).
//!
//! The argument (docs/EXPORT.md, "Switching clips in mid-clip"): joint j's object transform
//! is `P · L_k ⋯ L_j` for the original and `P' · L'_k ⋯ L'_j` for the export, where `k` is
//! the topmost joint of j's chain whose properties a's stop state sets and `P` the object
//! transform of k's parent (b's own pose from a clean start: nothing above k is set by a).
//! Telescoping, for a marker `x` in j's space,
//!
//! ```text
//! O x − E x = (P − P')·(L_k⋯L_j x) + lin(P')·Σ_i lin(L'_k⋯L'_{i−1})·(L_i − L'_i)·(L_{i+1}⋯L_j x)
//! ```
//!
//! and each factor is bounded by per-joint maxima over the clip that supplies the joint (a
//! for the joints it sets, b elsewhere), over its check points and the player's rules:
//! `|(L − L') v| ≤ ρ |v| + |t − t'|` with ρ ≥ the spectral norm of the linear parts'
//! difference, `|lin(M) v| ≤ g |v|`, and `|L_{i+1}⋯L_j x| ≤ τ_{i+1} + g_{i+1}(τ_{i+2} + ⋯ +
//! g_j |x|)` with τ the largest translation. A joint that mixes a's properties with b's
//! keyed ones is not covered (the pair is enumerated).

use glam::{DAffine3, DMat3};

use super::start_states::{AfterStops, Held, Sampled, after_every_stop};
use super::verify::PLAYER_GUARD;
use crate::metric::JointLimits;
use crate::model::Skeleton;

/// Per joint, the largest deviation between the original and the export (as played under
/// each rule) and the largest size of its transform.
#[derive(Clone, Copy, Debug, Default)]
struct Spread {
    /// Bound on the spectral norm of the linear parts' difference.
    rho: f64,
    /// Largest distance between the translations.
    dt: f64,
    /// Bound on the spectral norm of the linear part (any source).
    g: f64,
    /// Largest translation length (any source).
    tau: f64,
}

/// Frobenius norm of `m`.
fn frobenius(m: &DMat3) -> f64 {
    (m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()).sqrt()
}

/// `m` as `σ·(R + E)` with `R` a rotation (or a reflection): σ the root mean square of its
/// singular values, and a bound on `‖E‖_F`, `‖(m/σ)ᵀ(m/σ) − I‖_F` (a singular value `s`
/// is off 1 by at most `|s² − 1|`).
fn polar(m: &DMat3) -> (f64, DMat3, f64) {
    let sigma = (frobenius(m) / 3f64.sqrt()).max(1e-300);
    let u = *m * (1.0 / sigma);
    (sigma, u, frobenius(&(u.transpose() * u - DMat3::IDENTITY)))
}

impl Spread {
    /// Widens to cover the original `o` against the export `e`; false where one is a
    /// reflection and the other not (not covered).
    fn add(&mut self, o: &DAffine3, e: &DAffine3) -> bool {
        if o.matrix3.determinant() * e.matrix3.determinant() <= 0.0 {
            return false;
        }
        let ((so, uo, eo), (se, ue, ee)) = (polar(&o.matrix3), polar(&e.matrix3));
        // ‖σ_o(R_o + E_o) − σ_e(R_e + E_e)‖₂ ≤ σ_o‖R_o − R_e‖₂ + |σ_o − σ_e| + σ_o‖E_o‖ +
        // σ_e‖E_e‖, and for two rotations (or two reflections) ‖R_o − R_e‖₂ = ‖R_o −
        // R_e‖_F / √2 ≤ (‖u_o − u_e‖_F + ‖E_o‖_F + ‖E_e‖_F) / √2.
        let half = std::f64::consts::FRAC_1_SQRT_2;
        let rot = (frobenius(&(uo - ue)) + eo + ee) * half;
        let rho = so * rot + (so - se).abs() + so * eo + se * ee;
        self.rho = self.rho.max(rho);
        self.dt = self.dt.max((o.translation - e.translation).length());
        self.size(o);
        self.size(e);
        true
    }

    /// Widens the size bounds to cover `m`.
    fn size(&mut self, m: &DAffine3) {
        let (sigma, _, err) = polar(&m.matrix3);
        self.g = self.g.max(sigma * (1.0 + err));
        self.tau = self.tau.max(m.translation.length());
    }
}

/// The pairs (original, export under a rule) of one joint's local transform in the switched
/// pose, as [`after_every_stop`] builds it: `base` (b's own local transform, or the rest
/// pose where b keys nothing a's state does not set) with a's set properties `mask` written
/// over it. Linear part (rotation, scale) and translation are spread separately, each over
/// the clip that supplies it; a linear part mixing a's property with one of b's that varies
/// is not covered (`None`).
fn joint_spread(
    sa: &Sampled,
    sb: &Sampled,
    n: usize,
    j: usize,
    mask: [bool; 3],
    base: Option<&crate::model::Transform>,
) -> Option<Spread> {
    use crate::model::Transform;
    let sources = sb.local.len();
    // b's value of joint j at point q under source src (the base).
    let of_b = |src: usize, q: usize| base.copied().unwrap_or(sb.local[src][q * n + j]);
    let linear = |t: &Transform| {
        Transform {
            translation: glam::Vec3::ZERO,
            ..*t
        }
        .to_daffine()
    };
    let shift = |t: &Transform| DAffine3::from_translation(t.translation.as_dvec3());
    let mut s = Spread::default();
    let mut ok = true;
    // Widen `s` over (original, export) pairs of one clip's points.
    let mut over = |points: usize, f: &dyn Fn(usize, usize) -> DAffine3| {
        for p in 0..points {
            let o = f(0, p);
            s.size(&o);
            for src in 1..sources {
                ok &= s.add(&o, &f(src, p));
            }
        }
    };
    // Linear part.
    let (from_a_r, from_a_s) = (mask[1], mask[2]);
    if from_a_r || from_a_s {
        if !(from_a_r && from_a_s) && base.is_none() {
            // The other linear property is b's: covered only where it never varies.
            let k = if from_a_r { 2 } else { 1 };
            let first = of_b(0, 0);
            let same = |t: &Transform| match k {
                1 => {
                    t.rotation.to_array().map(f32::to_bits)
                        == first.rotation.to_array().map(f32::to_bits)
                }
                _ => {
                    t.scale.to_array().map(f32::to_bits) == first.scale.to_array().map(f32::to_bits)
                }
            };
            if !(0..sources).all(|src| (0..sb.points).all(|q| same(&of_b(src, q)))) {
                return None;
            }
        }
        let lin_mask = [false, from_a_r, from_a_s];
        over(sa.points, &|src, t| {
            let mut l = of_b(0, 0);
            super::start_states::overwrite(&mut l, &sa.local[src][t * n + j], lin_mask);
            linear(&l)
        });
    } else {
        over(sb.points, &|src, q| linear(&of_b(src, q)));
    }
    // Translation.
    if mask[0] {
        over(sa.points, &|src, t| shift(&sa.local[src][t * n + j]));
    } else {
        over(sb.points, &|src, q| shift(&of_b(src, q)));
    }
    ok.then_some(s)
}

/// Per joint of b, the bound on error / tolerance (tolerance times [`PLAYER_GUARD`]) of clip
/// `b` started from clip `a` stopped at any of its check points, over every rule (the same
/// quantity [`after_every_stop`] enumerates, never below it); zero where no start state
/// reaches. `None` where a joint mixes a's properties with b's keyed ones.
pub fn pair_bound(
    skeleton: &Skeleton,
    sa: &Sampled,
    sb: &Sampled,
    keyed: &[Vec<[bool; 3]>],
    limits: &JointLimits,
    a: usize,
    b: usize,
) -> Option<Vec<f32>> {
    let n = skeleton.len();
    let held = Held::new(skeleton, keyed, a, b);
    let kb = |j: usize| keyed[b].get(j).copied().unwrap_or([false; 3]);
    let sets = |j: usize| held.from_a[j].iter().any(|&x| x);
    let sources = sb.local.len();
    if sources != sa.local.len() || sources < 2 {
        return None;
    }
    // Each affected joint's spread, over the clip that supplies each property.
    let mut spread = vec![Spread::default(); n];
    for &j in &held.affected {
        let mask = held.from_a[j];
        // As after_every_stop: a joint a's state sets and b keys no other property of is
        // built over the rest pose, any other over b's own local transform.
        let mixed = sets(j) && (0..3).any(|k| kb(j)[k] && !mask[k]);
        let base = (sets(j) && !mixed).then_some(&skeleton.joints[j].rest);
        spread[j] = joint_spread(sa, sb, n, j, mask, base)?;
    }
    // The parents the affected chains hang from: b's clean object poses.
    let mut above: Vec<Option<Spread>> = vec![None; n];
    for &k in &held.set {
        let Some(p) = skeleton.joints[k].parent else {
            continue;
        };
        if above[p].is_some() || held.affected.binary_search(&p).is_ok() {
            continue;
        }
        let mut s = Spread::default();
        for q in 0..sb.points {
            let o = &sb.clean[0][q * n + p];
            for src in 1..sources {
                if !s.add(o, &sb.clean[src][q * n + p]) {
                    return None;
                }
            }
        }
        above[p] = Some(s);
    }
    let mut ratio = vec![0.0f32; n];
    let mut chain = Vec::new();
    for &j in &held.affected {
        if !limits.evaluated[j] {
            continue;
        }
        // j's chain up to the topmost joint a's state sets (k), then k's parent.
        chain.clear();
        let mut top = j;
        let mut at = Some(j);
        while let Some(i) = at {
            if held.affected.binary_search(&i).is_err() {
                break;
            }
            chain.push(i);
            if sets(i) {
                top = chain.len();
            }
            at = skeleton.joints[i].parent;
        }
        chain.truncate(top);
        chain.reverse();
        let parent = skeleton.joints[chain[0]]
            .parent
            .map(|p| above[p].expect("a chain's parent outside the affected joints"));
        let bound_at = |x: f64| {
            // |L_{i+1}⋯L_j x| for each i, from j upwards.
            let mut reach = vec![0.0; chain.len()];
            let mut r = x;
            for (c, &i) in chain.iter().enumerate().rev() {
                reach[c] = r;
                r = spread[i].tau + spread[i].g * r;
            }
            let w = r;
            let (mut sum, mut before) = (0.0, 1.0);
            for (c, &i) in chain.iter().enumerate() {
                sum += before * (spread[i].rho * reach[c] + spread[i].dt);
                before *= spread[i].g;
            }
            match parent {
                Some(p) => p.rho * w + p.dt + p.g * sum,
                None => sum,
            }
        };
        let d = f64::from(limits.local_marker(j));
        let err = limits.sockets[j].iter().fold(bound_at(d), |e, s| {
            e.max(bound_at(s.origin.length() + d) * f64::from(s.weight()))
        });
        let tol = f64::from((limits.tolerance[j] * PLAYER_GUARD).max(1e-12));
        // Rounded up, so that the f32 ratio never falls below the measured one.
        ratio[j] = (err / tol * (1.0 + 1e-6)) as f32;
    }
    Some(ratio)
}

/// Clip `b` started from clip `a` stopped anywhere ([`after_every_stop`]'s result): the
/// bound ([`pair_bound`]) where every joint's bound holds the tolerance (then b holds after
/// a, and the ratios are upper bounds), the enumeration otherwise. The flag says whether the
/// bound was used.
pub fn measure_pair(
    skeleton: &Skeleton,
    sa: &Sampled,
    sb: &Sampled,
    keyed: &[Vec<[bool; 3]>],
    limits: &JointLimits,
    a: usize,
    b: usize,
) -> (AfterStops, bool) {
    if let Some(ratio) = pair_bound(skeleton, sa, sb, keyed, limits, a, b)
        && ratio.iter().all(|&r| r <= 1.0)
    {
        let held = Held::new(skeleton, keyed, a, b);
        let mut blame = vec![0.0f32; skeleton.len()];
        for &s in &held.set {
            blame[s] = held
                .affected
                .iter()
                .filter(|&&j| skeleton.is_ancestor_or_self(s, j))
                .map(|&j| ratio[j])
                .fold(0.0, f32::max);
        }
        return (AfterStops { ratio, blame }, true);
    }
    (
        after_every_stop(skeleton, sa, sb, keyed, limits, a, b),
        false,
    )
}
