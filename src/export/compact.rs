//! Dropping accessors and buffer views nothing references any more (the replaced animation
//! data), then repacking buffer 0. Only done when every extension in use is known not to
//! hold accessor or buffer-view indices itself; otherwise the old data is left in place.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Value, json};

use super::GltfDoc;

/// Extensions that never hold accessor or buffer-view indices.
pub(super) fn is_known_safe(ext: &str) -> bool {
    ext.starts_with("KHR_materials_")
        || matches!(
            ext,
            "KHR_texture_transform"
                | "KHR_lights_punctual"
                | "KHR_mesh_quantization"
                | "KHR_texture_basisu"
                | "EXT_texture_webp"
                | "EXT_texture_avif"
        )
}

fn each(v: Option<&mut Value>) -> impl Iterator<Item = &mut Value> {
    v.and_then(Value::as_array_mut)
        .into_iter()
        .flat_map(|a| a.iter_mut())
}

/// Calls `f` on every accessor index the core spec defines.
fn visit_accessor_refs(json: &mut Value, f: &mut impl FnMut(&mut Value)) {
    for m in each(json.get_mut("meshes")) {
        for p in each(m.get_mut("primitives")) {
            if let Some(a) = p.get_mut("attributes").and_then(Value::as_object_mut) {
                a.values_mut().for_each(&mut *f);
            }
            if let Some(i) = p.get_mut("indices") {
                f(i);
            }
            for t in each(p.get_mut("targets")) {
                if let Some(t) = t.as_object_mut() {
                    t.values_mut().for_each(&mut *f);
                }
            }
        }
    }
    for s in each(json.get_mut("skins")) {
        if let Some(i) = s.get_mut("inverseBindMatrices") {
            f(i);
        }
    }
    for a in each(json.get_mut("animations")) {
        for s in each(a.get_mut("samplers")) {
            for k in ["input", "output"] {
                if let Some(i) = s.get_mut(k) {
                    f(i);
                }
            }
        }
    }
}

/// Calls `f` on every buffer-view index the core spec defines.
fn visit_view_refs(json: &mut Value, f: &mut impl FnMut(&mut Value)) {
    for a in each(json.get_mut("accessors")) {
        if let Some(v) = a.get_mut("bufferView") {
            f(v);
        }
        for part in ["indices", "values"] {
            if let Some(v) = a
                .get_mut("sparse")
                .and_then(|s| s.get_mut(part))
                .and_then(|p| p.get_mut("bufferView"))
            {
                f(v);
            }
        }
    }
    for i in each(json.get_mut("images")) {
        if let Some(v) = i.get_mut("bufferView") {
            f(v);
        }
    }
}

/// Calls a visitor on every index of one kind.
type Visit = fn(&mut Value, &mut dyn FnMut(&mut Value));

/// Keeps only the referenced items of top-level array `key`, renumbering references.
fn prune(doc: &mut GltfDoc, key: &str, visit: Visit) -> Option<Vec<Option<usize>>> {
    let mut used = BTreeSet::new();
    let mut bad = false;
    visit(&mut doc.json, &mut |v| match v.as_u64() {
        Some(i) => {
            used.insert(i as usize);
        }
        None => bad = true,
    });
    let len = doc.array(key).len();
    if bad || used.iter().any(|&i| i >= len) {
        return None;
    }
    let mut map = vec![None; len];
    for (new, &old) in used.iter().enumerate() {
        map[old] = Some(new);
    }
    visit(&mut doc.json, &mut |v| {
        if let Some(i) = v.as_u64() {
            *v = json!(map[i as usize].expect("used"));
        }
    });
    let items = std::mem::take(doc.array_mut(key));
    *doc.array_mut(key) = items
        .into_iter()
        .enumerate()
        .filter(|(i, _)| map[*i].is_some())
        .map(|(_, v)| v)
        .collect();
    Some(map)
}

/// Removes unreferenced accessors and buffer views and repacks buffer 0 (4-byte aligned
/// views). Returns false, changing nothing, when the document uses extensions that might
/// reference them or holds indices it cannot read.
pub fn compact(doc: &mut GltfDoc) -> bool {
    let exts: Vec<String> = doc
        .array("extensionsUsed")
        .iter()
        .filter_map(|e| e.as_str().map(str::to_owned))
        .collect();
    if !exts.iter().all(|e| is_known_safe(e)) {
        return false;
    }
    let backup = doc.clone();
    let ok = prune(doc, "accessors", |j, f| {
        visit_accessor_refs(j, &mut |v| f(v))
    })
    .is_some()
        && prune(doc, "bufferViews", |j, f| visit_view_refs(j, &mut |v| f(v))).is_some()
        && repack(doc);
    if !ok {
        *doc = backup;
    }
    ok
}

/// Rewrites buffer 0 with only the bytes of the views that remain.
fn repack(doc: &mut GltfDoc) -> bool {
    let old = std::mem::take(&mut doc.buffers[0]);
    let mut new = Vec::with_capacity(old.len());
    let mut moved: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for view in doc.array_mut("bufferViews").iter_mut() {
        if view.get("buffer").and_then(Value::as_u64) != Some(0) {
            continue;
        }
        let off = view.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let Some(len) = view.get("byteLength").and_then(Value::as_u64) else {
            return false;
        };
        let len = len as usize;
        let Some(bytes) = old.get(off..off + len) else {
            return false;
        };
        // Views sharing bytes stay shared.
        let at = *moved.entry((off, len)).or_insert_with(|| {
            while !new.len().is_multiple_of(4) {
                new.push(0);
            }
            let at = new.len();
            new.extend_from_slice(bytes);
            at
        });
        view["byteOffset"] = json!(at);
    }
    doc.buffers[0] = new;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drops_unreferenced_data_and_renumbers() {
        let mut d = GltfDoc::new();
        let a = d.push_f32(&[1.0; 4], 1, "SCALAR", true, None);
        let b = d.push_f32(&[2.0; 8], 2, "VEC2", false, None);
        let c = d.push_f32(&[3.0; 3], 3, "VEC3", false, None);
        d.json["skins"] = json!([{ "joints": [0], "inverseBindMatrices": c }]);
        d.json["animations"] =
            json!([{ "channels": [], "samplers": [{ "input": a, "output": a }] }]);
        let _ = b;
        assert!(compact(&mut d));
        assert_eq!(d.array("accessors").len(), 2);
        assert_eq!(d.json["skins"][0]["inverseBindMatrices"], 1);
        assert_eq!(d.buffers[0].len(), 16 + 12);
        let view = d.json["accessors"][1]["bufferView"].as_u64().unwrap() as usize;
        let off = d.json["bufferViews"][view]["byteOffset"].as_u64().unwrap() as usize;
        assert_eq!(&d.buffers[0][off..off + 4], &3.0f32.to_le_bytes());
    }

    #[test]
    fn leaves_unknown_extensions_alone() {
        let mut d = GltfDoc::new();
        d.push_f32(&[1.0; 4], 1, "SCALAR", true, None);
        d.json["extensionsUsed"] = json!(["EXT_meshopt_compression"]);
        assert!(!compact(&mut d));
        assert_eq!(d.array("accessors").len(), 1);
    }
}
