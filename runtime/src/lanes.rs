//! The lane kernel: linear rotation tracks sampled eight at a time, one track per lane of
//! 256-bit registers, with the same values bit for bit as the scalar path
//! ([`crate::curve::slerp`] and the pose's normalization, one track at a time).
//!
//! Why it keeps the bits: every operation of the scalar code is an IEEE operation that is
//! correctly rounded per lane (`+`, `-`, `*`, `/`, `sqrt`, conversions, and the sine's
//! fused multiply-adds as `vfmadd`, which is what [`f64::mul_add`] compiles to), and the
//! kernel performs them in the same order per lane: the segment fraction's division and
//! clamp, the two sines of [`crate::sin`] (in `f64`, four lanes per register), the weights'
//! divisions, `a * w0 + b * w1`, and twice glam's `Vec4::normalize`
//! (`v / sqrt((x*x + z*z) + (y*y + w*w))`). No reciprocal or reciprocal-square-root
//! estimate, no reordered sum, no contraction of a multiply and an add that the scalar code
//! keeps apart. Branches of the scalar code become both sides computed and a per-lane
//! select: a segment whose sine is below `1e-6` (plain lerp weights), the sine's tiny inputs
//! (`|y| < 2^-12` returns `y`) and its two quadrants (sine polynomial below `π/4`, cosine
//! polynomial of `y - π/2` above). A group whose arcs are all below 0.75 rad (nearly every
//! group: keys a few frames apart) skips the cosine side, which no lane can need. The
//! kernel requires every segment's angle in `[0, 2.3]` (each sine's input below `3π/4`,
//! quadrant 0 or 1): [`lanes_fit`] says whether a segment fits; a clip with a segment that
//! does not is sampled one track at a time.
//!
//! Where the time went without it: per track, two square roots and five divisions (the
//! fraction, the two weights, two normalizations), long-latency instructions that eight
//! tracks now share, and the sines' polynomials, evaluated for four tracks per instruction.
//!
//! Clips with fewer than eight linear rotation tracks and at least three rotations use the
//! second kernel here, [`normalize_rotations`]: each rotation is mixed one track at a time (a slerp's weighted
//! sum, a Catmull-Rom polynomial) and their normalizations run two per 256-bit register,
//! one quaternion per 128-bit half as glam holds it, with glam's own shuffles for the
//! dot product.
//!
//! x86-64 only, and only on CPUs with FMA (which implies AVX, so the kernel uses 256-bit
//! registers): the sine's multiply-adds must be fused to give glibc's `sinf` bits
//! ([`crate::sin`]). Elsewhere the prepared layout samples one track at a time, the same
//! values. `tests/lanes.rs` compares the two paths on the shared assets.

#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::*;
#[cfg(target_arch = "x86_64")]
use std::mem::MaybeUninit;

use glam::Vec4;

#[cfg(target_arch = "x86_64")]
use crate::sin::{HPI, HPI_INV, POLY};

/// One linear rotation segment as a lane reads it: its arc's ends `a` and `b`, and
/// `(theta, sin_theta, f0, dt)`: the arc's angle and its sine, the segment's first frame
/// and its length in frames.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) type SlerpLanes = [Vec4; 3];

/// Whether a segment of angle `theta` can be sampled in a lane (see the module
/// documentation): `theta` in `[0, 2.3]`, which every arc [`crate::curve::SlerpArc`]
/// builds from finite keys is (`acos` of a dot product clamped to `[0, 1]`: at most `π/2`).
pub(crate) fn lanes_fit(theta: f32) -> bool {
    (0.0..=2.3).contains(&theta)
}

/// How many of `count` linear rotation tracks go through the lanes: every full group of
/// eight. The rest are sampled one at a time: a partial group padded to eight lanes cost
/// more than its few tracks in the scalar code, whose short chains overlap (measured on
/// RobotExpressive Idle's 6 tracks and the tails of 13_07's and CesiumMan's; docs/RUNTIME.md).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
pub(crate) fn lane_count(count: usize) -> usize {
    count - count % 8
}

/// Samples `count` linear rotation tracks (a multiple of 8, [`lane_count`]) eight at a
/// time: `segment(i)` is track `i`'s segment at frame `f`, `write(i, q)` receives its
/// rotation.
///
/// Each group's work is one long chain of dependent long-latency instructions (a
/// division, the sines, divisions, two square roots and divisions); the processor overlaps
/// independent groups only as far as its reorder window reaches. So the work is split in
/// two phases over up to [`BATCH`] groups: every group's weights first ([`weigh8`]), then
/// every group's rotations ([`rotate8`]), which lets the window hold several groups' chains.
///
/// # Safety
/// The CPU must have FMA (and so AVX); every segment's angle must fit ([`lanes_fit`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
pub(crate) unsafe fn slerp_tracks<'a>(
    count: usize,
    segment: impl Fn(usize) -> &'a SlerpLanes,
    mut write: impl FnMut(usize, Vec4),
    f: f32,
) {
    debug_assert_eq!(count % 8, 0);
    let mut weighed = [MaybeUninit::<Weighed>::uninit(); BATCH];
    let mut first = 0;
    while first + 8 <= count {
        let groups = ((count - first) / 8).min(BATCH);
        for (g, w) in weighed.iter_mut().enumerate().take(groups) {
            let s = |i: usize| segment(first + 8 * g + i);
            w.write(weigh8([s(0), s(1), s(2), s(3), s(4), s(5), s(6), s(7)], f));
        }
        for (g, w) in weighed.iter().enumerate().take(groups) {
            // SAFETY: the first loop wrote groups `0..groups`.
            let q = rotate8(unsafe { w.assume_init_ref() });
            for (i, q) in q.into_iter().enumerate() {
                write(first + 8 * g + i, q);
            }
        }
        first += 8 * BATCH;
    }
}

/// Groups of eight tracks per batch of [`slerp_tracks`].
const BATCH: usize = 4;

/// Eight segments' arcs and their weights at one frame (the first phase).
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Weighed {
    /// The arcs' ends, as `[x, y, z, w]` columns of eight lanes.
    a: [__m256; 4],
    b: [__m256; 4],
    /// `slerp`'s weights of `a` and `b`.
    w0: __m256,
    w1: __m256,
}

/// The first phase: eight segments (one per lane, `s[i]` in lane `i`) and their slerp
/// weights at frame `f`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn weigh8(s: [&SlerpLanes; 8], f: f32) -> Weighed {
    let a = columns(&s, 0);
    let b = columns(&s, 1);
    let [theta, sin_theta, f0, dt] = columns(&s, 2);
    let zero = _mm256_setzero_ps();
    let one = _mm256_set1_ps(1.0);
    // `segment_u`: `((f - f0) / dt).clamp(0, 1)`, 0 where `dt <= 0`. `max(0, u)` and
    // `min(1, u)` in this operand order keep `-0.0` and NaN as `clamp` does.
    let u = _mm256_div_ps(_mm256_sub_ps(_mm256_set1_ps(f), f0), dt);
    let u = _mm256_min_ps(one, _mm256_max_ps(zero, u));
    let u = _mm256_and_ps(_mm256_cmp_ps::<_CMP_GT_OQ>(dt, zero), u);
    let v = _mm256_sub_ps(one, u);
    // `slerp`'s weights: the sines over the arc's sine, or `(1 - u, u)` for a short arc.
    let (y0, y1) = (_mm256_mul_ps(v, theta), _mm256_mul_ps(u, theta));
    // Arcs below 0.75 (nearly all: keys a few frames apart) give sine inputs below 0.75,
    // the scalar code's unreduced branch: the odd polynomial alone.
    let wide = _mm256_movemask_ps(_mm256_cmp_ps::<_CMP_GE_OQ>(theta, _mm256_set1_ps(0.75)));
    let (s0, s1) = if wide == 0 {
        (sin8::<false>(y0), sin8::<false>(y1))
    } else {
        (sin8::<true>(y0), sin8::<true>(y1))
    };
    let w0 = _mm256_div_ps(s0, sin_theta);
    let w1 = _mm256_div_ps(s1, sin_theta);
    let short = _mm256_cmp_ps::<_CMP_LT_OQ>(sin_theta, _mm256_set1_ps(1e-6));
    Weighed {
        a,
        b,
        w0: _mm256_blendv_ps(w0, v, short),
        w1: _mm256_blendv_ps(w1, u, short),
    }
}

/// The second phase: the eight rotations `a * w0 + b * w1`, normalized (the slerp's
/// normalization), normalized again (the pose's), as four-component vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn rotate8(p: &Weighed) -> [Vec4; 8] {
    let (a, b, w0, w1) = (&p.a, &p.b, p.w0, p.w1);
    let q = [
        mix(a[0], b[0], w0, w1),
        mix(a[1], b[1], w0, w1),
        mix(a[2], b[2], w0, w1),
        mix(a[3], b[3], w0, w1),
    ];
    rows(normalize8(normalize8(q)))
}

/// Normalizes rotations mixed one track at a time as the scalar path does, bit for bit,
/// two per 256-bit register (each in its own 128-bit half, as glam holds one), so each
/// square root and division serves two tracks. With `HERMITE`, every one is a Catmull-Rom
/// rotation, normalized as [`crate::curve::eval_hermite`] does (glam's `normalize_or(W)`:
/// `v * (1 / length)`, `W` where that reciprocal is not finite and positive); without, a
/// slerp's mix ([`crate::curve::slerp_mix`]), normalized as [`crate::curve::slerp`] does
/// (`v / length`). Then every one is normalized again, as the pose's rotation is. The
/// length is glam's SSE2 dot product in each half (`(x*x + z*z) + (y*y + w*w)` in every
/// lane). `v` holds `count` rotations (at most eight); the rest of the eight are
/// overwritten. The two kinds are normalized apart (one call each): a pair of one of
/// each would need both normalizations and a blend.
///
/// For clips with no group of eight linear rotations ([`slerp_tracks`]) and at least
/// three rotations (RobotExpressive Idle: three slerps and two Catmull-Rom rotations):
/// there each track's two normalizations are most of its chain. Where groups of eight run,
/// the rest stays one track at a time (pairing it was slower; docs/RUNTIME.md).
///
/// # Safety
/// The CPU must have FMA (and so AVX).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
pub(crate) unsafe fn normalize_rotations<const HERMITE: bool>(v: &mut [Vec4; 8], count: usize) {
    for pair in 0..count.div_ceil(2) {
        let (i, j) = (2 * pair, 2 * pair + 1);
        let q = _mm256_set_m128(v[j].into(), v[i].into());
        let first = if HERMITE {
            normalize_or_w2(q)
        } else {
            normalize2(q)
        };
        let q = normalize2(first);
        v[i] = _mm256_castps256_ps128(q).into();
        v[j] = _mm256_extractf128_ps::<1>(q).into();
    }
}

/// glam's SSE2 `length` of the vector in each 128-bit half, in every lane of its half:
/// `sqrt((x*x + z*z) + (y*y + w*w))`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn length2(q: __m256) -> __m256 {
    let products = _mm256_mul_ps(q, q);
    let pairs = _mm256_add_ps(products, _mm256_permute_ps::<0b01_00_11_10>(products));
    _mm256_sqrt_ps(_mm256_add_ps(
        pairs,
        _mm256_permute_ps::<0b10_11_00_01>(pairs),
    ))
}

/// glam's `Vec4::normalize` of each half: `v / length`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn normalize2(q: __m256) -> __m256 {
    _mm256_div_ps(q, length2(q))
}

/// glam's `Vec4::normalize_or(Vec4::W)` of each half: `v * (1 / length)` where that
/// reciprocal is finite and positive, else `W`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn normalize_or_w2(q: __m256) -> __m256 {
    let rcp = _mm256_div_ps(_mm256_set1_ps(1.0), length2(q));
    let kept = _mm256_and_ps(
        _mm256_cmp_ps::<_CMP_GT_OQ>(rcp, _mm256_setzero_ps()),
        _mm256_cmp_ps::<_CMP_LT_OQ>(rcp, _mm256_set1_ps(f32::INFINITY)),
    );
    let w = _mm256_setr_ps(0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0);
    _mm256_blendv_ps(w, _mm256_mul_ps(q, rcp), kept)
}

/// Columns to rows: `[x, y, z, w]` columns of eight lanes out as eight vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn rows(q: [__m256; 4]) -> [Vec4; 8] {
    let [x, y, z, w] = q;
    let lo = transpose([
        _mm256_castps256_ps128(x),
        _mm256_castps256_ps128(y),
        _mm256_castps256_ps128(z),
        _mm256_castps256_ps128(w),
    ]);
    let hi = transpose([
        _mm256_extractf128_ps::<1>(x),
        _mm256_extractf128_ps::<1>(y),
        _mm256_extractf128_ps::<1>(z),
        _mm256_extractf128_ps::<1>(w),
    ]);
    [
        lo[0].into(),
        lo[1].into(),
        lo[2].into(),
        lo[3].into(),
        hi[0].into(),
        hi[1].into(),
        hi[2].into(),
        hi[3].into(),
    ]
}

/// Vector `k` of eight segments, as four columns of eight lanes (lanes 0-3 from one 4x4
/// transpose, 4-7 from another).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn columns(s: &[&SlerpLanes; 8], k: usize) -> [__m256; 4] {
    let lo = transpose([
        s[0][k].into(),
        s[1][k].into(),
        s[2][k].into(),
        s[3][k].into(),
    ]);
    let hi = transpose([
        s[4][k].into(),
        s[5][k].into(),
        s[6][k].into(),
        s[7][k].into(),
    ]);
    [
        _mm256_set_m128(hi[0], lo[0]),
        _mm256_set_m128(hi[1], lo[1]),
        _mm256_set_m128(hi[2], lo[2]),
        _mm256_set_m128(hi[3], lo[3]),
    ]
}

/// `a * w0 + b * w1` in every lane (two products, then their sum, as glam's `Quat` ops).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn mix(a: __m256, b: __m256, w0: __m256, w1: __m256) -> __m256 {
    _mm256_add_ps(_mm256_mul_ps(a, w0), _mm256_mul_ps(b, w1))
}

/// glam's `Vec4::normalize` in every lane: `v / sqrt((x*x + z*z) + (y*y + w*w))`, `q` the
/// components `[x, y, z, w]` of eight vectors.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn normalize8(q: [__m256; 4]) -> [__m256; 4] {
    let [x, y, z, w] = q;
    let xz = _mm256_add_ps(_mm256_mul_ps(x, x), _mm256_mul_ps(z, z));
    let yw = _mm256_add_ps(_mm256_mul_ps(y, y), _mm256_mul_ps(w, w));
    let length = _mm256_sqrt_ps(_mm256_add_ps(xz, yw));
    [
        _mm256_div_ps(x, length),
        _mm256_div_ps(y, length),
        _mm256_div_ps(z, length),
        _mm256_div_ps(w, length),
    ]
}

/// [`sin4`] of eight inputs; `WIDE`: whether some input may reach 0.75.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn sin8<const WIDE: bool>(y: __m256) -> __m256 {
    let lo = sin4::<WIDE>(_mm256_castps256_ps128(y));
    let hi = sin4::<WIDE>(_mm256_extractf128_ps::<1>(y));
    _mm256_set_m128(hi, lo)
}

/// [`crate::sin::sin_inline`] of four `f32` inputs in `[-0, 3π/4)`, bit for bit; without
/// `WIDE`, of inputs below 0.75 only.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn sin4<const WIDE: bool>(y: __m128) -> __m128 {
    let p = &POLY[0];
    let k = |c: f64| _mm256_set1_pd(c);
    let x = _mm256_cvtps_pd(y);
    // The scalar code's `n = (trunc(x * 2^24 / (π/2)) + 2^23) >> 24` is 1 exactly where the
    // product reaches 2^23, else 0 (for inputs below 3π/4): the input is reduced to
    // `x - n π/2` (`x` itself where n = 0, and every input below 0.75 has n = 0).
    let odd = _mm256_cmp_pd::<_CMP_GE_OQ>(_mm256_mul_pd(x, k(HPI_INV)), k(8_388_608.0));
    let x = if WIDE {
        _mm256_fnmadd_pd(_mm256_and_pd(odd, k(1.0)), k(HPI), x)
    } else {
        x
    };
    let x2 = _mm256_mul_pd(x, x);
    // Quadrant 0 (and every input below 0.75, the scalar code's unreduced branch): the odd
    // polynomial.
    let s1 = _mm256_fmadd_pd(x2, k(p.s3), k(p.s2));
    let x3 = _mm256_mul_pd(x2, x);
    let x7 = _mm256_mul_pd(x2, x3);
    let s = _mm256_fmadd_pd(x3, k(p.s1), x);
    let sine = _mm256_fmadd_pd(s1, x7, s);
    let value = if WIDE {
        // Quadrant 1: the even polynomial.
        let x4 = _mm256_mul_pd(x2, x2);
        let c1 = _mm256_fmadd_pd(x2, k(p.c1), k(p.c0));
        let c2 = _mm256_fmadd_pd(x2, k(p.c4), k(p.c3));
        let x6 = _mm256_mul_pd(x4, x2);
        let c = _mm256_fmadd_pd(x4, k(p.c2), c1);
        let cosine = _mm256_fmadd_pd(c2, x6, c);
        _mm256_blendv_pd(sine, cosine, odd)
    } else {
        sine
    };
    let value = _mm256_cvtpd_ps(value);
    // `|y| < 2^-12` (the exponent field at most 0x397 in the scalar code): `y` itself.
    let magnitude = _mm_andnot_ps(_mm_set1_ps(-0.0), y);
    let tiny = _mm_cmplt_ps(magnitude, _mm_set1_ps(f32::from_bits(0x3980_0000)));
    _mm_blendv_ps(value, y, tiny)
}

/// Rows to columns: four `[x, y, z, w]` in, `[x0..x3]`, `[y0..y3]`, `[z0..z3]`, `[w0..w3]`
/// out (and back).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn transpose(r: [__m128; 4]) -> [__m128; 4] {
    let xy01 = _mm_unpacklo_ps(r[0], r[1]);
    let xy23 = _mm_unpacklo_ps(r[2], r[3]);
    let zw01 = _mm_unpackhi_ps(r[0], r[1]);
    let zw23 = _mm_unpackhi_ps(r[2], r[3]);
    [
        _mm_movelh_ps(xy01, xy23),
        _mm_movehl_ps(xy23, xy01),
        _mm_movelh_ps(zw01, zw23),
        _mm_movehl_ps(zw23, zw01),
    ]
}
