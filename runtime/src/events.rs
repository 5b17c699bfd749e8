//! Which of a clip's events playback crosses between two times, in play order
//! (docs/RUNTIME.md, "Events").
//!
//! Times are frames of the clip, as everywhere in the runtime. Playing forward from `f0`
//! to `f1` crosses the events at frames in `[f0, f1)`; playing backward (`f1 < f0`) those
//! in `(f1, f0]`, latest first. So consecutive calls that continue where the last one
//! stopped report every event exactly once. A clip that does not loop clamps both times to
//! its frames, and reaching its last frame (forward) or frame 0 (backward) also crosses
//! the events lying there. A looping clip's time wraps: one cycle lasts `F − 1` frames,
//! an event at the last frame is the next cycle's frame 0 (it fires once per cycle, at
//! the wrap), and a call spanning several cycles crosses each event once per cycle.
//! Nothing here allocates.

/// Beyond this many cycles a time saturates (as root motion's).
const MAX_CYCLES: f64 = (1u64 << 40) as f64;

/// A clip's events as playback sees them: positions within a cycle (frames, ascending)
/// and the event each one is.
#[derive(Clone, Debug, Default)]
pub struct EventTimes {
    /// `(frame, event index)`, ascending by frame.
    pos: Vec<(f32, u32)>,
    /// The clip's last frame (`F − 1`): one cycle's length when looping.
    last: f32,
    looping: bool,
}

/// The range and direction of one query, unwrapped.
#[derive(Clone, Copy, Debug)]
struct Span {
    forward: bool,
    /// Forward: `[lo, hi)`; backward: `(lo, hi]`.
    lo: f64,
    hi: f64,
    /// First and last cycle visited (0 and 0 for a clip that does not loop).
    k0: i64,
    k1: i64,
}

impl EventTimes {
    /// Events at `times` (seconds from frame 0, ascending as stored) of a clip of
    /// `frame_count` frames at `rate` frames per second.
    pub fn new(times: &[f32], frame_count: u32, rate: f32, looping: bool) -> Self {
        let last = frame_count.saturating_sub(1) as f32;
        let looping = looping && last > 0.0;
        let mut pos: Vec<(f32, u32)> = times
            .iter()
            .enumerate()
            .map(|(i, &t)| {
                let f = (t * rate).clamp(0.0, last);
                // A loop's last frame is the next cycle's first.
                let f = if looping && f >= last { 0.0 } else { f };
                (f, i as u32)
            })
            .collect();
        pos.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        Self { pos, last, looping }
    }

    /// Number of events.
    pub fn len(&self) -> usize {
        self.pos.len()
    }

    /// Whether the clip has no events.
    pub fn is_empty(&self) -> bool {
        self.pos.is_empty()
    }

    fn span(&self, f0: f32, f1: f32) -> Span {
        let clean = |f: f32| if f.is_nan() { 0.0 } else { f as f64 };
        let (a, b) = (clean(f0), clean(f1));
        let forward = b >= a;
        let last = self.last as f64;
        if self.looping {
            let lim = MAX_CYCLES * last;
            let (a, b) = (a.clamp(-lim, lim), b.clamp(-lim, lim));
            let (lo, hi) = if forward { (a, b) } else { (b, a) };
            return Span {
                forward,
                lo,
                hi,
                k0: (lo / last).floor() as i64,
                k1: (hi / last).floor() as i64,
            };
        }
        let (a, b) = (a.clamp(0.0, last), b.clamp(0.0, last));
        let (mut lo, mut hi) = if forward { (a, b) } else { (b, a) };
        // Reaching an end crosses the events lying on it.
        if forward && b >= last && a < last {
            hi = f64::INFINITY;
        }
        if !forward && b <= 0.0 && a > 0.0 {
            lo = f64::NEG_INFINITY;
        }
        Span {
            forward,
            lo,
            hi,
            k0: 0,
            k1: 0,
        }
    }

    /// The events crossed playing from frame `f0` to frame `f1`, in play order (see the
    /// module documentation); each item is an event's index in the clip.
    pub fn crossed(&self, f0: f32, f1: f32) -> Crossed<'_> {
        let s = self.span(f0, f1);
        Crossed {
            times: self,
            k: if s.forward { s.k0 } else { s.k1 },
            i: 0,
            s,
        }
    }

    /// How many events [`EventTimes::crossed`] yields (saturating), counted without
    /// visiting them.
    pub fn count(&self, f0: f32, f1: f32) -> u64 {
        let s = self.span(f0, f1);
        let n = self.pos.len() as i128;
        // Unwrapped positions below (or at) x: whole cycles plus the part of one.
        let below = |x: f64, inclusive: bool| -> i128 {
            let (k, r) = if self.looping {
                let k = (x / self.last as f64).floor();
                (k as i128, x - k * self.last as f64)
            } else {
                (0, x)
            };
            let part = self.pos.partition_point(|&(p, _)| {
                if inclusive {
                    (p as f64) <= r
                } else {
                    (p as f64) < r
                }
            });
            k * n + part as i128
        };
        let total = if s.forward {
            below(s.hi, false) - below(s.lo, false)
        } else {
            below(s.hi, true) - below(s.lo, true)
        };
        total.clamp(0, u64::MAX as i128) as u64
    }
}

/// The events one query crosses, in play order ([`EventTimes::crossed`]).
#[derive(Clone, Debug)]
pub struct Crossed<'a> {
    times: &'a EventTimes,
    s: Span,
    /// Current cycle and how many of its positions were looked at.
    k: i64,
    i: usize,
}

impl Iterator for Crossed<'_> {
    type Item = usize;

    fn next(&mut self) -> Option<usize> {
        let pos = &self.times.pos;
        let n = pos.len();
        if n == 0 {
            return None;
        }
        let cycle = if self.times.looping {
            self.times.last as f64
        } else {
            0.0
        };
        loop {
            if self.k < self.s.k0 || self.k > self.s.k1 {
                return None;
            }
            if self.i >= n {
                self.i = 0;
                self.k += if self.s.forward { 1 } else { -1 };
                continue;
            }
            let at = if self.s.forward {
                self.i
            } else {
                n - 1 - self.i
            };
            self.i += 1;
            let (p, e) = pos[at];
            let u = self.k as f64 * cycle + p as f64;
            if self.s.forward {
                if u >= self.s.hi {
                    return None;
                }
                if u >= self.s.lo {
                    return Some(e as usize);
                }
            } else {
                if u <= self.s.lo {
                    return None;
                }
                if u <= self.s.hi {
                    return Some(e as usize);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A clip of 11 frames at 10 fps: events at frames 0, 5 and 10.
    fn ends(looping: bool) -> EventTimes {
        EventTimes::new(&[0.0, 0.5, 1.0], 11, 10.0, looping)
    }

    fn got(e: &EventTimes, f0: f32, f1: f32) -> Vec<usize> {
        let v: Vec<usize> = e.crossed(f0, f1).collect();
        assert_eq!(v.len() as u64, e.count(f0, f1), "{f0} -> {f1}");
        v
    }

    #[test]
    fn a_clip_played_once_crosses_each_event_once() {
        let e = ends(false);
        // In steps, each event once, the last one when the end is reached.
        let mut all = Vec::new();
        let mut t = 0.0;
        while t < 12.0 {
            all.extend(got(&e, t, t + 0.7));
            t += 0.7;
        }
        assert_eq!(all, [0, 1, 2]);
        assert_eq!(got(&e, 0.0, 10.0), [0, 1, 2]);
        assert_eq!(got(&e, 10.0, 20.0), Vec::<usize>::new());
        // Backward: latest first, frame 0's when it is reached.
        assert_eq!(got(&e, 10.0, 0.0), [2, 1, 0]);
        assert_eq!(got(&e, 5.0, 5.0), Vec::<usize>::new());
    }

    #[test]
    fn a_loop_fires_its_last_frame_event_once_per_cycle() {
        let e = ends(true);
        // Frames 0 and 10 are one position: both fire at each wrap, 1 in the middle.
        let mut all = Vec::new();
        let mut t = 0.0f32;
        while t < 30.0 {
            let b = (t + 0.3).min(30.0);
            all.extend(got(&e, t, b));
            t = b;
        }
        let at_wrap = all.iter().filter(|&&i| i == 2).count();
        let middle = all.iter().filter(|&&i| i == 1).count();
        assert_eq!((at_wrap, middle), (3, 3), "{all:?}");
        // Across a wrap in one call: 1 then the wrap's events.
        assert_eq!(got(&e, 4.0, 11.0), [1, 0, 2]);
        // Many cycles: counted without visiting, visited lazily.
        assert_eq!(e.count(0.0, 1.0e6), 300_000);
        assert_eq!(e.crossed(0.0, 1.0e9).take(4).count(), 4);
        // Backward across the wrap.
        assert_eq!(got(&e, 12.0, 4.0), [2, 0, 1]);
    }
}
