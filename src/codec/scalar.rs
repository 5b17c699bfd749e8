//! Scalar tracks (morph-target weights) compressed under the joints' visual contract: a
//! weight's error is `|Δw| × r`, `r` the target's largest vertex offset in the scene, the
//! errors of one track's targets add up (they move the same vertices), and the sum stays
//! within the distance tolerance; targets without geometry are held to an explicit weight
//! tolerance. A track keeps a subset of its keys (constant: one; else greedy key reduction
//! measured at every source key and midpoint, where two linear curves differ most), values
//! quantized to 16 bits where every weight lies in [0, 1] and the rounding fits. Shared by
//! the glTF export (`export::morph_weights`) and the `.skp` codec ([`compress`]).

use crate::model::scalar::{ScalarStorage, ScalarTrack, StoredScalarTrack};

/// What a channel's weights may change by.
#[derive(Clone, Copy, Debug)]
pub struct ScalarLimits {
    /// Largest vertex displacement, scene units (the joints' tolerance).
    pub tolerance: f32,
    /// Largest weight change of a target without geometry.
    pub weight_tolerance: f32,
}

/// `track` compressed within `limits`: the smaller of unorm16 and float storage that holds
/// (float with every key always does), with its measured error.
pub fn compress(track: &ScalarTrack, limits: ScalarLimits) -> StoredScalarTrack {
    let targets = track.targets;
    let reach: Vec<f64> = track.reach.iter().map(|&r| r as f64).collect();
    let allowed = Allowed::new(&reach, limits);
    let source = Curve {
        times: &track.times,
        values: &track.values,
        targets,
    };
    let all = (0..track.times.len()).collect::<Vec<_>>();
    let valid = targets > 0
        && !track.times.is_empty()
        && track.values.len() == track.times.len() * targets
        && reach.len() == targets;
    let quantized: Option<Vec<f32>> =
        (valid && track.values.iter().all(|v| (0.0..=1.0).contains(v))).then(|| {
            track
                .values
                .iter()
                .map(|&v| to_u16(v) as f32 / 65535.0)
                .collect()
        });
    let mut best: Option<(usize, StoredScalarTrack)> = None;
    for (storage, stored) in [
        (ScalarStorage::Unorm16, quantized.as_deref()),
        (ScalarStorage::Float, Some(track.values.as_slice())),
    ] {
        let Some(stored) = stored.filter(|_| valid) else {
            continue;
        };
        let written = Curve {
            values: stored,
            ..source
        };
        let kept = reduce(&source, &written, &allowed);
        let e = max_error(&source, &written, &kept, &allowed);
        let (kept, e) = if e.within {
            (kept, e)
        } else {
            let e = max_error(&source, &written, &all, &allowed);
            (all.clone(), e)
        };
        if !e.within && storage == ScalarStorage::Unorm16 {
            continue;
        }
        let width = if storage == ScalarStorage::Unorm16 {
            2
        } else {
            4
        };
        let bytes = kept.len() * (4 + targets * width);
        let values = kept
            .iter()
            .flat_map(|&k| {
                track.values[k * targets..(k + 1) * targets]
                    .iter()
                    .map(move |&w| match storage {
                        ScalarStorage::Unorm16 => to_u16(w) as f32,
                        ScalarStorage::Float => w,
                    })
            })
            .collect();
        let out = StoredScalarTrack {
            name: track.name.clone(),
            targets,
            times: kept.iter().map(|&k| track.times[k]).collect(),
            values,
            storage,
            max_error: e.displacement as f32,
        };
        if best.as_ref().is_none_or(|(b, _)| bytes < *b) {
            best = Some((bytes, out));
        }
    }
    best.map(|(_, t)| t).unwrap_or_else(|| StoredScalarTrack {
        name: track.name.clone(),
        targets: targets.max(1),
        times: vec![0.0],
        values: vec![0.0; targets.max(1)],
        storage: ScalarStorage::Float,
        max_error: 0.0,
    })
}

/// A weight stored as a normalized unsigned 16-bit value (`round(w x 65535)`).
pub(crate) fn to_u16(w: f32) -> u16 {
    crate::codec::quantize::round_unsigned(w.clamp(0.0, 1.0) * 65535.0) as u16
}

/// Bytes per weight of `stored`: 4 when it is the source's floats, 2 when quantized.
pub(crate) fn value_bytes(source: &[f32], stored: &[f32]) -> usize {
    if std::ptr::eq(source, stored) { 4 } else { 2 }
}

/// One channel's keys: `targets` weights per key time.
#[derive(Clone, Copy)]
pub(crate) struct Curve<'a> {
    pub times: &'a [f32],
    pub values: &'a [f32],
    pub targets: usize,
}

impl Curve<'_> {
    fn at_key(&self, i: usize, k: usize) -> f64 {
        self.values[i * self.targets + k] as f64
    }

    /// Target `k` at time `t` on the segment between keys `a` and `b` (clamped to it).
    fn between(&self, a: usize, b: usize, t: f64, k: usize) -> f64 {
        let (ta, tb) = (self.times[a] as f64, self.times[b] as f64);
        let u = if tb > ta {
            ((t - ta) / (tb - ta)).clamp(0.0, 1.0)
        } else {
            0.0
        };
        let (va, vb) = (self.at_key(a, k), self.at_key(b, k));
        va + (vb - va) * u
    }

    /// Target `k` at time `t`, LINEAR through the keys listed in `keys` (clamped at the ends;
    /// one key holds its value).
    fn sample(&self, keys: &[usize], t: f64, k: usize) -> f64 {
        if keys.len() == 1 {
            return self.at_key(keys[0], k);
        }
        let j = keys
            .partition_point(|&x| (self.times[x] as f64) <= t)
            .clamp(1, keys.len() - 1);
        self.between(keys[j - 1], keys[j], t, k)
    }
}

/// Per target: the scene distance one unit of weight moves a vertex at most (`reach`), or,
/// for a target without geometry, none (held to the weight tolerance).
pub(crate) struct Allowed {
    reach: Vec<f64>,
    /// Vertex displacement allowed, with a guard for the player's float arithmetic.
    tolerance: f64,
    weight_tolerance: f64,
}

impl Allowed {
    /// The player's float evaluation of the kept keys may differ from this f64 one by a few
    /// ulps of the weights; 0.1 % of the tolerance is kept back for it.
    const GUARD: f64 = 1e-3;

    pub(crate) fn new(reach: &[f64], limits: ScalarLimits) -> Self {
        Self {
            reach: reach.to_vec(),
            tolerance: limits.tolerance as f64 * (1.0 - Self::GUARD),
            weight_tolerance: limits.weight_tolerance as f64,
        }
    }

    /// The displacement a difference of `delta` per target causes, and whether every target
    /// without geometry stays within the weight tolerance.
    fn measure(&self, delta: impl Iterator<Item = f64>) -> (f64, bool) {
        let mut d = 0.0;
        let mut ok = true;
        for (x, &r) in delta.zip(&self.reach) {
            if r > 0.0 {
                d += x.abs() * r;
            } else {
                ok &= x.abs() <= self.weight_tolerance;
            }
        }
        (d, ok)
    }

    fn holds(&self, (d, ok): (f64, bool)) -> bool {
        ok && d <= self.tolerance
    }

    /// How far a difference of `delta` per target is over the limits, as the larger of the
    /// displacement over the tolerance and the largest weight change without geometry over
    /// the weight tolerance: which key of a segment is worst (for a curve without geometry
    /// too, not merely the first one over).
    fn excess(&self, delta: impl Iterator<Item = f64>) -> f64 {
        let ratio = |x: f64, t: f64| if t > 0.0 { x / t } else { x * 1e12 };
        let mut d = 0.0;
        let mut w: f64 = 0.0;
        for (x, &r) in delta.zip(&self.reach) {
            if r > 0.0 {
                d += x.abs() * r;
            } else {
                w = w.max(x.abs());
            }
        }
        ratio(d, self.tolerance).max(ratio(w, self.weight_tolerance))
    }
}

/// Greedy key reduction of `source` stored as `written` (the same keys, values as they will
/// be stored): one key when the first holds everywhere, else the first and last and then, per
/// segment, the worst source key over the limits, until none is.
pub(crate) fn reduce(source: &Curve, written: &Curve, allowed: &Allowed) -> Vec<usize> {
    let n = source.times.len();
    let targets = source.targets;
    let constant = (0..n).all(|i| {
        allowed.holds(
            allowed.measure((0..targets).map(|k| written.at_key(0, k) - source.at_key(i, k))),
        )
    });
    if constant {
        return vec![0];
    }
    let mut kept = vec![0, n - 1];
    loop {
        let mut added = Vec::new();
        for w in kept.windows(2) {
            let (a, b) = (w[0], w[1]);
            let mut worst: Option<(usize, f64)> = None;
            for i in a + 1..b {
                let t = source.times[i] as f64;
                let e = allowed.measure(
                    (0..targets).map(|k| written.between(a, b, t, k) - source.at_key(i, k)),
                );
                if !allowed.holds(e) {
                    let score = allowed.excess(
                        (0..targets).map(|k| written.between(a, b, t, k) - source.at_key(i, k)),
                    );
                    if worst.is_none_or(|(_, s)| score > s) {
                        worst = Some((i, score));
                    }
                }
            }
            if let Some((i, _)) = worst {
                added.push(i);
            }
        }
        if added.is_empty() {
            return kept;
        }
        kept.extend(added);
        kept.sort_unstable();
    }
}

pub(crate) struct Measured {
    pub displacement: f64,
    pub within: bool,
}

/// The kept keys of `written` against `source` at every source key and midpoint (both are
/// linear between the source's keys, so the largest difference is at one of its keys).
pub(crate) fn max_error(
    source: &Curve,
    written: &Curve,
    kept: &[usize],
    allowed: &Allowed,
) -> Measured {
    let all: Vec<usize> = (0..source.times.len()).collect();
    let mut worst = Measured {
        displacement: 0.0,
        within: true,
    };
    let times = source.times;
    for i in 0..times.len() {
        let mut points = vec![times[i] as f64];
        if i + 1 < times.len() {
            points.push((times[i] as f64 + times[i + 1] as f64) / 2.0);
        }
        for t in points {
            let e = allowed.measure(
                (0..source.targets).map(|k| written.sample(kept, t, k) - source.sample(&all, t, k)),
            );
            worst.displacement = worst.displacement.max(e.0);
            worst.within &= allowed.holds(e);
        }
    }
    worst
}

#[cfg(test)]
mod tests {
    use super::*;

    fn curve<'a>(times: &'a [f32], values: &'a [f32], targets: usize) -> Curve<'a> {
        Curve {
            times,
            values,
            targets,
        }
    }

    fn allowed(reach: &[f64], tolerance: f32) -> Allowed {
        Allowed::new(
            reach,
            ScalarLimits {
                tolerance,
                weight_tolerance: 0.0,
            },
        )
    }

    #[test]
    fn constant_weights_keep_one_key() {
        let times = [0.0, 0.5, 1.0, 1.5];
        let values = [0.2, 0.0, 0.2, 0.0, 0.2, 0.0, 0.2, 0.0];
        let a = allowed(&[0.01, 0.01], 1e-4);
        let c = curve(&times, &values, 2);
        let kept = reduce(&c, &c, &a);
        assert_eq!(kept, vec![0]);
        assert!(max_error(&c, &c, &kept, &a).within);
    }

    #[test]
    fn a_ramp_keeps_its_ends_and_a_bump_its_peak() {
        let times: Vec<f32> = (0..11).map(|i| i as f32 / 10.0).collect();
        let ramp: Vec<f32> = (0..11).map(|i| i as f32 / 10.0).collect();
        let a = allowed(&[0.01], 1e-4);
        let c = curve(&times, &ramp, 1);
        assert_eq!(reduce(&c, &c, &a), vec![0, 10]);
        let bump: Vec<f32> = (0..11).map(|i| if i == 5 { 1.0 } else { 0.0 }).collect();
        let c = curve(&times, &bump, 1);
        let kept = reduce(&c, &c, &a);
        assert_eq!(kept, vec![0, 4, 5, 6, 10]);
        assert!(max_error(&c, &c, &kept, &a).within);
        // Dropping the peak would move a vertex 1 x 0.01, far over 1e-4.
        assert!(!max_error(&c, &c, &[0, 4, 6, 10], &a).within);
    }

    #[test]
    fn a_small_wiggle_on_a_short_target_is_dropped() {
        let times: Vec<f32> = (0..5).map(|i| i as f32).collect();
        // 0.001 of weight on a target reaching 5 cm: 0.05 mm, within 0.1 mm.
        let values = [0.0, 0.001, 0.0, 0.001, 0.0];
        let c = curve(&times, &values, 1);
        let a = allowed(&[0.05], 1e-4);
        assert_eq!(reduce(&c, &c, &a), vec![0]);
        // A target without geometry is held exactly by default.
        let a = allowed(&[0.0], 1e-4);
        assert_eq!(reduce(&c, &c, &a), vec![0, 1, 2, 3, 4]);
    }

    #[test]
    fn quantized_weights_count_their_rounding() {
        let times = [0.0, 1.0];
        let source = [0.3, 0.3];
        let stored: Vec<f32> = source.iter().map(|&v| to_u16(v) as f32 / 65535.0).collect();
        let (s, w) = (curve(&times, &source, 1), curve(&times, &stored, 1));
        // Rounding 0.3 to 1/65535 steps errs by under 7.7e-6: 7.7e-6 m on a 1 m target.
        let e = max_error(&s, &w, &[0], &allowed(&[1.0], 1e-4));
        assert!(
            e.within && e.displacement > 0.0 && e.displacement < 7.7e-6,
            "{}",
            e.displacement
        );
        // A 100 m target makes that 0.77 mm: over 0.1 mm.
        assert!(!max_error(&s, &w, &[0], &allowed(&[100.0], 1e-4)).within);
    }
}
