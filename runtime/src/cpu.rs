//! Whether the CPU can run the decoders' FMA and AVX paths, asked of the CPU once per process.
//!
//! `std::arch::is_x86_feature_detected!` reads every CPUID leaf the standard library knows
//! on its first use (seven `cpuid` instructions here), and in a virtual machine each one
//! traps to the hypervisor: about 90 µs of a short process's life on this project's VM,
//! against 14 µs for the one leaf the FMA test needs. A command-line compression of a short
//! clip pays it once per process (docs/COMPRESSION.md, "Session 23").

#[cfg(target_arch = "x86_64")]
use std::sync::atomic::{AtomicU8, Ordering};

/// Bit 0: asked; bit 1: AVX; bit 2: FMA.
#[cfg(target_arch = "x86_64")]
static FEATURES: AtomicU8 = AtomicU8::new(0);

#[cfg(target_arch = "x86_64")]
const ASKED: u8 = 1;
#[cfg(target_arch = "x86_64")]
const AVX: u8 = 2;
#[cfg(target_arch = "x86_64")]
const FMA: u8 = 4;

/// True when the CPU has FMA (and AVX) and the operating system saves the AVX registers:
/// what `is_x86_feature_detected!("fma")` answers, from CPUID leaf 1 and `XCR0`.
#[inline(always)]
pub fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        features() & FMA != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// True when the CPU has AVX and the operating system saves its registers: what
/// `is_x86_feature_detected!("avx")` answers.
#[inline(always)]
pub fn has_avx() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        features() & AVX != 0
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn features() -> u8 {
    match FEATURES.load(Ordering::Relaxed) {
        0 => {
            let found = detect();
            FEATURES.store(found, Ordering::Relaxed);
            found
        }
        found => found,
    }
}

/// CPUID leaf 1: AVX (ECX bit 28) with OSXSAVE (bit 27), and `XCR0` enabling the SSE and
/// AVX register state (bits 1 and 2), as the standard library requires for AVX; FMA (ECX
/// bit 12) on top of AVX, as it requires for FMA.
#[cfg(target_arch = "x86_64")]
#[cold]
fn detect() -> u8 {
    // SAFETY: every x86-64 CPU has CPUID with leaf 1.
    #[allow(unused_unsafe)]
    let leaf1 = unsafe { std::arch::x86_64::__cpuid(1) };
    let bit = |b: u32| leaf1.ecx & (1 << b) != 0;
    // SAFETY: XGETBV is read only when OSXSAVE says the operating system enabled it.
    let avx = bit(27) && bit(28) && unsafe { xcr0() } & 0b110 == 0b110;
    let fma = avx && bit(12);
    ASKED | if avx { AVX } else { 0 } | if fma { FMA } else { 0 }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "xsave")]
unsafe fn xcr0() -> u64 {
    // SAFETY: the caller checked OSXSAVE.
    unsafe { std::arch::x86_64::_xgetbv(0) }
}

#[cfg(test)]
mod tests {
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn agrees_with_the_standard_library() {
        // The first answers ask the CPU, the second ones read the cache.
        for _ in 0..2 {
            assert_eq!(super::has_fma(), std::arch::is_x86_feature_detected!("fma"));
            assert_eq!(super::has_avx(), std::arch::is_x86_feature_detected!("avx"));
        }
    }
}
