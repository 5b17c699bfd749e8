//! The sine of an `f32`, bit for bit what glibc's `sinf` gives on x86-64 with FMA (glibc
//! 2.28 and later: the value is computed in `f64` and rounded once), for every input below
//! 120 in magnitude — and the same on any machine, since the fused multiply-adds are
//! [`f64::mul_add`] (one rounding, as the hardware's). Larger inputs, infinities and NaN
//! call the platform's `sinf`.
//!
//! The slerp of every decoder ([`crate::curve::slerp`]) takes the sine of angles in
//! `[0, π/2]`; computed inline it costs a dozen instructions instead of a library call.
//! [`sin`] picks the FMA instructions when the CPU has them; loops compiled with the `fma`
//! target feature call [`sin_inline`] directly. `examples/sin_check.rs` compares every input
//! below 120 with the platform's `sinf`.
//!
//! The algorithm and its coefficients are those of `sinf` in Arm's optimized-routines
//! (MIT OR Apache-2.0 WITH LLVM-exception), the code glibc ships as its `sinf` since 2.28.

/// Polynomial coefficients of one half of glibc's `__sincosf_table`.
pub(crate) struct Poly {
    pub(crate) c0: f64,
    pub(crate) c1: f64,
    pub(crate) s1: f64,
    pub(crate) c2: f64,
    pub(crate) s2: f64,
    pub(crate) c3: f64,
    pub(crate) s3: f64,
    pub(crate) c4: f64,
}

const fn poly(bits: [u64; 8]) -> Poly {
    let f = f64::from_bits;
    Poly {
        c0: f(bits[0]),
        c1: f(bits[1]),
        s1: f(bits[2]),
        c2: f(bits[3]),
        s2: f(bits[4]),
        c3: f(bits[5]),
        s3: f(bits[6]),
        c4: f(bits[7]),
    }
}

/// For quadrants 0 and 1 (`n & 2 == 0`), then 2 and 3.
pub(crate) const POLY: [Poly; 2] = [
    poly([
        0x3ff0000000000000,
        0xbfdffffffd0c621c,
        0xbfc555545995a603,
        0x3fa55553e1068f19,
        0x3f81107605230bc4,
        0xbf56c087e89a359d,
        0xbf2994eb3774cf24,
        0x3ef99343027bf8c3,
    ]),
    poly([
        0xbff0000000000000,
        0x3fdffffffd0c621c,
        0xbfc555545995a603,
        0xbfa55553e1068f19,
        0x3f81107605230bc4,
        0x3f56c087e89a359d,
        0xbf2994eb3774cf24,
        0xbef99343027bf8c3,
    ]),
];
const SIGN: [f64; 4] = [1.0, -1.0, -1.0, 1.0];
/// `2^24 / (π/2)` and `π/2`.
pub(crate) const HPI_INV: f64 = f64::from_bits(0x41645f306dc9c883);
pub(crate) const HPI: f64 = f64::from_bits(0x3ff921fb54442d18);

/// `sin(y)` (see the module documentation); the FMA instructions when the CPU has them.
#[inline(always)]
pub fn sin(y: f32) -> f32 {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::has_fma() {
        // SAFETY: the CPU has FMA.
        return unsafe { sin_fma(y) };
    }
    sin_inline(y)
}

/// [`sin_inline`] compiled with FMA instructions.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "fma")]
#[inline]
fn sin_fma(y: f32) -> f32 {
    sin_inline(y)
}

/// `sin(y)`, inlined into its caller: use it in code compiled with the `fma` target
/// feature (elsewhere each fused multiply-add is a library call; the value is the same).
#[inline(always)]
pub fn sin_inline(y: f32) -> f32 {
    // The exponent field with the sign dropped, as glibc's `abstop12`.
    let top = (y.to_bits() >> 20) & 0x7ff;
    if top <= 0x397 {
        // |y| < 2^-12 (and zeros, subnormals): sin(y) rounds to y.
        return y;
    }
    let x = f64::from(y);
    if top <= 0x3f3 {
        // |y| < π/4: the odd polynomial.
        let p = &POLY[0];
        let x2 = x * x;
        let x3 = x * x2;
        let s1 = x2.mul_add(p.s3, p.s2);
        let x7 = x2 * x3;
        let s = x3.mul_add(p.s1, x);
        return s1.mul_add(x7, s) as f32;
    }
    if top > 0x42e {
        // |y| >= 120, infinities, NaN.
        return y.sin();
    }
    // Reduced by the nearest multiple n of π/2 (|y| < 120: the products fit in an i32).
    let r = x * HPI_INV;
    let n = (r as i32).wrapping_add(0x80_0000) >> 24;
    let x = (-f64::from(n)).mul_add(HPI, x);
    let p = &POLY[((n >> 1) & 1) as usize];
    let x2 = x * x;
    if n & 1 == 0 {
        let x = x * SIGN[(n & 3) as usize];
        let s1 = x2.mul_add(p.s3, p.s2);
        let x3 = x2 * x;
        let x7 = x2 * x3;
        let s = x3.mul_add(p.s1, x);
        s1.mul_add(x7, s) as f32
    } else {
        let x4 = x2 * x2;
        let c1 = x2.mul_add(p.c1, p.c0);
        let c2 = x2.mul_add(p.c4, p.c3);
        let x6 = x4 * x2;
        let c = x4.mul_add(p.c2, c1);
        c2.mul_add(x6, c) as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every 997th `f32` below 120 in magnitude (both signs), against glibc's `sinf` where
    /// that is the platform's (`examples/sin_check.rs` checks every one).
    #[cfg(all(target_os = "linux", target_env = "gnu", target_arch = "x86_64"))]
    #[test]
    fn equals_glibc_sinf_bit_for_bit() {
        if !std::arch::is_x86_feature_detected!("fma") {
            return; // glibc then uses another implementation
        }
        let end = 120.0f32.to_bits();
        let mut checked = 0;
        for bits in (0..end)
            .step_by(997)
            .chain([0x3f490fdb, 0x3fc90fdb, end - 1])
        {
            for y in [f32::from_bits(bits), -f32::from_bits(bits)] {
                let want = y.sin().to_bits();
                assert_eq!(sin(y).to_bits(), want, "sin({y:e})");
                assert_eq!(sin_inline(y).to_bits(), want, "sin_inline({y:e})");
                checked += 1;
            }
        }
        assert!(checked > 2_000_000);
    }

    #[test]
    fn large_and_special_inputs_are_the_platform_sine() {
        for y in [120.0f32, -1e6, 3.4e38, f32::INFINITY, f32::NEG_INFINITY] {
            assert_eq!(sin(y).to_bits(), y.sin().to_bits(), "{y}");
        }
        assert!(sin(f32::NAN).is_nan());
        assert_eq!(sin(-0.0).to_bits(), (-0.0f32).to_bits());
        assert!((sin(1.0) - 0.841_470_96).abs() < 1e-7);
    }
}
