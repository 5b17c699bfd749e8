//! Clip events: named times at which a game reacts (a footstep, a hit frame, a sound),
//! with an optional string payload. Times are seconds from the clip's first frame.

use serde::{Deserialize, Serialize};

/// The longest event name or payload kept, in bytes (a `.skp` stores names with a `u16`
/// length; longer text is refused where it is read).
pub const MAX_EVENT_TEXT: usize = u16::MAX as usize;

/// One event of a clip.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Event {
    /// What happens ("footstep_l").
    pub name: String,
    /// Seconds from the clip's first frame (not the source timeline's start).
    pub time: f32,
    /// Free text for the game (a sound's name, a JSON blob).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub payload: Option<String>,
}

impl Event {
    /// Checks an event against a clip lasting `duration` seconds: a non-empty name and
    /// payload within [`MAX_EVENT_TEXT`] bytes, a finite time in `[0, duration]` (within
    /// a microsecond of either end, then clamped by [`Event::clamped`]).
    pub fn check(&self, duration: f32) -> Result<(), String> {
        if self.name.is_empty() {
            return Err("an event has an empty name".into());
        }
        if self.name.len() > MAX_EVENT_TEXT
            || self
                .payload
                .as_ref()
                .is_some_and(|p| p.len() > MAX_EVENT_TEXT)
        {
            return Err(format!(
                "event '{}': name or payload longer than {MAX_EVENT_TEXT} bytes",
                short(&self.name)
            ));
        }
        if !self.time.is_finite() || self.time < -1e-6 || self.time > duration + 1e-6 {
            return Err(format!(
                "event '{}' at {} s lies outside the clip (0 to {duration} s)",
                short(&self.name),
                self.time
            ));
        }
        Ok(())
    }

    /// The event with its time clamped to `[0, duration]`.
    pub fn clamped(mut self, duration: f32) -> Self {
        self.time = self.time.clamp(0.0, duration.max(0.0));
        self
    }
}

/// At most 40 characters of a name, for messages.
fn short(s: &str) -> String {
    s.chars().take(40).collect()
}

/// Events sorted by time (stable: events at one time keep their order).
pub fn sorted(mut events: Vec<Event>) -> Vec<Event> {
    events.sort_by(|a, b| a.time.total_cmp(&b.time));
    events
}

/// The events inside a clip of `duration` seconds (clamped, sorted) and, for each other
/// one, why it was left out.
pub fn split(events: &[Event], duration: f32) -> (Vec<Event>, Vec<String>) {
    let mut inside = Vec::new();
    let mut outside = Vec::new();
    for e in events {
        match e.check(duration) {
            Ok(()) => inside.push(e.clone().clamped(duration)),
            Err(m) => outside.push(m),
        }
    }
    (sorted(inside), outside)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ev(name: &str, time: f32) -> Event {
        Event {
            name: name.into(),
            time,
            payload: None,
        }
    }

    #[test]
    fn events_are_checked_clamped_and_sorted() {
        let all = [
            ev("b", 0.5),
            ev("a", 0.1),
            ev("end", 1.0000001),
            ev("late", 1.5),
        ];
        let (got, out) = split(&all, 1.0);
        let names: Vec<&str> = got.iter().map(|e| e.name.as_str()).collect();
        assert_eq!(names, ["a", "b", "end"]);
        assert_eq!(got[2].time, 1.0);
        assert_eq!(out.len(), 1);
        assert!(out[0].contains("late"), "{out:?}");
        assert!(ev("", 0.0).check(1.0).is_err());
        assert!(ev("nan", f32::NAN).check(1.0).is_err());
    }
}
