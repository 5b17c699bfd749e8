//! Lossless coding of a ranged track's quantized keys: within segments of
//! [`SEGMENT_KEYS`] keys, the first key is stored as is and every later key as the residual
//! from a prediction: the previous key (first order, best for noisy capture) or the linear
//! extrapolation of the two previous keys scaled by their key time gaps (second order, best
//! for smooth curves), whichever makes the track smaller. Residuals are zigzag-coded and bit-packed with one width per segment and
//! component. A segment decodes on its own, so random access touches at most one segment.

use super::quantize::{Codes, Format, Range};

pub use skelpack_runtime::predict::{
    SEGMENT_KEYS, WIDTH_BITS, extrapolate, predict, unzigzag, zigzag,
};

/// Bits needed to hold `z`.
#[inline]
pub fn width_of(z: u64) -> u32 {
    64 - z.leading_zeros()
}

/// The varying components of a format/range (the ones stored).
pub fn stored_components(format: Format, range: &Range) -> Vec<usize> {
    match format {
        Format::SmallestThree48 | Format::SmallestThreeWide { .. } => vec![],
        _ => (0..3).filter(|&c| range.extent[c] > 0.0).collect(),
    }
}

/// Residual widths per segment and stored component, for codes of `bits` bits.
pub fn segment_widths(
    codes: &[Codes],
    frames: &[u32],
    comps: &[usize],
    bits: u32,
    order: u8,
) -> Vec<[u32; 3]> {
    let max = (1u64 << bits) - 1;
    let mut out = Vec::new();
    for start in (0..codes.len()).step_by(SEGMENT_KEYS) {
        let end = (start + SEGMENT_KEYS).min(codes.len());
        let mut w = [0u32; 3];
        for &c in comps {
            for i in start + 1..end {
                let r = codes[i][c] as i64 - predict(codes, frames, start, i, c, max, order);
                w[c] = w[c].max(width_of(zigzag(r)));
            }
        }
        out.push(w);
    }
    out
}

/// Bits of an animated track's key values with the best predictor order.
pub fn value_bits(format: Format, range: &Range, codes: &[Codes], frames: &[u32]) -> u64 {
    let [one, two] = bits_per_order(format, range, codes, frames);
    one.min(two)
}

/// The predictor order (1 or 2) that codes the track in fewer bits (2 on a tie).
pub fn best_order(format: Format, range: &Range, codes: &[Codes], frames: &[u32]) -> u8 {
    let [one, two] = bits_per_order(format, range, codes, frames);
    if one < two { 1 } else { 2 }
}

/// Bits of the key values with predictor orders 1 and 2, in one pass over the residuals
/// (the cost model every encoding is ranked by, so it runs without allocating).
fn bits_per_order(format: Format, range: &Range, codes: &[Codes], frames: &[u32]) -> [u64; 2] {
    let bits = match format {
        Format::SmallestThree48 => return [48 * codes.len() as u64; 2],
        Format::SmallestThreeWide { bits } => {
            return [(2 + 3 * bits as u64) * codes.len() as u64; 2];
        }
        Format::RangedRotation { bits } | Format::RangedVector { bits } => bits as u64,
    };
    let max = (1u64 << bits) - 1;
    let mut total = [0u64; 2];
    for start in (0..codes.len()).step_by(SEGMENT_KEYS) {
        let end = (start + SEGMENT_KEYS).min(codes.len());
        let n = (end - start) as u64;
        // Keys on consecutive frames (a track keeping every frame) have equal gaps, where
        // the second-order prediction is plain extrapolation: `extrapolate` without its
        // branches, the same values.
        let consecutive = frames[end - 1] - frames[start] == (end - start - 1) as u32;
        for c in (0..3).filter(|&c| range.extent[c] > 0.0) {
            // `predict` of both orders, with the two previous codes carried along; the
            // widest residual is as wide as all of them or-ed together.
            let mut or = [0u64; 2];
            let (mut prev2, mut prev) = (0i64, codes[start][c] as i64);
            for i in start + 1..end {
                let code = codes[i][c] as i64;
                let second = if i == start + 1 {
                    prev
                } else if consecutive {
                    (2 * prev - prev2).clamp(0, max as i64)
                } else {
                    extrapolate(prev, prev2, [frames[i - 2], frames[i - 1], frames[i]], max)
                };
                or[0] |= zigzag(code - prev);
                or[1] |= zigzag(code - second);
                (prev2, prev) = (prev, code);
            }
            for (t, or) in total.iter_mut().zip(or) {
                *t += WIDTH_BITS as u64 + bits + (n - 1) * width_of(or) as u64;
            }
        }
    }
    total
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fixed generator: each call gives a number below its argument.
    fn generator(mut state: u64) -> impl FnMut(u64) -> u64 {
        move |n| {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (state >> 33) % n
        }
    }

    #[test]
    fn zigzag_round_trips() {
        for x in [-5i64, -1, 0, 1, 7, 1 << 30, -(1 << 30)] {
            assert_eq!(unzigzag(zigzag(x)), x);
        }
    }

    #[test]
    fn smooth_tracks_cost_few_bits() {
        let frames: Vec<u32> = (0..64).collect();
        let codes: Vec<Codes> = frames
            .iter()
            .map(|&f| [(1000.0 + 400.0 * (f as f64 * 0.1).sin()) as u32, 5, 77])
            .collect();
        let range = Range {
            min: [0.0; 3],
            extent: [1.0, 0.0, 1.0],
            ..Range::default()
        };
        let f = Format::RangedVector { bits: 12 };
        let coded = value_bits(f, &range, &codes, &frames);
        assert!(coded < 64 * 24 / 2, "{coded} bits");
    }

    /// The one-pass cost of both orders against the per-segment widths the container
    /// writes, summed the plain way, on codes and key gaps from a fixed generator.
    #[test]
    fn both_orders_cost_what_the_written_widths_add_up_to() {
        let mut next = generator(0x1234_5678);
        for case in 0..200 {
            let bits = 3 + next(20) as u8;
            let keys = 1 + next(70) as usize;
            let mut frames = vec![0u32];
            for _ in 1..keys {
                frames.push(frames.last().unwrap() + 1 + next(4) as u32);
            }
            let smooth = case % 2 == 0;
            let codes: Vec<Codes> = (0..keys)
                .map(|i| {
                    std::array::from_fn(|c| {
                        let max = (1u64 << bits) - 1;
                        let v = if smooth {
                            (i as u64 * (c as u64 + 1) * 7 + next(3)) % (max + 1)
                        } else {
                            next(max + 1)
                        };
                        v as u32
                    })
                })
                .collect();
            let range = Range {
                min: [0.0; 3],
                extent: [1.0, if case % 3 == 0 { 0.0 } else { 1.0 }, 1.0],
                ..Range::default()
            };
            let format = Format::RangedVector { bits };
            let comps = stored_components(format, &range);
            let plain = |order: u8| -> u64 {
                segment_widths(&codes, &frames, &comps, bits as u32, order)
                    .iter()
                    .enumerate()
                    .map(|(s, w)| {
                        let n = (keys - s * SEGMENT_KEYS).min(SEGMENT_KEYS) as u64;
                        comps
                            .iter()
                            .map(|&c| WIDTH_BITS as u64 + bits as u64 + (n - 1) * w[c] as u64)
                            .sum::<u64>()
                    })
                    .sum()
            };
            let (one, two) = (plain(1), plain(2));
            assert_eq!(value_bits(format, &range, &codes, &frames), one.min(two));
            let order = if one < two { 1 } else { 2 };
            assert_eq!(best_order(format, &range, &codes, &frames), order, "{case}");
        }
    }

    #[test]
    fn prediction_scales_with_key_gaps() {
        let frames = [0u32, 2, 6];
        let codes = [[10u32, 0, 0], [20, 0, 0], [0, 0, 0]];
        // 20 + (20 - 10) * 4 / 2 = 40
        assert_eq!(predict(&codes, &frames, 0, 2, 0, 1000, 2), 40);
        assert_eq!(predict(&codes, &frames, 0, 2, 0, 30, 2), 30);
        assert_eq!(predict(&codes, &frames, 0, 2, 0, 1000, 1), 20);
    }

    /// The extrapolation's shortcuts (equal gaps, a gap of one frame behind) give what the
    /// rounded division gives, over every sign, gap and clamp a fixed generator reaches.
    #[test]
    fn extrapolation_shortcuts_round_like_the_division() {
        let plain = |prev: i64, prev2: i64, t: [u32; 3], max: u64| {
            let (t0, t1, t2) = (t[0] as i64, t[1] as i64, t[2] as i64);
            let num = (prev - prev2) * (t2 - t1);
            let den = t1 - t0;
            let q = if num >= 0 {
                (2 * num + den) / (2 * den)
            } else {
                -((-2 * num + den) / (2 * den))
            };
            (prev + q).clamp(0, max as i64)
        };
        let mut next = generator(0x9e37_79b9);
        for _ in 0..20_000 {
            let bits = 3 + next(21) as u32;
            let max = (1u64 << bits) - 1;
            let (prev, prev2) = (next(max + 1) as i64, next(max + 1) as i64);
            let longest = if next(2) == 0 { 2 } else { 300 };
            let behind = 1 + next(longest) as u32;
            let ahead = match next(3) {
                0 => behind,
                _ => 1 + next(300) as u32,
            };
            let t0 = next(10_000) as u32;
            let t = [t0, t0 + behind, t0 + behind + ahead];
            assert_eq!(
                extrapolate(prev, prev2, t, max),
                plain(prev, prev2, t, max),
                "{prev} {prev2} {t:?} {max}"
            );
        }
    }
}
