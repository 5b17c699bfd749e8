//! When a saved file is complete. DCCs write a temporary file and rename it over the
//! source (Blender, Maya), or write the file in several pieces: a change is read once the
//! file has kept the same size and modification time for the settle period after the last
//! change seen.

use std::path::Path;
use std::time::{Duration, Instant, SystemTime};

/// A file's size and modification time.
pub type Stat = (u64, SystemTime);

/// The size and modification time of `p`, None when it cannot be read (between a
/// removal and a rename, say).
pub fn stat(p: &Path) -> Option<Stat> {
    let m = std::fs::metadata(p).ok()?;
    Some((m.len(), m.modified().ok()?))
}

/// One file's pending change: when it was first seen, when last, and the file's stat then.
#[derive(Clone, Copy, Debug)]
struct Pending {
    first: Instant,
    last: Instant,
    stat: Option<Stat>,
}

/// Tracks one file's changes until it is complete.
#[derive(Clone, Debug)]
pub struct Settle {
    period: Duration,
    pending: Option<Pending>,
}

impl Settle {
    /// A tracker that waits `period` of stillness after the last change.
    pub fn new(period: Duration) -> Self {
        Self {
            period,
            pending: None,
        }
    }

    /// A change to `path` was noticed at `now` (the file's stat is taken now, so one settle
    /// period without change is enough).
    pub fn changed(&mut self, path: &Path, now: Instant) {
        let first = self.pending.map_or(now, |p| p.first);
        self.pending = Some(Pending {
            first,
            last: now,
            stat: stat(path),
        });
    }

    /// True while a change waits to be read.
    pub fn is_pending(&self) -> bool {
        self.pending.is_some()
    }

    /// When [`Settle::ready`] should be asked next (None: nothing pending).
    pub fn next_check(&self) -> Option<Instant> {
        self.pending.map(|p| p.last + self.period)
    }

    /// If the pending change is complete at `now` (unchanged for the settle period), when
    /// it was first seen; the change is then no longer pending. A file still changing is
    /// looked at again one settle period later.
    pub fn ready(&mut self, path: &Path, now: Instant) -> Option<Instant> {
        let p = self.pending.as_mut()?;
        if now < p.last + self.period {
            return None;
        }
        let s = stat(path);
        if s.is_some() && s == p.stat {
            let first = p.first;
            self.pending = None;
            return Some(first);
        }
        p.stat = s;
        p.last = now;
        None
    }

    /// Reading the file failed (not complete after all, or broken): try again after the
    /// next change or settle period, keeping when the save was first seen.
    pub fn retry(&mut self, first: Instant, now: Instant) {
        self.pending = Some(Pending {
            first,
            last: now,
            stat: None,
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_is_ready_once_it_stops_changing() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("a.bvh");
        std::fs::write(&f, b"one").unwrap();
        let period = Duration::from_millis(20);
        let mut s = Settle::new(period);
        let t0 = Instant::now();
        assert_eq!(s.ready(&f, t0), None, "nothing pending");
        s.changed(&f, t0);
        assert_eq!(s.ready(&f, t0), None, "too early");
        // Written again (a second piece) before the period ends: not ready.
        std::fs::write(&f, b"one two").unwrap();
        assert_eq!(s.ready(&f, t0 + period), None, "changed since");
        assert!(s.is_pending());
        // Still for a period: ready, reporting the first change.
        assert_eq!(s.ready(&f, t0 + period * 2), Some(t0));
        assert!(!s.is_pending());
    }

    #[test]
    fn a_missing_file_is_never_ready() {
        let d = tempfile::tempdir().unwrap();
        let f = d.path().join("gone.bvh");
        let mut s = Settle::new(Duration::ZERO);
        let t0 = Instant::now();
        s.changed(&f, t0);
        assert_eq!(s.ready(&f, t0), None);
        assert_eq!(s.ready(&f, t0), None);
        assert!(s.is_pending());
    }
}
