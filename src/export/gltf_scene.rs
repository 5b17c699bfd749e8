//! A new glTF 2.0 scene from the model: joints as nodes (names, rest TRS, hierarchy), skinned
//! meshes with their skins and base-colour materials, and clips as LINEAR animations.
//!
//! Every deforming joint is listed in a skin (without meshes, a skin with the rest pose's
//! inverse bind matrices) so that importers, skelpack's included, recover which joints
//! deform; non-deforming joints are plain nodes. A clip's frame `i` is keyed at
//! `start_time + i / sample_rate`, so re-importing reproduces the clip sample for sample.

use std::path::Path;

use glam::{Mat4, Quat, Vec3};
use serde_json::{Map, Value, json};

use super::gltf_doc::target;
use super::{ExportError, GltfDoc, GltfFormat};
use crate::import::SkinnedMesh;
use crate::model::{Clip, JointTracks, Skeleton, Transform, local_to_object_f64};

/// Builds the glTF document for a skeleton, its clips and (optionally) skinned meshes.
pub fn scene_to_gltf(
    skeleton: &Skeleton,
    clips: &[Clip],
    meshes: &[SkinnedMesh],
) -> Result<GltfDoc, ExportError> {
    validate(skeleton, clips, meshes)?;
    let mut doc = GltfDoc::new();
    let children = skeleton.children();
    for (i, joint) in skeleton.joints.iter().enumerate() {
        let mut node = Map::new();
        node.insert("name".into(), json!(joint.name));
        insert_trs(&mut node, &joint.rest);
        if !children[i].is_empty() {
            node.insert("children".into(), json!(children[i]));
        }
        doc.push("nodes", Value::Object(node));
    }
    let mut roots: Vec<usize> = (0..skeleton.len())
        .filter(|&i| skeleton.joints[i].parent.is_none())
        .collect();
    let mesh_nodes = write_meshes(&mut doc, skeleton, meshes);
    roots.extend(&mesh_nodes);
    doc.push("scenes", json!({ "nodes": roots }));
    doc.json["scene"] = json!(0);
    // Scalar tracks drive the morph targets of the mesh node named as them.
    let morph_nodes: Vec<(&str, usize, usize)> = meshes
        .iter()
        .zip(&mesh_nodes)
        .filter(|(m, _)| !m.morph_targets.is_empty())
        .map(|(m, &n)| (m.name.as_str(), n, m.morph_targets.len()))
        .collect();
    for clip in clips {
        write_clip(&mut doc, skeleton, clip, &morph_nodes);
    }
    Ok(doc)
}

/// Builds the scene and writes it as `.glb` or `.gltf` (by extension), atomically; refuses
/// to replace `input` unless `force`.
pub fn write_scene(
    path: &Path,
    skeleton: &Skeleton,
    clips: &[Clip],
    meshes: &[SkinnedMesh],
    input: Option<&Path>,
    force: bool,
) -> Result<(), ExportError> {
    let format = GltfFormat::from_path(path)?;
    let bytes = scene_to_gltf(skeleton, clips, meshes)?.to_bytes(format)?;
    super::write_output(path, &bytes, input, force)
}

fn validate(
    skeleton: &Skeleton,
    clips: &[Clip],
    meshes: &[SkinnedMesh],
) -> Result<(), ExportError> {
    if skeleton.is_empty() {
        return Err(ExportError::new(
            "nothing to export: the skeleton has no joints",
        ));
    }
    if let Some(j) = skeleton.joints.iter().find(|j| !j.rest.is_finite()) {
        return Err(ExportError::new(format!(
            "joint '{}' has a non-finite rest transform",
            j.name
        )));
    }
    for clip in clips {
        clip.validate(skeleton).map_err(ExportError::new)?;
    }
    for m in meshes {
        let n = m.positions.len();
        let bad = m.joints.len() != n
            || m.weights.len() != n
            || !(m.normals.is_empty() || m.normals.len() == n)
            || m.inverse_bind.len() != skeleton.len()
            || m.indices.iter().any(|&i| i as usize >= n)
            || m.joints
                .iter()
                .flatten()
                .any(|&j| j as usize >= skeleton.len())
            || !m.positions.iter().all(|p| p.is_finite());
        if bad {
            return Err(ExportError::new(format!(
                "mesh '{}' has inconsistent vertex attributes or joint indices",
                m.name
            )));
        }
    }
    Ok(())
}

fn insert_trs(node: &mut Map<String, Value>, t: &Transform) {
    if t.translation != Vec3::ZERO {
        node.insert("translation".into(), json!(t.translation.to_array()));
    }
    if t.rotation != Quat::IDENTITY {
        node.insert("rotation".into(), json!(t.rotation.to_array()));
    }
    if t.scale != Vec3::ONE {
        node.insert("scale".into(), json!(t.scale.to_array()));
    }
}

/// Writes skins, materials, meshes and one node per mesh; returns the new nodes' indices.
fn write_meshes(doc: &mut GltfDoc, skeleton: &Skeleton, meshes: &[SkinnedMesh]) -> Vec<usize> {
    let deforming: Vec<usize> = skeleton.deforming_joints().collect();
    if meshes.is_empty() {
        if !deforming.is_empty() {
            // Inverted as affine transforms in double precision: the last row stays exactly
            // (0, 0, 0, 1), as validators require of inverse bind matrices.
            let mut world = vec![glam::DAffine3::IDENTITY; skeleton.len()];
            local_to_object_f64(skeleton, &skeleton.rest_pose(), &mut world);
            let ibm: Vec<Mat4> = world
                .iter()
                .map(|m| glam::DMat4::from(m.inverse()).as_mat4())
                .collect();
            push_skin(doc, &deforming, &ibm);
        }
        return Vec::new();
    }
    // One skin per distinct set of inverse bind matrices; one material per colour.
    let mut skins: Vec<(usize, &Vec<Mat4>)> = Vec::new();
    let mut materials: Vec<([f32; 4], usize)> = Vec::new();
    let mut nodes = Vec::new();
    for mesh in meshes {
        let mut joints = deforming.clone();
        for (js, ws) in mesh.joints.iter().zip(&mesh.weights) {
            for k in 0..4 {
                let j = js[k] as usize;
                if ws[k] != 0.0 && !joints.contains(&j) {
                    joints.push(j);
                }
            }
        }
        let skin = match skins.iter().find(|(_, ibm)| **ibm == mesh.inverse_bind) {
            Some(&(s, _)) if joints.len() == deforming.len() => s,
            _ => {
                let s = push_skin(doc, &joints, &mesh.inverse_bind);
                skins.push((s, &mesh.inverse_bind));
                s
            }
        };
        let skin_joints: Vec<usize> = doc.json["skins"][skin]["joints"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_u64)
                    .map(|v| v as usize)
                    .collect()
            })
            .unwrap_or_default();
        let mut slot = vec![0u16; skeleton.len()];
        for (s, &node) in skin_joints.iter().enumerate() {
            slot[node] = s as u16;
        }
        let material = match materials.iter().find(|(c, _)| *c == mesh.base_color) {
            Some(&(_, m)) => m,
            None => {
                let m = doc.push(
                    "materials",
                    json!({
                        "name": format!("material{}", materials.len()),
                        "pbrMetallicRoughness": {
                            "baseColorFactor": mesh.base_color,
                            "metallicFactor": 0.0,
                            "roughnessFactor": 0.7,
                        },
                    }),
                );
                materials.push((mesh.base_color, m));
                m
            }
        };
        let mesh_index = push_mesh(doc, mesh, &slot, material);
        nodes.push(doc.push(
            "nodes",
            json!({ "name": mesh.name, "mesh": mesh_index, "skin": skin }),
        ));
    }
    nodes
}

fn push_skin(doc: &mut GltfDoc, joints: &[usize], ibm_per_joint: &[Mat4]) -> usize {
    let ibm: Vec<f32> = joints
        .iter()
        .flat_map(|&j| ibm_per_joint[j].to_cols_array())
        .collect();
    let acc = doc.push_f32(&ibm, 16, "MAT4", false, None);
    doc.push(
        "skins",
        json!({ "joints": joints, "inverseBindMatrices": acc }),
    )
}

fn push_mesh(doc: &mut GltfDoc, mesh: &SkinnedMesh, slot: &[u16], material: usize) -> usize {
    let flat3 = |v: &[Vec3]| -> Vec<f32> { v.iter().flat_map(|p| p.to_array()).collect() };
    let mut attributes = Map::new();
    let pos = doc.push_f32(
        &flat3(&mesh.positions),
        3,
        "VEC3",
        true,
        Some(target::ARRAY_BUFFER),
    );
    attributes.insert("POSITION".into(), json!(pos));
    if !mesh.normals.is_empty() {
        let nrm = doc.push_f32(
            &flat3(&mesh.normals),
            3,
            "VEC3",
            false,
            Some(target::ARRAY_BUFFER),
        );
        attributes.insert("NORMAL".into(), json!(nrm));
    }
    let joints: Vec<u16> = mesh
        .joints
        .iter()
        .zip(&mesh.weights)
        .flat_map(|(js, ws)| {
            std::array::from_fn::<u16, 4, _>(|k| {
                if ws[k] != 0.0 {
                    slot[js[k] as usize]
                } else {
                    0
                }
            })
        })
        .collect();
    let jnt = doc.push_u16(&joints, 4, "VEC4", Some(target::ARRAY_BUFFER));
    attributes.insert("JOINTS_0".into(), json!(jnt));
    let weights: Vec<f32> = mesh.weights.iter().flatten().copied().collect();
    let wgt = doc.push_f32(&weights, 4, "VEC4", false, Some(target::ARRAY_BUFFER));
    attributes.insert("WEIGHTS_0".into(), json!(wgt));
    let indices = if mesh.positions.len() <= u16::MAX as usize {
        let i: Vec<u16> = mesh.indices.iter().map(|&i| i as u16).collect();
        doc.push_u16(&i, 1, "SCALAR", Some(target::ELEMENT_ARRAY_BUFFER))
    } else {
        doc.push_u32(&mesh.indices, "SCALAR", Some(target::ELEMENT_ARRAY_BUFFER))
    };
    let mut primitive = json!({
        "attributes": attributes,
        "indices": indices,
        "material": material,
    });
    let mut out = json!({ "name": mesh.name });
    if !mesh.morph_targets.is_empty() {
        let targets: Vec<Value> = mesh
            .morph_targets
            .iter()
            .map(|t| {
                let acc = doc.push_f32(
                    &flat3(&t.offsets),
                    3,
                    "VEC3",
                    true,
                    Some(target::ARRAY_BUFFER),
                );
                json!({ "POSITION": acc })
            })
            .collect();
        primitive["targets"] = json!(targets);
        out["weights"] = json!(vec![0.0; targets.len()]);
        let names: Vec<&str> = mesh.morph_targets.iter().map(|t| t.name.as_str()).collect();
        out["extras"] = json!({ "targetNames": names });
    }
    out["primitives"] = json!([primitive]);
    doc.push("meshes", out)
}

/// Which of a joint's tracks a clip writes: those the source had, and any that leave rest.
fn written_tracks(tracks: &JointTracks, rest: &Transform) -> [bool; 3] {
    [
        tracks.source_channels[0] || tracks.translations.iter().any(|&v| v != rest.translation),
        tracks.source_channels[1] || tracks.rotations.iter().any(|&q| q != rest.rotation),
        tracks.source_channels[2] || tracks.scales.iter().any(|&v| v != rest.scale),
    ]
}

/// Key times of a clip's frames, computed as the importer computes sample times.
pub fn frame_times(clip: &Clip) -> Vec<f32> {
    (0..clip.frame_count)
        .map(|f| (clip.start_time as f64 + f as f64 / clip.sample_rate as f64) as f32)
        .collect()
}

/// Writes a clip as an animation; its scalar tracks drive the morph targets of the mesh
/// nodes in `morph_nodes` (name, node, targets) named as them.
fn write_clip(
    doc: &mut GltfDoc,
    skeleton: &Skeleton,
    clip: &Clip,
    morph_nodes: &[(&str, usize, usize)],
) {
    let times = frame_times(clip);
    let input = doc.push_f32(&times, 1, "SCALAR", true, None);
    let mut samplers = Vec::new();
    let mut channels = Vec::new();
    let mut add = |doc: &mut GltfDoc, node: usize, path: &str, values: Vec<f32>, width| {
        let kind = if width == 4 { "VEC4" } else { "VEC3" };
        let output = doc.push_f32(&values, width, kind, false, None);
        channels.push(json!({
            "sampler": samplers.len(),
            "target": { "node": node, "path": path },
        }));
        samplers.push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
    };
    for (j, (tracks, joint)) in clip.tracks.iter().zip(&skeleton.joints).enumerate() {
        let [t, r, s] = written_tracks(tracks, &joint.rest);
        if t {
            let v = tracks
                .translations
                .iter()
                .flat_map(|v| v.to_array())
                .collect();
            add(doc, j, "translation", v, 3);
        }
        if r {
            let v = tracks.rotations.iter().flat_map(|q| q.to_array()).collect();
            add(doc, j, "rotation", v, 4);
        }
        if s {
            let v = tracks.scales.iter().flat_map(|v| v.to_array()).collect();
            add(doc, j, "scale", v, 3);
        }
    }
    let any = (clip.tracks.iter().zip(&skeleton.joints))
        .any(|(tracks, joint)| written_tracks(tracks, &joint.rest).contains(&true));
    if !any {
        // glTF wants at least one channel: the first root's (constant) rotation.
        let v = clip.tracks[0]
            .rotations
            .iter()
            .flat_map(|q| q.to_array())
            .collect();
        add(doc, 0, "rotation", v, 4);
    }
    for track in &clip.scalar_tracks {
        let Some(&(_, node, _)) = morph_nodes
            .iter()
            .find(|(name, _, n)| *name == track.name && *n == track.targets)
        else {
            continue;
        };
        let times: Vec<f32> = track
            .times
            .iter()
            .map(|&t| (clip.start_time as f64 + t as f64) as f32)
            .collect();
        let input = doc.push_f32(&times, 1, "SCALAR", true, None);
        let output = doc.push_f32(&track.values, 1, "SCALAR", false, None);
        channels.push(json!({
            "sampler": samplers.len(),
            "target": { "node": node, "path": "weights" },
        }));
        samplers.push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
    }
    doc.push(
        "animations",
        json!({
            "name": clip.name,
            "channels": channels,
            "samplers": samplers,
            "extras": crate::import::extras::with_events(
                // The source's rate: a clip on a finer grid re-imports at it.
                crate::import::extras::with_rate(
                    None,
                    clip.sample_rate / clip.grid.max(1) as f32
                ),
                &clip.events,
                clip.start_time,
            ),
        }),
    );
}
