//! Whether the CPU can run the decoders' FMA paths, asked of the CPU once per process.
//!
//! `std::arch::is_x86_feature_detected!` reads every CPUID leaf the standard library knows
//! on its first use (seven `cpuid` instructions here), and in a virtual machine each one
//! traps to the hypervisor: about 90 µs of a short process's life on this project's VM,
//! against 14 µs for the one leaf the FMA test needs. A command-line compression of a short
//! clip pays it once per process (docs/COMPRESSION.md, "Session 23").

#[cfg(target_arch = "x86_64")]
use std::sync::atomic::{AtomicU8, Ordering};

/// 0 not asked yet, 1 no FMA, 2 FMA.
#[cfg(target_arch = "x86_64")]
static FMA: AtomicU8 = AtomicU8::new(0);

/// True when the CPU has FMA (and AVX) and the operating system saves the AVX registers:
/// what `is_x86_feature_detected!("fma")` answers, from CPUID leaf 1 and `XCR0`.
#[inline(always)]
pub fn has_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        match FMA.load(Ordering::Relaxed) {
            0 => {
                let fma = detect_fma();
                FMA.store(if fma { 2 } else { 1 }, Ordering::Relaxed);
                fma
            }
            v => v == 2,
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// CPUID leaf 1: FMA (ECX bit 12), OSXSAVE (bit 27) and AVX (bit 28); then `XCR0` must
/// enable the SSE and AVX register state (bits 1 and 2), as the standard library requires
/// for both features.
#[cfg(target_arch = "x86_64")]
#[cold]
fn detect_fma() -> bool {
    // SAFETY: every x86-64 CPU has CPUID with leaf 1.
    #[allow(unused_unsafe)]
    let leaf1 = unsafe { std::arch::x86_64::__cpuid(1) };
    let bit = |b: u32| leaf1.ecx & (1 << b) != 0;
    if !(bit(12) && bit(27) && bit(28)) {
        return false;
    }
    // SAFETY: OSXSAVE is set, so the operating system has enabled XGETBV.
    let xcr0 = unsafe { xcr0() };
    xcr0 & 0b110 == 0b110
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
        assert_eq!(super::has_fma(), std::arch::is_x86_feature_detected!("fma"));
        // The cached answer too.
        assert_eq!(super::has_fma(), std::arch::is_x86_feature_detected!("fma"));
    }
}
