//! FBX additive (Maya "accumulate") animation layers offered as additive clips.
//!
//! For every layer `k ≥ 1` of a take that ufbx marks additive (the bottom layer adds to
//! nothing, whatever its flag), two more clips over the take's frames:
//!
//! - `TAKE/LAYER.base`: the take evaluated with only the layers below `k` (ufbx's own
//!   evaluation restricted to them: `ufbx_create_anim` with `layer_ids`, each at its own,
//!   possibly animated, weight);
//! - `TAKE/LAYER`: additive (`additive0`: translation added, rotation `base.r · add.r`,
//!   scale `base.s ∘ add.s`) on `TAKE/LAYER.base` played in sync, each frame's delta taking
//!   that base to the take evaluated with the layers up to and including `k`.
//!
//! So base ⊕ additive is, at every frame, ufbx's evaluation of layers `0..=k`: the whole take
//! when `LAYER` is its top layer. Layers above `LAYER` (the shared file's override layer `Y`
//! over the accumulate layer `X`) are in the take's own clip, not in this pair.

use glam::{Quat, Vec3};

use super::fbx::{JointNodes, locals_from_worlds, make_continuous};
use super::fbx_eval;
use crate::model::playback::{Additive, AdditiveBase, AdditiveMode};
use crate::model::{Clip, Skeleton, Transform};

/// The clips a take's additive layers add (base first, then its additive, per layer), and
/// each additive clip's mode and base.
pub(super) struct LayerClips {
    pub clips: Vec<Clip>,
    pub additive: Vec<(String, Additive)>,
}

/// The base and additive clips of every additive layer above the bottom of take `full` (read
/// from `scene.anim_stacks[stack_index]`).
pub(super) fn layer_clips(
    scene: &ufbx::Scene,
    stack_index: usize,
    full: &Clip,
    skeleton: &Skeleton,
    joints: &JointNodes,
) -> Result<LayerClips, String> {
    let stack = &scene.anim_stacks[stack_index];
    let mut out = LayerClips {
        clips: Vec::new(),
        additive: Vec::new(),
    };
    let ids: Vec<u32> = stack.layers.iter().map(|l| l.element.typed_id).collect();
    for (k, layer) in stack.layers.iter().enumerate().skip(1) {
        if !layer.additive {
            continue;
        }
        let name = format!("{}/{}", full.name, layer.element.name);
        let base_name = format!("{name}.base");
        let below = sample(scene, stack, &ids[..k], full, skeleton, joints, &base_name)?;
        let upto = sample(scene, stack, &ids[..=k], full, skeleton, joints, &name)?;
        let mut additive = upto;
        for (add, base) in additive.tracks.iter_mut().zip(&below.tracks) {
            for f in 0..full.frame_count {
                let (t, r, s) = delta(
                    &Transform::new(add.translations[f], add.rotations[f], add.scales[f]),
                    &Transform::new(base.translations[f], base.rotations[f], base.scales[f]),
                );
                add.translations[f] = t;
                add.rotations[f] = r;
                add.scales[f] = s;
            }
        }
        make_continuous(&mut additive);
        out.additive.push((
            name,
            Additive {
                mode: AdditiveMode::Additive0,
                base: AdditiveBase::Clip {
                    clip: base_name.clone(),
                },
            },
        ));
        out.clips.push(below);
        out.clips.push(additive);
    }
    Ok(out)
}

/// The `additive0` delta taking `base` to `full`: translation `full.t − base.t`, rotation
/// `base.r⁻¹ · full.r`, scale `full.s / base.s` (1 where the base's scale is 0).
fn delta(full: &Transform, base: &Transform) -> (Vec3, Quat, Vec3) {
    let r = (base.rotation.conjugate() * full.rotation).normalize();
    let s = Vec3::select(
        base.scale.cmpeq(Vec3::ZERO),
        Vec3::ONE,
        full.scale / base.scale,
    );
    (full.translation - base.translation, r, s)
}

/// The take of `full` evaluated with only the layers `layer_ids` (ufbx typed ids), as a clip
/// named `name` over `full`'s frames.
fn sample(
    scene: &ufbx::Scene,
    stack: &ufbx::AnimStack,
    layer_ids: &[u32],
    full: &Clip,
    skeleton: &Skeleton,
    joints: &JointNodes,
    name: &str,
) -> Result<Clip, String> {
    let anim = ufbx::create_anim(
        scene,
        ufbx::AnimOpts {
            layer_ids: ufbx::ListOpt::Ref(layer_ids),
            ..Default::default()
        },
    )
    .map_err(|e| {
        format!(
            "take '{}': layers not evaluable: {}",
            full.name, e.description
        )
    })?;
    let parents: Vec<Option<usize>> = skeleton.joints.iter().map(|j| j.parent).collect();
    let mut clip = Clip::rest(name, skeleton, full.sample_rate, full.frame_count);
    clip.start_time = full.start_time;
    for (c, f) in clip.tracks.iter_mut().zip(&full.tracks) {
        c.source_channels = f.source_channels;
    }
    // Times as the take's own clip was sampled at (`fbx::sample_stack`).
    let (t0, fps) = (stack.time_begin, scene.settings.frames_per_second);
    let mut pose = vec![Transform::IDENTITY; joints.nodes.len()];
    for f in 0..full.frame_count {
        let t = t0 + f as f64 / fps;
        // The layers' own anim: ufbx's evaluation of every joint (the take's curve
        // sampling in `fbx_eval` is for the stack's anim only).
        let locals: Vec<ufbx::Transform> = joints
            .nodes
            .iter()
            .map(|&n| ufbx::evaluate_transform(&anim, &scene.nodes[n], t))
            .collect();
        let worlds = fbx_eval::TakeEval::worlds(scene, joints, &locals);
        locals_from_worlds(&parents, &worlds, &mut pose);
        for (tracks, p) in clip.tracks.iter_mut().zip(&pose) {
            tracks.translations[f] = p.translation;
            tracks.rotations[f] = p.rotation;
            tracks.scales[f] = p.scale;
        }
    }
    make_continuous(&mut clip);
    Ok(clip)
}
