//! Additive clips in glTF. glTF has no additive flag: a player plays every animation as a
//! full pose. So a scene written from a source that declares additive clips (ACL SJSON's
//! `additive_format`, FBX accumulate layers `TAKE/LAYER`, or the sidecar's `additive = …`)
//! holds each one **composed**: its base with the additive applied at weight 1 (the runtime's
//! `apply_additive`, what players show for it on its base), every frame, and is compressed and
//! verified as the full clip it then is. docs/EXPORT.md "Additive and root-motion clips in
//! glTF".

use crate::codec::playback::Layer;
use crate::import::Asset;
use crate::model::playback::Additive;
use crate::settings::Settings;

/// `asset` with every clip that `settings` resolve as additive replaced by the full clip
/// players show for it (base ⊕ additive, every frame), and the list of those clips with
/// their mode and base. The returned asset declares no additive clip, so it compresses and
/// verifies them as the full clips they now are.
pub fn compose_additives(asset: &Asset, settings: &Settings) -> (Asset, Vec<(String, Additive)>) {
    let mut out = asset.clone();
    let mut composed = Vec::new();
    for clip in out.clips.iter_mut() {
        let resolved = settings.resolve(asset, &clip.name);
        let (Some(additive), Some(base)) = (resolved.additive, resolved.additive_base) else {
            continue;
        };
        if base.is_empty() || base.iter().any(|p| p.len() != asset.skeleton.len()) {
            continue;
        }
        let layer = Layer {
            mode: additive.mode,
            base,
        };
        *clip = layer.compose_clip(clip);
        composed.push((clip.name.clone(), additive));
    }
    out.source_additive.clear();
    (out, composed)
}
