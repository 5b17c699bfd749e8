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
use super::{
    ImportError, Imported, SkinnedMesh, check_dense_total, detect_sample_rate, dominant_rate,
    gltf_check, gltf_ext, uri,
};
use crate::model::{Clip, Joint, JointTracks, Skeleton, SourceCurve, TrackKind, Transform};

pub(super) fn import(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let err = |m: String| ImportError::new(path, m);
    let base = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let (doc, buffers) = open(bytes, base).map_err(err)?;
    let parent = gltf_check::check(&doc, &buffers).map_err(err)?;
    let data_bytes = bytes.len() + buffers.iter().map(Vec::len).sum::<usize>();

    let node_count = doc.nodes().len();
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
    // The deforming nodes and their ancestors; each node is visited once (the tree is checked).
    let mut in_skeleton = vec![false; node_count];
    for &n in &deforming {
        let mut cur = Some(n);
        while let Some(i) = cur.filter(|&i| !in_skeleton[i]) {
            in_skeleton[i] = true;
            cur = parent[i];
        }
    }

    // Parents-first order: depth-first from the root nodes, in node order.
    let nodes: Vec<_> = doc.nodes().collect();
    let mut order = Vec::new();
    let mut all_nodes = Vec::with_capacity(node_count);
    let mut stack: Vec<usize> = (0..node_count)
        .filter(|&i| parent[i].is_none())
        .rev()
        .collect();
    while let Some(i) = stack.pop() {
        all_nodes.push(i);
        if in_skeleton[i] {
            order.push(i);
        }
        let first = stack.len();
        stack.extend(nodes[i].children().map(|c| c.index()));
        stack[first..].reverse();
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
    let mut skeleton = Skeleton::new(joints).map_err(err)?;
    super::limits::check_joint_count(&skeleton).map_err(err)?;

    let mut warnings = Vec::new();
    let mut clips = Vec::new();
    let mut samples = 0u64;
    for anim in doc.animations() {
        clips.push(
            import_clip(
                &anim,
                &skeleton,
                &joint_of_node,
                &buffers,
                data_bytes,
                &mut samples,
                &mut warnings,
            )
            .map_err(err)?,
        );
    }
    if clips.is_empty() {
        // A rigged character without clips opens, as an FBX file without takes does
        // (and as `convert` writes one): the skeleton in its rest pose.
        warnings.push("the file has no animations: the skeleton in its rest pose only".into());
    }
    super::gltf_weights::attach(path, bytes, &doc, &buffers, &mut clips, &mut warnings);
    let mut animated = vec![false; node_count];
    for a in doc.animations() {
        for ch in a.channels() {
            if ch.target().property() != Property::MorphTargetWeights {
                animated[ch.target().node().index()] = true;
            }
        }
    }
    skeleton.sockets = super::gltf_sockets::find_sockets(
        &nodes,
        &all_nodes,
        &parent,
        &joint_of_node,
        &skeleton,
        &animated,
    );
    let meshes = import_meshes(
        &nodes,
        &all_nodes,
        &parent,
        &joint_of_node,
        skeleton.len(),
        &buffers,
        &mut warnings,
    )
    .map_err(err)?;
    Ok((skeleton, clips, meshes, None, warnings))
}

/// The document and its buffers, checked by the `gltf` crate's validation. A file using
/// meshopt compression or mesh quantization is first decoded to core glTF
/// ([`gltf_ext`]), so the crate's readers see float accessors and plain buffer views.
fn open(bytes: &[u8], base: &Path) -> Result<(gltf::Document, Vec<Vec<u8>>), String> {
    let gltf =
        gltf::Gltf::from_slice_without_validation(bytes).map_err(|e| describe_gltf_error(&e))?;
    let used = &gltf.document.as_json().extensions_used;
    let decode = used.iter().any(|e| {
        gltf_ext::MESHOPT_EXTENSIONS.contains(&e.as_str()) || e == gltf_ext::MESH_QUANTIZATION
    });
    if !decode {
        gltf_check::validate_json(gltf.document.as_json())?;
        let doc = gltf.document;
        let buffers = load_buffers(&doc, base, gltf.blob)?;
        return Ok((doc, buffers));
    }
    let (json_bytes, bin) = if bytes.starts_with(b"glTF") {
        let glb = gltf::Glb::from_slice(bytes).map_err(|e| describe_gltf_error(&e))?;
        (glb.json.into_owned(), glb.bin.map(|b| b.into_owned()))
    } else {
        (bytes.to_vec(), None)
    };
    let mut json: serde_json::Value = serde_json::from_slice(&json_bytes)
        .map_err(|e| format!("not a valid glTF JSON document ({e})"))?;
    let mut buffers = gltf_ext::load_buffers(&json, base, bin.as_deref())?;
    gltf_ext::decode_meshopt(&mut json, &mut buffers)?;
    gltf_ext::dequantize(&mut json, &mut buffers)?;
    let plain = serde_json::to_vec(&json).map_err(|e| format!("cannot re-read glTF JSON: {e}"))?;
    let gltf =
        gltf::Gltf::from_slice_without_validation(&plain).map_err(|e| describe_gltf_error(&e))?;
    gltf_check::validate_json(gltf.document.as_json())?;
    Ok((gltf.document, buffers))
}

/// Each buffer's bytes: the GLB's BIN chunk, or a URI under the [`super::uri`] policy.
fn load_buffers(
    doc: &gltf::Document,
    base: &Path,
    blob: Option<Vec<u8>>,
) -> Result<Vec<Vec<u8>>, String> {
    let mut blob = blob;
    let mut out = Vec::with_capacity(doc.buffers().len());
    for b in doc.buffers() {
        let declared = b.length();
        let data = match b.source() {
            gltf::buffer::Source::Bin => {
                let mut data = blob
                    .take()
                    .filter(|_| b.index() == 0)
                    .ok_or_else(|| format!("buffer {} has no uri and no BIN chunk", b.index()))?;
                if data.len() < declared {
                    return Err(format!(
                        "buffer {} declares {declared} bytes but the BIN chunk has {} (truncated?)",
                        b.index(),
                        data.len()
                    ));
                }
                data.truncate(declared);
                data
            }
            gltf::buffer::Source::Uri(uri) => uri::read_buffer_uri(base, uri, declared as u64)
                .map_err(|m| format!("buffer {}: {m}", b.index()))?,
        };
        out.push(data);
    }
    Ok(out)
}

pub(super) fn node_name(node: &gltf::Node) -> String {
    node.name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("node{}", node.index()))
}

fn describe_gltf_error(e: &gltf::Error) -> String {
    match e {
        gltf::Error::Binary(b) => format!("not a valid .glb: {}", describe_glb_error(b)),
        gltf::Error::Deserialize(d) => format!("not a valid glTF JSON document ({d})"),
        other => format!("invalid glTF: {other}"),
    }
}

/// A GLB container error in words (the crate's `Debug` text is not a message).
fn describe_glb_error(e: &gltf::binary::Error) -> String {
    use gltf::binary::Error as E;
    match e {
        E::Io(e) => format!("cannot read the header ({e}); is the file truncated?"),
        E::Version(v) => format!("header version {v}, expected 2"),
        E::Magic(m) => format!(
            "magic \"{}\", expected \"glTF\"",
            crate::quote::clipped(&String::from_utf8_lossy(m))
        ),
        E::Length {
            length,
            length_read,
        } => format!(
            "the header declares {length} bytes but the file has {length_read} (truncated?)"
        ),
        E::ChunkLength {
            ty,
            length,
            length_read,
        } => format!(
            "the {} chunk declares {length} bytes but {length_read} follow (truncated?)",
            chunk_name(*ty)
        ),
        E::ChunkType(ty) => format!("unexpected {} chunk", chunk_name(*ty)),
        E::UnknownChunkType(t) => format!(
            "unknown chunk type \"{}\"",
            crate::quote::clipped(&String::from_utf8_lossy(t))
        ),
    }
}

fn chunk_name(ty: gltf::binary::ChunkType) -> &'static str {
    match ty {
        gltf::binary::ChunkType::Json => "JSON",
        gltf::binary::ChunkType::Bin => "BIN",
    }
}

fn import_clip(
    anim: &gltf::Animation,
    skeleton: &Skeleton,
    joint_of_node: &HashMap<usize, usize>,
    buffers: &[Vec<u8>],
    data_bytes: usize,
    earlier: &mut u64,
    warnings: &mut Vec<String>,
) -> Result<Clip, String> {
    let name = anim
        .name()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("animation{}", anim.index()));
    // As messages quote it (a name may be 100,000 characters long).
    let shown = crate::quote::clipped(&name);
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
                    "animation '{shown}': channel {} has no input data",
                    ch.index()
                )
            })?
            .collect();
        all_times.extend_from_slice(&times);
        let outputs = reader.read_outputs().ok_or_else(|| {
            format!(
                "animation '{shown}': channel {} has no output data",
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
                "animation '{shown}': channel on node {node} ({}) is outside the skeleton and is ignored",
                prop_name(prop)
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
                "animation '{shown}': channel {} ({} of '{}'): {m}",
                ch.index(),
                prop_name(prop),
                skeleton.joints[joint].name
            )
        })?;
        channels.push((joint, prop, keys));
    }
    if all_times.is_empty() {
        return Err(format!("animation '{shown}' has no channels"));
    }
    if let Some(t) = all_times.iter().find(|t| !t.is_finite()) {
        return Err(format!("animation '{shown}': key time {t} is not finite"));
    }
    let t0 = all_times.iter().copied().fold(f32::INFINITY, f32::min);
    let t1 = all_times.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    // The source rate skelpack wrote into its own export, else detected from the keys.
    let extras = anim.extras().as_deref().map(|r| r.get());
    let declared = super::extras::declared_rate(extras, &all_times).unwrap_or_else(|m| {
        warnings.push(format!(
            "animation '{name}': {m}; the rate is detected from the key times"
        ));
        None
    });
    let rate = declared.unwrap_or_else(|| detect_sample_rate(&all_times));
    if let Some(d) = dominant_rate(&all_times)
        && declared.is_none()
        && d < rate
        && d >= 1.0
    {
        warnings.push(format!(
            "animation '{shown}': keys are {d} fps apart but not all on one {d} fps grid; sampled at {rate} fps so every key is kept exactly"
        ));
    }
    let span_frames = ((t1 - t0) as f64 * rate as f64).round();
    let frames = span_frames.min(u32::MAX as f64) as usize + 1;
    check_dense_total(*earlier, skeleton.len(), frames, data_bytes)
        .map_err(|m| format!("animation '{shown}' spans {} s at {rate} fps: {m}", t1 - t0))?;
    *earlier += (skeleton.len() * frames) as u64;
    let mut clip = Clip::rest(name, skeleton, rate, frames);
    clip.start_time = t0;
    clip.morph_weight_channels = weights;
    let (events, bad) = super::extras::declared_events(extras, t0);
    warnings.extend(bad.into_iter().map(|m| format!("animation '{shown}': {m}")));
    let (events, outside) = crate::model::event::split(&events, clip.duration());
    warnings.extend(
        outside
            .into_iter()
            .map(|m| format!("animation '{shown}': {m}; left out")),
    );
    clip.events = events;
    let mut between = Vec::new();
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
        // Keys between frames (skelpack's own keys between frames, re-imported at the rate
        // its extras declare): the chord of the frames is not the curve either.
        let off_grid = keys.times.len() > 1
            && keys.times.iter().any(|&t| {
                let f = (t as f64 - t0 as f64) * rate as f64;
                (f - f.round()).abs() > 1e-3
            });
        if SourceCurve::needed(&keys) || off_grid {
            between.push(SourceCurve {
                joint,
                kind: TrackKind::ALL[k],
                keys,
            });
        }
        tracks.source_channels[k] = true;
    }
    clip.between = std::sync::Arc::new(between);
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

/// The most inverse-bind matrices all imported meshes may hold (each mesh keeps one per
/// skeleton joint): 4 Mi matrices, 256 MiB. Meshes beyond it are not drawn (a warning says so).
const MAX_MESH_BINDS: usize = 1 << 22;

/// Skinned meshes as they are, and meshes parented rigidly under a joint (a robot's plates,
/// a held prop) as meshes skinned fully to that joint: the inverse bind of that joint is the
/// node chain from the joint to the mesh, so skinning reproduces the glTF node transform.
/// `order` lists every node parents-first.
fn import_meshes(
    nodes: &[gltf::Node],
    order: &[usize],
    parent: &[Option<usize>],
    joint_of_node: &HashMap<usize, usize>,
    joint_count: usize,
    buffers: &[Vec<u8>],
    warnings: &mut Vec<String>,
) -> Result<Vec<SkinnedMesh>, String> {
    // Per node: the nearest joint at or above it and the node chain from that joint down.
    let mut rigid: Vec<Option<(usize, Mat4)>> = vec![None; nodes.len()];
    for &n in order {
        rigid[n] = match joint_of_node.get(&n) {
            Some(&j) => Some((j, Mat4::IDENTITY)),
            None => parent[n].and_then(|p| rigid[p]).map(|(j, chain)| {
                (
                    j,
                    chain * Mat4::from_cols_array_2d(&nodes[n].transform().matrix()),
                )
            }),
        };
    }
    let mut out = Vec::new();
    let mut binds = 0usize;
    for node in nodes {
        let Some(mesh) = node.mesh() else { continue };
        binds += joint_count * mesh.primitives().len().max(1) * 2;
        if binds > MAX_MESH_BINDS {
            warnings.push(format!(
                "mesh '{}' and later meshes are not drawn: too many meshes for {joint_count} joints",
                mesh.name().unwrap_or("mesh")
            ));
            break;
        }
        let binding = match node.skin() {
            Some(skin) => {
                let slots = skin
                    .joints()
                    .map(|j| {
                        joint_of_node.get(&j.index()).copied().ok_or_else(|| {
                            format!(
                                "skin {}: joint node {} is not in the skeleton",
                                skin.index(),
                                j.index()
                            )
                        })
                    })
                    .collect::<Result<Vec<usize>, String>>()?;
                let mut inverse_bind = vec![Mat4::IDENTITY; joint_count];
                if let Some(ibm) = skin
                    .reader(|b: gltf::Buffer| buffers.get(b.index()).map(|d| d.as_slice()))
                    .read_inverse_bind_matrices()
                {
                    for (slot, m) in ibm.take(slots.len()).enumerate() {
                        inverse_bind[slots[slot]] = Mat4::from_cols_array_2d(&m);
                    }
                }
                Binding::Skin {
                    slots,
                    inverse_bind,
                }
            }
            None => {
                let Some((joint, chain)) = rigid[node.index()] else {
                    continue;
                };
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
        morph_targets: Vec::new(),
    }))
}
