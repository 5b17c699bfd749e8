//! What a reload changed: clips added, removed or modified (by their result keys, so a
//! settings change counts too), and the settings left without a joint or clip to apply to.

use std::collections::{BTreeMap, BTreeSet};

use crate::cache::Key;
use crate::import::Asset;
use crate::settings::Settings;

/// Per clip name, the key of its result (samples and resolved settings).
pub fn clip_keys(asset: &Asset, settings: &Settings) -> BTreeMap<String, Key> {
    asset
        .clips
        .iter()
        .map(|c| {
            let r = settings.resolve(asset, &c.name);
            (
                c.name.clone(),
                crate::cache::key::clip_key(&asset.skeleton, c, &r),
            )
        })
        .collect()
}

/// Clips added, removed and modified between two versions of a file.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ClipChanges {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub modified: Vec<String>,
}

impl ClipChanges {
    /// Compares the clip keys before and after (see [`clip_keys`]).
    pub fn between(before: &BTreeMap<String, Key>, after: &BTreeMap<String, Key>) -> Self {
        Self {
            added: after
                .keys()
                .filter(|n| !before.contains_key(*n))
                .cloned()
                .collect(),
            removed: before
                .keys()
                .filter(|n| !after.contains_key(*n))
                .cloned()
                .collect(),
            modified: after
                .iter()
                .filter(|(n, k)| before.get(*n).is_some_and(|old| old != *k))
                .map(|(n, _)| n.clone())
                .collect(),
        }
    }

    /// True when no clip changed.
    pub fn is_empty(&self) -> bool {
        self.added.is_empty() && self.removed.is_empty() && self.modified.is_empty()
    }
}

impl std::fmt::Display for ClipChanges {
    /// `added: Jump; modified: Walk, Run`, or `no clip changed`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        for (what, list) in [
            ("added", &self.added),
            ("removed", &self.removed),
            ("modified", &self.modified),
        ] {
            if !list.is_empty() {
                parts.push(format!("{what}: {}", list.join(", ")));
            }
        }
        if parts.is_empty() {
            f.write_str("no clip changed")
        } else {
            f.write_str(&parts.join("; "))
        }
    }
}

/// Settings that name a joint or clip the file no longer has (renamed or removed in the
/// DCC). They stay in the settings, unused, until the name comes back or the user removes
/// them: never silently dropped.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Missing {
    pub joints: Vec<String>,
    pub clips: Vec<String>,
}

impl Missing {
    /// The joints and clips `settings` names that `asset` lacks.
    pub fn of(settings: &Settings, asset: &Asset) -> Self {
        let joints: BTreeSet<&str> = asset
            .skeleton
            .joints
            .iter()
            .map(|j| j.name.as_str())
            .collect();
        let clips: BTreeSet<&str> = asset.clips.iter().map(|c| c.name.as_str()).collect();
        let mut named: BTreeSet<&str> = settings.joints.keys().map(String::as_str).collect();
        for c in settings.clips.values() {
            named.extend(c.joints.keys().map(String::as_str));
        }
        Self {
            joints: named
                .into_iter()
                .filter(|j| !joints.contains(j))
                .map(str::to_owned)
                .collect(),
            clips: settings
                .clips
                .keys()
                .filter(|c| !clips.contains(c.as_str()) && !settings.takes.contains_key(*c))
                .cloned()
                .collect(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.joints.is_empty() && self.clips.is_empty()
    }
}

impl std::fmt::Display for Missing {
    /// `joints: Hand_L; clips: Idle`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts = Vec::new();
        if !self.joints.is_empty() {
            parts.push(format!("joints: {}", self.joints.join(", ")));
        }
        if !self.clips.is_empty() {
            parts.push(format!("clips: {}", self.clips.join(", ")));
        }
        f.write_str(&parts.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(b: u8) -> Key {
        [b; 32]
    }

    #[test]
    fn changes_name_added_removed_and_modified_clips() {
        let before = BTreeMap::from([("Walk".to_owned(), key(1)), ("Run".to_owned(), key(2))]);
        let after = BTreeMap::from([("Walk".to_owned(), key(3)), ("Jump".to_owned(), key(4))]);
        let c = ClipChanges::between(&before, &after);
        assert_eq!(c.added, ["Jump"]);
        assert_eq!(c.removed, ["Run"]);
        assert_eq!(c.modified, ["Walk"]);
        assert_eq!(c.to_string(), "added: Jump; removed: Run; modified: Walk");
        assert!(ClipChanges::between(&before, &before).is_empty());
    }
}
