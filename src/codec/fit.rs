//! Key reduction by greedy insertion: start from the end keys, find the sample (or midpoint)
//! with the largest error, insert a key there, repeat until every sample is within tolerance.
//! Works for both interpolations; evaluates exactly what [`super::Curve`] evaluates, with the
//! key values the quantizer will produce, so the tolerance holds after quantization.

use std::collections::BinaryHeap;

use glam::{Quat, Vec4};

use super::curve::{Interpolation, eval_window};
use crate::model::quat_angle;

/// An f32 with a total order, for the max-heap of segment errors.
#[derive(Clone, Copy, Debug, PartialEq)]
struct OrdF32(f32);

impl Eq for OrdF32 {}

impl PartialOrd for OrdF32 {
    fn partial_cmp(&self, other: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for OrdF32 {
    fn cmp(&self, other: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&other.0)
    }
}

/// Kept keys and the order in which the fitter inserted them (the two end keys first).
#[derive(Clone, Debug, PartialEq)]
pub struct Fit {
    pub frames: Vec<u32>,
    pub insert_order: Vec<u32>,
}

/// Distance used for a track: angle for rotations, Euclidean for vectors.
#[inline]
pub fn distance(is_rotation: bool, a: Vec4, b: Vec4) -> f32 {
    if is_rotation {
        quat_angle(Quat::from_vec4(a), Quat::from_vec4(b))
    } else {
        (a - b).truncate().length()
    }
}

/// What to fit: reference values at samples (and optionally midpoints), and the value a key
/// at each frame would decode to.
pub struct Target<'a> {
    pub raw: &'a [Vec4],
    pub mids: Option<&'a [Vec4]>,
    pub key_values: &'a [Vec4],
    pub is_rotation: bool,
}

/// Fits keys so every sample (and midpoint) is within `tolerance`; `None` when impossible
/// (the quantized values themselves miss by more).
pub fn fit(target: &Target, interpolation: Interpolation, tolerance: f32) -> Option<Fit> {
    let n = target.raw.len();
    let dist = |a: Vec4, b: Vec4| distance(target.is_rotation, a, b);
    if (0..n).any(|f| dist(target.raw[f], target.key_values[f]) > tolerance) {
        return None;
    }
    if n <= 2 {
        let frames: Vec<u32> = (0..n as u32).collect();
        let fit = Fit {
            insert_order: frames.clone(),
            frames,
        };
        return check_mids(target, interpolation, tolerance, fit);
    }
    let mut keys: Vec<u32> = vec![0, n as u32 - 1];
    let mut order = keys.clone();
    // Worst point per segment, keyed by the segment's first key frame; a max-heap of
    // (error, first key frame) finds the worst segment, skipping entries made stale by an
    // insertion (their error no longer matches the segment's).
    let mut seg: Vec<(f32, f32)> = vec![segment_error(target, interpolation, &keys, 0)];
    let mut heap: BinaryHeap<(OrdF32, u32)> = BinaryHeap::new();
    heap.push((OrdF32(seg[0].0), 0));
    while let Some((OrdF32(err), k0)) = heap.pop() {
        let Ok(si) = keys.binary_search(&k0) else {
            continue;
        };
        if si + 1 >= keys.len() || seg[si].0 != err {
            continue;
        }
        if err <= tolerance {
            break;
        }
        let at = seg[si].1;
        // The worst point is a sample frame, or a midpoint whose neighbours may be keys.
        let k1 = keys[si + 1];
        let frame = if at.fract() == 0.0 {
            at as u32
        } else {
            let (a, b) = (at.floor() as u32, at.ceil() as u32);
            let candidates = [a, b].into_iter().filter(|&f| f > k0 && f < k1);
            // With both neighbours already keys, more keys cannot help: give up.
            candidates.max_by(|&x, &y| {
                let ex = dist(
                    target.raw[x as usize],
                    sample(target, interpolation, &keys, si, x as f32),
                );
                let ey = dist(
                    target.raw[y as usize],
                    sample(target, interpolation, &keys, si, y as f32),
                );
                ex.total_cmp(&ey)
            })?
        };
        let pos = si + 1;
        keys.insert(pos, frame);
        order.push(frame);
        seg.insert(pos, (0.0, 0.0));
        // Segments whose shape depends on the new key: its own two, plus (Catmull-Rom)
        // the neighbours whose end tangents changed.
        let reach = if interpolation == Interpolation::CatmullRom {
            2
        } else {
            0
        };
        let lo = (pos - 1).saturating_sub(reach);
        let hi = (pos + reach).min(keys.len() - 2);
        for s in lo..=hi {
            seg[s] = segment_error(target, interpolation, &keys, s);
            heap.push((OrdF32(seg[s].0), keys[s]));
        }
    }
    Some(Fit {
        frames: keys,
        insert_order: order,
    })
}

fn check_mids(
    target: &Target,
    interpolation: Interpolation,
    tolerance: f32,
    fit: Fit,
) -> Option<Fit> {
    for s in 0..fit.frames.len().saturating_sub(1) {
        if segment_error(target, interpolation, &fit.frames, s).0 > tolerance {
            return None;
        }
    }
    Some(fit)
}

/// Largest error strictly inside segment `s` (and at its midpoints), and where.
fn segment_error(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
) -> (f32, f32) {
    let (k0, k1) = (keys[s], keys[s + 1]);
    let mut worst = (0.0f32, k0 as f32);
    for f in k0 + 1..k1 {
        let e = distance(
            target.is_rotation,
            target.raw[f as usize],
            sample(target, interpolation, keys, s, f as f32),
        );
        if e > worst.0 {
            worst = (e, f as f32);
        }
    }
    if let Some(mids) = target.mids {
        for f in k0..k1 {
            let x = f as f32 + 0.5;
            let e = distance(
                target.is_rotation,
                mids[f as usize],
                sample(target, interpolation, keys, s, x),
            );
            if e > worst.0 {
                worst = (e, x);
            }
        }
    }
    worst
}

/// Evaluates the curve through `keys` inside segment `s`, as `Curve::sample_segment` does.
#[inline]
fn sample(
    target: &Target,
    interpolation: Interpolation,
    keys: &[u32],
    s: usize,
    frame: f32,
) -> Vec4 {
    let key = |i: usize| (keys[i] as f32, target.key_values[keys[i] as usize]);
    let window = [
        key(s.saturating_sub(1)),
        key(s),
        key(s + 1),
        key((s + 2).min(keys.len() - 1)),
    ];
    eval_window(interpolation, target.is_rotation, &window, frame)
}

#[cfg(test)]
mod tests {
    use super::super::curve::Curve;
    use super::*;

    fn wave(n: usize) -> Vec<Vec4> {
        (0..n)
            .map(|f| {
                Vec4::new(
                    (f as f32 * 0.05).sin(),
                    (f as f32 * 0.02).cos(),
                    0.01 * f as f32,
                    0.0,
                )
            })
            .collect()
    }

    #[test]
    fn fit_holds_tolerance_and_matches_curve() {
        let raw = wave(120);
        let mids: Vec<Vec4> = raw.windows(2).map(|w| (w[0] + w[1]) * 0.5).collect();
        for interp in [Interpolation::Linear, Interpolation::CatmullRom] {
            let t = Target {
                raw: &raw,
                mids: Some(&mids),
                key_values: &raw,
                is_rotation: false,
            };
            let fit = fit(&t, interp, 1e-3).unwrap();
            assert!(
                fit.frames.len() < 120,
                "{interp:?} kept {}",
                fit.frames.len()
            );
            assert_eq!(fit.insert_order.len(), fit.frames.len());
            let c = Curve::new(
                interp,
                false,
                fit.frames.clone(),
                fit.frames.iter().map(|&f| raw[f as usize]).collect(),
            );
            for (f, r) in raw.iter().enumerate() {
                assert!((c.sample(f as f32) - *r).length() <= 1e-3 + 1e-6);
            }
        }
    }

    #[test]
    fn catmull_rom_needs_fewer_keys_on_smooth_motion() {
        let raw = wave(240);
        let t = Target {
            raw: &raw,
            mids: None,
            key_values: &raw,
            is_rotation: false,
        };
        let l = fit(&t, Interpolation::Linear, 1e-3).unwrap().frames.len();
        let c = fit(&t, Interpolation::CatmullRom, 1e-3)
            .unwrap()
            .frames
            .len();
        assert!(c < l / 2, "catmull-rom {c} vs linear {l}");
    }
}
