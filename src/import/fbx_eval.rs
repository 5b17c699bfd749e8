//! The joints' world matrices at one time of a take, composed as ufbx composes them when it
//! evaluates a whole scene (`ufbxi_update_node` in ufbx.c): each node's local transform is
//! ufbx's own (`ufbx_evaluate_transform`: every layer, curve, pivot, pre / post rotation and
//! rotation order; or the same sampled from the node's curves, [`super::fbx_curves`]), and
//! the chain follows the node's inherit mode. A normal node is
//! `parent world · T·R·S`; a node that does not inherit its parent's scale (segment scale
//! compensation) or inherits it component-wise is placed under the parent's *unscaled* world
//! with its scale multiplied by the inherited scale and its translation by the parent's.
//! Evaluating only the joints' chain costs a fraction of `ufbx_evaluate_scene`, which copies
//! and updates every element of the scene; `tests/import_fbx.rs` compares the two at every
//! frame of every shared file.

use glam::{DAffine3, DQuat, DVec3};

use super::fbx::JointNodes;
use super::fbx_curves::NodeCurves;

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

/// How one joint's local transform is found at a time of a take.
enum Source {
    /// No property of the node is animated: its own local transform at every time.
    Static,
    /// Sampled from its curves ([`NodeCurves`]).
    Curves(Box<NodeCurves>),
    /// `ufbx_evaluate_transform` (several layers, animated pivots, ...).
    Ufbx,
}

/// One take's evaluation of the joints: per joint, where its local transform comes from.
pub(super) struct TakeEval {
    sources: Vec<Source>,
    /// The scene root's local transform is the identity (its children's locals are their
    /// model locals).
    pub identity_root: bool,
}

impl TakeEval {
    /// The evaluation of `stack`'s joints.
    pub(super) fn new(scene: &ufbx::Scene, stack: &ufbx::AnimStack, joints: &JointNodes) -> Self {
        let mut animated = vec![false; scene.elements.len()];
        for layer in &stack.anim.layers {
            for p in &layer.anim_props {
                if let Some(a) = animated.get_mut(p.element.element_id as usize) {
                    *a = true;
                }
            }
        }
        let sources = joints
            .nodes
            .iter()
            .map(|&n| {
                let node = &scene.nodes[n];
                if !animated[node.element.element_id as usize] {
                    Source::Static
                } else if let Some(c) = NodeCurves::new(&stack.anim, node) {
                    Source::Curves(Box::new(c))
                } else {
                    Source::Ufbx
                }
            })
            .collect();
        let r = &scene.root_node.local_transform;
        let identity_root = (r.translation.x, r.translation.y, r.translation.z) == (0.0, 0.0, 0.0)
            && (r.rotation.x, r.rotation.y, r.rotation.z, r.rotation.w) == (0.0, 0.0, 0.0, 1.0)
            && (r.scale.x, r.scale.y, r.scale.z) == (1.0, 1.0, 1.0);
        TakeEval {
            sources,
            identity_root,
        }
    }

    /// Joint `j`'s (node `node`'s) local transform at `time`: what `ufbx_evaluate_transform`
    /// gives.
    pub(super) fn local(
        &self,
        anim: &ufbx::Anim,
        j: usize,
        node: &ufbx::Node,
        time: f64,
    ) -> ufbx::Transform {
        match &self.sources[j] {
            Source::Static => node.local_transform,
            Source::Curves(c) => c.evaluate(anim, time),
            Source::Ufbx => ufbx::evaluate_transform(anim, node, time),
        }
    }

    /// Every joint's local transform at `time` of `anim`.
    pub(super) fn locals_at(
        &self,
        scene: &ufbx::Scene,
        anim: &ufbx::Anim,
        joints: &JointNodes,
        time: f64,
    ) -> Vec<ufbx::Transform> {
        joints
            .nodes
            .iter()
            .enumerate()
            .map(|(j, &n)| self.local(anim, j, &scene.nodes[n], time))
            .collect()
    }

    /// The world matrix of every joint's node from the joints' local transforms (`locals`,
    /// from [`Self::locals_at`]; joints parents first; a joint's parent node is its parent
    /// joint or the scene root).
    pub(super) fn worlds(
        scene: &ufbx::Scene,
        joints: &JointNodes,
        locals: &[ufbx::Transform],
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
            let local = &locals[j];
            let parent = node
                .parent
                .as_ref()
                .and_then(|p| world_of(&out, p.element.typed_id as usize));
            let inherited = node
                .inherit_scale_node
                .as_ref()
                .and_then(|p| world_of(&out, p.element.typed_id as usize))
                .map_or(DVec3::ONE, |w| w.inherit_scale);
            out.push(compose(parent.as_ref(), node, local, inherited));
        }
        out.into_iter().map(|w| w.world).collect()
    }
}
