//! Decoding side of the lossless coding of a ranged track's quantized keys: within
//! segments of [`SEGMENT_KEYS`] keys, the first key is stored as is and every later key as
//! the zigzag-coded residual from a prediction (first order: the previous key; second
//! order: the linear extrapolation of the two previous keys scaled by their key time gaps).

/// Quantized integers of one key (unused components are zero).
pub type Codes = [u32; 3];

/// Keys per prediction segment.
pub const SEGMENT_KEYS: usize = 16;
/// Bits of one per-segment, per-component residual width.
pub const WIDTH_BITS: u32 = 5;

/// The prediction of key `i` (component `c`) from the previous keys of its segment,
/// clamped to the code range `[0, max]` so residuals fit in one bit more than the codes.
#[inline]
#[allow(clippy::too_many_arguments)]
pub fn predict(
    codes: &[Codes],
    frames: &[u32],
    seg_start: usize,
    i: usize,
    c: usize,
    max: u64,
    order: u8,
) -> i64 {
    if i == seg_start {
        return 0;
    }
    let prev = codes[i - 1][c] as i64;
    if i == seg_start + 1 || order < 2 {
        return prev;
    }
    let prev2 = codes[i - 2][c] as i64;
    extrapolate(prev, prev2, [frames[i - 2], frames[i - 1], frames[i]], max)
}

/// The second-order prediction from the two previous codes `prev2` (at frame `t[0]`) and
/// `prev` (at `t[1]`) for the key at frame `t[2]`: `prev + (prev - prev2) * (t2 - t1) /
/// (t1 - t0)`, rounded half away from zero, in integers, clamped to `[0, max]`.
#[inline]
pub fn extrapolate(prev: i64, prev2: i64, t: [u32; 3], max: u64) -> i64 {
    let (t0, t1, t2) = (t[0] as i64, t[1] as i64, t[2] as i64);
    let (ahead, behind) = (t2 - t1, t1 - t0);
    let num = (prev - prev2) * ahead;
    // Equal gaps (and gaps of one frame behind) round to the exact quotient: no division.
    let q = if ahead == behind {
        prev - prev2
    } else if behind == 1 {
        num
    } else if num >= 0 {
        (2 * num + behind) / (2 * behind)
    } else {
        -((-2 * num + behind) / (2 * behind))
    };
    (prev + q).clamp(0, max as i64)
}

/// Maps a signed residual to an unsigned one (0, -1, 1, -2, ... to 0, 1, 2, 3, ...).
#[inline]
pub fn zigzag(x: i64) -> u64 {
    ((x << 1) ^ (x >> 63)) as u64
}

/// The inverse of [`zigzag`].
#[inline]
pub fn unzigzag(z: u64) -> i64 {
    ((z >> 1) as i64) ^ -((z & 1) as i64)
}
