//! How far one unit of a morph target's weight can move a vertex in the scene: the bound the
//! scalar tracks of [`super::morph_weights`] are measured with.

use serde_json::Value;

use super::GltfDoc;

/// Per morph target of `node`'s mesh: the largest distance one unit of its weight moves a
/// vertex in the scene, bounded from the POSITION deltas' `min` / `max` (which glTF requires)
/// times the mesh's largest scale at the rest pose. `None` when the node has no mesh with
/// targets or a bound is missing.
pub(crate) fn target_reach(doc: &GltfDoc, node: usize) -> Option<Vec<f64>> {
    let n = doc.array("nodes").get(node)?;
    let mesh = doc.array("meshes").get(n.get("mesh")?.as_u64()? as usize)?;
    let accessors = doc.array("accessors");
    let mut reach: Vec<f64> = Vec::new();
    for prim in mesh.get("primitives")?.as_array()? {
        let Some(targets) = prim.get("targets").and_then(Value::as_array) else {
            continue;
        };
        if reach.len() < targets.len() {
            reach.resize(targets.len(), 0.0);
        }
        for (k, t) in targets.iter().enumerate() {
            let Some(ai) = t.get("POSITION").and_then(Value::as_u64) else {
                continue;
            };
            let a = accessors.get(ai as usize)?;
            let corner = |key: &str| -> Option<Vec<f64>> {
                a.get(key)?.as_array()?.iter().map(Value::as_f64).collect()
            };
            let (lo, hi) = (corner("min")?, corner("max")?);
            if lo.len() != 3 || hi.len() != 3 {
                return None;
            }
            let r = (0..3)
                .map(|i| lo[i].abs().max(hi[i].abs()).powi(2))
                .sum::<f64>()
                .sqrt();
            reach[k] = reach[k].max(r);
        }
    }
    let scale = mesh_scale(doc, node)?;
    Some(reach.into_iter().map(|r| r * scale).collect())
}

/// An upper bound of how much `node`'s mesh is scaled in the scene at the rest pose: through
/// its node chain, or for a skinned mesh through each joint's chain and inverse bind matrix.
fn mesh_scale(doc: &GltfDoc, node: usize) -> Option<f64> {
    let nodes = doc.array("nodes");
    let mut parent = vec![None; nodes.len()];
    for (i, n) in nodes.iter().enumerate() {
        for c in n
            .get("children")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            if let Some(p) = c.as_u64().and_then(|c| parent.get_mut(c as usize)) {
                *p = Some(i);
            }
        }
    }
    // The product of each node's largest scale up the chain (at most the node count: the
    // importer checked the hierarchy is a forest).
    let chain = |mut i: usize| -> f64 {
        let mut s = 1.0;
        for _ in 0..nodes.len() {
            s *= node_scale(&nodes[i]);
            match parent[i] {
                Some(p) => i = p,
                None => break,
            }
        }
        s
    };
    let n = &nodes[node];
    let Some(skin) = n.get("skin").and_then(Value::as_u64) else {
        return Some(chain(node));
    };
    let skin = doc.array("skins").get(skin as usize)?;
    let joints: Vec<usize> = skin
        .get("joints")?
        .as_array()?
        .iter()
        .map(|j| j.as_u64().map(|j| j as usize))
        .collect::<Option<_>>()?;
    let ibm = match skin.get("inverseBindMatrices").and_then(Value::as_u64) {
        Some(ai) => mat4_floats(doc, ai as usize)?,
        None => Vec::new(),
    };
    let mut worst: f64 = 0.0;
    for (slot, &j) in joints.iter().enumerate() {
        let inverse = ibm
            .get(slot * 16..slot * 16 + 16)
            .map_or(1.0, |m| frobenius3(|c, r| m[c * 4 + r] as f64));
        if j >= nodes.len() {
            return None;
        }
        worst = worst.max(chain(j) * inverse);
    }
    Some(worst)
}

/// The floats of a MAT4 float accessor (inverse bind matrices), 16 per matrix, column major.
fn mat4_floats(doc: &GltfDoc, ai: usize) -> Option<Vec<f32>> {
    let a = doc.array("accessors").get(ai)?;
    if a.get("componentType")?.as_u64()? != 5126
        || a.get("type")?.as_str()? != "MAT4"
        || a.get("sparse").is_some()
    {
        return None;
    }
    let count = a.get("count")?.as_u64()? as usize;
    let view = doc
        .array("bufferViews")
        .get(a.get("bufferView")?.as_u64()? as usize)?;
    let data = doc.buffers.get(view.get("buffer")?.as_u64()? as usize)?;
    let stride = view.get("byteStride").and_then(Value::as_u64).unwrap_or(64) as usize;
    let start = view.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize
        + a.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let mut out = Vec::with_capacity(count.min(1 << 20) * 16);
    for i in 0..count {
        let at = start.checked_add(i.checked_mul(stride)?)?;
        let m = data.get(at..at.checked_add(64)?)?;
        out.extend(
            m.chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        );
    }
    Some(out)
}

/// A node's largest scale: its TRS scale's largest component, or a bound from its matrix.
fn node_scale(node: &Value) -> f64 {
    if let Some(m) = node.get("matrix").and_then(Value::as_array) {
        let m: Vec<f64> = m.iter().filter_map(Value::as_f64).collect();
        if m.len() == 16 {
            return frobenius3(|c, r| m[c * 4 + r]);
        }
    }
    node.get("scale")
        .and_then(Value::as_array)
        .map_or(1.0, |s| {
            s.iter()
                .filter_map(Value::as_f64)
                .fold(0.0, |a, x| a.max(x.abs()))
        })
}

/// The Frobenius norm of a column-major 3x3 block: never below its largest stretch.
fn frobenius3(at: impl Fn(usize, usize) -> f64) -> f64 {
    (0..3)
        .flat_map(|c| (0..3).map(move |r| (c, r)))
        .map(|(c, r)| at(c, r).powi(2))
        .sum::<f64>()
        .sqrt()
}
