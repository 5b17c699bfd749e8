//! "Fit in N KiB": the smallest error whose compressed size fits a byte budget. One global
//! scale multiplies every joint's tolerance (the animator's per-joint ratios are kept); the
//! scale is searched by bracketing then bisection in log space, each step a compression.
//! The answer is the tightest scale found that fits, with its size and error.

use super::{CodecError, CompressedClip, Control, compress};
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// The scales the search brackets within: tolerances from 1/1024 to 4096 times the set ones.
pub const MIN_SCALE: f32 = 1.0 / 1024.0;
pub const MAX_SCALE: f32 = 4096.0;
/// Bracketing steps multiply or divide the scale by this.
const BRACKET_FACTOR: f32 = 4.0;
/// Bisection stops when the bracket is this narrow (fit and fail scales within 2%).
const CLOSE_ENOUGH: f32 = 1.02;
/// Bisection steps at most (each a compression of every clip).
pub const MAX_BISECTIONS: usize = 10;

/// One compression at one scale.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Probe {
    /// The factor on every tolerance.
    pub scale: f32,
    /// Compressed payload bytes (summed over the clips).
    pub bytes: u64,
    /// The largest error at samples and midpoints (scene units), over the clips.
    pub max_error: f32,
    /// Every clip met its scaled tolerances.
    pub contract_met: bool,
}

/// Where the search landed.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Fit {
    pub budget_bytes: u64,
    /// The smallest scale whose size fits the budget (None: not even at [`MAX_SCALE`]).
    pub best: Option<Probe>,
    /// Every probe, in the order made.
    pub probes: Vec<Probe>,
}

impl Fit {
    /// The probe to report: the best fit, or the smallest size reached when nothing fits.
    pub fn reached(&self) -> Option<&Probe> {
        self.best
            .as_ref()
            .or_else(|| self.probes.iter().min_by_key(|p| p.bytes))
    }
}

/// Searches the scale with `probe` (a compression at a scale) for the smallest scale whose
/// bytes fit `budget_bytes`. Sizes are not strictly monotonic in the scale, so the answer is
/// the smallest fitting scale among the probes made, not a proof that none smaller fits.
pub fn search<E>(
    budget_bytes: u64,
    mut probe: impl FnMut(f32) -> Result<Probe, E>,
) -> Result<Fit, E> {
    let mut probes = Vec::new();
    let mut run = |s: f32, probes: &mut Vec<Probe>| -> Result<bool, E> {
        let p = probe(s)?;
        let fits = p.bytes <= budget_bytes;
        probes.push(p);
        Ok(fits)
    };
    // Bracket: a scale that fits and one that does not.
    let (mut fit, mut fail) = (None, None);
    let mut s = 1.0f32;
    if run(s, &mut probes)? {
        fit = Some(s);
        while s > MIN_SCALE {
            s = (s / BRACKET_FACTOR).max(MIN_SCALE);
            if run(s, &mut probes)? {
                fit = Some(s);
            } else {
                fail = Some(s);
                break;
            }
        }
    } else {
        fail = Some(s);
        while s < MAX_SCALE {
            s = (s * BRACKET_FACTOR).min(MAX_SCALE);
            if run(s, &mut probes)? {
                fit = Some(s);
                break;
            }
            fail = Some(s);
        }
    }
    // Bisect in log space between the failing (tighter) and fitting (looser) scales.
    if let (Some(mut hi), Some(mut lo)) = (fit, fail) {
        for _ in 0..MAX_BISECTIONS {
            if hi / lo <= CLOSE_ENOUGH {
                break;
            }
            let mid = (lo * hi).sqrt();
            if run(mid, &mut probes)? {
                hi = mid;
            } else {
                lo = mid;
            }
        }
    }
    let best = probes
        .iter()
        .filter(|p| p.bytes <= budget_bytes)
        .min_by(|a, b| a.scale.total_cmp(&b.scale))
        .cloned();
    Ok(Fit {
        budget_bytes,
        best,
        probes,
    })
}

/// `resolved` with every tolerance multiplied by `scale`.
pub fn scaled(resolved: &Resolved, scale: f32) -> Resolved {
    let mut r = resolved.clone();
    for t in &mut r.limits.tolerance {
        *t *= scale;
    }
    r
}

/// Fits `clips` (each with its resolved settings) together in `budget_bytes` of payload:
/// the search's answer and the clips compressed at the best scale (or at the smallest size
/// reached when nothing fits).
pub fn fit_clips(
    skeleton: &Skeleton,
    clips: &[(&Clip, Resolved)],
    budget_bytes: u64,
    control: &Control,
) -> Result<(Fit, Vec<CompressedClip>), CodecError> {
    let compress_at = |scale: f32| -> Result<Vec<CompressedClip>, CodecError> {
        clips
            .iter()
            .map(|(clip, r)| {
                if control.is_cancelled() {
                    return Err(CodecError::Cancelled);
                }
                compress(skeleton, clip, &scaled(r, scale), control)
            })
            .collect()
    };
    let fit = search(budget_bytes, |scale| {
        compress_at(scale).map(|out| summarize(scale, &out))
    })?;
    let scale = fit.reached().map_or(1.0, |p| p.scale);
    let out = compress_at(scale)?;
    Ok((fit, out))
}

/// The probe a set of compressed clips makes.
pub fn summarize(scale: f32, clips: &[CompressedClip]) -> Probe {
    Probe {
        scale,
        bytes: clips.iter().map(|c| c.report.payload_bytes).sum(),
        max_error: clips
            .iter()
            .map(|c| c.report.error_samples.max.max(c.report.error_midpoints.max))
            .fold(0.0, f32::max),
        contract_met: clips.iter().all(|c| c.report.contract_met),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A size model: bytes fall as the scale grows (with steps), error grows with it.
    fn model(scale: f32) -> Result<Probe, ()> {
        let bytes = (10_000.0 / (1.0 + scale.log2().max(-10.0) + 10.0)).round() as u64;
        Ok(Probe {
            scale,
            bytes,
            max_error: scale * 1e-4,
            contract_met: true,
        })
    }

    #[test]
    fn a_budget_that_fits_at_once_searches_tighter() {
        let at_one = model(1.0).unwrap().bytes;
        let fit = search(at_one + 100, model).unwrap();
        let best = fit.best.expect("fits");
        assert!(best.scale < 1.0, "{best:?}");
        assert!(best.bytes <= at_one + 100);
        // The next tighter probe made does not fit (the bracket closed on the boundary).
        let tighter_fails = fit
            .probes
            .iter()
            .filter(|p| p.scale < best.scale)
            .all(|p| p.bytes > at_one + 100);
        assert!(tighter_fails);
    }

    #[test]
    fn a_small_budget_searches_looser_and_lands_close_to_it() {
        let budget = 600;
        let fit = search(budget, model).unwrap();
        let best = fit.best.expect("fits");
        assert!(best.scale > 1.0 && best.bytes <= budget, "{best:?}");
        // Within the bisection's 2%: a scale 2% tighter would not fit.
        let tighter = model(best.scale / 1.02).unwrap();
        assert!(
            tighter.bytes > budget || best.scale <= MIN_SCALE,
            "{tighter:?}"
        );
        assert!(fit.probes.len() <= 1 + 7 + MAX_BISECTIONS);
    }

    #[test]
    fn an_impossible_budget_reports_the_smallest_size_reached() {
        let fit = search(1, model).unwrap();
        assert!(fit.best.is_none());
        let reached = fit.reached().expect("probes made");
        assert_eq!(reached.scale, MAX_SCALE);
        assert_eq!(fit.probes.len(), 1 + 6);
    }

    #[test]
    fn probe_errors_stop_the_search() {
        let mut calls = 0;
        let r = search(100, |_| {
            calls += 1;
            if calls == 2 {
                Err("cancelled")
            } else {
                model(1.0).map_err(|_| "")
            }
        });
        assert_eq!(r.unwrap_err(), "cancelled");
    }
}
