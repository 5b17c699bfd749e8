//! A proven upper bound on clip b's error when started from clip a stopped anywhere, from
//! each clip's samples alone (not their product): a pair whose bound holds the tolerance
//! needs no enumeration of a's stops times b's points
//! ([`after_every_stop`](super::start_states::after_every_stop)), and where it does not,
//! the bound split into a's share per stop and b's per point ([`Slack`]) leaves to the
//! enumeration only the stops, points and joints where their sum misses.
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
//! and each factor is bounded per check point of the clip that supplies the joint's property
//! (a for the properties its state sets, b elsewhere), over the player's rules:
//! `|(L − L') v| ≤ ρ |v| + |t − t'|` with ρ ≥ the spectral norm of the linear parts'
//! difference, `|lin(M) v| ≤ g |v|`, and `|L_{i+1}⋯L_j x| ≤ τ_{i+1} + g_{i+1}(τ_{i+2} + ⋯ +
//! g_j |x|)` with τ the largest translation. A joint that mixes a's properties with b's
//! keyed ones is not covered (the pair is enumerated).
//!
//! Below the lowest joint `m` of j's chain that a's state sets (the tail, b's own local
//! transforms `D = L_{m+1}⋯L_j`, the same in the switched pose as in b's clean one), the sum
//! over the tail's joints may be replaced by b's measured error from a clean start. With
//! `Q`, `Q'` the switched object transforms of `m` and `C = Q_c D`, `C' = Q'_c D'` b's clean
//! ones of j,
//!
//! ```text
//! S x − S' x = (Q − Q')·Dx + lin(Q')·(Dx − D'x)
//! C x − C' x = (Q_c − Q'_c)·Dx + lin(Q'_c)·(Dx − D'x)
//! ⇒ |Dx − D'x| ≤ (|C x − C' x| + |(Q_c − Q'_c)·Dx|) / s_min(Q'_c)
//! ⇒ |S x − S' x| ≤ |(Q − Q')·Dx| + ‖lin Q'‖ / s_min(Q'_c) · (|C x − C' x| + ρ_c |Dx| + δ_c)
//! ```
//!
//! where `|(Q − Q')·Dx|` is the telescoped bound above down to `m` (the same terms),
//! `‖lin Q'‖ ≤ g_P g_k ⋯ g_m`, `ρ_c`, `δ_c` are the linear and translation deviations of
//! m's clean pose at b's point ([`Part::Clean`]), `s_min` at least [`floor`] of every source
//! there, and `|C x − C' x|` at most b's clean error at j, `max_s marker_error(C, C'_s)`
//! ([`clean_errors`]), over the marker's socket weight (the same markers as the switched
//! measure's). Both bounds of the tail hold, so b's share per point takes the smaller.

use std::borrow::Cow;
use std::sync::OnceLock;

use glam::{DAffine3, DMat3};

use super::start_states::{AfterStops, Held, Sampled, Slack, after_every_stop_within, overwrite};
use super::verify::PLAYER_GUARD;
use crate::metric::{JointLimits, marker_error};
use crate::model::{Skeleton, Transform};

/// Frobenius norm of `m`.
fn frobenius(m: &DMat3) -> f64 {
    (m.x_axis.length_squared() + m.y_axis.length_squared() + m.z_axis.length_squared()).sqrt()
}

/// `m` as `σ·(R + E)` with `R` a rotation (or a reflection): σ the root mean square of its
/// singular values, `m / σ`, and a bound on `‖E‖_F`: `‖(m/σ)ᵀ(m/σ) − I‖_F` (a singular
/// value `s ≥ 0` is off 1 by at most `|s² − 1|`).
fn polar(m: &DMat3) -> (f64, DMat3, f64) {
    let sigma = (frobenius(m) / 3f64.sqrt()).max(1e-300);
    let u = *m * (1.0 / sigma);
    (sigma, u, frobenius(&(u.transpose() * u - DMat3::IDENTITY)))
}

/// A bound on `‖lin(o) − lin(e)‖₂` and `|t_o − t_e|`; `None` where one is a reflection and
/// the other not (not covered).
fn deviation(o: &DAffine3, e: &DAffine3) -> Option<(f64, f64)> {
    if o.matrix3.determinant() * e.matrix3.determinant() <= 0.0 {
        return None;
    }
    let ((so, uo, eo), (se, ue, ee)) = (polar(&o.matrix3), polar(&e.matrix3));
    // ‖σ_o(R_o + E_o) − σ_e(R_e + E_e)‖₂ ≤ σ_o‖R_o − R_e‖₂ + |σ_o − σ_e| + σ_o‖E_o‖ +
    // σ_e‖E_e‖, and for two rotations (or two reflections) ‖R_o − R_e‖₂ = ‖R_o − R_e‖_F / √2
    // ≤ (‖u_o − u_e‖_F + ‖E_o‖_F + ‖E_e‖_F) / √2.
    let rot = (frobenius(&(uo - ue)) + eo + ee) * std::f64::consts::FRAC_1_SQRT_2;
    let rho = so * rot + (so - se).abs() + so * eo + se * ee;
    Some((rho, (o.translation - e.translation).length()))
}

/// A bound on the spectral norm of `m`'s linear part.
fn norm(m: &DAffine3) -> f64 {
    let (sigma, _, err) = polar(&m.matrix3);
    sigma * (1.0 + err)
}

/// A lower bound on the smallest singular value of `m`'s linear part: `m = σ u` and every
/// singular value `s` of `u` has `|s² − 1| ≤ ‖uᵀu − I‖_F` ([`polar`]), so `s ≥ √(1 − err)`
/// (zero where `err ≥ 1`).
fn floor(m: &DAffine3) -> f64 {
    let (sigma, _, err) = polar(&m.matrix3);
    sigma * (1.0 - err).max(0.0).sqrt()
}

/// Per check point of one clip, the largest deviation from the original under any rule of
/// some transform built from it ([`per_point`]): linear deviations ρ, translation
/// deviations, and over every point the largest linear norm `g`, translation length τ, and
/// a lower bound `floor` on every linear part's smallest singular value.
#[derive(Clone, Debug, Default)]
pub struct PointSpread {
    rho: Vec<f64>,
    dt: Vec<f64>,
    g: f64,
    tau: f64,
    floor: f64,
}

/// What a [`PointSpread`] of one joint of one clip is taken over (its matrix per source and
/// check point).
#[derive(Clone, Copy)]
enum Part {
    /// The rest pose's linear part with the clip's rotation over it, translation zero.
    Rotation,
    /// The same with the clip's scale.
    Scale,
    /// The clip's rotation and scale, translation zero.
    RotationAndScale,
    /// The clip's translation alone.
    Translation,
    /// The rest pose's linear part at every point.
    RestLinear,
    /// The rest pose's translation at every point.
    RestTranslation,
    /// The object pose from a clean start.
    Clean,
}

impl Part {
    const COUNT: usize = 7;

    /// The linear part of a's state setting its rotation and/or scale (at least one).
    fn linear_of(rotation: bool, scale: bool) -> Self {
        match (rotation, scale) {
            (true, false) => Part::Rotation,
            (false, true) => Part::Scale,
            _ => Part::RotationAndScale,
        }
    }
}

/// A clip's [`PointSpread`]s per joint and [`Part`], each computed on first use: they are
/// functions of the clip's samples alone, the same in every pair the clip is in (kept in its
/// [`Sampled`], so dropped with it when the clip is re-encoded). Also the clip's own error
/// from a clean start per check point and joint ([`clean_errors`]), with the limits it was
/// measured under.
#[derive(Default)]
pub struct PointSpreads {
    /// Per joint and [`Part`] (`joint * Part::COUNT + part`), the spread or `None` where
    /// [`per_point`] does not cover it.
    per_joint: OnceLock<Box<[OnceLock<Option<PointSpread>>]>>,
    /// The limits the clean errors were measured under, and the errors ([`clean_errors`]).
    clean_errors: OnceLock<(JointLimits, Box<[f32]>)>,
}

/// Clip `s`'s error from a clean start under `limits` (`n` joints), per check point `q` and
/// joint `j` at `q * n + j`: the largest [`marker_error`] of any played source against the
/// original (zero on joints not evaluated). Kept in `s` for the limits it was first asked
/// for (a clip's limits are the same in every pair), computed afresh for others.
fn clean_errors<'s>(s: &'s Sampled, n: usize, limits: &JointLimits) -> Cow<'s, [f32]> {
    let compute = || -> Box<[f32]> {
        (0..s.points * n)
            .map(|i| {
                (1..s.clean.len())
                    .map(|src| marker_error(limits, i % n, &s.clean[0][i], &s.clean[src][i]))
                    .fold(0.0f32, f32::max)
            })
            .collect()
    };
    let (kept_for, errors) = s
        .spreads
        .clean_errors
        .get_or_init(|| (limits.clone(), compute()));
    if kept_for == limits {
        Cow::Borrowed(errors)
    } else {
        Cow::Owned(compute().into_vec())
    }
}

/// The linear part of `t` (translation zero) as a matrix.
fn linear(t: &Transform) -> DAffine3 {
    Transform {
        translation: glam::Vec3::ZERO,
        ..*t
    }
    .to_daffine()
}

/// The translation of `t` as a matrix.
fn shift(t: &Transform) -> DAffine3 {
    DAffine3::from_translation(t.translation.as_dvec3())
}

/// Joint `j`'s [`PointSpread`] over `part` of clip `s` (`n` joints, `rest` the joint's rest
/// pose), from `s`'s cache; `None` where not covered.
fn point_spread<'s>(
    s: &'s Sampled,
    n: usize,
    j: usize,
    rest: &Transform,
    part: Part,
) -> Option<&'s PointSpread> {
    let cells = s.spreads.per_joint.get_or_init(|| {
        (0..n * Part::COUNT)
            .map(|_| OnceLock::new())
            .collect::<Vec<_>>()
            .into_boxed_slice()
    });
    let local = |src: usize, p: usize| &s.local[src][p * n + j];
    let sources = s.local.len();
    cells[j * Part::COUNT + part as usize]
        .get_or_init(|| match part {
            Part::Rotation | Part::Scale | Part::RotationAndScale => {
                // Which of translation, rotation and scale the clip writes over the rest.
                let mask = match part {
                    Part::Rotation => [false, true, false],
                    Part::Scale => [false, false, true],
                    _ => [false, true, true],
                };
                per_point(s.points, sources, &|src, p| {
                    let mut l = *rest;
                    overwrite(&mut l, local(src, p), mask);
                    linear(&l)
                })
            }
            Part::Translation => per_point(s.points, sources, &|src, p| shift(local(src, p))),
            Part::RestLinear => per_point(s.points, sources, &|_, _| linear(rest)),
            Part::RestTranslation => per_point(s.points, sources, &|_, _| shift(rest)),
            Part::Clean => per_point(s.points, sources, &|src, p| s.clean[src][p * n + j]),
        })
        .as_ref()
}

/// One joint's local transform in the switched pose, original against export: per check
/// point of the clip that supplies its linear part (rotation, scale) the largest linear
/// deviation ρ over the rules (`lin.rho`), per check point of the clip that supplies its
/// translation the largest translation deviation (`tr.dt`), and over everything its largest
/// linear norm `g` (`lin.g`) and translation length τ (`tr.tau`).
#[derive(Clone, Debug)]
struct Spread<'s> {
    /// Whether a supplies the linear part (else b).
    lin_from_a: bool,
    lin: Cow<'s, PointSpread>,
    /// Whether a supplies the translation (else b).
    tr_from_a: bool,
    tr: Cow<'s, PointSpread>,
}

impl Spread<'_> {
    fn rho(&self) -> &[f64] {
        &self.lin.rho
    }
    fn dt(&self) -> &[f64] {
        &self.tr.dt
    }
    fn g(&self) -> f64 {
        self.lin.g
    }
    fn tau(&self) -> f64 {
        self.tr.tau
    }
}

/// Per check point of one clip (`points` of them, `sources` rules and the original first),
/// the largest deviation from the original under any rule of `at(source, point)`, and the
/// largest norm and translation; `None` where not covered.
fn per_point(
    points: usize,
    sources: usize,
    at: &dyn Fn(usize, usize) -> DAffine3,
) -> Option<PointSpread> {
    let (mut rho, mut dt) = (vec![0.0f64; points], vec![0.0f64; points]);
    let (mut g, mut tau, mut low) = (0.0f64, 0.0f64, f64::INFINITY);
    for p in 0..points {
        let o = at(0, p);
        g = g.max(norm(&o));
        tau = tau.max(o.translation.length());
        low = low.min(floor(&o));
        for src in 1..sources {
            let e = at(src, p);
            let (r, d) = deviation(&o, &e)?;
            rho[p] = rho[p].max(r);
            dt[p] = dt[p].max(d);
            g = g.max(norm(&e));
            tau = tau.max(e.translation.length());
            low = low.min(floor(&e));
        }
    }
    Some(PointSpread {
        rho,
        dt,
        g,
        tau,
        floor: low,
    })
}

/// Joint `j`'s [`Spread`] as [`after_every_stop`](super::start_states::after_every_stop)
/// builds its local transform: the rest pose `rest` where `over_rest` (b keys no property
/// of j a's state does not set), else b's own local transform, with a's set properties
/// `mask` written over it. A linear part mixing a's property with one of b's that varies is
/// not covered (`None`). Every part that is a function of one clip's samples alone is taken
/// from that clip's cache ([`point_spread`]).
fn joint_spread<'s>(
    sa: &'s Sampled,
    sb: &'s Sampled,
    n: usize,
    j: usize,
    mask: [bool; 3],
    rest: &Transform,
    over_rest: bool,
) -> Option<Spread<'s>> {
    let sources = sb.local.len();
    let lin_from_a = mask[1] || mask[2];
    let lin = if !lin_from_a {
        let part = if over_rest {
            Part::RestLinear
        } else {
            Part::RotationAndScale
        };
        Cow::Borrowed(point_spread(sb, n, j, rest, part)?)
    } else if over_rest || (mask[1] && mask[2]) {
        // Over the rest pose, or both linear properties a's: a function of a alone.
        Cow::Borrowed(point_spread(
            sa,
            n,
            j,
            rest,
            Part::linear_of(mask[1], mask[2]),
        )?)
    } else {
        // The other linear property is b's: covered only where it never varies.
        let first = sb.local[0][j];
        let bits = |t: &Transform| {
            if mask[1] {
                t.scale.to_array().map(f32::to_bits).to_vec()
            } else {
                t.rotation.to_array().map(f32::to_bits).to_vec()
            }
        };
        let same = (0..sources)
            .all(|src| (0..sb.points).all(|q| bits(&sb.local[src][q * n + j]) == bits(&first)));
        if !same {
            return None;
        }
        let lin_mask = [false, mask[1], mask[2]];
        Cow::Owned(per_point(sa.points, sources, &|src, t| {
            let mut l = first;
            overwrite(&mut l, &sa.local[src][t * n + j], lin_mask);
            linear(&l)
        })?)
    };
    let tr = match (mask[0], over_rest) {
        (true, _) => point_spread(sa, n, j, rest, Part::Translation)?,
        (false, true) => point_spread(sb, n, j, rest, Part::RestTranslation)?,
        (false, false) => point_spread(sb, n, j, rest, Part::Translation)?,
    };
    Some(Spread {
        lin_from_a,
        lin,
        tr_from_a: mask[0],
        tr: Cow::Borrowed(tr),
    })
}

/// The bound on clip b's error / tolerance (tolerance times [`PLAYER_GUARD`]) after clip a
/// stopped at any check point, split per stop of a and per point of b ([`Slack`], slots of
/// [`Held::affected`]; zero on joints not evaluated). `None` where a joint's linear part
/// mixes a's property with one of b's that varies, or a reflection meets a rotation.
pub fn pair_slack(
    skeleton: &Skeleton,
    sa: &Sampled,
    sb: &Sampled,
    keyed: &[Vec<[bool; 3]>],
    limits: &JointLimits,
    a: usize,
    b: usize,
) -> Option<Slack> {
    let n = skeleton.len();
    let held = Held::new(skeleton, keyed, a, b);
    let kb = |j: usize| keyed[b].get(j).copied().unwrap_or([false; 3]);
    let sets = |j: usize| held.from_a[j].iter().any(|&x| x);
    let sources = sb.local.len();
    if sources != sa.local.len() || sources < 2 {
        return None;
    }
    let mut spread: Vec<Option<Spread>> = vec![None; n];
    for &j in &held.affected {
        let mask = held.from_a[j];
        // As after_every_stop: a joint a's state sets and b keys no other property of is
        // built over the rest pose, any other over b's own local transform.
        let mixed = sets(j) && (0..3).any(|k| kb(j)[k] && !mask[k]);
        let over_rest = sets(j) && !mixed;
        let rest = &skeleton.joints[j].rest;
        spread[j] = Some(joint_spread(sa, sb, n, j, mask, rest, over_rest)?);
    }
    // The parents the affected chains hang from: b's clean object poses, per point of b.
    let mut above: Vec<Option<Spread>> = vec![None; n];
    for &k in &held.set {
        let Some(p) = skeleton.joints[k].parent else {
            continue;
        };
        if above[p].is_some() || held.affected.binary_search(&p).is_ok() {
            continue;
        }
        let clean = point_spread(sb, n, p, &skeleton.joints[p].rest, Part::Clean)?;
        above[p] = Some(Spread {
            lin_from_a: false,
            lin: Cow::Borrowed(clean),
            tr_from_a: false,
            tr: Cow::Borrowed(clean),
        });
    }
    let slots = held.affected.len();
    let mut out = Slack {
        a: vec![vec![0.0; sa.points]; slots],
        b: vec![vec![0.0; sb.points]; slots],
    };
    let mut chain: Vec<&Spread> = Vec::new();
    let mut ids: Vec<usize> = Vec::new();
    let mut errors: Option<Cow<[f32]>> = None;
    for (slot, &j) in held.affected.iter().enumerate() {
        if !limits.evaluated[j] {
            continue;
        }
        // j's chain from the topmost joint a's state sets (every joint between is affected).
        chain.clear();
        ids.clear();
        let mut at = Some(j);
        let mut top = j;
        while let Some(i) = at.filter(|i| held.affected.binary_search(i).is_ok()) {
            chain.push(spread[i].as_ref().expect("affected"));
            ids.push(i);
            top = i;
            at = skeleton.joints[i].parent;
        }
        chain.reverse();
        ids.reverse();
        // The lowest chain joint a's state sets: below it (the tail) b's own joints.
        let low = ids.iter().rposition(|&i| sets(i)).unwrap_or(0);
        let tail = if low + 1 < chain.len() {
            let low_clean = point_spread(
                sb,
                n,
                ids[low],
                &skeleton.joints[ids[low]].rest,
                Part::Clean,
            );
            low_clean.filter(|c| c.floor > 0.0).map(|c| {
                let errors = errors.get_or_insert_with(|| clean_errors(sb, n, limits));
                (c, &errors[j..])
            })
        } else {
            None
        };
        let parent = skeleton.joints[top].parent.map(|p| {
            above[p]
                .as_ref()
                .expect("a chain's parent outside the affected")
        });
        let gp = parent.map_or(1.0, |p| p.g());
        let tol = f64::from((limits.tolerance[j] * PLAYER_GUARD).max(1e-12));
        // Rounded up, so that the f32 shares never fall below the measured ratio.
        let scale = (1.0 + 1e-6) / tol;
        let d = f64::from(limits.local_marker(j));
        let markers = std::iter::once((d, 1.0)).chain(
            limits.sockets[j]
                .iter()
                .map(|s| (s.origin.length() + d, f64::from(s.weight()))),
        );
        let (ra, rb) = (&mut out.a[slot], &mut out.b[slot]);
        for (x, weight) in markers {
            // |L_{i+1}⋯L_j x| per chain joint, and |L_k⋯L_j x| (the parent's lever).
            let mut reach = vec![0.0; chain.len()];
            let mut r = x;
            for (c, s) in chain.iter().enumerate().rev() {
                reach[c] = r;
                r = s.tau() + s.g() * r;
            }
            let lever = r;
            // Each chain joint's coefficient: the prefix norm times gp.
            let mut before = Vec::with_capacity(chain.len());
            let mut pre = gp;
            for s in &chain {
                before.push(pre);
                pre *= s.g();
            }
            let w = weight * scale;
            // The tail through b's clean error at j (module docs), weighted: the error is
            // within marker_error / weight at this marker, rounded up from f32.
            let through = tail.map(|(clean, errors)| {
                let kappa = before[low] * chain[low].g() / clean.floor;
                let below = reach[low];
                move |q: usize| {
                    let e = f64::from(errors[q * n]) * (1.0 + 1e-6) * scale;
                    kappa * (e + w * (clean.rho[q] * below + clean.dt[q]))
                }
            });
            for (t, out) in ra.iter_mut().enumerate() {
                let mut sum = 0.0;
                for (c, s) in chain.iter().enumerate() {
                    if s.lin_from_a {
                        sum += before[c] * s.rho()[t] * reach[c];
                    }
                    if s.tr_from_a {
                        sum += before[c] * s.dt()[t];
                    }
                }
                *out = out.max((sum * w) as f32);
            }
            for (q, out) in rb.iter_mut().enumerate() {
                let mut head = parent.map_or(0.0, |p| p.rho()[q] * lever + p.dt()[q]);
                let mut tail = 0.0;
                for (c, s) in chain.iter().enumerate() {
                    let sum = if c <= low { &mut head } else { &mut tail };
                    if !s.lin_from_a {
                        *sum += before[c] * s.rho()[q] * reach[c];
                    }
                    if !s.tr_from_a {
                        *sum += before[c] * s.dt()[q];
                    }
                }
                let tail = through.as_ref().map_or(tail * w, |f| f(q).min(tail * w));
                *out = out.max((head * w + tail) as f32);
            }
        }
    }
    Some(out)
}

/// Clip `b` started from clip `a` stopped anywhere ([`after_every_stop`]'s result, exact
/// where a ratio is over 1): the bound alone where it holds the tolerance on every joint
/// (then every ratio is an upper bound of at most 1), else the enumeration of the stops,
/// points and joints where the bound misses ([`after_every_stop_within`]). The flag says
/// whether the bound alone did.
///
/// [`after_every_stop`]: super::start_states::after_every_stop
pub fn measure_pair(
    skeleton: &Skeleton,
    sa: &Sampled,
    sb: &Sampled,
    keyed: &[Vec<[bool; 3]>],
    limits: &JointLimits,
    a: usize,
    b: usize,
) -> (AfterStops, bool) {
    let slack = pair_slack(skeleton, sa, sb, keyed, limits, a, b);
    if let Some(sl) = &slack {
        let top = |v: &[f32]| v.iter().copied().fold(0.0f32, f32::max);
        let bound: Vec<f32> =
            sl.a.iter()
                .zip(&sl.b)
                .map(|(x, y)| top(x) + top(y))
                .collect();
        if bound.iter().all(|&r| r <= 1.0) {
            let held = Held::new(skeleton, keyed, a, b);
            let mut ratio = vec![0.0f32; skeleton.len()];
            for (&j, &r) in held.affected.iter().zip(&bound) {
                ratio[j] = r;
            }
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
    }
    (
        after_every_stop_within(skeleton, sa, sb, keyed, limits, a, b, slack.as_ref()),
        false,
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Joint;
    use glam::Vec3;

    /// A chain 0 → 1 → 2, 0.3 apart, tolerance 1e-4 at 3 cm markers.
    fn skeleton() -> Skeleton {
        let at = |y: f32| Transform {
            translation: Vec3::new(0.0, y, 0.0),
            ..Transform::IDENTITY
        };
        Skeleton::new(vec![
            Joint::new("0", None, at(0.0)),
            Joint::new("1", Some(0), at(0.3)),
            Joint::new("2", Some(1), at(0.3)),
        ])
        .unwrap()
    }

    /// `points` check points of an original and two played sources: joint `j`'s rotation
    /// about z at `0.2 p + 0.1 j`, the played sources off by `off` radians on every joint.
    fn sampled(s: &Skeleton, points: usize, off: f32) -> Sampled {
        sampled_off(s, points, [off; 3])
    }

    #[test]
    fn a_pair_whose_bound_misses_is_enumerated_and_its_violation_caught() {
        let s = skeleton();
        let (t, f) = (true, false);
        // a keys rotation on 0 and 1, b on 0 only: a's stop sets joint 1 (and moves 2).
        let keyed = vec![
            vec![[f, t, f], [f, t, f], [f, f, f]],
            vec![[f, t, f], [f, f, f], [f, f, f]],
        ];
        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        let sb = sampled(&s, 3, 1e-6);
        // a's export 2e-3 rad off on joint 1: about 0.6 mm at joint 2, over the tolerance.
        let bad = sampled(&s, 4, 2e-3);
        let exact = after_every_stop_within(&s, &bad, &sb, &keyed, &limits, 0, 1, None);
        assert!(exact.ratio[2] > 1.0, "{:?}", exact.ratio);
        let slack = pair_slack(&s, &bad, &sb, &keyed, &limits, 0, 1).expect("covered");
        assert!(slack.a[1].iter().any(|&r| r > 1.0));
        let (got, bounded) = measure_pair(&s, &bad, &sb, &keyed, &limits, 0, 1);
        assert!(
            !bounded,
            "a bound over the tolerance cannot stand for the measure"
        );
        // Every ratio over 1 is the enumeration's, exactly; none below it.
        assert_eq!(got.ratio[2], exact.ratio[2]);
        for j in 0..s.len() {
            assert!(got.ratio[j] >= exact.ratio[j], "joint {j}");
        }
        // a's export 1e-7 rad off: the bound holds, is used, and is not below the measure.
        let good = sampled(&s, 4, 1e-7);
        let (got, bounded) = measure_pair(&s, &good, &sb, &keyed, &limits, 0, 1);
        assert!(bounded);
        let exact = after_every_stop_within(&s, &good, &sb, &keyed, &limits, 0, 1, None);
        assert!(exact.ratio[2] > 0.0);
        for j in 0..s.len() {
            assert!(
                got.ratio[j] >= exact.ratio[j] && got.ratio[j] <= 1.0,
                "joint {j}"
            );
        }
    }

    /// As [`sampled`], the played sources off by `off[j]` radians on joint `j`.
    fn sampled_off(s: &Skeleton, points: usize, off: [f32; 3]) -> Sampled {
        Sampled::about_z(s, points, |p, j, src| {
            0.2 * p as f32 + 0.1 * j as f32 + off[j] * src.min(1) as f32
        })
    }

    #[test]
    fn bs_tail_below_as_state_is_bounded_through_its_clean_error() {
        let s = skeleton();
        let (t, f) = (true, false);
        // a sets joint 0's rotation; b keys 1 and 2 (the tail below it), exact on 0.
        let keyed = vec![
            vec![[f, t, f], [f, f, f], [f, f, f]],
            vec![[f, f, f], [f, t, f], [f, t, f]],
        ];
        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        let sa = sampled_off(&s, 4, [1e-7, 0.0, 0.0]);
        // Opposite errors on 1 and 2: joint 2's markers turn back, so its clean error is
        // below the per-joint sum (0.33 * 3e-4 + 0.03 * 3e-4).
        let sb = sampled_off(&s, 3, [0.0, 3e-4, -3e-4]);
        let exact = after_every_stop_within(&s, &sa, &sb, &keyed, &limits, 0, 1, None);
        assert!(exact.ratio[2] > 0.5, "{:?}", exact.ratio);
        let slack = pair_slack(&s, &sa, &sb, &keyed, &limits, 0, 1).expect("covered");
        let top = |v: &[f32]| v.iter().copied().fold(0.0f32, f32::max);
        // Slots are the affected joints 0, 1, 2: never below the measure (a mutant that
        // drops the clean error from the tail's bound falls below it on joint 2).
        for j in 0..3 {
            assert!(
                top(&slack.a[j]) + top(&slack.b[j]) >= exact.ratio[j],
                "joint {j}: {} + {} < {}",
                top(&slack.a[j]),
                top(&slack.b[j]),
                exact.ratio[j]
            );
        }
        // b's share on joint 2 is its clean error (and a little more), not the per-joint sum
        // (a mutant that never takes the clean error's bound is 1.2 times that).
        let tol = 1e-4 * f64::from(PLAYER_GUARD);
        for q in 0..sb.points {
            let i = q * s.len() + 2;
            let clean = (1..3)
                .map(|src| marker_error(&limits, 2, &sb.clean[0][i], &sb.clean[src][i]))
                .fold(0.0f32, f32::max);
            let share = f64::from(slack.b[2][q]);
            assert!(
                share <= f64::from(clean) / tol * 1.01 + 1e-4,
                "point {q}: {share}"
            );
        }
    }

    #[test]
    fn a_linear_part_mixing_a_with_a_varying_property_of_b_is_not_covered() {
        let s = skeleton();
        let (t, f) = (true, false);
        // a sets joint 1's scale, b keys its rotation (which varies): not covered.
        let keyed = vec![
            vec![[f, f, f], [f, f, t], [f, f, f]],
            vec![[f, f, f], [f, t, f], [f, f, f]],
        ];
        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        let (sa, sb) = (sampled(&s, 4, 1e-7), sampled(&s, 3, 1e-7));
        assert!(pair_slack(&s, &sa, &sb, &keyed, &limits, 0, 1).is_none());
    }

    #[test]
    fn a_clips_spreads_kept_across_pairs_give_the_bound_computed_afresh() {
        let s = skeleton();
        let (t, f) = (true, false);
        // Three clips keying different properties, so that each pair reads different parts
        // of each clip (a's rotation over rest, a's translation, b's own, b's clean parent).
        let keyed = vec![
            vec![[f, t, f], [t, t, f], [f, f, f]],
            vec![[f, t, f], [f, f, f], [f, t, f]],
            vec![[f, f, f], [f, t, f], [f, f, f]],
        ];
        let limits = JointLimits::uniform(&s, 0.03, 1e-4);
        let fresh = |i: usize| sampled(&s, 3 + i, 1e-5 * (i + 1) as f32);
        let kept: Vec<Sampled> = (0..3).map(fresh).collect();
        let mut covered = 0;
        for a in 0..3 {
            for b in (0..3).filter(|&b| b != a) {
                let (sa, sb) = (fresh(a), fresh(b));
                let new = pair_slack(&s, &sa, &sb, &keyed, &limits, a, b);
                let warm = pair_slack(&s, &kept[a], &kept[b], &keyed, &limits, a, b);
                assert_eq!(new.is_some(), warm.is_some(), "pair {a} {b}");
                if let (Some(x), Some(y)) = (new, warm) {
                    assert_eq!((x.a, x.b), (y.a, y.b), "pair {a} {b}");
                    covered += 1;
                }
            }
        }
        assert!(covered >= 4, "{covered}");
        // Every kept clip's cache was filled by the pairs above.
        for x in &kept {
            assert!(x.spreads.per_joint.get().is_some());
        }
    }
}
