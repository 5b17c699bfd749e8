//! What the ecosystem's glTF optimizers write, turned into core glTF before any reader sees
//! it: `EXT_meshopt_compression` / `KHR_meshopt_compression` buffer views (decoded with the
//! `meshopt` crate, meshoptimizer's own codec) and `KHR_mesh_quantization` accessors
//! (integer and normalized positions, normals, texture coordinates and animation outputs,
//! rewritten as floats for the importer).
//!
//! Both passes work on the JSON as a `serde_json::Value` and the bytes of every buffer, so
//! that the importer and the exporter (`export::GltfDoc`) read such files the same way.

use std::path::Path;

use serde_json::{Map, Value, json};

/// The two names of the meshopt extension (EXT first, then its KHR successor).
pub const MESHOPT_EXTENSIONS: [&str; 2] = ["EXT_meshopt_compression", "KHR_meshopt_compression"];

/// The mesh quantization extension.
pub const MESH_QUANTIZATION: &str = "KHR_mesh_quantization";

/// How many times its compressed size a meshopt view may decode to: meshoptimizer's vertex
/// codec stores at least 2 bits per 16 bytes (64x), its index codecs at least a byte per
/// triangle or index (12x). Anything claiming more is refused before allocating.
const MAX_MESHOPT_RATIO: usize = 64;

/// `true` when the document uses an extension this module decodes.
pub fn needs_decoding(json: &Value) -> bool {
    names(json, "extensionsUsed")
        .chain(names(json, "extensionsRequired"))
        .any(|e| MESHOPT_EXTENSIONS.contains(&e) || e == MESH_QUANTIZATION)
}

fn names<'a>(json: &'a Value, key: &str) -> impl Iterator<Item = &'a str> {
    json.get(key)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
}

/// Each buffer's bytes for a glTF JSON: the GLB's BIN chunk for buffer 0 without a URI, a
/// URI under the [`super::uri`] policy, and nothing for a meshopt fallback buffer without a
/// URI (its views are decoded from the compressed buffer instead).
pub fn load_buffers(json: &Value, base: &Path, bin: Option<&[u8]>) -> Result<Vec<Vec<u8>>, String> {
    let list = json
        .get("buffers")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let mut out = Vec::with_capacity(list.len());
    for (i, b) in list.iter().enumerate() {
        let len = b.get("byteLength").and_then(Value::as_u64).unwrap_or(0);
        let data = match b.get("uri").and_then(Value::as_str) {
            None if is_fallback(b) => Vec::new(),
            None if i == 0 => bin
                .map(<[u8]>::to_vec)
                .ok_or("buffer 0 has no uri and there is no BIN chunk")?,
            None => return Err(format!("buffer {i} has no uri")),
            Some(uri) => super::uri::read_buffer_uri(base, uri, len)
                .map_err(|m| format!("buffer {i}: {m}"))?,
        };
        if !is_fallback(b) && (data.len() as u64) < len {
            return Err(format!(
                "buffer {i} has {} bytes but declares {len} (truncated?)",
                data.len()
            ));
        }
        let keep = if is_fallback(b) {
            data.len()
        } else {
            len as usize
        };
        let mut data = data;
        data.truncate(keep);
        out.push(data);
    }
    Ok(out)
}

/// A buffer marked `fallback` by the meshopt extension (its bytes may be absent).
pub fn is_fallback(buffer: &Value) -> bool {
    meshopt_ext(buffer).is_some_and(|e| e.get("fallback").and_then(Value::as_bool) == Some(true))
}

fn meshopt_ext(v: &Value) -> Option<&Value> {
    let ext = v.get("extensions")?;
    MESHOPT_EXTENSIONS.iter().find_map(|k| ext.get(*k))
}

/// Decodes every meshopt-compressed buffer view into one new buffer (appended to the JSON
/// and to `buffers`), points the views at it and removes the extension from the views,
/// from fallback buffers and from `extensionsUsed` / `extensionsRequired`. Returns whether
/// anything was decoded. Malformed extension data is an error naming the view.
pub fn decode_meshopt(json: &mut Value, buffers: &mut Vec<Vec<u8>>) -> Result<bool, String> {
    let view_count = json
        .get("bufferViews")
        .and_then(Value::as_array)
        .map_or(0, Vec::len);
    let mut decoded = Vec::new();
    let mut any = false;
    let new_buffer = buffers.len();
    for vi in 0..view_count {
        let Some(ext) = meshopt_ext(&json["bufferViews"][vi]).cloned() else {
            continue;
        };
        let at = |m: String| format!("bufferView {vi}: meshopt: {m}");
        let job = MeshoptView::parse(&ext).map_err(at)?;
        let src = buffers
            .get(job.buffer)
            .and_then(|b| b.get(job.offset..job.offset.checked_add(job.length)?))
            .ok_or_else(|| at("compressed bytes lie outside their buffer".into()))?;
        let bytes = job.decode(src).map_err(at)?;
        decoded.resize(decoded.len().next_multiple_of(4), 0);
        let offset = decoded.len();
        decoded.extend_from_slice(&bytes);
        let view = json["bufferViews"][vi]
            .as_object_mut()
            .ok_or_else(|| at("the buffer view is not an object".into()))?;
        view.insert("buffer".into(), json!(new_buffer));
        view.insert("byteOffset".into(), json!(offset));
        view.insert("byteLength".into(), json!(bytes.len()));
        remove_extension(view);
        any = true;
    }
    if !any {
        return Ok(false);
    }
    let list = json
        .get_mut("buffers")
        .and_then(Value::as_array_mut)
        .ok_or("meshopt views but no buffers")?;
    for b in list.iter_mut() {
        if let Some(o) = b.as_object_mut() {
            remove_extension(o);
        }
    }
    list.push(json!({ "byteLength": decoded.len().max(1) }));
    buffers.push(decoded);
    drop_extension_names(json, &MESHOPT_EXTENSIONS);
    Ok(true)
}

fn remove_extension(obj: &mut Map<String, Value>) {
    if let Some(ext) = obj.get_mut("extensions").and_then(Value::as_object_mut) {
        for k in MESHOPT_EXTENSIONS {
            ext.remove(k);
        }
        if ext.is_empty() {
            obj.remove("extensions");
        }
    }
}

/// Removes `names` from `extensionsUsed` and `extensionsRequired` (and empty lists).
pub fn drop_extension_names(json: &mut Value, names: &[&str]) {
    let Some(root) = json.as_object_mut() else {
        return;
    };
    for key in ["extensionsUsed", "extensionsRequired"] {
        if let Some(list) = root.get_mut(key).and_then(Value::as_array_mut) {
            list.retain(|e| e.as_str().is_none_or(|s| !names.contains(&s)));
            if list.is_empty() {
                root.remove(key);
            }
        }
    }
}

/// One compressed view as the extension describes it.
struct MeshoptView {
    buffer: usize,
    offset: usize,
    length: usize,
    stride: usize,
    count: usize,
    mode: Mode,
    filter: Filter,
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Attributes,
    Triangles,
    Indices,
}

#[derive(Clone, Copy, PartialEq)]
enum Filter {
    None,
    Octahedral,
    Quaternion,
    Exponential,
    Color,
}

impl MeshoptView {
    fn parse(ext: &Value) -> Result<Self, String> {
        let num = |k: &str| -> Result<usize, String> {
            ext.get(k)
                .and_then(Value::as_u64)
                .map(|v| v as usize)
                .ok_or_else(|| format!("{k} is missing or not a non-negative integer"))
        };
        let mode = match ext.get("mode").and_then(Value::as_str) {
            Some("ATTRIBUTES") => Mode::Attributes,
            Some("TRIANGLES") => Mode::Triangles,
            Some("INDICES") => Mode::Indices,
            Some(other) => return Err(format!("unknown mode '{}'", crate::quote::clipped(other))),
            None => return Err("mode is missing".into()),
        };
        let filter = match ext.get("filter").and_then(Value::as_str) {
            None | Some("NONE") => Filter::None,
            Some("OCTAHEDRAL") => Filter::Octahedral,
            Some("QUATERNION") => Filter::Quaternion,
            Some("EXPONENTIAL") => Filter::Exponential,
            Some("COLOR") => Filter::Color,
            Some(other) => {
                return Err(format!("unknown filter '{}'", crate::quote::clipped(other)));
            }
        };
        let view = Self {
            buffer: num("buffer")?,
            offset: ext.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize,
            length: num("byteLength")?,
            stride: num("byteStride")?,
            count: num("count")?,
            mode,
            filter,
        };
        view.check()?;
        Ok(view)
    }

    /// The extension's rules, which meshoptimizer asserts on: checked before any call.
    fn check(&self) -> Result<(), String> {
        let s = self.stride;
        let ok = match self.mode {
            Mode::Attributes => s > 0 && s <= 256 && s.is_multiple_of(4),
            Mode::Triangles => (s == 2 || s == 4) && self.count.is_multiple_of(3),
            Mode::Indices => s == 2 || s == 4,
        };
        if !ok {
            return Err(format!(
                "byteStride {s} / count {} not allowed in this mode",
                self.count
            ));
        }
        let filter_ok = match self.filter {
            Filter::None => true,
            _ if self.mode != Mode::Attributes => false,
            Filter::Octahedral | Filter::Color => s == 4 || s == 8,
            Filter::Quaternion => s == 8,
            Filter::Exponential => s.is_multiple_of(4),
        };
        if !filter_ok {
            return Err(format!("filter not allowed with byteStride {s}"));
        }
        let out = self
            .count
            .checked_mul(s)
            .ok_or("count x byteStride overflows")?;
        if out
            > self
                .length
                .saturating_mul(MAX_MESHOPT_RATIO)
                .saturating_add(4096)
        {
            return Err(format!(
                "{out} decoded bytes from {} compressed: more than the codec can produce",
                self.length
            ));
        }
        Ok(())
    }

    fn decode(&self, src: &[u8]) -> Result<Vec<u8>, String> {
        let mut out = vec![0u8; self.count * self.stride];
        if self.count == 0 {
            return Ok(out);
        }
        // SAFETY: `out` holds exactly count x stride bytes, `src` is a valid slice, and the
        // stride / count rules meshoptimizer asserts on were checked in `check`.
        let rc = unsafe {
            use meshopt::ffi;
            let dst = out.as_mut_ptr().cast();
            match self.mode {
                Mode::Attributes => ffi::meshopt_decodeVertexBuffer(
                    dst,
                    self.count,
                    self.stride,
                    src.as_ptr(),
                    src.len(),
                ),
                Mode::Triangles => ffi::meshopt_decodeIndexBuffer(
                    dst,
                    self.count,
                    self.stride,
                    src.as_ptr(),
                    src.len(),
                ),
                Mode::Indices => ffi::meshopt_decodeIndexSequence(
                    dst,
                    self.count,
                    self.stride,
                    src.as_ptr(),
                    src.len(),
                ),
            }
        };
        if rc != 0 {
            return Err(format!("the compressed data is malformed (code {rc})"));
        }
        // SAFETY: as above; every filter's stride rule was checked in `check`.
        unsafe {
            use meshopt::ffi;
            let p = out.as_mut_ptr().cast();
            match self.filter {
                Filter::None => {}
                Filter::Octahedral => ffi::meshopt_decodeFilterOct(p, self.count, self.stride),
                Filter::Quaternion => ffi::meshopt_decodeFilterQuat(p, self.count, self.stride),
                Filter::Exponential => ffi::meshopt_decodeFilterExp(p, self.count, self.stride),
                Filter::Color => ffi::meshopt_decodeFilterColor(p, self.count, self.stride),
            }
        }
        Ok(out)
    }
}

/// Rewrites every non-float accessor that the importer reads as floats (mesh `POSITION` and
/// `NORMAL`, translation and scale animation outputs) as a float accessor holding the values
/// the spec gives it (normalized integers divided out, sparse substitutions applied), with
/// its data in one new buffer; `KHR_mesh_quantization` is then dropped from the extension
/// lists. Only for reading: the exporter keeps the quantized data as it is.
pub fn dequantize(json: &mut Value, buffers: &mut Vec<Vec<u8>>) -> Result<(), String> {
    let mut targets = Vec::new();
    for mesh in array(json, "meshes") {
        for prim in mesh
            .get("primitives")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let attrs = prim.get("attributes");
            for sem in ["POSITION", "NORMAL"] {
                targets.extend(attrs.and_then(|a| a.get(sem)).and_then(Value::as_u64));
            }
        }
    }
    for anim in array(json, "animations") {
        let samplers = anim.get("samplers").and_then(Value::as_array);
        for ch in anim
            .get("channels")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            let path = ch.pointer("/target/path").and_then(Value::as_str);
            if !matches!(path, Some("translation" | "scale")) {
                continue;
            }
            let sampler = ch.get("sampler").and_then(Value::as_u64);
            let output = sampler
                .and_then(|s| samplers?.get(s as usize))
                .and_then(|s| s.get("output"))
                .and_then(Value::as_u64);
            targets.extend(output);
        }
    }
    targets.sort_unstable();
    targets.dedup();
    let mut data = Vec::new();
    let new_buffer = buffers.len();
    let mut new_views = Vec::new();
    let first_view = array(json, "bufferViews").len();
    for ai in targets {
        let ai = ai as usize;
        let Some(acc) = array(json, "accessors").get(ai) else {
            continue; // the validator names the missing accessor
        };
        if acc.get("componentType").and_then(Value::as_u64) == Some(5126) {
            continue;
        }
        let values = read_accessor(json, buffers, ai).map_err(|m| format!("accessor {ai}: {m}"))?;
        let offset = data.len();
        for v in &values {
            data.extend_from_slice(&v.to_le_bytes());
        }
        let view = first_view + new_views.len();
        new_views.push(json!({
            "buffer": new_buffer, "byteOffset": offset, "byteLength": values.len() * 4
        }));
        let normalized = acc.get("normalized").and_then(Value::as_bool) == Some(true);
        let ct = acc["componentType"].as_u64().unwrap_or(0);
        let acc = &mut json["accessors"][ai];
        for key in ["min", "max"] {
            if let Some(list) = acc.get_mut(key).and_then(Value::as_array_mut) {
                for x in list.iter_mut() {
                    let v = x.as_f64().unwrap_or(0.0);
                    *x = json!(if normalized { denormalize(v, ct) } else { v });
                }
            }
        }
        let o = acc.as_object_mut().ok_or("accessor is not an object")?;
        o.insert("componentType".into(), json!(5126));
        o.insert("bufferView".into(), json!(view));
        o.insert("byteOffset".into(), json!(0));
        o.remove("normalized");
        o.remove("sparse");
    }
    if !new_views.is_empty() {
        let root = json
            .as_object_mut()
            .ok_or("the glTF JSON is not an object")?;
        let views = root.entry("bufferViews").or_insert_with(|| json!([]));
        views
            .as_array_mut()
            .ok_or("bufferViews is not an array")?
            .extend(new_views);
        let list = root.entry("buffers").or_insert_with(|| json!([]));
        list.as_array_mut()
            .ok_or("buffers is not an array")?
            .push(json!({ "byteLength": data.len().max(1) }));
        buffers.push(data);
    }
    drop_extension_names(json, &[MESH_QUANTIZATION]);
    Ok(())
}

fn array<'a>(json: &'a Value, key: &str) -> &'a [Value] {
    json.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// The spec's conversion of a normalized integer component to float.
fn denormalize(v: f64, component_type: u64) -> f64 {
    match component_type {
        5120 => (v / 127.0).max(-1.0),
        5121 => v / 255.0,
        5122 => (v / 32767.0).max(-1.0),
        5123 => v / 65535.0,
        _ => v,
    }
}

/// Component width in bytes of a `componentType` (0 for an unknown one).
fn component_size(ct: u64) -> usize {
    match ct {
        5120 | 5121 => 1,
        5122 | 5123 => 2,
        5125 | 5126 => 4,
        _ => 0,
    }
}

fn type_components(t: &str) -> usize {
    match t {
        "SCALAR" => 1,
        "VEC2" => 2,
        "VEC3" => 3,
        "VEC4" | "MAT2" => 4,
        "MAT3" => 9,
        "MAT4" => 16,
        _ => 0,
    }
}

/// Component `k` of element bytes `b` as the spec reads it.
fn component(b: &[u8], ct: u64, normalized: bool) -> f32 {
    let v = match ct {
        5120 => b[0] as i8 as f64,
        5121 => b[0] as f64,
        5122 => i16::from_le_bytes([b[0], b[1]]) as f64,
        5123 => u16::from_le_bytes([b[0], b[1]]) as f64,
        5125 => u32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
        _ => f32::from_le_bytes([b[0], b[1], b[2], b[3]]) as f64,
    };
    (if normalized { denormalize(v, ct) } else { v }) as f32
}

/// The byte slice of `view` (bounds checked) and its stride.
fn view_slice<'a>(
    json: &Value,
    buffers: &'a [Vec<u8>],
    view: usize,
) -> Result<(&'a [u8], Option<usize>), String> {
    let v = array(json, "bufferViews")
        .get(view)
        .ok_or_else(|| format!("buffer view {view} does not exist"))?;
    let buffer = v.get("buffer").and_then(Value::as_u64).unwrap_or(u64::MAX) as usize;
    let offset = v.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
    let length = v.get("byteLength").and_then(Value::as_u64).unwrap_or(0) as usize;
    let data = buffers
        .get(buffer)
        .and_then(|b| b.get(offset..offset.checked_add(length)?))
        .ok_or_else(|| format!("buffer view {view} lies outside its buffer"))?;
    let stride = v
        .get("byteStride")
        .and_then(Value::as_u64)
        .map(|s| s as usize);
    Ok((data, stride))
}

/// Every component of accessor `ai` as f32, element after element, bounds checked.
fn read_accessor(json: &Value, buffers: &[Vec<u8>], ai: usize) -> Result<Vec<f32>, String> {
    let acc = &array(json, "accessors")[ai];
    let ct = acc
        .get("componentType")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let size = component_size(ct);
    let n = type_components(acc.get("type").and_then(Value::as_str).unwrap_or(""));
    let count = acc.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
    if size == 0 || n == 0 {
        return Err("unknown componentType or type".into());
    }
    let normalized = acc.get("normalized").and_then(Value::as_bool) == Some(true);
    let elem = size * n;
    let mut out;
    match acc.get("bufferView").and_then(Value::as_u64) {
        Some(view) => {
            let (data, stride) = view_slice(json, buffers, view as usize)?;
            let stride = stride.unwrap_or(elem).max(elem);
            let offset = acc.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
            // Every sum checked: a byteOffset near 2^64 must not wrap into range.
            let need = count.checked_sub(1).map_or(Some(0), |c| {
                c.checked_mul(stride)?
                    .checked_add(offset)?
                    .checked_add(elem)
            });
            if need.is_none_or(|need| need > data.len()) {
                return Err(format!(
                    "byteOffset {offset} + {count} elements of {elem} bytes lie outside the {} \
                     bytes of its buffer view",
                    data.len()
                ));
            }
            out = Vec::with_capacity(count * n);
            for e in data[offset..].chunks(stride).take(count) {
                out.extend(
                    e[..elem]
                        .chunks_exact(size)
                        .map(|b| component(b, ct, normalized)),
                );
            }
        }
        None => {
            // Zeros then sparse values: justified by the sparse data, bounded below.
            let data: usize = buffers.iter().map(Vec::len).sum();
            let justified = sparse_count(acc).min(data).saturating_mul(1024);
            if count > justified.saturating_add(65536) {
                return Err(format!("{count} elements without a buffer view"));
            }
            out = vec![0.0; count * n];
        }
    }
    if let Some(sp) = acc.get("sparse") {
        apply_sparse(json, buffers, sp, &mut out, (ct, size, n, normalized))?;
    }
    Ok(out)
}

fn sparse_count(acc: &Value) -> usize {
    acc.pointer("/sparse/count")
        .and_then(Value::as_u64)
        .unwrap_or(0) as usize
}

/// Sparse substitutions of an accessor (component type, size, components, normalized).
fn apply_sparse(
    json: &Value,
    buffers: &[Vec<u8>],
    sp: &Value,
    out: &mut [f32],
    (ct, size, n, normalized): (u64, usize, usize, bool),
) -> Result<(), String> {
    let k = sp.get("count").and_then(Value::as_u64).unwrap_or(0) as usize;
    let part = |key: &str| -> Result<(&[u8], usize), String> {
        let p = sp.get(key).ok_or_else(|| format!("sparse {key} missing"))?;
        let view = p
            .get("bufferView")
            .and_then(Value::as_u64)
            .unwrap_or(u64::MAX);
        let (data, _) = view_slice(json, buffers, view as usize)?;
        let off = p.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        Ok((data.get(off..).unwrap_or_default(), off))
    };
    let (idx, _) = part("indices")?;
    let (vals, _) = part("values")?;
    let ict = sp
        .pointer("/indices/componentType")
        .and_then(Value::as_u64)
        .unwrap_or(0);
    let isz = component_size(ict);
    let fits = |len: usize, per: usize| k.checked_mul(per).is_some_and(|b| b <= len);
    if isz == 0 || ict == 5126 || !fits(idx.len(), isz) || !fits(vals.len(), n * size) {
        return Err("sparse data is shorter than its count".into());
    }
    let index = |j: usize| super::sparse::index_at(idx, isz, j).unwrap_or(u64::MAX);
    super::sparse::check_indices((0..k).map(index), (out.len() / n) as u64)?;
    for (j, value) in vals.chunks_exact(n * size).take(k).enumerate() {
        let at = index(j) as usize * n;
        for (d, b) in out[at..at + n].iter_mut().zip(value.chunks_exact(size)) {
            *d = component(b, ct, normalized);
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc_with(accessor: Value, bytes: Vec<u8>) -> (Value, Vec<Vec<u8>>) {
        let len = bytes.len();
        let json = json!({
            "asset": {"version": "2.0"},
            "extensionsUsed": ["KHR_mesh_quantization"],
            "extensionsRequired": ["KHR_mesh_quantization"],
            "buffers": [{"byteLength": len}],
            "bufferViews": [{"buffer": 0, "byteLength": len}],
            "accessors": [accessor],
            "meshes": [{"primitives": [{"attributes": {"POSITION": 0}}]}],
        });
        (json, vec![bytes])
    }

    #[test]
    fn normalized_and_integer_positions_become_floats() {
        let raw: Vec<u8> = [32767i16, -32768, 0, 0]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let (mut json, mut buffers) = doc_with(
            json!({"bufferView": 0, "componentType": 5122, "normalized": true, "count": 1, "type": "VEC3",
                   "min": [32767, -32768, 0], "max": [32767, -32768, 0]}),
            raw.clone(),
        );
        dequantize(&mut json, &mut buffers).unwrap();
        assert!(json.get("extensionsRequired").is_none());
        assert_eq!(json["accessors"][0]["componentType"], 5126);
        assert_eq!(json["accessors"][0]["min"], json!([1.0, -1.0, 0.0]));
        assert_eq!(
            read_accessor(&json, &buffers, 0).unwrap(),
            vec![1.0, -1.0, 0.0]
        );
        let (mut json, mut buffers) = doc_with(
            json!({"bufferView": 0, "componentType": 5122, "count": 1, "type": "VEC3"}),
            raw,
        );
        dequantize(&mut json, &mut buffers).unwrap();
        assert_eq!(
            read_accessor(&json, &buffers, 0).unwrap(),
            vec![32767.0, -32768.0, 0.0]
        );
    }

    #[test]
    fn an_accessor_past_its_view_is_an_error() {
        let (mut json, mut buffers) = doc_with(
            json!({"bufferView": 0, "componentType": 5122, "count": 2, "type": "VEC3"}),
            vec![0; 8],
        );
        let e = dequantize(&mut json, &mut buffers).unwrap_err();
        assert!(e.contains("accessor 0"), "{e}");
    }

    #[test]
    fn meshopt_round_trips_through_the_crate_and_drops_the_extension() {
        let values: Vec<[u32; 3]> = (0..50u32).map(|i| [i, i * 7, 1000 - i]).collect();
        let packed = meshopt::encode_vertex_buffer(&values).unwrap();
        let raw: Vec<u8> = values
            .iter()
            .flatten()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let mut json = json!({
            "asset": {"version": "2.0"},
            "extensionsUsed": ["EXT_meshopt_compression"],
            "extensionsRequired": ["EXT_meshopt_compression"],
            "buffers": [
                {"byteLength": packed.len()},
                {"byteLength": raw.len(), "extensions": {"EXT_meshopt_compression": {"fallback": true}}}
            ],
            "bufferViews": [{"buffer": 1, "byteLength": raw.len(), "byteStride": 12,
                "extensions": {"EXT_meshopt_compression": {"buffer": 0, "byteLength": packed.len(),
                    "byteStride": 12, "count": 50, "mode": "ATTRIBUTES"}}}],
        });
        let mut buffers = load_buffers(&json, Path::new("."), Some(&packed)).unwrap();
        assert!(buffers[1].is_empty());
        assert!(decode_meshopt(&mut json, &mut buffers).unwrap());
        assert!(json.get("extensionsUsed").is_none());
        let (data, stride) = view_slice(&json, &buffers, 0).unwrap();
        assert_eq!((data, stride), (raw.as_slice(), Some(12)));
        assert!(json["buffers"][1].get("extensions").is_none());
    }

    #[test]
    fn malformed_meshopt_views_are_errors_not_aborts() {
        for (ext, what) in [
            (
                json!({"buffer": 0, "byteLength": 4, "byteStride": 6, "count": 1, "mode": "ATTRIBUTES"}),
                "byteStride",
            ),
            (
                json!({"buffer": 0, "byteLength": 4, "byteStride": 4, "count": 4, "mode": "TRIANGLES"}),
                "byteStride",
            ),
            (
                json!({"buffer": 0, "byteLength": 4, "byteStride": 4, "count": 1, "mode": "ATTRIBUTES", "filter": "QUATERNION"}),
                "filter",
            ),
            (
                json!({"buffer": 0, "byteLength": 4, "byteStride": 4, "count": 100000000, "mode": "ATTRIBUTES"}),
                "decoded bytes",
            ),
            (
                json!({"buffer": 0, "byteLength": 40, "byteStride": 4, "count": 1, "mode": "ATTRIBUTES"}),
                "outside",
            ),
            (
                json!({"buffer": 0, "byteLength": 4, "byteStride": 4, "count": 3, "mode": "ATTRIBUTES"}),
                "malformed",
            ),
        ] {
            let mut json = json!({
                "buffers": [{"byteLength": 4}],
                "bufferViews": [{"buffer": 0, "byteLength": 4, "extensions": {"EXT_meshopt_compression": ext}}],
            });
            let mut buffers = vec![vec![0xffu8; 4]];
            let e = decode_meshopt(&mut json, &mut buffers).unwrap_err();
            assert!(e.contains(what), "{e} lacks {what}");
        }
    }
}
