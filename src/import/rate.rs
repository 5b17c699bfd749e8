//! Source frame-rate detection from key times.

/// Frame rates tried, in order of preference (the smallest that fits wins).
const STANDARD_RATES: [f32; 12] = [
    24.0, 25.0, 30.0, 48.0, 50.0, 60.0, 72.0, 90.0, 96.0, 100.0, 120.0, 240.0,
];

/// How far (in frames) a key may sit from a frame of the candidate rate.
const FRAME_SLACK: f64 = 0.01;

/// The smallest standard rate on whose frame grid (starting at the first key) every key
/// time lies; without one, the rate implied by the smallest key spacing, rounded to a whole
/// number of frames per second (at most 240). Returns 30 for fewer than two distinct times.
pub fn detect_sample_rate(times: &[f32]) -> f32 {
    let mut t: Vec<f64> = times
        .iter()
        .filter(|x| x.is_finite())
        .map(|&x| x as f64)
        .collect();
    t.sort_by(|a, b| a.total_cmp(b));
    t.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    if t.len() < 2 {
        return 30.0;
    }
    let t0 = t[0];
    for &rate in &STANDARD_RATES {
        let r = rate as f64;
        if t.iter().all(|&x| {
            let f = (x - t0) * r;
            (f - f.round()).abs() < FRAME_SLACK
        }) {
            return rate;
        }
    }
    let min_dt = t
        .windows(2)
        .map(|w| w[1] - w[0])
        .fold(f64::INFINITY, f64::min);
    ((1.0 / min_dt).round().clamp(1.0, 240.0)) as f32
}

/// The most common spacing between consecutive distinct key times, as a rate (frames per
/// second), if any; used to tell the user when keys are off the grid of their own spacing.
pub fn dominant_rate(times: &[f32]) -> Option<f32> {
    let mut t: Vec<f32> = times.iter().copied().filter(|x| x.is_finite()).collect();
    t.sort_by(f32::total_cmp);
    t.dedup_by(|a, b| (*a - *b).abs() < 1e-6);
    let mut counts: Vec<(f32, usize)> = Vec::new();
    for w in t.windows(2) {
        let r = (1.0 / (w[1] - w[0])).round();
        match counts.iter_mut().find(|(x, _)| *x == r) {
            Some(c) => c.1 += 1,
            None => counts.push((r, 1)),
        }
    }
    counts.into_iter().max_by_key(|c| c.1).map(|c| c.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_24_fps_at_24() {
        let t: Vec<f32> = (0..48).map(|i| 1.0 / 24.0 + i as f32 / 24.0).collect();
        assert_eq!(detect_sample_rate(&t), 24.0);
    }

    #[test]
    fn thirty_and_gaps() {
        let mut t: Vec<f32> = (0..10).map(|i| i as f32 / 30.0).collect();
        t.push(1.0);
        assert_eq!(detect_sample_rate(&t), 30.0);
    }

    #[test]
    fn sixty_when_needed() {
        let t: Vec<f32> = (0..10).map(|i| i as f32 / 60.0).collect();
        assert_eq!(detect_sample_rate(&t), 60.0);
    }

    #[test]
    fn odd_rate_falls_back_to_spacing() {
        let t: Vec<f32> = (0..10).map(|i| i as f32 / 37.0).collect();
        assert_eq!(detect_sample_rate(&t), 37.0);
    }
}
