//! The joints' world matrices at one time of a take, composed as ufbx composes them when it
//! evaluates a whole scene (`ufbxi_update_node` in ufbx.c): each node's local transform is
//! ufbx's own (`ufbx_evaluate_transform`: every layer, curve, pivot, pre / post rotation and
//! rotation order), and the chain follows the node's inherit mode. A normal node is
//! `parent world · T·R·S`; a node that does not inherit its parent's scale (segment scale
//! compensation) or inherits it component-wise is placed under the parent's *unscaled* world
//! with its scale multiplied by the inherited scale and its translation by the parent's.
//! Evaluating only the joints' chain costs a fraction of `ufbx_evaluate_scene`, which copies
//! and updates every element of the scene; `tests/import_fbx.rs` compares the two at every
//! frame of every shared file.

use glam::{DAffine3, DQuat, DVec3};

use super::fbx::JointNodes;

/// A node's world, unscaled world and the scale its children may inherit.
#[derive(Clone, Copy)]
struct NodeWorld {
    world: DAffine3,
    unscaled: DAffine3,
    inherit_scale: DVec3,
}

fn vec3(v: ufbx::Vec3) -> DVec3 {
    DVec3::new(v.x, v.y, v.z)
}

fn compose(
    parent: Option<&NodeWorld>,
    node: &ufbx::Node,
    local: &ufbx::Transform,
    inherited: DVec3,
) -> NodeWorld {
    let rotation = DQuat::from_xyzw(
        local.rotation.x,
        local.rotation.y,
        local.rotation.z,
        local.rotation.w,
    );
    let (t, s) = (vec3(local.translation), vec3(local.scale));
    let Some(parent) = parent else {
        return NodeWorld {
            world: DAffine3::from_scale_rotation_translation(s, rotation, t),
            unscaled: DAffine3::from_rotation_translation(rotation, t),
            inherit_scale: s,
        };
    };
    if node.inherit_mode == ufbx::InheritMode::Normal {
        return NodeWorld {
            world: parent.world * DAffine3::from_scale_rotation_translation(s, rotation, t),
            unscaled: parent.world * DAffine3::from_rotation_translation(rotation, t),
            inherit_scale: s,
        };
    }
    let s = s * inherited;
    let t = t * parent.inherit_scale;
    NodeWorld {
        world: parent.unscaled * DAffine3::from_scale_rotation_translation(s, rotation, t),
        unscaled: parent.unscaled * DAffine3::from_rotation_translation(rotation, t),
        inherit_scale: s,
    }
}

/// Per joint, whether one of its node's properties is animated in `stack` (any layer): the
/// others keep the node's own local transform at every time, so they are not evaluated.
pub(super) fn animated_joints(
    scene: &ufbx::Scene,
    stack: &ufbx::AnimStack,
    joints: &JointNodes,
) -> Vec<bool> {
    let mut animated = vec![false; scene.elements.len()];
    for layer in &stack.layers {
        for p in &layer.anim_props {
            if let Some(a) = animated.get_mut(p.element.element_id as usize) {
                *a = true;
            }
        }
    }
    joints
        .nodes
        .iter()
        .map(|&n| animated[scene.nodes[n].element.element_id as usize])
        .collect()
}

/// The world matrix of every joint's node at `time` of `anim` (joints parents first; a
/// joint's parent node is its parent joint or the scene root). A joint `animated` marks
/// false takes its node's static local transform (what `ufbx_evaluate_transform` gives for a
/// node with no animated property).
pub(super) fn joint_worlds_at(
    scene: &ufbx::Scene,
    anim: &ufbx::Anim,
    joints: &JointNodes,
    animated: &[bool],
    time: f64,
) -> Vec<DAffine3> {
    let root_node = &scene.root_node;
    let root = compose(None, root_node, &root_node.local_transform, DVec3::ONE);
    let root_id = root_node.element.typed_id as usize;
    let mut out: Vec<NodeWorld> = Vec::with_capacity(joints.nodes.len());
    let world_of = |out: &[NodeWorld], id: usize| -> Option<NodeWorld> {
        if id == root_id {
            Some(root)
        } else {
            joints.joint_of_node[id].and_then(|j| out.get(j).copied())
        }
    };
    for (j, &n) in joints.nodes.iter().enumerate() {
        let node = &scene.nodes[n];
        let local = if animated[j] {
            ufbx::evaluate_transform(anim, node, time)
        } else {
            node.local_transform
        };
        let parent = node
            .parent
            .as_ref()
            .and_then(|p| world_of(&out, p.element.typed_id as usize));
        let inherited = node
            .inherit_scale_node
            .as_ref()
            .and_then(|p| world_of(&out, p.element.typed_id as usize))
            .map_or(DVec3::ONE, |w| w.inherit_scale);
        out.push(compose(parent.as_ref(), node, &local, inherited));
    }
    out.into_iter().map(|w| w.world).collect()
}
