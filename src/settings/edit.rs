//! Edits the app (and scripts) make to settings: set one per-joint value on many joints, reset
//! overrides, and the "adaptive" fill that tightens tolerances toward the root.

use super::{JointSettings, Settings};
use crate::model::Skeleton;

/// One per-joint value to set (lengths in the settings' units: mm and cm).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum JointEdit {
    ToleranceMm(f32),
    MarkerOffsetCm(f32),
    Pinned(bool),
    /// Remove the joint's overrides, so it follows the file-wide values again.
    Reset,
}

/// Which overrides a per-joint edit changes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EditScope {
    /// The value the clip uses: its own override of the joint when it has one, the
    /// file-wide override otherwise (so the edit reaches every clip that does not override).
    #[default]
    File,
    /// The clip's own override only (other clips keep theirs).
    Clip,
}

impl Settings {
    /// Applies `edit` to each named joint of `clip`, in `scope`. Reset in the file scope
    /// removes the joint's file-wide and clip overrides; in the clip scope, the clip's only.
    /// Entries left without any value are removed.
    pub fn edit_joints<'a>(
        &mut self,
        clip: &str,
        scope: EditScope,
        names: impl IntoIterator<Item = &'a str>,
        edit: JointEdit,
    ) {
        for name in names {
            if scope == EditScope::Clip {
                let c = self.clips.entry(clip.to_owned()).or_default();
                apply(c.joints.entry(name.to_owned()).or_default(), edit);
                continue;
            }
            let clip_js = self
                .clips
                .get_mut(clip)
                .and_then(|c| c.joints.get_mut(name));
            let in_clip = clip_js.as_ref().is_some_and(|js| match edit {
                JointEdit::ToleranceMm(_) => js.tolerance_mm.is_some(),
                JointEdit::MarkerOffsetCm(_) => js.marker_offset_cm.is_some(),
                JointEdit::Pinned(_) => js.pinned.is_some(),
                JointEdit::Reset => false,
            });
            if in_clip {
                apply(clip_js.expect("checked above"), edit);
            } else if edit == JointEdit::Reset {
                self.joints.remove(name);
                if let Some(c) = self.clips.get_mut(clip) {
                    c.joints.remove(name);
                }
            } else {
                apply(self.joints.entry(name.to_owned()).or_default(), edit);
            }
        }
        // File-wide "not pinned" is the default; a clip keeps an explicit `false`, which may
        // override a file-wide `true`.
        for js in self.joints.values_mut() {
            js.pinned = js.pinned.filter(|&p| p);
        }
        self.joints.retain(|_, js| *js != JointSettings::default());
        if let Some(c) = self.clips.get_mut(clip) {
            c.joints.retain(|_, js| *js != JointSettings::default());
            if *c == super::ClipSettings::default() {
                self.clips.remove(clip);
            }
        }
    }

    /// Sets tolerances on `joints` that tighten toward the root: a joint with nothing below
    /// it gets `leaf_mm`, the joint with the tallest subtree among them `leaf_mm *
    /// root_factor`, and the others a geometric step between by their subtree height. Errors
    /// near the root move everything below them, so the root is held tightest.
    pub fn adaptive_tolerances(
        &mut self,
        skeleton: &Skeleton,
        clip: &str,
        scope: EditScope,
        joints: &[usize],
        leaf_mm: f32,
        root_factor: f32,
    ) {
        let heights = skeleton.heights();
        let tallest = joints.iter().map(|&j| heights[j]).max().unwrap_or(0).max(1);
        for &j in joints {
            let t = heights[j] as f32 / tallest as f32;
            let tol = leaf_mm * root_factor.powf(t);
            self.edit_joints(
                clip,
                scope,
                [skeleton.joints[j].name.as_str()],
                JointEdit::ToleranceMm(tol),
            );
        }
    }
}

fn apply(js: &mut JointSettings, edit: JointEdit) {
    match edit {
        JointEdit::ToleranceMm(t) => js.tolerance_mm = Some(t),
        JointEdit::MarkerOffsetCm(o) => js.marker_offset_cm = Some(o),
        JointEdit::Pinned(p) => js.pinned = Some(p),
        JointEdit::Reset => *js = JointSettings::default(),
    }
}
