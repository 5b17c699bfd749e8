//! What skelpack writes into a glTF animation's `extras` so that it reopens its own exports
//! as the source was: `"extras": { "skelpack": { "fps": 24 } }`, the source's frame rate.
//!
//! An export's key times alone do not say it: keys between frames (sixteenths of a frame,
//! where nlerp needs them) make rate detection report a multiple of the source rate, a
//! single-frame clip has no spacing at all, and a clip whose smallest layout keys no two
//! consecutive frames implies a lower rate. The importer uses the rate when it is a finite
//! number in (0, [`MAX_FPS`]] and every key time of the animation lies on its grid of
//! [`KEY_SUBDIVISIONS`] ticks a frame (what skelpack writes); otherwise it falls back to
//! detection from the key times, with a warning (a file edited elsewhere at another rate).

use serde_json::{Value, json};

/// The key under `extras` holding skelpack's object.
pub const EXTRAS_KEY: &str = "skelpack";

/// The largest frame rate taken from `extras` (frames per second).
pub const MAX_FPS: f64 = 10_000.0;

/// Key times an export writes lie on this many ticks per frame (`export::channels::TICKS`).
pub const KEY_SUBDIVISIONS: f64 = 16.0;

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
/// starts at the first (smallest) time, within a twentieth of a tick or the times' own f32
/// precision.
fn on_tick_grid(times: &[f32], fps: f64) -> bool {
    let t0 = times.iter().copied().fold(f32::INFINITY, f32::min) as f64;
    let ticks_per_s = fps * KEY_SUBDIVISIONS;
    times.iter().all(|&t| {
        let t = t as f64;
        let k = (t - t0) * ticks_per_s;
        let slack = 0.05f64.max(8.0 * t.abs() * f32::EPSILON as f64 * ticks_per_s);
        (k - k.round()).abs() <= slack
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
    fn ticks_agree_with_the_exporter() {
        assert_eq!(
            crate::export::channels::TICKS as f64,
            KEY_SUBDIVISIONS,
            "the exporter's key grid"
        );
    }
}
