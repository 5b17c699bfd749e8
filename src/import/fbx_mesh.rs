//! FBX meshes for drawing and mesh-derived markers: skinned meshes (the first skin deformer
//! of each mesh: clusters, weights, the clusters' bind matrices) and meshes parented rigidly
//! under a joint (skinned fully to it, as the glTF importer does). Faces are triangulated by
//! ufbx; each triangle corner becomes one vertex (FBX normals are per corner). Positions are
//! in the mesh's geometry space; an inverse bind matrix takes them to its joint's space.
//! Meshes neither skinned nor under a joint (scenery, props) are left out, with a warning
//! naming them.

use glam::{Mat4, Vec3};

use super::SkinnedMesh;
use super::fbx::{JointNodes, affine, joint_worlds};
use crate::model::Skeleton;

/// The most inverse-bind matrices all meshes may hold (one per joint per mesh), as in the
/// glTF importer: 4 Mi matrices, 256 MiB.
const MAX_MESH_BINDS: usize = 1 << 22;

/// How a mesh's vertices follow the skeleton.
enum Binding<'a> {
    /// A skin deformer; its clusters' joints (None: a cluster without a bone).
    Skin(&'a ufbx::SkinDeformer, Vec<Option<usize>>),
    /// Every vertex on one joint.
    Rigid(usize),
}

/// Every triangulated mesh instance that follows the skeleton.
pub(super) fn import_meshes(
    scene: &ufbx::Scene,
    skeleton: &Skeleton,
    joints: &JointNodes,
    warnings: &mut Vec<String>,
) -> Vec<SkinnedMesh> {
    let joint_count = skeleton.len();
    if joint_count > u16::MAX as usize {
        warnings.push(format!(
            "meshes are not drawn: {joint_count} joints is more than 65535"
        ));
        return Vec::new();
    }
    let statics = joint_worlds(scene, joints);
    let mut out = Vec::new();
    let mut binds = 0usize;
    let mut scenery = Vec::new();
    for node in &scene.nodes {
        let Some(mesh) = node.mesh.as_ref() else {
            continue;
        };
        let mut inverse_bind = vec![Mat4::IDENTITY; joint_count];
        let binding = match mesh.skin_deformers.first() {
            Some(skin) => {
                let mut slots = Vec::with_capacity(skin.clusters.len());
                for c in &skin.clusters {
                    let joint = c
                        .bone_node
                        .as_ref()
                        .and_then(|b| joints.joint_of_node[b.element.typed_id as usize]);
                    if let Some(j) = joint {
                        inverse_bind[j] = mat4(affine(&c.geometry_to_bone));
                    }
                    slots.push(joint);
                }
                Binding::Skin(skin, slots)
            }
            None => {
                let Some(joint) = nearest_joint(node, joints) else {
                    scenery.push(node.element.name.to_string());
                    continue;
                };
                inverse_bind[joint] =
                    mat4(statics[joint].inverse() * affine(&node.geometry_to_world));
                Binding::Rigid(joint)
            }
        };
        binds = binds.saturating_add(joint_count);
        if binds > MAX_MESH_BINDS {
            warnings.push(format!(
                "mesh '{}' and later meshes are not drawn: too many meshes for {joint_count} joints",
                node.element.name
            ));
            break;
        }
        let name = if mesh.element.name.is_empty() {
            node.element.name.to_string()
        } else {
            mesh.element.name.to_string()
        };
        if let Some(mut m) = triangulate(mesh, &binding, name, inverse_bind, base_color(node)) {
            m.morph_targets = super::fbx_morph::mesh_targets(scene, mesh, m.positions.len());
            out.push(m);
        }
    }
    if !scenery.is_empty() {
        warnings.push(scenery_warning(&scenery));
    }
    out
}

/// Names at most this many of the meshes left out.
const NAMED_SCENERY: usize = 6;

/// The warning for meshes neither skinned nor under a joint (props, set dressing): they
/// are not part of the character, so they are neither drawn nor converted.
fn scenery_warning(names: &[String]) -> String {
    let shown: Vec<&str> = names
        .iter()
        .take(NAMED_SCENERY)
        .map(|n| n.as_str())
        .collect();
    let more = names.len().saturating_sub(NAMED_SCENERY);
    format!(
        "{} mesh(es) neither skinned nor under a joint (scenery, props) are not imported: {}{}",
        names.len(),
        shown.join(", "),
        if more > 0 {
            format!(" and {more} more")
        } else {
            String::new()
        }
    )
}

/// The mesh's triangles, one vertex per corner, with up to four normalized influences.
fn triangulate(
    mesh: &ufbx::Mesh,
    binding: &Binding,
    name: String,
    inverse_bind: Vec<Mat4>,
    base_color: [f32; 4],
) -> Option<SkinnedMesh> {
    if !mesh.vertex_position.exists || mesh.num_triangles == 0 {
        return None;
    }
    let corners = mesh.num_triangles.saturating_mul(3);
    let mut m = SkinnedMesh {
        name,
        positions: Vec::with_capacity(corners),
        normals: Vec::with_capacity(if mesh.vertex_normal.exists {
            corners
        } else {
            0
        }),
        joints: Vec::with_capacity(corners),
        weights: Vec::with_capacity(corners),
        indices: Vec::with_capacity(corners),
        inverse_bind,
        base_color,
        morph_targets: Vec::new(),
    };
    let mut tri = vec![0u32; mesh.max_face_triangles.saturating_mul(3)];
    for &face in mesh.faces.iter() {
        let n = mesh.triangulate_face(&mut tri, face) as usize;
        for &ix in &tri[..(n * 3).min(tri.len())] {
            let ix = ix as usize;
            if ix >= mesh.vertex_position.indices.len() {
                return None;
            }
            let p = mesh.vertex_position[ix];
            m.positions
                .push(Vec3::new(p.x as f32, p.y as f32, p.z as f32));
            if mesh.vertex_normal.exists && ix < mesh.vertex_normal.indices.len() {
                let v = mesh.vertex_normal[ix];
                m.normals
                    .push(Vec3::new(v.x as f32, v.y as f32, v.z as f32));
            }
            let vertex = mesh.vertex_indices.get(ix).copied().unwrap_or(0) as usize;
            let (j, w) = influences(binding, vertex);
            m.joints.push(j);
            m.weights.push(w);
            m.indices.push(m.indices.len() as u32);
        }
    }
    if m.normals.len() != m.positions.len() {
        m.normals.clear();
    }
    (!m.positions.is_empty()).then_some(m)
}

/// A vertex's four strongest influences, normalized (all on one joint for a rigid mesh; an
/// unweighted vertex on the skin's first joint).
fn influences(binding: &Binding, vertex: usize) -> ([u16; 4], [f32; 4]) {
    let (skin, slots) = match binding {
        Binding::Rigid(j) => return ([*j as u16, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]),
        Binding::Skin(skin, slots) => (skin, slots),
    };
    // The four strongest, kept sorted by weight (no allocation per vertex).
    let mut best = [(0usize, 0.0f32); 4];
    let mut count = 0;
    if let Some(v) = skin.vertices.get(vertex) {
        let begin = v.weight_begin as usize;
        let end = begin
            .saturating_add(v.num_weights as usize)
            .min(skin.weights.len());
        for w in skin.weights.get(begin..end).unwrap_or(&[]) {
            let Some(Some(j)) = slots.get(w.cluster_index as usize) else {
                continue;
            };
            let weight = w.weight as f32;
            if weight.is_nan() || weight <= 0.0 {
                continue;
            }
            let mut k = count.min(3);
            if count == 4 && weight <= best[3].1 {
                continue;
            }
            while k > 0 && best[k - 1].1 < weight {
                best[k] = best[k - 1];
                k -= 1;
            }
            best[k] = (*j, weight);
            count = (count + 1).min(4);
        }
    }
    let best = &best[..count];
    let total: f32 = best.iter().map(|b| b.1).sum();
    if best.is_empty() || total.is_nan() || total <= 0.0 {
        let first = slots.iter().flatten().next().copied().unwrap_or(0);
        return ([first as u16, 0, 0, 0], [1.0, 0.0, 0.0, 0.0]);
    }
    let mut joints = [0u16; 4];
    let mut weights = [0.0f32; 4];
    for (k, &(j, w)) in best.iter().enumerate() {
        joints[k] = j as u16;
        weights[k] = w / total;
    }
    (joints, weights)
}

/// The first material's diffuse colour, or light grey.
fn base_color(node: &ufbx::Node) -> [f32; 4] {
    node.materials
        .first()
        .map(|m| &m.fbx.diffuse_color)
        .filter(|c| c.has_value)
        .map(|c| {
            let v = c.value_vec4;
            [v.x as f32, v.y as f32, v.z as f32, 1.0]
        })
        .filter(|c| c.iter().all(|x| x.is_finite()))
        .unwrap_or([0.8, 0.8, 0.8, 1.0])
}

fn mat4(m: glam::DAffine3) -> Mat4 {
    glam::DMat4::from(m).as_mat4()
}

/// The joint at or above a node, if any.
fn nearest_joint(node: &ufbx::Node, joints: &JointNodes) -> Option<usize> {
    let mut cur = Some(node);
    while let Some(n) = cur {
        if let Some(j) = joints.joint_of_node[n.element.typed_id as usize] {
            return Some(j);
        }
        cur = n.parent.as_deref();
    }
    None
}
