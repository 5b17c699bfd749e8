//! Checks a glTF document before any reader of the `gltf` crate touches it.
//!
//! The crate validates most indices, but not animation channel targets, and its readers
//! assume what the spec requires: accessors of the right component type and shape, data
//! inside its buffer view, a node tree (one parent per node, no cycles). Anything the readers
//! would panic or loop on is an error here, named by its glTF index.

use gltf::accessor::{DataType, Dimensions};
use gltf::json::validation::Checked;

/// The `gltf` crate's own validation (indices, enums, required fields), after the one
/// check its validation assumes: a primitive's `POSITION` accessor exists (it indexes it).
pub(super) fn validate_json(root: &gltf::json::Root) -> Result<(), String> {
    use gltf::json::validation::Validate;
    for (mi, mesh) in root.meshes.iter().enumerate() {
        for (pi, prim) in mesh.primitives.iter().enumerate() {
            for (semantic, acc) in &prim.attributes {
                if acc.value() >= root.accessors.len() {
                    return Err(format!(
                        "invalid glTF: meshes[{mi}].primitives[{pi}].attributes[{}]: accessor {} does not exist",
                        semantic.to_string(),
                        acc.value()
                    ));
                }
            }
        }
    }
    let mut errors = Vec::new();
    root.validate(root, gltf::json::Path::new, &mut |path, error| {
        if errors.len() < 3 {
            errors.push(format!("{}: {error}", path()));
        }
    });
    if errors.is_empty() {
        Ok(())
    } else {
        Err(format!("invalid glTF: {}", errors.join("; ")))
    }
}

/// Node parents (`None` for roots) of a document that passed every check.
pub(super) type Parents = Vec<Option<usize>>;

/// Runs every check; returns each node's parent.
pub(super) fn check(doc: &gltf::Document, buffers: &[Vec<u8>]) -> Result<Parents, String> {
    let total_bytes: usize = buffers.iter().map(Vec::len).sum();
    for acc in doc.accessors() {
        check_accessor(&acc, buffers, total_bytes)
            .map_err(|m| format!("accessor {}: {m}", acc.index()))?;
    }
    check_animations(doc)?;
    check_skins(doc)?;
    check_meshes(doc)?;
    node_tree(doc)
}

/// One parent per node and no cycles: a forest, in O(nodes).
fn node_tree(doc: &gltf::Document) -> Result<Parents, String> {
    let n = doc.nodes().len();
    let mut parent: Parents = vec![None; n];
    for node in doc.nodes() {
        for c in node.children() {
            let c = c.index();
            if c == node.index() {
                return Err(format!("node {c} lists itself as a child"));
            }
            if let Some(p) = parent[c] {
                return Err(format!(
                    "node {c} is a child of both node {p} and node {}",
                    node.index()
                ));
            }
            parent[c] = Some(node.index());
        }
    }
    // Walk up from each node; `state` 1 = on the current walk, 2 = known to reach a root.
    let mut state = vec![0u8; n];
    let mut walk = Vec::new();
    for start in 0..n {
        let mut cur = Some(start);
        while let Some(i) = cur {
            match state[i] {
                2 => break,
                1 => return Err(format!("the node hierarchy has a cycle through node {i}")),
                _ => {
                    state[i] = 1;
                    walk.push(i);
                    cur = parent[i];
                }
            }
        }
        for i in walk.drain(..) {
            state[i] = 2;
        }
    }
    Ok(parent)
}

fn check_animations(doc: &gltf::Document) -> Result<(), String> {
    let json = doc.as_json();
    let node_count = json.nodes.len();
    let accessors: Vec<gltf::Accessor> = doc.accessors().collect();
    for (ai, anim) in json.animations.iter().enumerate() {
        // Spec: each (node, path) at most once per animation; this also bounds the sampling
        // work (channels × frames) by 4 × nodes × frames.
        let mut targets = std::collections::HashSet::new();
        for (ci, ch) in anim.channels.iter().enumerate() {
            let at = || format!("animation {ai} channel {ci}");
            let node = ch.target.node.value();
            if node >= node_count {
                return Err(format!(
                    "{}: target node {node} does not exist ({node_count} nodes)",
                    at()
                ));
            }
            let Checked::Valid(path) = ch.target.path else {
                return Err(format!("{}: target path is not valid", at()));
            };
            if !targets.insert((node, path as u8)) {
                return Err(format!(
                    "{}: node {node} {} is already the target of another channel",
                    at(),
                    path_name(path)
                ));
            }
            let sampler = anim
                .samplers
                .get(ch.sampler.value())
                .ok_or_else(|| format!("{}: sampler does not exist", at()))?;
            let input = accessors
                .get(sampler.input.value())
                .ok_or_else(|| format!("{}: input accessor does not exist", at()))?;
            let output = accessors
                .get(sampler.output.value())
                .ok_or_else(|| format!("{}: output accessor does not exist", at()))?;
            expect(input, &[Dimensions::Scalar], &[DataType::F32])
                .map_err(|m| format!("{}: input {m}", at()))?;
            use gltf::json::animation::Property as P;
            let (dims, types): (&[Dimensions], &[DataType]) = match path {
                P::Translation | P::Scale => (&[Dimensions::Vec3], &[DataType::F32]),
                P::Rotation => (&[Dimensions::Vec4], NORMALIZED_OR_FLOAT),
                P::MorphTargetWeights => (&[Dimensions::Scalar], NORMALIZED_OR_FLOAT),
            };
            expect(output, dims, types).map_err(|m| format!("{}: output {m}", at()))?;
        }
    }
    Ok(())
}

const NORMALIZED_OR_FLOAT: &[DataType] = &[
    DataType::F32,
    DataType::I8,
    DataType::U8,
    DataType::I16,
    DataType::U16,
];

fn check_skins(doc: &gltf::Document) -> Result<(), String> {
    for skin in doc.skins() {
        if let Some(ibm) = skin.inverse_bind_matrices() {
            expect(&ibm, &[Dimensions::Mat4], &[DataType::F32])
                .map_err(|m| format!("skin {}: inverse bind matrices {m}", skin.index()))?;
        }
    }
    Ok(())
}

fn check_meshes(doc: &gltf::Document) -> Result<(), String> {
    use gltf::Semantic as S;
    for mesh in doc.meshes() {
        for prim in mesh.primitives() {
            let at = || format!("mesh {} primitive {}", mesh.index(), prim.index());
            for (semantic, acc) in prim.attributes() {
                let (dims, types): (&[Dimensions], &[DataType]) = match semantic {
                    S::Positions | S::Normals => (&[Dimensions::Vec3], &[DataType::F32]),
                    S::Joints(_) => (&[Dimensions::Vec4], &[DataType::U8, DataType::U16]),
                    S::Weights(_) => (
                        &[Dimensions::Vec4],
                        &[DataType::F32, DataType::U8, DataType::U16],
                    ),
                    _ => continue,
                };
                expect(&acc, dims, types)
                    .map_err(|m| format!("{}: attribute {} {m}", at(), semantic.to_string()))?;
            }
            if let Some(idx) = prim.indices() {
                expect(
                    &idx,
                    &[Dimensions::Scalar],
                    &[DataType::U8, DataType::U16, DataType::U32],
                )
                .map_err(|m| format!("{}: indices {m}", at()))?;
            }
        }
    }
    Ok(())
}

/// The accessor has one of the shapes and component types the reader handles.
fn expect(acc: &gltf::Accessor, dims: &[Dimensions], types: &[DataType]) -> Result<(), String> {
    if !dims.contains(&acc.dimensions()) || !types.contains(&acc.data_type()) {
        let list = |names: Vec<&str>| names.join(" or ");
        return Err(format!(
            "accessor {} is {} of {}; expected {} of {}",
            acc.index(),
            dims_name(acc.dimensions()),
            type_name(acc.data_type()),
            list(dims.iter().map(|d| dims_name(*d)).collect()),
            list(types.iter().map(|t| type_name(*t)).collect())
        ));
    }
    Ok(())
}

/// An animation target path as glTF spells it.
pub(super) fn path_name(p: gltf::json::animation::Property) -> &'static str {
    use gltf::json::animation::Property as P;
    match p {
        P::Translation => "translation",
        P::Rotation => "rotation",
        P::Scale => "scale",
        P::MorphTargetWeights => "weights",
    }
}

/// An accessor `type` as glTF spells it.
fn dims_name(d: Dimensions) -> &'static str {
    match d {
        Dimensions::Scalar => "SCALAR",
        Dimensions::Vec2 => "VEC2",
        Dimensions::Vec3 => "VEC3",
        Dimensions::Vec4 => "VEC4",
        Dimensions::Mat2 => "MAT2",
        Dimensions::Mat3 => "MAT3",
        Dimensions::Mat4 => "MAT4",
    }
}

/// A `componentType` in words.
fn type_name(t: DataType) -> &'static str {
    match t {
        DataType::I8 => "signed bytes",
        DataType::U8 => "unsigned bytes",
        DataType::I16 => "signed shorts",
        DataType::U16 => "unsigned shorts",
        DataType::U32 => "unsigned ints",
        DataType::F32 => "floats",
    }
}

/// Count, stride and byte ranges: everything a reader slices lies inside its buffer.
fn check_accessor(
    acc: &gltf::Accessor,
    buffers: &[Vec<u8>],
    total_bytes: usize,
) -> Result<(), String> {
    let elem = acc.size();
    if acc.count() == 0 {
        return Err("count is 0".into());
    }
    match acc.view() {
        Some(view) => check_range(&view, acc.offset(), acc.count(), elem, buffers)?,
        // Without a view the reader yields `count` zeros: bound them by the file's data.
        None => {
            let bytes = acc.count().saturating_mul(elem);
            if bytes > total_bytes.saturating_add(1 << 20) {
                return Err(format!(
                    "has no buffer view but {} elements, more than the file's data justifies",
                    acc.count()
                ));
            }
        }
    }
    if let Some(sparse) = acc.sparse() {
        let n = sparse.count();
        if n == 0 || n > acc.count() {
            return Err(format!("sparse count {n} is not in 1..={}", acc.count()));
        }
        let idx = sparse.indices();
        let isz = idx.index_type().size();
        check_range(&idx.view(), idx.offset(), n, isz, buffers)
            .map_err(|m| format!("sparse indices: {m}"))?;
        sparse_indices_in_order(&idx, n, acc.count(), buffers)?;
        let vals = sparse.values();
        check_range(&vals.view(), vals.offset(), n, elem, buffers)
            .map_err(|m| format!("sparse values: {m}"))?;
    }
    Ok(())
}

/// The spec's rule on sparse indices (inside the accessor, strictly increasing), read from
/// the bytes `check_range` has just bounded.
fn sparse_indices_in_order(
    idx: &gltf::accessor::sparse::Indices,
    n: usize,
    count: usize,
    buffers: &[Vec<u8>],
) -> Result<(), String> {
    let view = idx.view();
    let size = idx.index_type().size();
    // Tightly packed (the spec forbids a stride on sparse views), as the reader reads them.
    let data = &buffers[view.buffer().index()][view.offset() + idx.offset()..];
    let indices = (0..n).map(|k| super::sparse::index_at(data, size, k).unwrap_or(u64::MAX));
    super::sparse::check_indices(indices, count as u64)
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
    let stride = view.stride().unwrap_or(elem);
    if stride < elem {
        return Err(format!(
            "buffer view {} has stride {stride}, less than the {elem}-byte element",
            view.index()
        ));
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(json: &str) -> gltf::Document {
        let d = gltf::Gltf::from_slice_without_validation(json.as_bytes())
            .unwrap()
            .document;
        validate_json(d.as_json()).unwrap();
        d
    }

    #[test]
    fn two_parents_and_cycles_are_errors() {
        let two =
            doc(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[2]},{"children":[2]},{}]}"#);
        let e = node_tree(&two).unwrap_err();
        assert!(e.contains("child of both node 0 and node 1"), "{e}");
        let cycle = doc(
            r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[2]},{"children":[1]}]}"#,
        );
        let e = node_tree(&cycle).unwrap_err();
        assert!(e.contains("child of both") || e.contains("cycle"), "{e}");
        let ring =
            doc(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1]},{"children":[0]}]}"#);
        assert!(node_tree(&ring).unwrap_err().contains("cycle"));
        let own = doc(r#"{"asset":{"version":"2.0"},"nodes":[{"children":[0]}]}"#);
        assert!(node_tree(&own).unwrap_err().contains("itself"));
        let ok = doc(
            r#"{"asset":{"version":"2.0"},"nodes":[{"children":[1,2]},{},{"children":[3]},{}]}"#,
        );
        assert_eq!(node_tree(&ok).unwrap(), [None, Some(0), Some(0), Some(2)]);
    }
}
