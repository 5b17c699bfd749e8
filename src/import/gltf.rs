//! glTF 2.0 (`.glb`, `.gltf` with external or data-URI buffers) into the model.
//!
//! The skeleton is the union of all skins' joints plus their ancestors (so object space is
//! the scene root's); without skins, the animated nodes and their ancestors. Each animation
//! becomes a clip sampled exactly per the spec at the detected source rate.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;

use glam::{Mat4, Quat, Vec3, Vec4};
use gltf::animation::util::ReadOutputs;
use gltf::animation::{Interpolation as GltfInterpolation, Property};

use super::sampling::{Interpolation, Keyframes};
use super::{ImportError, Imported, SkinnedMesh, detect_sample_rate, dominant_rate};
use crate::model::{Clip, Joint, JointTracks, Skeleton, Transform};

pub(super) fn import(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let err = |m: String| ImportError::new(path, m);
    let gltf = gltf::Gltf::from_slice(bytes).map_err(|e| err(describe_gltf_error(&e)))?;
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let doc = gltf.document;
    let buffers = gltf::import_buffers(&doc, Some(base), gltf.blob)
        .map_err(|e| err(format!("cannot load buffers: {e}")))?;
    let buffers: Vec<Vec<u8>> = buffers.into_iter().map(|b| b.0).collect();
    check_accessors(&doc, &buffers).map_err(err)?;

    let node_count = doc.nodes().len();
    let mut parent = vec![None; node_count];
    for n in doc.nodes() {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }

    // Which nodes deform: skin joints, or animated nodes when there is no skin.
    let mut deforming = BTreeSet::new();
    for skin in doc.skins() {
        deforming.extend(skin.joints().map(|j| j.index()));
    }
    if deforming.is_empty() {
        for a in doc.animations() {
            for ch in a.channels() {
                if ch.target().property() != Property::MorphTargetWeights {
                    deforming.insert(ch.target().node().index());
                }
            }
        }
    }
    if deforming.is_empty() {
        return Err(err(
            "no skin and no animated nodes: nothing to compress".into()
        ));
    }
    let mut in_skeleton = vec![false; node_count];
    for &n in &deforming {
        let mut cur = Some(n);
        let mut guard = 0;
        while let Some(i) = cur {
            in_skeleton[i] = true;
            cur = parent[i];
            guard += 1;
            if guard > node_count {
                return Err(err("the node hierarchy has a cycle".into()));
            }
        }
    }

    // Parents-first order: depth-first from the root nodes, in node order.
    let mut order = Vec::new();
    let mut stack: Vec<usize> = (0..node_count)
        .filter(|&i| parent[i].is_none())
        .rev()
        .collect();
    let nodes: Vec<_> = doc.nodes().collect();
    while let Some(i) = stack.pop() {
        if in_skeleton[i] {
            order.push(i);
        }
        stack.extend(
            nodes[i]
                .children()
                .map(|c| c.index())
                .collect::<Vec<_>>()
                .into_iter()
                .rev(),
        );
    }
    let mut joint_of_node: HashMap<usize, usize> = HashMap::new();
    let mut joints = Vec::with_capacity(order.len());
    for (ji, &ni) in order.iter().enumerate() {
        let node = &nodes[ni];
        let (t, r, s) = node.transform().decomposed();
        let rest = Transform::new(
            Vec3::from(t),
            Quat::from_array(r).normalize(),
            Vec3::from(s),
        );
        let mut joint = Joint::new(node_name(node), parent[ni].map(|p| joint_of_node[&p]), rest);
        joint.deforming = deforming.contains(&ni);
        joint.source_node = Some(ni);
        joints.push(joint);
        joint_of_node.insert(ni, ji);
    }
    let skeleton = Skeleton::new(joints).map_err(err)?;

    let mut warnings = Vec::new();
    let mut clips = Vec::new();
    for anim in doc.animations() {
        clips.push(
            import_clip(&anim, &skeleton, &joint_of_node, &buffers, &mut warnings).map_err(err)?,
        );
    }
    if clips.is_empty() {
        return Err(err("has no animations".into()));
    }
    let meshes = import_meshes(
        &doc,
        &joint_of_node,
        skeleton.len(),
        &buffers,
        &mut warnings,
    )
    .map_err(err)?;
    Ok((skeleton, clips, meshes, None, warnings))
}

fn node_name(node: &gltf::Node) -> String {
    node.name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("node{}", node.index()))
}

fn describe_gltf_error(e: &gltf::Error) -> String {
    match e {
        gltf::Error::Binary(b) => format!("not a valid .glb ({b:?}); is the file truncated?"),
        gltf::Error::Deserialize(d) => format!("not a valid glTF JSON document ({d})"),
        other => format!("invalid glTF: {other}"),
    }
}

/// Rejects accessors whose data would lie outside their buffer (the reader would panic).
fn check_accessors(doc: &gltf::Document, buffers: &[Vec<u8>]) -> Result<(), String> {
    for acc in doc.accessors() {
        let elem = acc.size();
        if let Some(view) = acc.view() {
            check_range(&view, acc.offset(), acc.count(), elem, buffers)
                .map_err(|m| format!("accessor {}: {m}", acc.index()))?;
        }
        if let Some(sparse) = acc.sparse() {
            let n = sparse.count();
            let idx = sparse.indices();
            let isz = match idx.index_type() {
                gltf::accessor::sparse::IndexType::U8 => 1,
                gltf::accessor::sparse::IndexType::U16 => 2,
                gltf::accessor::sparse::IndexType::U32 => 4,
            };
            check_range(&idx.view(), idx.offset(), n, isz, buffers)
                .map_err(|m| format!("accessor {} sparse indices: {m}", acc.index()))?;
            let vals = sparse.values();
            check_range(&vals.view(), vals.offset(), n, elem, buffers)
                .map_err(|m| format!("accessor {} sparse values: {m}", acc.index()))?;
        }
    }
    Ok(())
}

fn check_range(
    view: &gltf::buffer::View,
    offset: usize,
    count: usize,
    elem: usize,
    buffers: &[Vec<u8>],
) -> Result<(), String> {
    let data = buffers
        .get(view.buffer().index())
        .ok_or_else(|| format!("buffer {} is missing", view.buffer().index()))?;
    let view_end = view
        .offset()
        .checked_add(view.length())
        .ok_or("view range overflows")?;
    if view_end > data.len() {
        return Err(format!(
            "buffer view {} ends at byte {view_end} but buffer {} has {} bytes (truncated file?)",
            view.index(),
            view.buffer().index(),
            data.len()
        ));
    }
    if count == 0 {
        return Ok(());
    }
    let stride = view.stride().unwrap_or(elem).max(elem);
    let need = (count - 1)
        .checked_mul(stride)
        .and_then(|x| x.checked_add(offset))
        .and_then(|x| x.checked_add(elem))
        .ok_or("accessor range overflows")?;
    if need > view.length() {
        return Err(format!(
            "needs {need} bytes but its buffer view {} has {}",
            view.index(),
            view.length()
        ));
    }
    Ok(())
}

fn import_clip(
    anim: &gltf::Animation,
    skeleton: &Skeleton,
    joint_of_node: &HashMap<usize, usize>,
    buffers: &[Vec<u8>],
    warnings: &mut Vec<String>,
) -> Result<Clip, String> {
    let name = anim
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("animation{}", anim.index()));
    let mut channels: Vec<(usize, Property, Keyframes)> = Vec::new();
    let mut all_times = Vec::new();
    let mut weights = 0;
    for ch in anim.channels() {
        let node = ch.target().node().index();
        let prop = ch.target().property();
        let reader = ch.reader(|b: gltf::Buffer| buffers.get(b.index()).map(|d| d.as_slice()));
        let times: Vec<f32> = reader
            .read_inputs()
            .ok_or_else(|| {
                format!(
                    "animation '{name}': channel {} has no input data",
                    ch.index()
                )
            })?
            .collect();
        all_times.extend_from_slice(&times);
        let outputs = reader.read_outputs().ok_or_else(|| {
            format!(
                "animation '{name}': channel {} has no output data",
                ch.index()
            )
        })?;
        let (values, is_rotation): (Vec<Vec4>, bool) = match outputs {
            ReadOutputs::Translations(it) | ReadOutputs::Scales(it) => {
                (it.map(|v| Vec3::from(v).extend(0.0)).collect(), false)
            }
            ReadOutputs::Rotations(r) => (r.into_f32().map(Vec4::from).collect(), true),
            ReadOutputs::MorphTargetWeights(_) => {
                weights += 1;
                continue;
            }
        };
        let Some(&joint) = joint_of_node.get(&node) else {
            warnings.push(format!(
                "animation '{name}': channel on node {node} ({prop:?}) is outside the skeleton and is ignored"
            ));
            continue;
        };
        let interpolation = match ch.sampler().interpolation() {
            GltfInterpolation::Step => Interpolation::Step,
            GltfInterpolation::Linear => Interpolation::Linear,
            GltfInterpolation::CubicSpline => Interpolation::CubicSpline,
        };
        let keys = Keyframes {
            times,
            values,
            interpolation,
            is_rotation,
        };
        keys.validate().map_err(|m| {
            format!(
                "animation '{name}': channel {} ({} of '{}'): {m}",
                ch.index(),
                prop_name(prop),
                skeleton.joints[joint].name
            )
        })?;
        channels.push((joint, prop, keys));
    }
    if all_times.is_empty() {
        return Err(format!("animation '{name}' has no channels"));
    }
    if let Some(t) = all_times.iter().find(|t| !t.is_finite()) {
        return Err(format!("animation '{name}': key time {t} is not finite"));
    }
    let t0 = all_times.iter().copied().fold(f32::INFINITY, f32::min);
    let t1 = all_times.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    let rate = detect_sample_rate(&all_times);
    if let Some(d) = dominant_rate(&all_times)
        && d < rate
        && d >= 1.0
    {
        warnings.push(format!(
            "animation '{name}': keys are {d} fps apart but not all on one {d} fps grid; sampled at {rate} fps so every key is kept exactly"
        ));
    }
    let span_frames = ((t1 - t0) as f64 * rate as f64).round();
    if span_frames > 10_000_000.0 {
        return Err(format!(
            "animation '{name}' spans {:.0} s: too long",
            t1 - t0
        ));
    }
    let frames = span_frames as usize + 1;
    let mut clip = Clip::rest(name, skeleton, rate, frames);
    clip.start_time = t0;
    clip.morph_weight_channels = weights;
    for (joint, prop, keys) in channels {
        let tracks: &mut JointTracks = &mut clip.tracks[joint];
        for f in 0..frames {
            let t = (t0 as f64 + f as f64 / rate as f64) as f32;
            let v = keys.sample(t);
            match prop {
                Property::Translation => tracks.translations[f] = v.truncate(),
                Property::Rotation => tracks.rotations[f] = Quat::from_vec4(v),
                Property::Scale => tracks.scales[f] = v.truncate(),
                Property::MorphTargetWeights => {}
            }
        }
        let k = match prop {
            Property::Translation => 0,
            Property::Rotation => 1,
            _ => 2,
        };
        tracks.source_channels[k] = true;
    }
    Ok(clip)
}

fn prop_name(p: Property) -> &'static str {
    match p {
        Property::Translation => "translation",
        Property::Rotation => "rotation",
        Property::Scale => "scale",
        Property::MorphTargetWeights => "weights",
    }
}

/// Skinned meshes as they are, and meshes parented rigidly under a joint (a robot's plates,
/// a held prop) as meshes skinned fully to that joint: the inverse bind of that joint is the
/// node chain from the joint to the mesh, so skinning reproduces the glTF node transform.
fn import_meshes(
    doc: &gltf::Document,
    joint_of_node: &HashMap<usize, usize>,
    joint_count: usize,
    buffers: &[Vec<u8>],
    warnings: &mut Vec<String>,
) -> Result<Vec<SkinnedMesh>, String> {
    let mut parent = HashMap::new();
    for n in doc.nodes() {
        for c in n.children() {
            parent.insert(c.index(), n.index());
        }
    }
    let mut out = Vec::new();
    for node in doc.nodes() {
        let Some(mesh) = node.mesh() else { continue };
        let binding = match node.skin() {
            Some(skin) => {
                let slots: Vec<usize> = skin.joints().map(|j| joint_of_node[&j.index()]).collect();
                let mut inverse_bind = vec![Mat4::IDENTITY; joint_count];
                if let Some(ibm) = skin
                    .reader(|b: gltf::Buffer| buffers.get(b.index()).map(|d| d.as_slice()))
                    .read_inverse_bind_matrices()
                {
                    for (slot, m) in ibm.enumerate() {
                        if let Some(&j) = slots.get(slot) {
                            inverse_bind[j] = Mat4::from_cols_array_2d(&m);
                        }
                    }
                }
                Binding::Skin {
                    slots,
                    inverse_bind,
                }
            }
            None => {
                // The nearest joint at or above the node, and the node chain below it.
                let mut chain = Mat4::IDENTITY;
                let mut n = node.index();
                let joint = loop {
                    if let Some(&j) = joint_of_node.get(&n) {
                        break Some(j);
                    }
                    let local = doc.nodes().nth(n).map(|x| x.transform().matrix());
                    chain = Mat4::from_cols_array_2d(&local.unwrap_or_default()) * chain;
                    match parent.get(&n) {
                        Some(&p) => n = p,
                        None => break None,
                    }
                };
                let Some(joint) = joint else { continue };
                let mut inverse_bind = vec![Mat4::IDENTITY; joint_count];
                inverse_bind[joint] = chain;
                Binding::Rigid {
                    joint,
                    inverse_bind,
                }
            }
        };
        for prim in mesh.primitives() {
            if prim.mode() != gltf::mesh::Mode::Triangles {
                continue;
            }
            if let Some(m) = read_primitive(&prim, mesh.name(), &binding, buffers, warnings)? {
                out.push(m);
            }
        }
    }
    Ok(out)
}

/// How a mesh node's vertices follow the skeleton.
enum Binding {
    /// A glTF skin: skin slots to skeleton joints, inverse binds per skeleton joint.
    Skin {
        slots: Vec<usize>,
        inverse_bind: Vec<Mat4>,
    },
    /// Every vertex on one joint.
    Rigid {
        joint: usize,
        inverse_bind: Vec<Mat4>,
    },
}

fn read_primitive(
    prim: &gltf::Primitive,
    name: Option<&str>,
    binding: &Binding,
    buffers: &[Vec<u8>],
    warnings: &mut Vec<String>,
) -> Result<Option<SkinnedMesh>, String> {
    let name = name.unwrap_or("mesh");
    let r = prim.reader(|b: gltf::Buffer| buffers.get(b.index()).map(|d| d.as_slice()));
    let Some(pos) = r.read_positions() else {
        return Ok(None);
    };
    let positions: Vec<Vec3> = pos.map(Vec3::from).collect();
    let n = positions.len();
    let (joints, weights, inverse_bind) = match binding {
        Binding::Rigid {
            joint,
            inverse_bind,
        } => (
            vec![[*joint as u16, 0, 0, 0]; n],
            vec![[1.0, 0.0, 0.0, 0.0]; n],
            inverse_bind,
        ),
        Binding::Skin {
            slots,
            inverse_bind,
        } => {
            let (Some(js), Some(ws)) = (r.read_joints(0), r.read_weights(0)) else {
                return Ok(None);
            };
            let mut joints = Vec::with_capacity(n);
            for j in js.into_u16() {
                let mut m = [0u16; 4];
                for k in 0..4 {
                    m[k] = match slots.get(j[k] as usize) {
                        Some(&s) => s as u16,
                        None => {
                            return Err(format!(
                                "mesh '{name}' references skin slot {} of {}",
                                j[k],
                                slots.len()
                            ));
                        }
                    };
                }
                joints.push(m);
            }
            (joints, ws.into_f32().collect(), inverse_bind)
        }
    };
    let normals: Vec<Vec3> = r
        .read_normals()
        .map(|it| it.map(Vec3::from).collect())
        .unwrap_or_default();
    let indices: Vec<u32> = r
        .read_indices()
        .map(|i| i.into_u32().collect())
        .unwrap_or_else(|| (0..n as u32).collect());
    if joints.len() != n || weights.len() != n || indices.iter().any(|&i| i as usize >= n) {
        warnings.push(format!(
            "mesh '{name}': inconsistent skinning attributes; not drawn"
        ));
        return Ok(None);
    }
    let c = prim.material().pbr_metallic_roughness().base_color_factor();
    Ok(Some(SkinnedMesh {
        name: name.to_owned(),
        positions,
        normals,
        joints,
        weights,
        indices,
        inverse_bind: inverse_bind.clone(),
        base_color: c,
    }))
}
