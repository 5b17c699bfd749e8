//! The per-clip table `compress` and `report` print.

use crate::codec::ClipReport;
use crate::model::LengthUnit;

/// Column headings.
pub fn header() -> String {
    format!(
        "{:<40} {:>6} {:>6} {:>10} {:>9} {:>7} {:>7} {:>10} {:>10} {:>10} {:>8}  {}",
        "clip",
        "joints",
        "frames",
        "raw B",
        "payload B",
        "ratio",
        "keys%",
        "max err",
        "p99 err",
        "mid max",
        "tol",
        "ok"
    )
}

/// Millimetres from scene units.
pub fn mm(x: f32, unit: LengthUnit) -> f32 {
    x * 1000.0 / unit.per_metre()
}

/// One row; errors in millimetres.
pub fn row(label: &str, r: &ClipReport, unit: LengthUnit, tolerance: f32) -> String {
    format!(
        "{:<40} {:>6} {:>6} {:>10} {:>9} {:>6.1}x {:>6.1}% {:>8.4}mm {:>8.4}mm {:>8.4}mm {:>6.3}mm  {}",
        truncate(label, 40),
        r.joints,
        r.frames,
        r.raw_bytes,
        r.payload_bytes,
        r.ratio,
        100.0 * r.keys_kept as f64 / r.keys_raw.max(1) as f64,
        mm(r.error_samples.max, unit),
        mm(r.error_samples.p99, unit),
        mm(r.error_midpoints.max, unit),
        mm(tolerance, unit),
        if r.contract_met { "yes" } else { "NO" }
    )
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_owned()
    } else {
        format!("{}…", s.chars().take(n - 1).collect::<String>())
    }
}

/// Tracks of a clip by class, as `inspect` lists them (for a source file and a `.skp`).
#[derive(Clone, Copy, Debug, Default, serde::Serialize)]
pub struct TrackCounts {
    pub animated: usize,
    pub constant: usize,
    pub rest: usize,
}

/// The heading of `inspect`'s clip list, with one more column named `extra`.
pub fn clip_header(extra: &str) -> String {
    format!(
        "  {:<32} {:>9} {:>7} {:>7} {:>9} {:>9} {:>6} {extra}",
        "clip", "duration", "rate", "frames", "animated", "constant", "rest"
    )
}

/// One line of `inspect`'s clip list (the caller appends its extra column).
pub fn clip_row(name: &str, duration: f32, rate: f32, frames: usize, t: &TrackCounts) -> String {
    format!(
        "  {:<32} {:>8.4}s {:>7} {:>7} {:>9} {:>9} {:>6}",
        name, duration, rate, frames, t.animated, t.constant, t.rest
    )
}
