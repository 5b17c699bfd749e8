//! The process's CPU time (user + system, every thread: the UI, eframe, and the software
//! renderer's threads), for frame costs that survive a loaded machine.

use std::time::Duration;

/// CPU time used by this process so far (None where the OS does not say).
pub fn process_cpu() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: getrusage fills the struct it is given; RUSAGE_SELF is always valid.
        let r = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
        if r != 0 {
            return None;
        }
        // SAFETY: initialised by the successful call above.
        let ru = unsafe { ru.assume_init() };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.max(0) as u64)
        };
        Some(tv(ru.ru_utime) + tv(ru.ru_stime))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_time_grows_with_work() {
        let Some(a) = process_cpu() else { return };
        let mut x = 0u64;
        let start = std::time::Instant::now();
        while start.elapsed() < Duration::from_millis(60) {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
        }
        std::hint::black_box(x);
        let b = process_cpu().unwrap();
        assert!(b > a, "{a:?} -> {b:?}");
    }
}
