//! glTF nodes that hang from joints without being joints ([`Socket`]s): `*_end` tips, rigid
//! mesh parts, empties for attachments. A node is a socket when its nearest ancestor in the
//! skeleton is a deforming joint and it carries no skin (a skinned mesh follows its skin, not
//! its node), and neither it nor a node between it and the joint is animated (an animation
//! channel outside the skeleton moves a node on its own; the importer ignores it).

use std::collections::HashMap;

use glam::{DAffine3, DMat4};

use crate::model::{Skeleton, Socket};

/// Every socket of the document, in node order (`order` lists every node parents-first).
pub(super) fn find_sockets(
    nodes: &[gltf::Node],
    order: &[usize],
    parent: &[Option<usize>],
    joint_of_node: &HashMap<usize, usize>,
    skeleton: &Skeleton,
    animated: &[bool],
) -> Vec<Socket> {
    // Per node outside the skeleton: the nearest joint above it and the chain down to it.
    let mut chain: Vec<Option<(usize, DAffine3)>> = vec![None; nodes.len()];
    for &n in order {
        if let Some(&j) = joint_of_node.get(&n) {
            chain[n] = Some((j, DAffine3::IDENTITY));
            continue;
        }
        if animated[n] {
            continue;
        }
        chain[n] = parent[n].and_then(|p| chain[p]).map(|(j, above)| {
            let m =
                DMat4::from_cols_array_2d(&nodes[n].transform().matrix().map(|c| c.map(f64::from)));
            (j, above * DAffine3::from_mat4(m))
        });
    }
    let mut sockets: Vec<Socket> = order
        .iter()
        .filter(|&&n| !joint_of_node.contains_key(&n) && nodes[n].skin().is_none())
        .filter_map(|&n| {
            let (joint, offset) = chain[n]?;
            (skeleton.joints[joint].deforming && offset.is_finite()).then(|| Socket {
                name: nodes[n]
                    .name()
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("node{n}")),
                joint,
                offset,
                source_node: Some(n),
            })
        })
        .collect();
    sockets.sort_by_key(|s| s.source_node);
    sockets
}
