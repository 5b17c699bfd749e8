//! A glTF file's morph-target weight channels as scalar tracks of its clips: per channel,
//! the node's name, its key times (from the clip's frame 0) and weights, and per target the
//! largest distance one unit of weight moves a vertex in the scene (the bound the glTF
//! export measures with, `export::morph_reach`).

use std::path::Path;

use gltf::animation::Interpolation as GltfInterpolation;
use gltf::animation::util::ReadOutputs;

use crate::model::{Clip, ScalarTrack};

/// Adds every `weights` channel of animation `i` of `doc` to `clips[i]` (the importer made
/// one clip per animation, in order). `path` and `bytes` are the file's, read again as JSON
/// for the targets' bounds. A channel the tracks cannot hold is reported in `warnings`.
pub(super) fn attach(
    path: &Path,
    bytes: &[u8],
    doc: &gltf::Document,
    buffers: &[Vec<u8>],
    clips: &mut [Clip],
    warnings: &mut Vec<String>,
) {
    let has_weights = doc.animations().any(|a| {
        a.channels()
            .any(|c| c.target().property() == gltf::animation::Property::MorphTargetWeights)
    });
    if !has_weights {
        return;
    }
    let json = crate::export::GltfDoc::from_bytes(path, bytes).ok();
    for (anim, clip) in doc.animations().zip(clips.iter_mut()) {
        for ch in anim.channels() {
            let reader = ch.reader(|b: gltf::Buffer| buffers.get(b.index()).map(|d| d.as_slice()));
            let (Some(times), Some(ReadOutputs::MorphTargetWeights(w))) =
                (reader.read_inputs(), reader.read_outputs())
            else {
                continue;
            };
            let times: Vec<f32> = times.map(|t| t - clip.start_time).collect();
            let mut values: Vec<f32> = w.into_f32().collect();
            let node = ch.target().node();
            let name = super::gltf::node_name(&node);
            let keys = times.len();
            let cubic = ch.sampler().interpolation() == GltfInterpolation::CubicSpline;
            if cubic && keys > 0 && values.len().is_multiple_of(3 * keys) {
                // In-tangent, value, out-tangent per key: the values.
                let n = values.len() / (3 * keys);
                values = (0..keys)
                    .flat_map(|k| values[(3 * k + 1) * n..(3 * k + 2) * n].to_vec())
                    .collect();
            }
            if keys == 0
                || values.is_empty()
                || !values.len().is_multiple_of(keys)
                || values.iter().any(|v| !v.is_finite())
                || times.windows(2).any(|p| p[1] <= p[0])
            {
                warnings.push(format!(
                    "animation '{}': the weights of '{name}' are not a curve of increasing key \
                     times; left out of the scalar tracks",
                    clip.name
                ));
                continue;
            }
            if ch.sampler().interpolation() != GltfInterpolation::Linear {
                warnings.push(format!(
                    "animation '{}': the weights of '{name}' are {:?}; stored as linear \
                     between their keys",
                    clip.name,
                    ch.sampler().interpolation()
                ));
            }
            let targets = values.len() / keys;
            let reach = json
                .as_ref()
                .and_then(|d| crate::export::morph_reach::target_reach(d, node.index()))
                .filter(|r| r.len() == targets)
                .map_or_else(
                    || vec![0.0; targets],
                    |r| r.iter().map(|&x| x as f32).collect(),
                );
            clip.scalar_tracks.push(ScalarTrack {
                name,
                targets,
                times,
                values,
                reach,
            });
        }
    }
}
