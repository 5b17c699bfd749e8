//! Command-line flags that choose settings, shared by `compress` and `report`.

use std::path::PathBuf;

use anyhow::{Context, bail};

use crate::settings::{Bits, Effort, Method, Preset, Settings};

#[derive(clap::Args, Debug, Clone, Default)]
pub struct TuningArgs {
    /// Settings file (TOML or JSON); default: the asset's sidecar `<file>.skelpack.toml` if present.
    #[arg(long)]
    pub settings: Option<PathBuf>,
    /// Preset: acl (0.1 mm at 3 cm), ozz (1 mm at 10 cm), aggressive (1 mm at 3 cm).
    #[arg(long)]
    pub preset: Option<String>,
    /// Tolerance in millimetres (overrides the preset).
    #[arg(long)]
    pub tolerance_mm: Option<f32>,
    /// Marker offset in centimetres (overrides the preset).
    #[arg(long)]
    pub marker_cm: Option<f32>,
    /// Key reduction: none, linear, catmull-rom, auto.
    #[arg(long)]
    pub method: Option<String>,
    /// Bit widths: auto (smallest per track) or fixed (48-bit rotations, 16-bit vectors).
    #[arg(long)]
    pub bits: Option<String>,
    /// Search effort: fast (least search: edit loops, batch previews), default, max (more
    /// search for smaller files: final exports). Every effort holds the tolerance.
    #[arg(long, value_parser = ["fast", "default", "max"])]
    pub effort: Option<String>,
    /// Scene unit override: m, cm, mm, inch, or a number of scene units per metre.
    #[arg(long)]
    pub unit: Option<String>,
    /// Measure no socket (non-joint nodes hanging from joints: `*_end` tips, rigid parts,
    /// attachments): each joint is held at its own markers only. Smaller, but what hangs far
    /// beyond the marker offset may move more than the tolerance.
    #[arg(long)]
    pub ignore_sockets: bool,
    /// Split a take into a clip: `NAME=SOURCE:START-END` (source frames, both included;
    /// repeatable; as the sidecar's `[takes.NAME]`, which it overrides).
    #[arg(long = "take", value_name = "NAME=SOURCE:START-END")]
    pub takes: Vec<String>,
}

/// Adds `--take` flags to `settings` (they win over the sidecar's takes of the same name).
pub fn add_takes(settings: &mut Settings, flags: &[String]) -> anyhow::Result<()> {
    for f in flags {
        let (name, t) = crate::settings::takes::parse_flag(f).map_err(anyhow::Error::msg)?;
        settings.takes.insert(name, t);
    }
    Ok(())
}

impl TuningArgs {
    /// Settings for `asset_path`: the file (or sidecar), then the flags on top.
    pub fn settings_for(
        &self,
        asset_path: &std::path::Path,
    ) -> anyhow::Result<(Settings, Option<PathBuf>)> {
        let file = match &self.settings {
            Some(p) => Some(p.clone()),
            None => Some(Settings::sidecar_path(asset_path)).filter(|p| p.is_file()),
        };
        let mut s = match &file {
            Some(p) => Settings::load(p)?,
            None => Settings::default(),
        };
        add_takes(&mut s, &self.takes)?;
        if let Some(p) = &self.preset {
            let preset = Preset::parse(p)
                .with_context(|| format!("unknown preset '{p}' (acl, ozz, aggressive)"))?;
            s.preset = Some(preset);
            // A preset on the command line wins over file-wide values.
            s.tolerance_mm = None;
            s.marker_offset_cm = None;
        }
        if let Some(t) = self.tolerance_mm {
            if !(t.is_finite() && t > 0.0) {
                bail!("--tolerance-mm {t} must be a positive number");
            }
            s.tolerance_mm = Some(t);
        }
        if let Some(m) = self.marker_cm {
            if !(m.is_finite() && m > 0.0) {
                bail!("--marker-cm {m} must be a positive number");
            }
            s.marker_offset_cm = Some(m);
        }
        if let Some(m) = &self.method {
            s.method = Method::parse(m).with_context(|| {
                format!("unknown method '{m}' (none, linear, catmull-rom, auto)")
            })?;
        }
        if let Some(b) = &self.bits {
            s.bits = match b.as_str() {
                "auto" => Bits::Auto,
                "fixed" => Bits::Fixed,
                _ => bail!("unknown bits '{b}' (auto, fixed)"),
            };
        }
        if let Some(e) = &self.effort {
            s.effort = Effort::parse(e)
                .with_context(|| format!("unknown effort '{e}' (fast, default, max)"))?;
        }
        if let Some(u) = &self.unit {
            s.unit = Some(crate::model::LengthUnit::parse(u).with_context(|| {
                format!("unknown unit '{u}' (m, cm, mm, inch, or units per metre)")
            })?);
        }
        if self.ignore_sockets {
            s.ignore_sockets = true;
        }
        Ok((s, file))
    }
}
