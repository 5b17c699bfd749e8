//! "Normalize components" in the curves panel: each component scaled to the range of its raw
//! samples and decoded curve together, with a floor on the span so that a component constant
//! within noise (a rotation component varying by 1e-9) is drawn flat, labelled constant,
//! instead of magnifying quantization noise a million times.

/// Per-component offset and span of the displayed values.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ComponentScale {
    lo: [f64; 4],
    span: [f64; 4],
    /// Components whose values vary by less than the floor.
    pub constant: [bool; 4],
}

impl ComponentScale {
    /// Scales covering every value of `series` (raw samples, decoded curve and keys), each
    /// component's span at least `floor` (display units: what the track's tolerance allows).
    pub fn new(series: impl IntoIterator<Item = [f64; 4]>, floor: f64) -> Self {
        let floor = if floor.is_finite() && floor > 0.0 {
            floor
        } else {
            1e-9
        };
        let mut lo = [f64::INFINITY; 4];
        let mut hi = [f64::NEG_INFINITY; 4];
        for c in series {
            for i in 0..4 {
                if c[i].is_finite() {
                    lo[i] = lo[i].min(c[i]);
                    hi[i] = hi[i].max(c[i]);
                }
            }
        }
        let mut span = [floor; 4];
        let mut constant = [true; 4];
        for i in 0..4 {
            if lo[i] > hi[i] {
                lo[i] = -floor / 2.0;
            } else if hi[i] - lo[i] >= floor {
                span[i] = hi[i] - lo[i];
                constant[i] = false;
            } else {
                lo[i] = (lo[i] + hi[i]) / 2.0 - floor / 2.0;
            }
        }
        Self { lo, span, constant }
    }

    /// `c` mapped to [0, 1] per component (a constant component stays near 0.5).
    pub fn apply(&self, c: [f64; 4]) -> [f64; 4] {
        std::array::from_fn(|i| (c[i] - self.lo[i]) / self.span[i])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_constant_within_noise_stays_flat_in_range() {
        // y varies by 2.5e-9 (RobotExpressive LowerLeg.R), the decoded curve by 1e-6 of
        // quantization noise; x swings for real.
        let raw = (0..50).map(|f| [f as f64 / 49.0, 0.3 + 2.5e-9 * (f % 2) as f64, 0.0, 1.0]);
        let decoded = (0..50).map(|f| [f as f64 / 49.0, 0.3 + 1e-6 * (f % 3) as f64, 0.0, 1.0]);
        let all: Vec<[f64; 4]> = raw.chain(decoded).collect();
        let s = ComponentScale::new(all.iter().copied(), 1e-4);
        assert_eq!(s.constant, [false, true, true, true]);
        for c in &all {
            let d = s.apply(*c);
            for v in d {
                assert!((0.0..=1.0).contains(&v), "{d:?}");
            }
            assert!(
                (d[1] - 0.5).abs() < 0.02,
                "near-constant y drawn flat: {}",
                d[1]
            );
        }
        assert_eq!(s.apply([0.0; 4])[0], 0.0);
        assert_eq!(s.apply([1.0; 4])[0], 1.0);
    }
}
