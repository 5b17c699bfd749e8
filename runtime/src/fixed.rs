//! Copying a clip's fixed pose (every joint's fixed tracks; 1,720 bytes on RobotExpressive's
//! 43 joints) into the caller's buffer, before the animated tracks are written
//! ([`copy_first`]) or after the rotations' mixes ([`copy_late`],
//! [`crate::prepared::Prepared::sample_over`]).
//!
//! After the mixes, where the CPU has AVX, it is copied in 256-bit registers with aligned
//! stores: one unaligned register at each end, every one between them aligned to 32 bytes,
//! four per loop step. glibc's `memcpy` does much the same for this size, through a call;
//! measured on RobotExpressive Idle, this copy after the mixes took 9-14 % off random access
//! where the `memcpy` at the same place took 4-7 % (docs/RUNTIME.md, session 23). Where the
//! copy comes first, the 256-bit copy gained nothing and `memcpy` is kept. A copy moves
//! bits: the pose is the same either way.

use crate::clip::JointPose;

/// Copies `fixed` over `out[..n]`, `n = min(out.len(), fixed.len())`, with glibc's
/// `memcpy`; returns `n`.
#[inline(always)]
pub(crate) fn copy_first(out: &mut [JointPose], fixed: &[JointPose]) -> usize {
    let n = out.len().min(fixed.len());
    out[..n].copy_from_slice(&fixed[..n]);
    n
}

/// [`copy_first`] after the rotations' mixes: 256-bit aligned stores where the CPU has AVX.
#[inline]
pub(crate) fn copy_late(out: &mut [JointPose], fixed: &[JointPose]) {
    let n = out.len().min(fixed.len());
    copy_poses(&mut out[..n], &fixed[..n]);
}

/// Copies `src` into `dst`, which must have the same length.
#[inline]
fn copy_poses(dst: &mut [JointPose], src: &[JointPose]) {
    assert_eq!(dst.len(), src.len(), "copy_poses: lengths differ");
    #[cfg(target_arch = "x86_64")]
    {
        let bytes = std::mem::size_of_val(src);
        if bytes >= 64 && crate::cpu::has_avx() {
            // SAFETY: the CPU has AVX; `dst` and `src` each hold `bytes >= 64` bytes and
            // do not overlap (`dst` is borrowed mutably).
            unsafe { copy_avx(dst.as_mut_ptr().cast(), src.as_ptr().cast(), bytes) };
            return;
        }
    }
    dst.copy_from_slice(src)
}

/// Copies `n` bytes from `s` to `d` with 256-bit loads and stores (see the module
/// documentation).
///
/// # Safety
/// The CPU must have AVX; `s` and `d` must each be valid for `n >= 64` bytes and must not
/// overlap.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx")]
unsafe fn copy_avx(d: *mut u8, s: *const u8, n: usize) {
    use std::arch::x86_64::*;
    // SAFETY: every access lies in `[0, n)` of its buffer (the caller's); the stores in
    // the loop are at 32-byte aligned addresses of `d`.
    unsafe {
        let head = _mm256_loadu_si256(s.cast());
        let tail = _mm256_loadu_si256(s.add(n - 32).cast());
        // From the first 32-byte boundary of `d` past its start (the head covers before).
        let mut i = 32 - (d as usize & 31);
        while i + 128 <= n {
            let a = _mm256_loadu_si256(s.add(i).cast());
            let b = _mm256_loadu_si256(s.add(i + 32).cast());
            let c = _mm256_loadu_si256(s.add(i + 64).cast());
            let e = _mm256_loadu_si256(s.add(i + 96).cast());
            _mm256_store_si256(d.add(i).cast(), a);
            _mm256_store_si256(d.add(i + 32).cast(), b);
            _mm256_store_si256(d.add(i + 64).cast(), c);
            _mm256_store_si256(d.add(i + 96).cast(), e);
            i += 128;
        }
        while i + 32 <= n {
            _mm256_store_si256(d.add(i).cast(), _mm256_loadu_si256(s.add(i).cast()));
            i += 32;
        }
        // The tail covers what the aligned stores left at the end.
        _mm256_storeu_si256(d.cast(), head);
        _mm256_storeu_si256(d.add(n - 32).cast(), tail);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every length from 0 to 70 joints, at every offset of the destination within 32
    /// bytes: the copy equals the source and writes nothing around it.
    #[test]
    fn copies_every_length_and_alignment() {
        let pose = |k: usize| JointPose {
            translation: [k as f32, 0.5, -1.0],
            rotation: [0.0, k as f32 * 0.25, 0.0, 1.0],
            scale: [1.0, 2.0, k as f32],
        };
        let src: Vec<JointPose> = (0..70).map(pose).collect();
        let marker = pose(999);
        for len in 0..=70 {
            for start in 0..8 {
                let mut dst = vec![marker; start + len + 1];
                copy_poses(&mut dst[start..start + len], &src[..len]);
                assert!(dst[..start].iter().all(|p| *p == marker));
                assert_eq!(&dst[start..start + len], &src[..len]);
                assert_eq!(dst[start + len], marker);
            }
        }
    }
}
