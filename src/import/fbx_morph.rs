//! FBX blend shapes as morph targets and their animated weights as scalar tracks.
//!
//! - **Targets**: every shape of every blend channel of every blend deformer of a mesh, in
//!   that order, becomes one morph target of the imported mesh (named after the channel; an
//!   in-between shape of a channel with several is `CHANNEL.N`). Offsets are ufbx's, in the
//!   mesh's geometry space (already converted to metres and Y-up by the load options), each
//!   scaled by the shape's per-vertex weight where the file gives one, and laid out on the
//!   mesh's triangle corners as [`super::fbx_mesh`] lays out positions.
//! - **Weights**: per take that keys one of a mesh's channels, a scalar track named as the
//!   mesh with one weight per target at every frame of the clip: the channel's weight
//!   (`DeformPercent` / 100, `ufbx_evaluate_blend_weight`) split over its shapes exactly as
//!   ufbx splits it (`ufbxi_update_blend_channel`: linear between the two shapes around the
//!   weight, from zero). A channel with one shape at full weight 1 gives its weight as it is.
//! - **Reach**: each target's largest offset times the mesh's largest scale at the rest pose:
//!   the most one unit of its weight moves a vertex, as the glTF export bounds it.

use glam::{DAffine3, Vec3};

use super::{MorphTarget, SkinnedMesh};
use crate::model::{Clip, ScalarTrack, Skeleton, local_to_object_f64};

/// The morph targets of `mesh`, laid out on `corners` triangle corners as
/// `fbx_mesh::triangulate` lays them out (none when the mesh has no blend shape or the
/// layout disagrees).
pub(super) fn mesh_targets(
    scene: &ufbx::Scene,
    mesh: &ufbx::Mesh,
    corners: usize,
) -> Vec<MorphTarget> {
    if mesh.blend_deformers.is_empty() {
        return Vec::new();
    }
    let corner_vertex = corner_vertices(mesh);
    if corner_vertex.len() != corners {
        return Vec::new();
    }
    let mut out = Vec::new();
    for deformer in &mesh.blend_deformers {
        for channel in &deformer.channels {
            let Some(index) = channel_index(scene, channel) else {
                continue;
            };
            let n = channel.keyframes.len();
            for (k, key) in channel.keyframes.iter().enumerate() {
                let per_vertex = shape_offsets(&key.shape, mesh.num_vertices);
                let name = if n == 1 {
                    channel.element.name.to_string()
                } else {
                    format!("{}.{k}", channel.element.name)
                };
                out.push(MorphTarget {
                    name,
                    offsets: corner_vertex
                        .iter()
                        .map(|&v| per_vertex.get(v).copied().unwrap_or(Vec3::ZERO))
                        .collect(),
                    source: Some((index, k)),
                });
            }
        }
    }
    out
}

/// The mesh vertex of every triangle corner, in `fbx_mesh::triangulate`'s order.
fn corner_vertices(mesh: &ufbx::Mesh) -> Vec<usize> {
    let mut out = Vec::with_capacity(mesh.num_triangles.saturating_mul(3));
    let mut tri = vec![0u32; mesh.max_face_triangles.saturating_mul(3)];
    for &face in mesh.faces.iter() {
        let n = mesh.triangulate_face(&mut tri, face) as usize;
        for &ix in &tri[..(n * 3).min(tri.len())] {
            out.push(mesh.vertex_indices.get(ix as usize).copied().unwrap_or(0) as usize);
        }
    }
    out
}

/// A shape's offset per mesh vertex (zero where it lists none), times its per-vertex weight.
fn shape_offsets(shape: &ufbx::BlendShape, vertices: usize) -> Vec<Vec3> {
    let mut out = vec![Vec3::ZERO; vertices];
    for i in 0..shape.num_offsets {
        let (Some(&v), Some(o)) = (shape.offset_vertices.get(i), shape.position_offsets.get(i))
        else {
            continue;
        };
        let w = shape.offset_weights.get(i).copied().unwrap_or(1.0);
        if let Some(slot) = out.get_mut(v as usize) {
            *slot += Vec3::new((o.x * w) as f32, (o.y * w) as f32, (o.z * w) as f32);
        }
    }
    out
}

/// A blend channel's index in `scene.blend_channels`.
fn channel_index(scene: &ufbx::Scene, channel: &ufbx::BlendChannel) -> Option<usize> {
    let i = channel.element.typed_id as usize;
    (scene.blend_channels.get(i)?.element.element_id == channel.element.element_id).then_some(i)
}

/// How a channel of weight `weight` drives its shapes (ufbx's `ufbxi_update_blend_channel`):
/// per shape (`target_weights`, the weight at which each is reached, as the file orders
/// them), its effective weight.
pub fn effective_weights(weight: f64, target_weights: &[f64]) -> Vec<f64> {
    let n = target_weights.len();
    let mut out = vec![0.0; n];
    if n == 0 {
        return out;
    }
    let last_negative = target_weights.iter().rposition(|&w| w < 0.0);
    // `None` is the zero key (target weight 0, no shape).
    let tw = |k: Option<usize>| k.map_or(0.0, |k| target_weights[k]);
    let (mut prev, mut next): (Option<usize>, Option<usize>) = (None, None);
    if weight > 0.0 {
        if let Some(l) = last_negative {
            prev = Some(l);
        }
        let first = last_negative.map_or(0, |l| l + 1);
        for (i, &w) in target_weights.iter().enumerate().skip(first) {
            prev = next;
            next = Some(i);
            if w > weight {
                break;
            }
        }
    } else {
        let first_positive = last_negative.map_or(0, |l| l + 1);
        if first_positive < n {
            prev = Some(first_positive);
        }
        if let Some(l) = last_negative {
            for (i, &w) in target_weights.iter().enumerate().take(l + 1).rev() {
                prev = next;
                next = Some(i);
                if w < weight {
                    break;
                }
            }
        }
    }
    let delta = tw(next) - tw(prev);
    if delta != 0.0 {
        let t = (weight - tw(prev)) / delta;
        if let Some(p) = prev {
            out[p] = 1.0 - t;
        }
        if let Some(q) = next {
            out[q] = t;
        }
    }
    out
}

/// Adds to every clip (`stacks[i]` the take `clips[i]` was read from) a scalar track per mesh
/// with morph targets one of whose channels the take keys.
pub(super) fn attach_tracks(
    scene: &ufbx::Scene,
    stacks: &[usize],
    clips: &mut [Clip],
    skeleton: &Skeleton,
    meshes: &[SkinnedMesh],
) {
    let scales: Vec<f32> = meshes.iter().map(|m| mesh_scale(skeleton, m)).collect();
    for (clip, &s) in clips.iter_mut().zip(stacks) {
        let stack = &scene.anim_stacks[s];
        let keyed = |channel: usize| {
            let id = scene.blend_channels[channel].element.element_id;
            stack
                .layers
                .iter()
                .any(|l| l.anim_props.iter().any(|p| p.element.element_id == id))
        };
        for (mesh, &scale) in meshes.iter().zip(&scales) {
            let sources: Vec<(usize, usize)> =
                mesh.morph_targets.iter().filter_map(|t| t.source).collect();
            if sources.len() != mesh.morph_targets.len() || !sources.iter().any(|s| keyed(s.0)) {
                continue;
            }
            let targets = sources.len();
            let rate = clip.sample_rate as f64;
            let times: Vec<f32> = (0..clip.frame_count)
                .map(|f| (f as f64 / rate) as f32)
                .collect();
            let mut values = Vec::with_capacity(times.len() * targets);
            for f in 0..clip.frame_count {
                let t = clip.start_time as f64 + f as f64 / rate;
                values.extend(frame_weights(scene, &stack.anim, &sources, t));
            }
            let reach = mesh
                .morph_targets
                .iter()
                .map(|t| t.offsets.iter().map(|o| o.length()).fold(0.0, f32::max) * scale)
                .collect();
            clip.scalar_tracks.push(ScalarTrack {
                name: mesh.name.clone(),
                targets,
                times,
                values,
                reach,
            });
        }
        clip.morph_weight_channels = clip.scalar_tracks.len();
    }
}

/// The effective weight of every `(channel, shape)` at time `t` of `anim`.
fn frame_weights(
    scene: &ufbx::Scene,
    anim: &ufbx::Anim,
    sources: &[(usize, usize)],
    t: f64,
) -> Vec<f32> {
    let mut out = Vec::with_capacity(sources.len());
    let mut cached: Option<(usize, Vec<f64>)> = None;
    for &(c, k) in sources {
        if cached.as_ref().is_none_or(|(cc, _)| *cc != c) {
            let channel = &scene.blend_channels[c];
            let w = ufbx::evaluate_blend_weight(anim, channel, t);
            let targets: Vec<f64> = channel.keyframes.iter().map(|k| k.target_weight).collect();
            cached = Some((c, effective_weights(w, &targets)));
        }
        let (_, e) = cached.as_ref().expect("just set");
        out.push(e.get(k).copied().unwrap_or(0.0) as f32);
    }
    out
}

/// The largest axis length of the mesh's bind (a joint's rest world times its inverse bind
/// matrix) over the joints its vertices use: how much the mesh is scaled in the scene.
fn mesh_scale(skeleton: &Skeleton, mesh: &SkinnedMesh) -> f32 {
    let mut world = vec![DAffine3::IDENTITY; skeleton.len()];
    local_to_object_f64(skeleton, &skeleton.rest_pose(), &mut world);
    let mut used = vec![false; skeleton.len()];
    for (js, ws) in mesh.joints.iter().zip(&mesh.weights) {
        for k in 0..4 {
            if ws[k] != 0.0
                && let Some(u) = used.get_mut(js[k] as usize)
            {
                *u = true;
            }
        }
    }
    let mut scale = 0.0f64;
    for (j, _) in used.iter().enumerate().filter(|(_, u)| **u) {
        let Some(ib) = mesh.inverse_bind.get(j) else {
            continue;
        };
        let bind = glam::DMat4::from(world[j]) * ib.as_dmat4();
        for c in 0..3 {
            scale = scale.max(bind.col(c).truncate().length());
        }
    }
    if scale > 0.0 { scale as f32 } else { 1.0 }
}

#[cfg(test)]
mod tests {
    use super::effective_weights;

    #[test]
    fn one_shape_takes_the_weight_over_its_target() {
        assert_eq!(effective_weights(0.25, &[1.0]), vec![0.25]);
        assert_eq!(effective_weights(-0.5, &[1.0]), vec![-0.5]);
        assert_eq!(effective_weights(1.5, &[0.5]), vec![3.0]);
        assert_eq!(effective_weights(0.0, &[1.0]), vec![0.0]);
    }

    #[test]
    fn in_between_shapes_share_the_weight_linearly() {
        // Shapes at 0.5 and 1: 0.25 is half the first; 0.75 is half way between them.
        assert_eq!(effective_weights(0.25, &[0.5, 1.0]), vec![0.5, 0.0]);
        assert_eq!(effective_weights(0.75, &[0.5, 1.0]), vec![0.5, 0.5]);
        assert_eq!(effective_weights(1.0, &[0.5, 1.0]), vec![0.0, 1.0]);
        // A negative shape at -1 takes negative weights.
        assert_eq!(effective_weights(-0.5, &[-1.0, 1.0]), vec![0.5, 0.0]);
    }
}
