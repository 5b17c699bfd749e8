//! User-defined animated number properties of FBX nodes (Maya / Max / Blender custom
//! attributes: a facial control, a foot-contact flag, a weapon trail switch) as scalar
//! tracks. Per take, every property a layer animates on a node that the node declares as
//! user-defined (`ufbx_prop_flags` `USER_DEFINED`) and of a number, integer or boolean type
//! becomes a one-value scalar track named `NODE.PROPERTY`, sampled at every frame of the
//! clip with ufbx's evaluation (`ufbx_evaluate_prop`: every layer, interpolation and
//! extrapolation). It drives no geometry (reach 0), so it is held to an explicit tolerance:
//! the settings' `[curves."NODE.PROPERTY"] tolerance`, else `weight_tolerance` (default 0:
//! exact reductions only).

use std::collections::BTreeSet;

use super::fbx::node_name;
use crate::model::{Clip, ScalarTrack};

/// Whether `prop` is a user-defined scalar a curve can animate.
fn is_user_scalar(prop: &ufbx::Prop) -> bool {
    prop.flags.has_any(ufbx::PropFlags::USER_DEFINED)
        && matches!(
            prop.type_,
            ufbx::PropType::Number | ufbx::PropType::Integer | ufbx::PropType::Boolean
        )
}

/// Adds to every clip (`stacks[i]` the take `clips[i]` was read from) a scalar track per
/// user-defined number property its take animates on a node.
pub(super) fn attach_tracks(scene: &ufbx::Scene, stacks: &[usize], clips: &mut [Clip]) {
    for (clip, &s) in clips.iter_mut().zip(stacks) {
        let stack = &scene.anim_stacks[s];
        let mut seen = BTreeSet::new();
        for layer in &stack.layers {
            for p in &layer.anim_props {
                let Some(node) = ufbx::as_node(&p.element) else {
                    continue;
                };
                let name = p.prop_name.to_string();
                let declared = node.element.props.find_prop(&name);
                if !declared.is_some_and(is_user_scalar)
                    || !seen.insert((node.element.element_id, name.clone()))
                {
                    continue;
                }
                let rate = clip.sample_rate as f64;
                let times: Vec<f32> = (0..clip.frame_count)
                    .map(|f| (f as f64 / rate) as f32)
                    .collect();
                let t0 = stack.time_begin;
                let fps = scene.settings.frames_per_second;
                let values: Vec<f32> = (0..clip.frame_count)
                    .map(|f| {
                        let t = t0 + f as f64 / fps;
                        ufbx::evaluate_prop(&stack.anim, &node.element, &name, t)
                            .value_vec4
                            .x as f32
                    })
                    .collect();
                if values.iter().any(|v| !v.is_finite()) {
                    continue;
                }
                clip.scalar_tracks.push(ScalarTrack {
                    name: format!("{}.{name}", node_name(node)),
                    targets: 1,
                    times,
                    values,
                    reach: vec![0.0],
                });
            }
        }
    }
}
