//! The panels around the viewport; each shows state and pushes [`super::actions::Action`]s.

pub mod attribution;
pub mod banner;
pub mod clip_flags;
pub mod component_scale;
pub mod curves;
pub mod dashboard;
pub mod decimate;
pub mod dope_sheet;
pub mod errors;
pub mod event_row;
pub mod floor;
pub mod help;
pub mod joints;
pub mod menu;
pub mod path_prompt;
pub mod residual;
pub mod scalar_curves;
pub mod setting_value;
pub mod stats;
pub mod take_ranges;
pub mod timeline;
pub mod timeline_edit;
pub mod tuning;
pub mod unsaved;

/// What the panels that show a compressed result say when the file has no clip (a bind
/// pose only): there is nothing to compress, so no result will come.
pub const NO_CLIP: &str = "No clip: this file has no animation, so there is nothing to compress";

/// Formats a length in scene units for a scene in `unit`, in mm (small) or cm.
pub fn fmt_len(v: f32, unit: crate::model::LengthUnit) -> String {
    crate::model::format_mm(v / unit.per_metre() * 1000.0)
}

/// Formats a byte count.
pub fn fmt_bytes(b: usize) -> String {
    if b >= 1 << 20 {
        format!("{:.2} MiB", b as f64 / (1 << 20) as f64)
    } else if b >= 1 << 10 {
        format!("{:.1} KiB", b as f64 / 1024.0)
    } else {
        format!("{b} B")
    }
}
