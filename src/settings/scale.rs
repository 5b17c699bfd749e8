//! Scaling a clip's tolerances by one factor (what a "fit in N KiB" search found), written
//! into the clip's own settings so that every joint's resolved tolerance is multiplied by the
//! factor and the animator's per-joint ratios are kept.

use super::{JointSettings, Settings};
use crate::import::Asset;

impl Settings {
    /// A copy in which every joint's tolerance for `clip_name` resolves to `scale` times what
    /// it resolves to now: the clip's tolerance and its joints' overrides are set in
    /// `[clips.NAME]` (file-wide values and other clips are unchanged).
    pub fn with_scaled_tolerances(&self, asset: &Asset, clip_name: &str, scale: f32) -> Settings {
        let now = self.resolve(asset, clip_name);
        let per_mm = now.unit.per_metre() / 1000.0;
        // The clip's base tolerance: what a joint without overrides gets.
        let mut plain = self.clone();
        plain.joints.clear();
        if let Some(c) = plain.clips.get_mut(clip_name) {
            c.joints.clear();
        }
        let base = plain.resolve(asset, clip_name).limits.tolerance;
        let mut out = self.clone();
        let clip = out.clips.entry(clip_name.to_owned()).or_default();
        let base_mm = base.first().map_or(0.1, |t| t / per_mm);
        clip.tolerance_mm = Some(base_mm * scale);
        for (j, joint) in asset.skeleton.joints.iter().enumerate() {
            let t = now.limits.tolerance[j];
            let overridden = t != base[j];
            let has_entry = clip
                .joints
                .get(&joint.name)
                .is_some_and(|js| js.tolerance_mm.is_some());
            if overridden || has_entry {
                let js: &mut JointSettings = clip.joints.entry(joint.name.clone()).or_default();
                js.tolerance_mm = Some(t / per_mm * scale);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn default_asset() -> Asset {
        crate::character::committed_asset()
    }

    #[test]
    fn every_joint_scales_by_the_factor_and_other_clips_do_not_move() {
        let asset = default_asset();
        let mut s = Settings::default();
        let hand = asset.skeleton.joints[5].name.clone();
        let foot = asset.skeleton.joints[9].name.clone();
        s.joints.entry(hand).or_default().tolerance_mm = Some(0.03);
        let (first, second) = (&asset.clips[0].name, &asset.clips[1].name);
        s.clips
            .entry(first.clone())
            .or_default()
            .joints
            .entry(foot)
            .or_default()
            .tolerance_mm = Some(0.5);
        for scale in [0.25f32, 1.0, 3.7] {
            let scaled = s.with_scaled_tolerances(&asset, first, scale);
            let (a, b) = (s.resolve(&asset, first), scaled.resolve(&asset, first));
            for (x, y) in a.limits.tolerance.iter().zip(&b.limits.tolerance) {
                assert!(
                    (y - x * scale).abs() <= 1e-5 * x * scale,
                    "{x} * {scale} != {y}"
                );
            }
            assert_eq!(a.limits.marker_offset, b.limits.marker_offset);
            assert_eq!(s.resolve(&asset, second), scaled.resolve(&asset, second));
        }
    }
}
