//! Buffers as written: unused buffers dropped and, for `.glb`, every buffer merged into the
//! BIN chunk (a `.glb` that keeps data-URI buffers is valid but larger and draws validator
//! warnings). Done only when every extension in use is known not to reference buffers.

use serde_json::{Value, json};

use super::GltfDoc;

/// `doc` with unreferenced buffers removed and, when `merge`, all buffers concatenated into
/// buffer 0 (each 4-byte aligned, buffer views re-pointed). Unchanged when an extension
/// might hold buffer indices.
pub fn consolidate(doc: &GltfDoc, merge: bool) -> GltfDoc {
    let mut out = doc.clone();
    let safe = doc
        .array("extensionsUsed")
        .iter()
        .all(|e| e.as_str().is_some_and(super::compact::is_known_safe));
    if !safe || doc.buffers.len() != doc.array("buffers").len() {
        return out;
    }
    let n = doc.buffers.len();
    let mut used = vec![false; n];
    used[0] = true;
    for v in doc.array("bufferViews") {
        match v.get("buffer").and_then(Value::as_u64) {
            Some(b) if (b as usize) < n => used[b as usize] = true,
            // A view on a buffer that does not exist: leave the file as it is.
            _ => return out,
        }
    }
    // New index of each kept buffer, and its byte offset inside buffer 0 when merging.
    let mut index = vec![None; n];
    let mut offset = vec![0usize; n];
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    let mut entries: Vec<Value> = Vec::new();
    for i in (0..n).filter(|&i| used[i]) {
        if merge && i > 0 {
            let b0 = &mut buffers[0];
            b0.resize(b0.len().next_multiple_of(4), 0);
            offset[i] = b0.len();
            b0.extend_from_slice(&doc.buffers[i]);
            index[i] = Some(0);
        } else {
            index[i] = Some(buffers.len());
            buffers.push(doc.buffers[i].clone());
            entries.push(doc.array("buffers")[i].clone());
        }
    }
    for v in out.array_mut("bufferViews") {
        let b = v["buffer"].as_u64().unwrap_or(0) as usize;
        let at = v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        v["buffer"] = json!(index[b].unwrap_or(0));
        if offset[b] != 0 {
            v["byteOffset"] = json!(at + offset[b]);
        }
    }
    for e in entries.iter_mut() {
        if let Some(o) = e.as_object_mut() {
            o.remove("uri");
        }
    }
    out.json["buffers"] = Value::Array(entries);
    out.buffers = buffers;
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merges_used_buffers_and_drops_unused_ones() {
        let mut d = GltfDoc::new();
        d.buffers[0] = vec![1, 2, 3];
        d.buffers.push(vec![9; 8]);
        d.buffers.push(vec![7; 4]);
        d.json["buffers"] =
            json!([{"byteLength": 3}, {"byteLength": 8, "uri": "data:,"}, {"byteLength": 4}]);
        d.json["bufferViews"] = json!([
            {"buffer": 0, "byteLength": 3},
            {"buffer": 2, "byteOffset": 0, "byteLength": 4},
        ]);
        let m = consolidate(&d, true);
        assert_eq!(m.buffers.len(), 1);
        assert_eq!(m.array("buffers").len(), 1);
        assert_eq!(m.buffers[0], vec![1, 2, 3, 0, 7, 7, 7, 7]);
        assert_eq!(m.array("bufferViews")[1]["buffer"], 0);
        assert_eq!(m.array("bufferViews")[1]["byteOffset"], 4);
        let e = consolidate(&d, false);
        assert_eq!(e.buffers.len(), 2);
        assert_eq!(e.array("bufferViews")[1]["buffer"], 1);
        assert_eq!(e.buffers[1], vec![7; 4]);
    }
}
