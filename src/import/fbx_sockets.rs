//! FBX nodes that hang from joints without being joints ([`Socket`]s): rigid meshes, nulls
//! used as attachment points. A node is a socket when it is not in the skeleton, its mesh (if
//! any) has no skin, and its nearest ancestor in the skeleton is a deforming joint; its offset
//! is its scene transform relative to that joint's (both as the scene places them). A node
//! a take animates, or under one between it and its joint, moves on its own: not a socket.

use super::fbx::{JointNodes, TypedId, affine};
use crate::model::{Skeleton, Socket};

/// Every socket of the scene, in node order.
pub(super) fn find_sockets(
    scene: &ufbx::Scene,
    joints: &JointNodes,
    skeleton: &Skeleton,
    animated: &[bool],
) -> Vec<Socket> {
    let mut out = Vec::new();
    for node in scene.nodes.iter() {
        let i = node.typed_id();
        if node.is_root || joints.joint_of_node[i].is_some() || animated[i] {
            continue;
        }
        if node
            .mesh
            .as_ref()
            .is_some_and(|m| !m.skin_deformers.is_empty())
        {
            continue;
        }
        // The nearest ancestor in the skeleton (the scene's depth bounds the walk).
        let mut cur = node.parent.as_ref();
        let joint = loop {
            match cur {
                None => break None,
                Some(p) if p.is_root => break None,
                Some(p) => match joints.joint_of_node[p.typed_id()] {
                    Some(j) => break Some((j, p)),
                    None if animated[p.typed_id()] => break None,
                    None => cur = p.parent.as_ref(),
                },
            }
        };
        let Some((j, parent)) = joint else { continue };
        if !skeleton.joints.get(j).is_some_and(|k| k.deforming) {
            continue;
        }
        let offset = affine(&parent.node_to_world).inverse() * affine(&node.node_to_world);
        if offset.is_finite() {
            out.push(Socket {
                name: super::fbx::node_name(node),
                joint: j,
                offset,
                source_node: None,
            });
        }
    }
    out
}
