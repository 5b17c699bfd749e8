//! A glTF document being written: the JSON as a `serde_json::Value` plus the bytes of its
//! buffers. New data goes into buffer 0 (the `.glb` BIN chunk, or the first data-URI buffer
//! of a `.gltf`) with every buffer view 4-byte aligned.

use std::path::Path;

use base64::Engine as _;
use serde_json::{Map, Value, json};

use super::ExportError;

/// `componentType` values of the glTF spec.
pub mod component {
    pub const I8: u32 = 5120;
    pub const U8: u32 = 5121;
    pub const I16: u32 = 5122;
    pub const U16: u32 = 5123;
    pub const U32: u32 = 5125;
    pub const F32: u32 = 5126;
}

/// `bufferView.target` values.
pub mod target {
    pub const ARRAY_BUFFER: u32 = 34962;
    pub const ELEMENT_ARRAY_BUFFER: u32 = 34963;
}

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// Which container to write.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GltfFormat {
    /// `.glb`: JSON chunk + BIN chunk.
    Binary,
    /// `.gltf`: JSON with buffers embedded as base64 data URIs.
    Embedded,
}

impl GltfFormat {
    /// Chooses the container from the output file's extension.
    pub fn from_path(path: &Path) -> Result<Self, ExportError> {
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase);
        match ext.as_deref() {
            Some("glb") => Ok(Self::Binary),
            Some("gltf") => Ok(Self::Embedded),
            _ => Err(ExportError::new(format!(
                "{}: output must end in .glb or .gltf",
                path.display()
            ))),
        }
    }
}

/// A glTF JSON document and the bytes of all its buffers (`buffers[i]` is buffer `i`).
#[derive(Clone, Debug)]
pub struct GltfDoc {
    pub json: Value,
    pub buffers: Vec<Vec<u8>>,
}

impl GltfDoc {
    /// An empty glTF 2.0 document with one (empty) buffer, credited to skelpack.
    pub fn new() -> Self {
        Self {
            json: json!({
                "asset": {
                    "version": "2.0",
                    "generator": concat!("skelpack ", env!("CARGO_PKG_VERSION")),
                },
                "buffers": [ { "byteLength": 0 } ],
            }),
            buffers: vec![Vec::new()],
        }
    }

    /// Reads the `.glb` or `.gltf` file at `path`.
    pub fn read(path: &Path) -> Result<Self, ExportError> {
        let bytes = std::fs::read(path)
            .map_err(|e| ExportError::new(format!("{}: cannot read: {e}", path.display())))?;
        Self::from_bytes(path, &bytes)
    }

    /// Reads a `.glb` or `.gltf` (data-URI or external buffers, resolved beside `path`);
    /// meshopt-compressed buffer views are decoded (`EXT_meshopt_compression` dropped).
    pub fn from_bytes(path: &Path, bytes: &[u8]) -> Result<Self, ExportError> {
        let err = |m: String| ExportError::new(format!("{}: {m}", path.display()));
        let (json_bytes, bin) = if bytes.starts_with(GLB_MAGIC) {
            split_glb(bytes).map_err(err)?
        } else {
            (bytes, None)
        };
        let json: Value = serde_json::from_slice(json_bytes)
            .map_err(|e| err(format!("not a valid glTF JSON document ({e})")))?;
        if !json.is_object() {
            return Err(err("the glTF JSON is not an object".into()));
        }
        let base = path
            .parent()
            .filter(|p| !p.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        let mut json = json;
        // The importer's buffer rules (URI policy, meshopt fallback buffers), and meshopt
        // views decoded: the export works on core glTF and re-encodes only if asked.
        let mut buffers = crate::import::gltf_ext::load_buffers(&json, base, bin).map_err(err)?;
        crate::import::gltf_ext::decode_meshopt(&mut json, &mut buffers).map_err(err)?;
        if buffers.is_empty() {
            buffers.push(Vec::new());
        }
        let mut doc = Self { json, buffers };
        if doc.array("buffers").is_empty() {
            doc.array_mut("buffers").push(json!({ "byteLength": 0 }));
        }
        Ok(doc)
    }

    /// The top-level array `key` (empty if absent).
    pub fn array(&self, key: &str) -> &[Value] {
        self.json
            .get(key)
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The top-level array `key`, created when absent.
    pub fn array_mut(&mut self, key: &str) -> &mut Vec<Value> {
        let obj = self.json.as_object_mut().expect("glTF JSON is an object");
        let v = obj
            .entry(key.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        if !v.is_array() {
            *v = Value::Array(Vec::new());
        }
        v.as_array_mut().expect("just made an array")
    }

    /// Appends `value` to the top-level array `key`; returns its index.
    pub fn push(&mut self, key: &str, value: Value) -> usize {
        let a = self.array_mut(key);
        a.push(value);
        a.len() - 1
    }

    /// Appends bytes to buffer 0 at a 4-byte aligned offset as a new buffer view.
    pub fn push_view(&mut self, bytes: &[u8], target: Option<u32>) -> usize {
        let bin = &mut self.buffers[0];
        while !bin.len().is_multiple_of(4) {
            bin.push(0);
        }
        let offset = bin.len();
        bin.extend_from_slice(bytes);
        let mut view = Map::new();
        view.insert("buffer".into(), json!(0));
        view.insert("byteOffset".into(), json!(offset));
        view.insert("byteLength".into(), json!(bytes.len()));
        if let Some(t) = target {
            view.insert("target".into(), json!(t));
        }
        self.push("bufferViews", Value::Object(view))
    }

    /// Adds an accessor over a whole buffer view.
    #[allow(clippy::too_many_arguments)]
    pub fn push_accessor(
        &mut self,
        view: usize,
        component_type: u32,
        normalized: bool,
        count: usize,
        kind: &str,
        min: Option<Vec<f64>>,
        max: Option<Vec<f64>>,
    ) -> usize {
        let mut a = Map::new();
        a.insert("bufferView".into(), json!(view));
        a.insert("componentType".into(), json!(component_type));
        if normalized {
            a.insert("normalized".into(), json!(true));
        }
        a.insert("count".into(), json!(count));
        a.insert("type".into(), json!(kind));
        if let Some(m) = min {
            a.insert("min".into(), json!(m));
        }
        if let Some(m) = max {
            a.insert("max".into(), json!(m));
        }
        self.push("accessors", Value::Object(a))
    }

    /// Adds float data with `width` components per element (`kind` = "SCALAR", "VEC3"...),
    /// with min / max when `bounds` is set.
    pub fn push_f32(
        &mut self,
        values: &[f32],
        width: usize,
        kind: &str,
        bounds: bool,
        target: Option<u32>,
    ) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.push_view(&bytes, target);
        let (min, max) = if bounds {
            let (lo, hi) = bounds_of(values, width);
            (Some(lo), Some(hi))
        } else {
            (None, None)
        };
        self.push_accessor(
            view,
            component::F32,
            false,
            values.len() / width,
            kind,
            min,
            max,
        )
    }

    /// Adds normalized signed 16-bit data (`value = max(i / 32767, -1)`).
    pub fn push_i16_normalized(&mut self, values: &[i16], width: usize, kind: &str) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.push_view(&bytes, None);
        self.push_accessor(
            view,
            component::I16,
            true,
            values.len() / width,
            kind,
            None,
            None,
        )
    }

    /// Adds unsigned 16-bit data (joint indices, small index buffers).
    pub fn push_u16(
        &mut self,
        values: &[u16],
        width: usize,
        kind: &str,
        target: Option<u32>,
    ) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.push_view(&bytes, target);
        self.push_accessor(
            view,
            component::U16,
            false,
            values.len() / width,
            kind,
            None,
            None,
        )
    }

    /// Adds unsigned 32-bit data (large index buffers).
    pub fn push_u32(&mut self, values: &[u32], kind: &str, target: Option<u32>) -> usize {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let view = self.push_view(&bytes, target);
        self.push_accessor(view, component::U32, false, values.len(), kind, None, None)
    }

    /// Bytes of one element of accessor `ai` (0 for a type it does not know).
    pub fn element_size(&self, ai: usize) -> usize {
        let a = &self.array("accessors")[ai];
        let comp = match a.get("componentType").and_then(Value::as_u64) {
            Some(5120 | 5121) => 1,
            Some(5122 | 5123) => 2,
            Some(5125 | 5126) => 4,
            _ => 0,
        };
        let n = match a.get("type").and_then(Value::as_str) {
            Some("SCALAR") => 1,
            Some("VEC2") => 2,
            Some("VEC3") => 3,
            Some("VEC4") => 4,
            _ => 0,
        };
        comp * n
    }

    /// Accessor `ai`'s components, when it is a plain float accessor (32-bit floats, not
    /// sparse, inside its view).
    pub fn f32_components(&self, ai: usize) -> Option<Vec<f32>> {
        let a = self.array("accessors").get(ai)?;
        let comp = a.get("componentType").and_then(Value::as_u64)? as u32;
        if comp != component::F32 {
            return None;
        }
        let bytes = self.element_bytes(ai)?;
        Some(
            bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect(),
        )
    }

    /// Accessor `ai`'s elements tightly packed, when its element size is a multiple of 4
    /// (what meshopt can hold; every animation accessor skelpack writes) and it is not
    /// sparse and lies inside its view.
    pub fn element_bytes(&self, ai: usize) -> Option<Vec<u8>> {
        let a = &self.array("accessors")[ai];
        let elem = self.element_size(ai);
        if elem == 0 || !elem.is_multiple_of(4) || a.get("sparse").is_some() {
            return None;
        }
        let count = a.get("count")?.as_u64()? as usize;
        let view = &self.array("bufferViews")[a.get("bufferView")?.as_u64()? as usize];
        let data = self.buffers.get(view.get("buffer")?.as_u64()? as usize)?;
        if count == 0 {
            return None;
        }
        let stride = view
            .get("byteStride")
            .and_then(Value::as_u64)
            .map_or(elem, |s| s as usize);
        let start = view.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize
            + a.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let mut out = Vec::with_capacity(count * elem);
        for i in 0..count {
            out.extend_from_slice(data.get(start + i * stride..start + i * stride + elem)?);
        }
        Some(out)
    }

    /// Serializes as `.glb` or as `.gltf` with data-URI buffers. Unused buffers are dropped;
    /// a `.glb` holds every buffer in its BIN chunk (see [`super::buffers`]); any buffer
    /// that referred to an external file is embedded, so the result is self-contained
    /// wherever it is written.
    pub fn to_bytes(&self, format: GltfFormat) -> Result<Vec<u8>, ExportError> {
        let merged = super::buffers::consolidate(self, format == GltfFormat::Binary);
        let mut json = merged.json.clone();
        let buffers = json
            .get_mut("buffers")
            .and_then(Value::as_array_mut)
            .ok_or_else(|| ExportError::new("the document has no buffers"))?;
        if buffers.len() != merged.buffers.len() {
            return Err(ExportError::new(format!(
                "the document lists {} buffers but holds {}",
                buffers.len(),
                merged.buffers.len()
            )));
        }
        for (i, (b, data)) in buffers.iter_mut().zip(&merged.buffers).enumerate() {
            // A meshopt fallback buffer without data keeps its declared length and no URI.
            if data.is_empty() && crate::import::gltf_ext::is_fallback(b) {
                continue;
            }
            let obj = b
                .as_object_mut()
                .ok_or_else(|| ExportError::new(format!("buffer {i} is not an object")))?;
            obj.insert("byteLength".into(), json!(data.len().max(1)));
            if i == 0 && format == GltfFormat::Binary {
                obj.remove("uri");
            } else {
                obj.insert("uri".into(), json!(data_uri(data)));
            }
        }
        let text = serde_json::to_vec(&json)
            .map_err(|e| ExportError::new(format!("cannot serialize glTF JSON: {e}")))?;
        Ok(match format {
            GltfFormat::Embedded => text,
            GltfFormat::Binary => glb(&text, &merged.buffers[0]),
        })
    }
}

impl Default for GltfDoc {
    fn default() -> Self {
        Self::new()
    }
}

/// Per-component min and max of interleaved `width`-wide elements.
pub fn bounds_of(values: &[f32], width: usize) -> (Vec<f64>, Vec<f64>) {
    let mut lo = vec![f64::INFINITY; width];
    let mut hi = vec![f64::NEG_INFINITY; width];
    for e in values.chunks_exact(width) {
        for (k, &v) in e.iter().enumerate() {
            lo[k] = lo[k].min(v as f64);
            hi[k] = hi[k].max(v as f64);
        }
    }
    (lo, hi)
}

fn data_uri(data: &[u8]) -> String {
    let mut s = String::from("data:application/octet-stream;base64,");
    base64::engine::general_purpose::STANDARD.encode_string(data, &mut s);
    s
}

/// Splits a `.glb` into its JSON chunk and optional BIN chunk.
fn split_glb(bytes: &[u8]) -> Result<(&[u8], Option<&[u8]>), String> {
    let u32_at = |o: usize| -> Result<u32, String> {
        bytes
            .get(o..o + 4)
            .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            .ok_or_else(|| "the .glb is truncated".to_string())
    };
    if u32_at(4)? != 2 {
        return Err("GLB version is not 2".into());
    }
    let total = (u32_at(8)? as usize).min(bytes.len());
    let mut off = 12;
    let (mut json, mut bin) = (None, None);
    while off + 8 <= total {
        let len = u32_at(off)? as usize;
        let kind = u32_at(off + 4)?;
        let data = bytes
            .get(off + 8..off + 8 + len)
            .ok_or("a .glb chunk runs past the end of the file (truncated?)")?;
        match kind {
            CHUNK_JSON if json.is_none() => json = Some(data),
            CHUNK_BIN if bin.is_none() => bin = Some(data),
            _ => {}
        }
        off += 8 + len.next_multiple_of(4);
    }
    Ok((json.ok_or("the .glb has no JSON chunk")?, bin))
}

/// Lays out a `.glb`: header, JSON chunk padded with spaces, BIN chunk padded with zeros.
fn glb(json: &[u8], bin: &[u8]) -> Vec<u8> {
    let json_len = json.len().next_multiple_of(4);
    let bin_len = bin.len().next_multiple_of(4);
    let has_bin = !bin.is_empty();
    let total = 12 + 8 + json_len + if has_bin { 8 + bin_len } else { 0 };
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(GLB_MAGIC);
    out.extend_from_slice(&2u32.to_le_bytes());
    out.extend_from_slice(&(total as u32).to_le_bytes());
    out.extend_from_slice(&(json_len as u32).to_le_bytes());
    out.extend_from_slice(&CHUNK_JSON.to_le_bytes());
    out.extend_from_slice(json);
    out.resize(20 + json_len, b' ');
    if has_bin {
        out.extend_from_slice(&(bin_len as u32).to_le_bytes());
        out.extend_from_slice(&CHUNK_BIN.to_le_bytes());
        out.extend_from_slice(bin);
        out.resize(total, 0);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glb_round_trips_and_aligns() {
        let mut d = GltfDoc::new();
        let a = d.push_f32(&[1.0, 2.0, 3.0], 1, "SCALAR", true, None);
        d.buffers[0].push(7); // misalign on purpose
        let b = d.push_u16(&[1, 2, 3], 1, "SCALAR", None);
        assert_eq!((a, b), (0, 1));
        let views = d.array("bufferViews");
        assert_eq!(views[1]["byteOffset"], 16);
        let bytes = d.to_bytes(GltfFormat::Binary).unwrap();
        assert_eq!(bytes.len() % 4, 0);
        let back = GltfDoc::from_bytes(Path::new("x.glb"), &bytes).unwrap();
        assert_eq!(back.buffers[0], d.buffers[0]);
        assert_eq!(back.json["accessors"][0]["max"][0], 3.0);
        let text = d.to_bytes(GltfFormat::Embedded).unwrap();
        let back = GltfDoc::from_bytes(Path::new("x.gltf"), &text).unwrap();
        assert_eq!(back.buffers[0], d.buffers[0]);
    }

    #[test]
    fn truncated_glb_is_an_error() {
        let mut d = GltfDoc::new();
        d.push_f32(&[1.0; 64], 4, "VEC4", false, None);
        let bytes = d.to_bytes(GltfFormat::Binary).unwrap();
        for cut in [3, 13, 30, bytes.len() - 9] {
            assert!(GltfDoc::from_bytes(Path::new("x.glb"), &bytes[..cut]).is_err());
        }
    }

    #[test]
    fn format_from_extension() {
        assert_eq!(
            GltfFormat::from_path(Path::new("a/B.GLB")).unwrap(),
            GltfFormat::Binary
        );
        assert!(GltfFormat::from_path(Path::new("a.fbx")).is_err());
    }
}
