//! FBX (binary and ASCII, 6100 and up) into the model, read by ufbx (the `ufbx` crate).
//!
//! - **Space**: ufbx converts the scene to metres, right-handed Y-up (`target_unit_meters`,
//!   `target_axes`, geometry and translations scaled: `ModifyGeometry`), so the character
//!   stands up at its real size; [`FbxInfo`] keeps the unit and axes as the file declares them.
//! - **Skeleton**: every node a skin cluster binds or that has a skeleton (limb) attribute,
//!   with its ancestors up to the scene root, parents first in the file's child order. Without
//!   either: the animated nodes; without those, the mesh nodes. Cluster-bound nodes deform
//!   (bone nodes when there is no cluster).
//! - **Clips**: every animation stack (take) with keys is a clip over its span
//!   (`round((end - begin) · fps) + 1` frames) at the scene's frame rate. Each frame is ufbx's
//!   own evaluation of the joints' transforms at that time (layers, interpolation,
//!   extrapolation, pivots, pre/post rotation, rotation order), chained by their inherit
//!   modes as ufbx chains them ([`super::fbx_eval`]; a node's curves sampled directly where
//!   that is all ufbx would read: [`super::fbx_curves`]). Where the model's `parent · T·R·S`
//!   chain is ufbx's, the locals are ufbx's own T / R / S; elsewhere each joint's local is
//!   derived from the world matrices ([`super::fbx_local`]), so world positions are exact and
//!   any shear T / R / S cannot hold is reported.
//! - **Rest pose**: the file's bind pose; joints it does not list take the first frame of the
//!   first take (or the scene's own transforms when there is none). [`RestSource`] says which.
//! - **Meshes** and **morph weights**: [`super::fbx_mesh`]; blend shapes as the meshes' morph
//!   targets and their weights as the clips' scalar tracks ([`super::fbx_morph`]); per clip
//!   the weight of every keyed blend channel at every frame ([`MorphTrack`], for `inspect`).
//! - **Hostile files**: ufbx's allocators are bounded by the file's size
//!   ([`memory_limit`]); every clip's size by [`super::check_dense_size`].

use std::path::Path;

use glam::{DAffine3, DVec3};
use rayon::prelude::*;
use serde::Serialize;

use super::{ImportError, Imported, check_dense_size, fbx_eval, fbx_local, fbx_mesh};
use crate::model::{Clip, Joint, Skeleton, Transform};

/// What an FBX file declares and how skelpack read it (shown by `inspect`).
#[derive(Clone, Debug, Serialize)]
pub struct FbxInfo {
    /// The FBX file version (7400 = FBX 2014/2015).
    pub version: u32,
    /// True for an ASCII FBX file.
    pub ascii: bool,
    /// The exporter's creator string ("FBX SDK/FBX Plugins version 2020.3", "Blender ...").
    pub creator: String,
    /// Metres per scene unit as the file declares it (`UnitScaleFactor` / 100); the model is
    /// in metres.
    pub unit_meters: f64,
    /// The file's axis system: which signed axis is right, up and front ("+X", "+Y", "+Z").
    pub axes: FbxAxes,
    /// The file's frame rate (its time mode; custom rates as declared).
    pub frame_rate: f64,
    /// Where the skeleton's rest pose came from.
    pub rest_pose: RestSource,
    /// Takes with no keys (no clip is made of them).
    pub empty_takes: Vec<String>,
    /// Blend (morph) channels in the file.
    pub blend_channels: usize,
    /// The worst shear T / R / S could not hold, if any.
    pub worst_shear: Option<Shear>,
    /// One entry per imported clip, in the asset's clip order (shown per clip by `inspect`).
    #[serde(skip)]
    pub clips: Vec<FbxClip>,
    /// The clips made of additive layers ([`super::fbx_layers`]): each with its mode and
    /// base, what the settings apply unless the sidecar says otherwise.
    #[serde(skip)]
    pub additive_layers: Vec<(String, crate::model::playback::Additive)>,
}

/// An FBX axis system as declared.
#[derive(Clone, Debug, Serialize)]
pub struct FbxAxes {
    pub right: String,
    pub up: String,
    pub front: String,
}

/// Where the rest pose came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum RestSource {
    /// The file's bind pose, for every joint.
    BindPose,
    /// The bind pose for the joints it lists; the others from the first frame of the first
    /// take (`first_frame` of them).
    BindPoseAndFirstFrame { first_frame: usize },
    /// The bind pose for the joints it lists; the others from the scene's own node
    /// transforms (`scene` of them; the file has no take).
    BindPoseAndScene { scene: usize },
    /// No bind pose: the first frame of the first take.
    FirstFrame,
    /// No bind pose and no take: the scene's own node transforms.
    SceneTransforms,
}

/// A joint whose world transform T / R / S cannot represent exactly.
#[derive(Clone, Debug, Serialize)]
pub struct Shear {
    pub clip: String,
    pub joint: String,
    pub frame: usize,
    /// The largest distance between a rebuilt world axis and the evaluated one (scene units
    /// per scene unit along the axis); the joint's origin is exact.
    pub deviation: f64,
}

/// How one clip was read.
#[derive(Clone, Debug, Serialize)]
pub struct FbxClip {
    pub name: String,
    /// The take's start time in seconds.
    pub start_time: f64,
    pub frame_rate: f64,
    pub frames: usize,
    /// The animation layers the take was evaluated from, bottom first.
    pub layers: Vec<FbxLayer>,
    /// Every keyed blend channel's weight at every frame.
    pub morphs: Vec<MorphTrack>,
}

/// An animation layer of a take.
#[derive(Clone, Debug, Serialize)]
pub struct FbxLayer {
    pub name: String,
    pub weight: f64,
    pub weight_is_animated: bool,
    /// Added to the layers below (FBX "additive" blend mode) rather than overriding them.
    pub additive: bool,
    /// Animated properties in the layer.
    pub animated_properties: usize,
}

/// A blend channel's weight (0 to 1) at every frame of a clip.
#[derive(Clone, Debug, Serialize)]
pub struct MorphTrack {
    pub name: String,
    pub min: f32,
    pub max: f32,
    #[serde(skip)]
    pub weights: Vec<f32>,
}

/// The most memory ufbx may allocate for one file, in each of its two allocators (temporary
/// and result): 64 MiB plus 64 bytes per byte of the file. The shared test files use at most
/// 5.4× their size (docs/FBX.md); a binary FBX's deflated arrays can legitimately expand
/// several times, a hostile one a thousandfold (or declare any size at all).
pub fn memory_limit(file_bytes: usize) -> usize {
    (64usize << 20).saturating_add(file_bytes.saturating_mul(64))
}

/// Load options: bounded allocators, metres, right-handed Y-up.
fn load_opts(file_bytes: usize) -> ufbx::LoadOpts<'static> {
    let limit = memory_limit(file_bytes);
    ufbx::LoadOpts {
        temp_allocator: ufbx::AllocatorOpts {
            memory_limit: limit,
            ..Default::default()
        },
        result_allocator: ufbx::AllocatorOpts {
            memory_limit: limit,
            ..Default::default()
        },
        target_axes: ufbx::CoordinateAxes::right_handed_y_up(),
        target_unit_meters: 1.0,
        space_conversion: ufbx::SpaceConversion::ModifyGeometry,
        handedness_conversion_axis: ufbx::MirrorAxis::X,
        generate_missing_normals: true,
        // what skelpack never reads: embedded textures and per-material face lists
        ignore_embedded: true,
        skip_mesh_parts: true,
        node_depth_limit: 4096,
        ..Default::default()
    }
}

/// Reads the scene with skelpack's options. A file that fails and declares a version below
/// 6100 (which ufbx does not promise to read) says so.
pub fn load_scene(bytes: &[u8]) -> Result<ufbx::SceneRoot, String> {
    ufbx::load_memory(bytes, load_opts(bytes.len())).map_err(|e| {
        let m = describe_error(&e);
        match declared_version(bytes) {
            Some(v) if v < 6100 => {
                format!("FBX version {v} is older than 6100 and cannot be read ({m})")
            }
            _ => m,
        }
    })
}

/// The version a file's header declares: binary FBX after its 23-byte magic, ASCII FBX in
/// its `FBXVersion:` line (looked for in the first 4 KiB).
fn declared_version(bytes: &[u8]) -> Option<u32> {
    if bytes.starts_with(b"Kaydara FBX Binary") {
        return bytes
            .get(23..27)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    }
    let head = String::from_utf8_lossy(&bytes[..bytes.len().min(4096)]);
    let at = head.find("FBXVersion:")? + "FBXVersion:".len();
    head[at..].split_whitespace().next()?.parse().ok()
}

/// One line for a ufbx error.
fn describe_error(e: &ufbx::Error) -> String {
    use ufbx::ErrorType as E;
    let info = e.info().trim();
    let what = match e.type_ {
        E::UnrecognizedFileFormat => "not an FBX file (neither binary nor ASCII FBX)".to_owned(),
        E::UnsupportedVersion => {
            format!("FBX version not supported by ufbx (skelpack reads 6100 and up): {info}")
        }
        E::OutOfMemory | E::MemoryLimit | E::AllocationLimit => format!(
            "needs more memory than its size justifies (refused; see docs/ROBUSTNESS.md): {}",
            e.description
        ),
        E::TruncatedFile => "truncated: the file ends inside its data".to_owned(),
        E::EmptyFile => "empty file".to_owned(),
        _ => {
            let d = e.description.to_string();
            if info.is_empty() {
                format!("invalid FBX: {d}")
            } else {
                format!("invalid FBX: {d} ({info})")
            }
        }
    };
    what.replace(['\n', '\r'], " ")
}

/// A ufbx matrix as an affine transform.
pub fn affine(m: &ufbx::Matrix) -> DAffine3 {
    DAffine3::from_cols(
        DVec3::new(m.m00, m.m10, m.m20),
        DVec3::new(m.m01, m.m11, m.m21),
        DVec3::new(m.m02, m.m12, m.m22),
        DVec3::new(m.m03, m.m13, m.m23),
    )
}

/// An FBX node's name, or `node<id>` when it has none.
pub fn node_name(node: &ufbx::Node) -> String {
    if node.element.name.is_empty() {
        format!("node{}", node.typed_id())
    } else {
        node.element.name.to_string()
    }
}

pub(super) trait TypedId {
    fn typed_id(&self) -> usize;
}

impl TypedId for ufbx::Node {
    fn typed_id(&self) -> usize {
        self.element.typed_id as usize
    }
}

/// The scene's joints: FBX node index (`typed_id`) per joint and which deform.
pub(super) struct JointNodes {
    pub nodes: Vec<usize>,
    pub deforming: Vec<bool>,
    /// Per FBX node, its joint.
    pub joint_of_node: Vec<Option<usize>>,
}

/// Chooses the joints (see the module doc).
fn choose_joints(scene: &ufbx::Scene) -> Result<JointNodes, String> {
    let n = scene.nodes.len();
    let mut bound = vec![false; n];
    for c in &scene.skin_clusters {
        if let Some(b) = &c.bone_node {
            bound[b.typed_id()] = true;
        }
    }
    let bone: Vec<bool> = scene
        .nodes
        .iter()
        .map(|node| node.bone.is_some() && !node.is_root)
        .collect();
    let any = |v: &[bool]| v.iter().any(|&b| b);
    let (mut member, deforming) = if any(&bound) || any(&bone) {
        let member: Vec<bool> = (0..n).map(|i| bound[i] || bone[i]).collect();
        let deforming = if any(&bound) { bound } else { member.clone() };
        (member, deforming)
    } else {
        let animated = animated_nodes(scene);
        let chosen = if any(&animated) {
            animated
        } else {
            scene
                .nodes
                .iter()
                .map(|node| node.mesh.is_some() && !node.is_root)
                .collect()
        };
        (chosen.clone(), chosen)
    };
    if !any(&member) {
        return Err("no skeleton, skin, animated node or mesh: nothing to compress".into());
    }
    // Ancestors up to (not including) the scene root.
    for i in 0..n {
        if !member[i] {
            continue;
        }
        let mut cur = scene.nodes[i].parent.as_ref();
        while let Some(p) = cur.filter(|p| !p.is_root && !member[p.typed_id()]) {
            member[p.typed_id()] = true;
            cur = p.parent.as_ref();
        }
    }
    // Parents first: depth-first from the root's children in the file's order.
    let mut nodes = Vec::new();
    let mut joint_of_node = vec![None; n];
    let mut stack: Vec<&ufbx::Node> = scene
        .root_node
        .children
        .iter()
        .rev()
        .map(|c| &**c)
        .collect();
    while let Some(node) = stack.pop() {
        let i = node.typed_id();
        if member[i] && joint_of_node[i].is_none() {
            joint_of_node[i] = Some(nodes.len());
            nodes.push(i);
        }
        stack.extend(node.children.iter().rev().map(|c| &**c));
    }
    let deforming = nodes.iter().map(|&i| deforming[i]).collect();
    Ok(JointNodes {
        nodes,
        deforming,
        joint_of_node,
    })
}

/// Per FBX node: whether any take animates one of its properties.
fn animated_nodes(scene: &ufbx::Scene) -> Vec<bool> {
    let mut out = vec![false; scene.nodes.len()];
    for layer in &scene.anim_layers {
        for p in &layer.anim_props {
            if let Some(node) = ufbx::as_node(&p.element) {
                out[node.typed_id()] = !node.is_root;
            }
        }
    }
    out
}

/// Which of T, R, S the stack's layers animate on each FBX node (element id → flags).
fn keyed_channels(stack: &ufbx::AnimStack, node: &ufbx::Node) -> [bool; 3] {
    let mut out = [false; 3];
    let id = node.element.element_id;
    for layer in &stack.layers {
        for p in layer
            .anim_props
            .iter()
            .filter(|p| p.element.element_id == id)
        {
            match p.prop_name.as_ref() {
                "Lcl Translation" => out[0] = true,
                "Lcl Rotation" | "PreRotation" | "PostRotation" => out[1] = true,
                "Lcl Scaling" => out[2] = true,
                _ => {}
            }
        }
    }
    out
}

/// A take has keys when one of its layers animates a property with a curve.
fn has_keys(stack: &ufbx::AnimStack) -> bool {
    stack.layers.iter().any(|l| {
        l.anim_values
            .iter()
            .any(|v| v.curves.iter().flatten().any(|c| !c.keyframes.is_empty()))
    })
}

pub(super) fn import(path: &Path, bytes: &[u8]) -> Result<(Imported, FbxInfo), ImportError> {
    let err = |m: String| ImportError::new(path, m);
    let scene = load_scene(bytes).map_err(err)?;
    let joints = choose_joints(&scene).map_err(err)?;
    let fps = scene.settings.frames_per_second;
    if !(fps.is_finite() && fps > 0.0 && fps <= 1.0e6) {
        return Err(err(format!("frame rate {fps} is not usable")));
    }
    let mut warnings = Vec::new();
    let mut info = FbxInfo {
        version: scene.metadata.version,
        ascii: scene.metadata.ascii,
        creator: scene.metadata.creator.to_string(),
        unit_meters: scene.settings.original_unit_meters,
        axes: FbxAxes {
            right: axis_name(scene.settings.axes.right),
            up: axis_name(scene.settings.axes.up),
            front: axis_name(scene.settings.axes.front),
        },
        frame_rate: fps,
        rest_pose: RestSource::SceneTransforms,
        empty_takes: Vec::new(),
        blend_channels: scene.blend_channels.len(),
        worst_shear: None,
        clips: Vec::new(),
        additive_layers: Vec::new(),
    };
    let names: Vec<String> = joints
        .nodes
        .iter()
        .map(|&i| node_name(&scene.nodes[i]))
        .collect();
    let parents: Vec<Option<usize>> = joints
        .nodes
        .iter()
        .map(|&i| {
            scene.nodes[i]
                .parent
                .as_ref()
                .and_then(|p| joints.joint_of_node[p.typed_id()])
        })
        .collect();

    // Clips first (the rest pose may need their first frame), on a provisional skeleton.
    let provisional = Skeleton::new(
        names
            .iter()
            .zip(&parents)
            .map(|(n, &p)| Joint::new(n.clone(), p, Transform::IDENTITY))
            .collect(),
    )
    .map_err(err)?;
    let mut clips = Vec::new();
    let mut stacks = Vec::new();
    let mut first_frame_worlds: Option<Vec<DAffine3>> = None;
    for (stack_index, stack) in scene.anim_stacks.iter().enumerate() {
        let name = stack.element.name.to_string();
        if !has_keys(stack) {
            info.empty_takes.push(name);
            continue;
        }
        let (clip, fbx_clip, worlds0) = sample_stack(
            &scene,
            stack_index,
            &provisional,
            &joints,
            bytes.len(),
            &mut info,
        )
        .map_err(err)?;
        first_frame_worlds.get_or_insert(worlds0);
        clips.push(clip);
        stacks.push(stack_index);
        info.clips.push(fbx_clip);
    }
    // Additive layers as base + additive clip pairs, after every take's own clip.
    for (ci, &stack_index) in stacks.iter().enumerate() {
        let layered =
            super::fbx_layers::layer_clips(&scene, stack_index, &clips[ci], &provisional, &joints)
                .map_err(err)?;
        for clip in &layered.clips {
            info.clips.push(FbxClip {
                name: clip.name.clone(),
                morphs: Vec::new(),
                frames: clip.frame_count,
                ..info.clips[ci].clone()
            });
        }
        clips.extend(layered.clips);
        info.additive_layers.extend(layered.additive);
    }
    for t in &info.empty_takes {
        warnings.push(format!("take '{t}' has no keys: no clip is made of it"));
    }
    if clips.is_empty() {
        warnings.push(if scene.anim_stacks.is_empty() {
            "the file has no take (animation stack): the skeleton in its rest pose only".into()
        } else {
            "no take has keys: the skeleton in its rest pose only".into()
        });
    }
    let outside = outside_animated(&scene, &joints);
    if !outside.is_empty() {
        warnings.push(format!(
            "{} animated node(s) outside the skeleton are not imported: {}",
            outside.len(),
            outside.join(", ")
        ));
    }
    if let Some(s) = &info.worst_shear {
        warnings.push(format!(
            "joint '{}' (clip '{}', frame {}): the world transform has shear (non-uniform \
             scale under rotation) that translation / rotation / scale cannot hold; its origin \
             is exact, its axes deviate by up to {:.3e} per unit of length",
            s.joint, s.clip, s.frame, s.deviation
        ));
    }

    let (rest, source) = rest_pose(&scene, &joints, &parents, first_frame_worlds.as_deref());
    info.rest_pose = source;
    let mut skeleton = Skeleton::new(
        names
            .into_iter()
            .zip(&parents)
            .zip(rest)
            .zip(&joints.deforming)
            .enumerate()
            .map(|(ji, (((name, &parent), rest), &deforming))| {
                let mut j = Joint::new(name, parent, rest);
                j.deforming = deforming;
                j.source_node = Some(joints.nodes[ji]);
                j
            })
            .collect(),
    )
    .map_err(err)?;
    // Untouched tracks (none: every frame is evaluated) keep the clip's own values; the
    // rest pose only matters where a clip is absent.
    skeleton.sockets =
        super::fbx_sockets::find_sockets(&scene, &joints, &skeleton, &animated_nodes(&scene));
    let meshes = fbx_mesh::import_meshes(&scene, &skeleton, &joints, &mut warnings);
    super::fbx_morph::attach_tracks(&scene, &stacks, &mut clips, &skeleton, &meshes);
    super::fbx_props::attach_tracks(&scene, &stacks, &mut clips);
    Ok(((skeleton, clips, meshes, None, warnings), info))
}

/// Names of animated nodes that are not joints (cameras, aim targets, footsteps).
fn outside_animated(scene: &ufbx::Scene, joints: &JointNodes) -> Vec<String> {
    animated_nodes(scene)
        .iter()
        .enumerate()
        .filter(|&(i, &a)| a && joints.joint_of_node[i].is_none())
        .map(|(i, _)| node_name(&scene.nodes[i]))
        .collect()
}

/// The world matrices of the joints' nodes in an (evaluated) scene.
pub(super) fn joint_worlds(scene: &ufbx::Scene, joints: &JointNodes) -> Vec<DAffine3> {
    joints
        .nodes
        .iter()
        .map(|&i| affine(&scene.nodes[i].node_to_world))
        .collect()
}

/// Local transforms from world matrices, each relative to the model's own parent world;
/// returns the worst axis deviation and its joint.
pub(super) fn locals_from_worlds(
    parents: &[Option<usize>],
    worlds: &[DAffine3],
    out: &mut [Transform],
) -> (f64, usize) {
    let mut model = vec![DAffine3::IDENTITY; worlds.len()];
    let mut worst = (0.0, 0);
    for j in 0..worlds.len() {
        let parent = parents[j].map_or(DAffine3::IDENTITY, |p| model[p]);
        let (t, dev) = fbx_local::local_from_world(&parent, &worlds[j]);
        out[j] = t;
        model[j] = parent * t.to_daffine();
        if dev > worst.0 {
            worst = (dev, j);
        }
    }
    worst
}

/// Joint-frames below which a take is sampled on the calling thread. Handing frames to
/// rayon's pool costs a wake-up of its workers, which on a loaded machine took longer than
/// the work: the 441-frame, 18-joint robot imported in 11.1 ms sequentially against 16.0 ms
/// in parallel at load 8-10 on two cores (docs/FBX.md). Long takes still pay for it.
const PARALLEL_WORK: usize = 1 << 14;

/// Shear below this (relative to the axis length) is rounding, not shear.
const SHEAR_EPSILON: f64 = 1e-5;

/// One evaluated frame: the joints' local transforms, the worst shear (deviation, joint),
/// the keyed blend weights, and (frame 0 only) the joints' world matrices.
struct Frame {
    pose: Vec<Transform>,
    shear: Option<(f64, usize)>,
    weights: Vec<f32>,
    worlds: Option<Vec<DAffine3>>,
}

/// Samples one take (`scene.anim_stacks[stack_index]`) at every frame.
fn sample_stack(
    root: &ufbx::SceneRoot,
    stack_index: usize,
    skeleton: &Skeleton,
    joints: &JointNodes,
    file_bytes: usize,
    info: &mut FbxInfo,
) -> Result<(Clip, FbxClip, Vec<DAffine3>), String> {
    let scene: &ufbx::Scene = root;
    let stack = &scene.anim_stacks[stack_index];
    let name = stack.element.name.to_string();
    let fps = info.frame_rate;
    let (t0, t1) = (stack.time_begin, stack.time_end);
    if !(t0.is_finite() && t1.is_finite() && t1 >= t0) {
        return Err(format!("take '{name}' spans {t0} s to {t1} s"));
    }
    let span = ((t1 - t0) * fps).round();
    let frames = span.min(u32::MAX as f64) as usize + 1;
    check_dense_size(skeleton.len(), frames, file_bytes)
        .map_err(|m| format!("take '{name}' spans {} s at {fps} fps: {m}", t1 - t0))?;
    let mut clip = Clip::rest(name.clone(), skeleton, fps as f32, frames);
    clip.start_time = t0 as f32;
    for (j, &node) in joints.nodes.iter().enumerate() {
        clip.tracks[j].source_channels = keyed_channels(stack, &scene.nodes[node]);
    }
    // Keyed blend channels.
    let keyed_blends: Vec<usize> = scene
        .blend_channels
        .iter()
        .enumerate()
        .filter(|(_, c)| {
            let id = c.element.element_id;
            stack
                .layers
                .iter()
                .any(|l| l.anim_props.iter().any(|p| p.element.element_id == id))
        })
        .map(|(i, _)| i)
        .collect();
    let mut morphs: Vec<MorphTrack> = keyed_blends
        .iter()
        .map(|&i| MorphTrack {
            name: scene.blend_channels[i].element.name.to_string(),
            min: f32::INFINITY,
            max: f32::NEG_INFINITY,
            weights: Vec::with_capacity(frames),
        })
        .collect();
    let parents: Vec<Option<usize>> = skeleton.joints.iter().map(|j| j.parent).collect();
    let eval = fbx_eval::TakeEval::new(scene, stack, joints);
    // Frames are independent: evaluated in parallel when there is enough work to pay for
    // the threads (ufbx evaluates a loaded scene from any number of threads; `SceneRoot` is
    // `Sync`), assembled in order. Each frame is ufbx's evaluation of the joints' chain
    // ([`fbx_eval`]); where the joints chain as `parent world · T·R·S`, their local
    // transforms are ufbx's local T / R / S as they are ([`plain_pose`]), otherwise they are
    // derived from the world matrices.
    let frame = |f: usize| {
        let scene: &ufbx::Scene = root;
        let stack = &scene.anim_stacks[stack_index];
        let t = t0 + f as f64 / fps;
        let weights = keyed_blends
            .iter()
            .map(|&i| ufbx::evaluate_blend_weight(&stack.anim, &scene.blend_channels[i], t) as f32)
            .collect();
        let locals = eval.locals_at(scene, &stack.anim, joints, t);
        if eval.identity_root
            && let Some(pose) = plain_pose(scene, joints, &parents, &locals)
        {
            return Frame {
                pose,
                shear: None,
                weights,
                worlds: (f == 0).then(|| fbx_eval::TakeEval::worlds(scene, joints, &locals)),
            };
        }
        let worlds = fbx_eval::TakeEval::worlds(scene, joints, &locals);
        let mut pose = vec![Transform::IDENTITY; worlds.len()];
        let (dev, j) = locals_from_worlds(&parents, &worlds, &mut pose);
        let axis = worlds[j]
            .matrix3
            .to_cols_array()
            .iter()
            .fold(0.0f64, |m, v| m.max(v.abs()));
        let shear = (dev > SHEAR_EPSILON * axis.max(1e-12)).then_some((dev, j));
        Frame {
            pose,
            shear,
            weights,
            worlds: (f == 0).then_some(worlds),
        }
    };
    let sampled: Vec<Frame> = if frames.saturating_mul(joints.nodes.len()) < PARALLEL_WORK {
        (0..frames).map(frame).collect()
    } else {
        (0..frames)
            .into_par_iter()
            .with_min_len(4)
            .map(frame)
            .collect()
    };
    let mut first = Vec::new();
    for (f, frame) in sampled.into_iter().enumerate() {
        if let Some((dev, j)) = frame.shear
            && info.worst_shear.as_ref().is_none_or(|s| dev > s.deviation)
        {
            info.worst_shear = Some(Shear {
                clip: name.clone(),
                joint: skeleton.joints[j].name.clone(),
                frame: f,
                deviation: dev,
            });
        }
        for (tracks, p) in clip.tracks.iter_mut().zip(&frame.pose) {
            tracks.translations[f] = p.translation;
            tracks.rotations[f] = p.rotation;
            tracks.scales[f] = p.scale;
        }
        for (m, w) in morphs.iter_mut().zip(frame.weights) {
            m.min = m.min.min(w);
            m.max = m.max.max(w);
            m.weights.push(w);
        }
        if let Some(w) = frame.worlds {
            first = w;
        }
    }
    make_continuous(&mut clip);
    let layers = stack
        .layers
        .iter()
        .map(|l| FbxLayer {
            name: l.element.name.to_string(),
            weight: l.weight,
            weight_is_animated: l.weight_is_animated,
            additive: l.additive,
            animated_properties: l.anim_props.len(),
        })
        .collect();
    Ok((
        clip,
        FbxClip {
            name,
            start_time: t0,
            frame_rate: fps,
            frames,
            layers,
            morphs,
        },
        first,
    ))
}

/// The joints' local transforms (ufbx's, `locals`) as the model's as they are, when the model's
/// chain of them is exactly ufbx's (the scene root is the identity: `TakeEval::identity_root`):
/// every joint inherits normally (its world is `parent world · T·R·S`), or its parent's world
/// and the node it inherits scale from carry no scale at this time (then "no inherit scale"
/// and component-wise scale change nothing). No world matrix is built or decomposed. `None`
/// when a joint inherits otherwise under a scaled parent: the frame is then derived from the
/// world matrices. A local with a mirror (negative scale) is split as the world path splits
/// it (the mirror on X), so the tracks do not depend on the path.
fn plain_pose(
    scene: &ufbx::Scene,
    joints: &JointNodes,
    parents: &[Option<usize>],
    locals: &[ufbx::Transform],
) -> Option<Vec<Transform>> {
    let n = joints.nodes.len();
    let mut pose = Vec::with_capacity(n);
    // Per joint: its world carries a scale (its own or an ancestor's) other than 1.
    let mut scaled: Vec<bool> = Vec::with_capacity(n);
    for (j, &node_index) in joints.nodes.iter().enumerate() {
        let node = &scene.nodes[node_index];
        let l = &locals[j];
        let parent_scaled = parents[j].is_some_and(|p| scaled[p]);
        if node.inherit_mode != ufbx::InheritMode::Normal {
            let inherit_scaled = node
                .inherit_scale_node
                .as_ref()
                .and_then(|p| joints.joint_of_node[p.typed_id()])
                .is_some_and(|k| scaled[k]);
            if parent_scaled || inherit_scaled {
                return None;
            }
        }
        let (t, r, s) = (l.translation, l.rotation, l.scale);
        let s = DVec3::new(s.x, s.y, s.z);
        scaled.push(parent_scaled || s != DVec3::ONE);
        let translation = glam::Vec3::new(t.x as f32, t.y as f32, t.z as f32);
        pose.push(if s.min_element() >= 0.0 {
            Transform::new(
                translation,
                glam::Quat::from_xyzw(r.x as f32, r.y as f32, r.z as f32, r.w as f32).normalize(),
                s.as_vec3(),
            )
        } else {
            let q = glam::DQuat::from_xyzw(r.x, r.y, r.z, r.w);
            let (q, s) = fbx_local::rotation_scale(
                glam::DMat3::from_quat(q) * glam::DMat3::from_diagonal(s),
            );
            Transform::new(translation, q.as_quat().normalize(), s.as_vec3())
        });
    }
    Some(pose)
}

/// Flips each rotation into the hemisphere of the previous frame's (q and -q are the same
/// rotation; a decomposition picks either), so the tracks are continuous curves.
pub(super) fn make_continuous(clip: &mut Clip) {
    for t in &mut clip.tracks {
        for f in 1..t.rotations.len() {
            if t.rotations[f].dot(t.rotations[f - 1]) < 0.0 {
                t.rotations[f] = -t.rotations[f];
            }
        }
    }
}

/// The rest pose (see [`RestSource`]).
fn rest_pose(
    scene: &ufbx::Scene,
    joints: &JointNodes,
    parents: &[Option<usize>],
    first_frame: Option<&[DAffine3]>,
) -> (Vec<Transform>, RestSource) {
    let statics = joint_worlds(scene, joints);
    let bind: Vec<Option<DAffine3>> = joints
        .nodes
        .iter()
        .map(|&i| {
            let node = &scene.nodes[i];
            node.bind_pose
                .as_ref()
                .and_then(|pose| ufbx::get_bone_pose(pose, node))
                .map(|bp| affine(&bp.bone_to_world))
        })
        .collect();
    let listed = bind.iter().filter(|b| b.is_some()).count();
    // Worlds for joints outside the bind pose: their local from the first frame (or the
    // scene) applied under the parent's rest world.
    let other = first_frame.unwrap_or(&statics);
    let n = joints.nodes.len();
    let mut worlds = vec![DAffine3::IDENTITY; n];
    for j in 0..n {
        worlds[j] = match bind[j] {
            Some(b) => b,
            None => match parents[j] {
                Some(p) => worlds[p] * (other[p].inverse() * other[j]),
                None => other[j],
            },
        };
    }
    let mut rest = vec![Transform::IDENTITY; n];
    locals_from_worlds(parents, &worlds, &mut rest);
    let source = match (listed, first_frame.is_some()) {
        (l, _) if l == n => RestSource::BindPose,
        (0, true) => RestSource::FirstFrame,
        (0, false) => RestSource::SceneTransforms,
        (l, true) => RestSource::BindPoseAndFirstFrame { first_frame: n - l },
        (l, false) => RestSource::BindPoseAndScene { scene: n - l },
    };
    (rest, source)
}

fn axis_name(a: ufbx::CoordinateAxis) -> String {
    use ufbx::CoordinateAxis as A;
    match a {
        A::PositiveX => "+X",
        A::NegativeX => "-X",
        A::PositiveY => "+Y",
        A::NegativeY => "-Y",
        A::PositiveZ => "+Z",
        A::NegativeZ => "-Z",
        A::Unknown => "unknown",
    }
    .into()
}
