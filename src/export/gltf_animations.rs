//! What a glTF document's animations key, and a glTF source's take pieces
//! (`settings::takes`) added to the document as animations of their own.
//!
//! The compressed glTF export replaces each animation of the source by its compressed clip
//! and keys what the source keyed. A piece has no animation in the source, so before the
//! export one is written for it: the piece's frames (LINEAR, from time 0), on the joints and
//! properties its source animation keys, and its morph-target weights where the source
//! animation drives them. The export then treats it like any other animation: replaced by
//! the compressed piece, or kept as written where that is no larger and verified. Channels
//! of the source animation on nodes outside the skeleton (a camera) are not in the model's
//! clip and are not carried into the piece (as for BVH, FBX and ACL pieces).

use std::borrow::Cow;
use std::collections::HashMap;

use serde_json::{Value, json};

use super::{ExportError, GltfDoc};
use crate::import::Asset;
use crate::model::{Clip, Skeleton};
use crate::settings::Settings;

/// Which properties (translation, rotation, scale) of each skeleton joint animation
/// `index` of `doc` drives.
pub fn keyed_channels(doc: &GltfDoc, index: usize, skeleton: &Skeleton) -> Vec<[bool; 3]> {
    let mut node_joint: HashMap<usize, usize> = HashMap::new();
    for (j, joint) in skeleton.joints.iter().enumerate() {
        if let Some(n) = joint.source_node {
            node_joint.insert(n, j);
        }
    }
    let mut keyed = vec![[false; 3]; skeleton.len()];
    let channels = doc
        .array("animations")
        .get(index)
        .and_then(|a| a.get("channels"))
        .and_then(Value::as_array);
    for ch in channels.into_iter().flatten() {
        let target = ch.get("target");
        let node = target.and_then(|t| t.get("node")).and_then(Value::as_u64);
        let kind = match target.and_then(|t| t.get("path")).and_then(Value::as_str) {
            Some("translation") => 0,
            Some("rotation") => 1,
            Some("scale") => 2,
            _ => continue,
        };
        if let Some(&j) = node.and_then(|n| node_joint.get(&(n as usize))) {
            keyed[j][kind] = true;
        }
    }
    keyed
}

/// `asset`'s clips that are take pieces (named in `settings.takes`), written to glTF from
/// time 0: glTF has no clip start, and players play an animation from 0, so a piece left
/// at its place in the take would hold its first pose until the take reached it. Events
/// are relative to the clip's start and move with it.
pub fn pieces_from_time_zero<'a>(asset: &'a Asset, settings: &Settings) -> Cow<'a, Asset> {
    let moved = |c: &Clip| settings.takes.contains_key(&c.name) && c.start_time != 0.0;
    if !asset.clips.iter().any(moved) {
        return Cow::Borrowed(asset);
    }
    let mut out = asset.clone();
    for clip in out.clips.iter_mut() {
        if settings.takes.contains_key(&clip.name) {
            clip.start_time = 0.0;
        }
    }
    Cow::Owned(out)
}

/// Adds an animation to `doc` (the file `asset` was imported from) for each of `asset`'s
/// clips past the document's own animations: the pieces `settings::takes::split` appended,
/// each written as described in the module's documentation. A clip past the document's
/// animations that is not a piece of one of them is an error.
pub fn append_pieces(
    doc: &mut GltfDoc,
    asset: &Asset,
    settings: &Settings,
) -> Result<(), ExportError> {
    let own = doc.array("animations").len();
    let sources = &asset.clips[..own.min(asset.clips.len())];
    for piece in asset.clips.iter().skip(own) {
        let source = settings
            .takes
            .get(&piece.name)
            .and_then(|t| sources.iter().position(|c| c.name == t.source))
            .ok_or_else(|| {
                ExportError::new(format!(
                    "clip '{}' is neither an animation of the file nor a piece of one",
                    piece.name
                ))
            })?;
        let keyed = keyed_channels(doc, source, &asset.skeleton);
        let weights = weights_nodes(doc, source);
        write_piece(doc, &asset.skeleton, piece, &keyed, &weights);
    }
    Ok(())
}

/// The nodes whose morph-target weights animation `index` drives, each with its name as
/// the importer names it (`import::gltf::node_name`), in channel order.
fn weights_nodes(doc: &GltfDoc, index: usize) -> Vec<(usize, String)> {
    let channels = doc
        .array("animations")
        .get(index)
        .and_then(|a| a.get("channels"))
        .and_then(Value::as_array);
    channels
        .into_iter()
        .flatten()
        .filter_map(|ch| {
            let target = ch.get("target")?;
            (target.get("path")?.as_str()? == "weights").then_some(())?;
            let node = target.get("node")?.as_u64()? as usize;
            let name = doc
                .array("nodes")
                .get(node)
                .and_then(|n| n.get("name"))
                .and_then(Value::as_str)
                .map_or_else(|| format!("node{node}"), str::to_owned);
            Some((node, name))
        })
        .collect()
}

/// Writes `piece` as a LINEAR animation of its frames from time 0, keying the joints and
/// properties of `keyed`, and its scalar tracks on the `weights` nodes named as them.
fn write_piece(
    doc: &mut GltfDoc,
    skeleton: &Skeleton,
    piece: &Clip,
    keyed: &[[bool; 3]],
    weights: &[(usize, String)],
) {
    let times: Vec<f32> = (0..piece.frame_count)
        .map(|f| (f as f64 / piece.sample_rate as f64) as f32)
        .collect();
    let input = doc.push_f32(&times, 1, "SCALAR", true, None);
    let mut out = Animation::default();
    for (j, (tracks, joint)) in piece.tracks.iter().zip(&skeleton.joints).enumerate() {
        let Some(node) = joint.source_node else {
            continue;
        };
        let [t, r, s] = keyed.get(j).copied().unwrap_or_default();
        if t {
            let v: Vec<f32> = tracks
                .translations
                .iter()
                .flat_map(|v| v.to_array())
                .collect();
            out.add(doc, input, node, "translation", &v);
        }
        if r {
            let v: Vec<f32> = tracks.rotations.iter().flat_map(|q| q.to_array()).collect();
            out.add(doc, input, node, "rotation", &v);
        }
        if s {
            let v: Vec<f32> = tracks.scales.iter().flat_map(|v| v.to_array()).collect();
            out.add(doc, input, node, "scale", &v);
        }
    }
    let mut used = vec![false; piece.scalar_tracks.len()];
    for (node, name) in weights {
        let found = piece
            .scalar_tracks
            .iter()
            .enumerate()
            .find(|(i, t)| !used[*i] && &t.name == name);
        let Some((i, track)) = found else {
            continue;
        };
        used[i] = true;
        let input = doc.push_f32(&track.times, 1, "SCALAR", true, None);
        out.add(doc, input, *node, "weights", &track.values);
    }
    if out.samplers.is_empty() {
        // glTF wants at least one channel: the first joint's (constant) rotation.
        if let (Some(tracks), Some(node)) = (
            piece.tracks.first(),
            skeleton.joints.first().and_then(|j| j.source_node),
        ) {
            let v: Vec<f32> = tracks.rotations.iter().flat_map(|q| q.to_array()).collect();
            out.add(doc, input, node, "rotation", &v);
        }
    }
    doc.push(
        "animations",
        json!({ "name": piece.name, "channels": out.channels, "samplers": out.samplers }),
    );
}

/// An animation's channels and samplers as they are written.
#[derive(Default)]
struct Animation {
    channels: Vec<Value>,
    samplers: Vec<Value>,
}

impl Animation {
    /// Adds a LINEAR channel driving `path` of `node`: `values` at the key times of
    /// accessor `input`, as floats.
    fn add(&mut self, doc: &mut GltfDoc, input: usize, node: usize, path: &str, values: &[f32]) {
        let (width, kind) = match path {
            "rotation" => (4, "VEC4"),
            "weights" => (1, "SCALAR"),
            _ => (3, "VEC3"),
        };
        let output = doc.push_f32(values, width, kind, false, None);
        self.channels.push(json!({
            "sampler": self.samplers.len(),
            "target": { "node": node, "path": path },
        }));
        self.samplers
            .push(json!({ "input": input, "output": output, "interpolation": "LINEAR" }));
    }
}
