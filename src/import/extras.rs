//! What skelpack writes into a glTF animation's `extras` so that it reopens its own exports
//! as the source was: `"extras": { "skelpack": { "fps": 24 } }`, the source's frame rate,
//! and the clip's events, `"extras": { "events": [{ "name": "footstep_l", "time": 0.42,
//! "payload": "..." }] }` (docs/EXPORT.md, "Events").
//!
//! An export's key times alone do not say it: keys between frames (sixteenths of a frame,
//! where nlerp needs them) make rate detection report a multiple of the source rate, a
//! single-frame clip has no spacing at all, and a clip whose smallest layout keys no two
//! consecutive frames implies a lower rate. The importer uses the rate when it is a finite
//! number in (0, [`MAX_FPS`]] and every key time of the animation lies on its grid of
//! [`RATE_SUBDIVISIONS`] ticks a frame (what skelpack writes: the exporter's keys lie on
//! [`KEY_SUBDIVISIONS`] ticks a frame, `convert`'s finer sample grids for curved sources on
//! up to `codec::grid::MAX_GRID` samples a frame); otherwise it falls back to detection from
//! the key times, with a warning (a file edited elsewhere at another rate).

use serde_json::{Value, json};

use crate::model::Event;
use crate::model::event::MAX_EVENT_TEXT;

/// The key under `extras` holding an animation's events.
pub const EVENTS_KEY: &str = "events";

/// The key under `extras` holding skelpack's object.
pub const EXTRAS_KEY: &str = "skelpack";

/// The largest frame rate taken from `extras` (frames per second).
pub const MAX_FPS: f64 = 10_000.0;

/// Key times an export writes lie on this many ticks per frame (`export::channels::TICKS`).
pub const KEY_SUBDIVISIONS: f64 = 16.0;

/// A declared rate is used when every key time lies on this many ticks a frame: the finest
/// sample grid skelpack writes (`codec::grid::MAX_GRID`, a multiple of [`KEY_SUBDIVISIONS`]).
pub const RATE_SUBDIVISIONS: f64 = 256.0;

/// The `extras` object skelpack writes on an animation sampled at `fps`, merged into
/// `existing` (another tool's extras are kept; a non-object value is replaced).
pub fn with_rate(existing: Option<&Value>, fps: f32) -> Value {
    let mut extras = match existing {
        Some(Value::Object(m)) => Value::Object(m.clone()),
        _ => json!({}),
    };
    extras[EXTRAS_KEY] = json!({ "fps": fps });
    extras
}

/// `existing` extras with the events of a clip whose frame 0 is at `start_time` seconds of
/// the animation's timeline (event times are written on that timeline, as key times are);
/// without events, any `events` key is removed.
pub fn with_events(existing: Value, events: &[Event], start_time: f32) -> Value {
    let mut extras = match existing {
        Value::Object(m) => Value::Object(m),
        _ => json!({}),
    };
    let map = extras.as_object_mut().expect("an object");
    if events.is_empty() {
        map.remove(EVENTS_KEY);
        return extras;
    }
    let list: Vec<Value> = events
        .iter()
        .map(|e| {
            let mut v = json!({ "name": e.name, "time": (start_time as f64 + e.time as f64) });
            if let Some(p) = &e.payload {
                v["payload"] = json!(p);
            }
            v
        })
        .collect();
    map.insert(EVENTS_KEY.into(), Value::Array(list));
    extras
}

/// The events an animation's raw `extras` JSON declares, as times from the clip's frame 0
/// (`t0` is frame 0's time on the animation's timeline), and a warning for each entry it
/// cannot use. Two forms are read: skelpack's list, `"events": [{"name", "time",
/// "payload"?}]`, and a map of names to a time or a list of times, `"events": {"step": 0.4,
/// "hit": [0.2, 0.9]}` (what a DCC's custom property group exports, e.g. Blender's action
/// properties).
pub fn declared_events(extras: Option<&str>, t0: f32) -> (Vec<Event>, Vec<String>) {
    let mut warnings = Vec::new();
    let value = extras.and_then(|t| serde_json::from_str::<Value>(t).ok());
    let Some(list) = value.as_ref().and_then(|v| v.get(EVENTS_KEY)) else {
        return (Vec::new(), warnings);
    };
    let mut out = Vec::new();
    let mut push = |name: &str, time: Option<f64>, payload: Option<&Value>, at: String| {
        let Some(time) = time.filter(|t| t.is_finite()) else {
            warnings.push(format!(
                "extras.{EVENTS_KEY}{at}: no finite `time`; left out"
            ));
            return;
        };
        if name.is_empty() || name.len() > MAX_EVENT_TEXT {
            warnings.push(format!("extras.{EVENTS_KEY}{at}: bad `name`; left out"));
            return;
        }
        let payload = match payload {
            None | Some(Value::Null) => None,
            Some(Value::String(s)) => Some(s.clone()),
            Some(v) => Some(v.to_string()),
        };
        if payload.as_ref().is_some_and(|p| p.len() > MAX_EVENT_TEXT) {
            warnings.push(format!(
                "extras.{EVENTS_KEY}{at}: payload too long; left out"
            ));
            return;
        }
        out.push(Event {
            name: name.to_owned(),
            time: (time - t0 as f64) as f32,
            payload,
        });
    };
    match list {
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                let name = item.get("name").and_then(Value::as_str).unwrap_or("");
                let time = item.get("time").and_then(Value::as_f64);
                push(name, time, item.get("payload"), format!("[{i}]"));
            }
        }
        Value::Object(map) => {
            for (name, v) in map {
                let times: Vec<Option<f64>> = match v {
                    Value::Array(a) => a.iter().map(Value::as_f64).collect(),
                    v => vec![v.as_f64()],
                };
                for t in times {
                    push(name, t, None, format!(".{name}"));
                }
            }
        }
        _ => warnings.push(format!(
            "extras.{EVENTS_KEY} is neither a list nor a map of events; ignored"
        )),
    }
    (out, warnings)
}

/// The source rate an animation's raw `extras` JSON declares, if it is usable for these
/// key times: `Ok(None)` when there is none, `Err` (a warning's text) when it is declared
/// but not usable.
pub fn declared_rate(extras: Option<&str>, times: &[f32]) -> Result<Option<f32>, String> {
    let Some(text) = extras else {
        return Ok(None);
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return Ok(None);
    };
    let Some(ours) = value.get(EXTRAS_KEY) else {
        return Ok(None);
    };
    let fps = ours.get("fps").and_then(Value::as_f64);
    let Some(fps) = fps.filter(|f| f.is_finite() && *f > 0.0 && *f <= MAX_FPS) else {
        return Err(format!(
            "extras.{EXTRAS_KEY}.fps is {}, expected a number in (0, {MAX_FPS}]",
            ours.get("fps").map_or("missing".into(), Value::to_string)
        ));
    };
    if !on_tick_grid(times, fps) {
        return Err(format!(
            "extras.{EXTRAS_KEY}.fps is {fps} but the key times are not on its frame grid"
        ));
    }
    Ok(Some(fps as f32))
}

/// Whether every time lies on the grid of `fps * KEY_SUBDIVISIONS` ticks a second that
/// starts at the first (smallest) time, or on the finer one of `fps * RATE_SUBDIVISIONS`
/// where the times are precise enough to tell (see [`on_grid`]).
fn on_tick_grid(times: &[f32], fps: f64) -> bool {
    on_grid(times, fps * KEY_SUBDIVISIONS, false) || on_grid(times, fps * RATE_SUBDIVISIONS, true)
}

/// Whether every time lies on a grid of `ticks_per_s` ticks a second that starts at the
/// first (smallest) time, within a twentieth of a tick or the times' own f32 precision;
/// when `told` is asked, a time whose precision spans a quarter of a tick or more is not
/// taken to lie on it (a grid too fine for the times to tell).
fn on_grid(times: &[f32], ticks_per_s: f64, told: bool) -> bool {
    let t0 = times.iter().copied().fold(f32::INFINITY, f32::min) as f64;
    times.iter().all(|&t| {
        let t = t as f64;
        let k = (t - t0) * ticks_per_s;
        let slack = 0.05f64.max(8.0 * t.abs() * f32::EPSILON as f64 * ticks_per_s);
        (!told || slack < 0.25) && (k - k.round()).abs() <= slack
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn times(fps: f64, ticks: &[u32]) -> Vec<f32> {
        ticks
            .iter()
            .map(|&k| (0.5 + k as f64 / KEY_SUBDIVISIONS / fps) as f32)
            .collect()
    }

    #[test]
    fn a_declared_rate_on_its_grid_is_used() {
        let extras = with_rate(Some(&json!({ "author": "x" })), 24.0).to_string();
        assert!(extras.contains("author"), "other extras kept: {extras}");
        // Keys at whole frames and at sixteenths of a frame (nlerp splits).
        let t = times(24.0, &[0, 16, 24, 25, 32, 48 * 16]);
        assert_eq!(declared_rate(Some(&extras), &t), Ok(Some(24.0)));
        // A single key: no spacing at all, the rate still comes through.
        assert_eq!(declared_rate(Some(&extras), &t[..1]), Ok(Some(24.0)));
        // `convert`'s finer grids for curved sources: 1/64 of a frame.
        let fine: Vec<f32> = (0..=64 * 48)
            .map(|k| (k as f64 / 64.0 / 24.0) as f32)
            .collect();
        assert_eq!(declared_rate(Some(&extras), &fine), Ok(Some(24.0)));
        // Long clips: the f32 times' own precision is allowed for.
        let long: Vec<f32> = (0..20_000).map(|f| (f as f64 / 120.0) as f32).collect();
        let e120 = with_rate(None, 120.0).to_string();
        assert_eq!(declared_rate(Some(&e120), &long), Ok(Some(120.0)));
    }

    #[test]
    fn anything_else_falls_back_to_detection() {
        let t = times(24.0, &[0, 16, 32]);
        assert_eq!(declared_rate(None, &t), Ok(None));
        assert_eq!(declared_rate(Some("{\"other\": 1}"), &t), Ok(None));
        assert_eq!(declared_rate(Some("not json"), &t), Ok(None));
        for bad in ["0", "-24", "1e300", "\"24\"", "null"] {
            let e = format!("{{\"skelpack\": {{\"fps\": {bad}}}}}");
            let r = declared_rate(Some(&e), &t);
            assert!(r.as_ref().is_err_and(|m| m.contains("fps")), "{bad}: {r:?}");
        }
        // Keys at 30 fps under a declared 24: not its grid (edited elsewhere).
        let thirty: Vec<f32> = (0..10).map(|f| f as f32 / 30.0).collect();
        let e = with_rate(None, 24.0).to_string();
        assert!(declared_rate(Some(&e), &thirty).is_err());
    }

    #[test]
    fn events_are_written_and_read_back_on_the_animation_timeline() {
        let events = vec![
            Event {
                name: "step".into(),
                time: 0.25,
                payload: None,
            },
            Event {
                name: "hit".into(),
                time: 0.5,
                payload: Some("sfx".into()),
            },
        ];
        let x = with_events(json!({ "author": "x" }), &events, 2.0);
        assert_eq!(x["events"][0]["time"], 2.25);
        assert_eq!(x["author"], "x");
        let (back, w) = declared_events(Some(&x.to_string()), 2.0);
        assert!(w.is_empty(), "{w:?}");
        assert_eq!(back, events);
        // The map form, and entries that cannot be used.
        let (m, w) = declared_events(
            Some(r#"{"events": {"a": 1.0, "b": [0.5, "x"], "": 2}}"#),
            0.0,
        );
        assert_eq!(m.len(), 2, "{m:?}");
        assert_eq!(w.len(), 2, "{w:?}");
        assert!(with_events(x, &[], 0.0).get("events").is_none());
    }

    #[test]
    fn ticks_agree_with_the_exporter() {
        assert_eq!(
            crate::export::channels::TICKS as f64,
            KEY_SUBDIVISIONS,
            "the exporter's key grid"
        );
        assert_eq!(
            crate::codec::grid::MAX_GRID as f64,
            RATE_SUBDIVISIONS,
            "the finest sample grid"
        );
    }
}
