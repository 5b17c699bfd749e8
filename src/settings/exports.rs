//! Where the user last exported a file to, remembered in its sidecar so that "Export on
//! save" can redo every export after the source is saved again:
//! `[[exports]] path = "/game/hero.glb", format = "glb", meshopt = true`.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// One remembered export target: the file, its format and the options it was written with.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExportTarget {
    pub path: PathBuf,
    /// `"skp"` or `"glb"` (a compressed glTF, `.glb` or `.gltf` by the path).
    pub format: String,
    /// Compressed glTF: `EXT_meshopt_compression` on the animation data.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub meshopt: bool,
}

/// Puts `target` first in `list` (most recent first), replacing an earlier export to the
/// same path; at most `max` are kept.
pub fn remember(list: &mut Vec<ExportTarget>, target: ExportTarget, max: usize) {
    list.retain(|t| t.path != target.path);
    list.insert(0, target);
    list.truncate(max);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remember_keeps_one_entry_per_path_most_recent_first() {
        let t = |p: &str, f: &str| ExportTarget {
            path: p.into(),
            format: f.into(),
            meshopt: false,
        };
        let mut l = Vec::new();
        remember(&mut l, t("a.glb", "glb"), 3);
        remember(&mut l, t("b.skp", "skp"), 3);
        remember(&mut l, t("a.glb", "glb"), 3);
        assert_eq!(l, [t("a.glb", "glb"), t("b.skp", "skp")]);
        remember(&mut l, t("c.skp", "skp"), 2);
        assert_eq!(l, [t("c.skp", "skp"), t("a.glb", "glb")]);
    }
}
