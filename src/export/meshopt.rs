//! `EXT_meshopt_compression` out: every animation accessor (sampler inputs and outputs) is
//! byte-compressed with meshoptimizer's vertex codec (the `meshopt` crate; format version 0,
//! the one the EXT extension defines and three.js' `MeshoptDecoder` reads). Lossless: a
//! decoder gets back exactly the bytes the exporter verified.
//!
//! The fallback is handled as the extension specifies:
//! * [`Fallback::None`]: the extension is *required*; each compressed view points into a
//!   fallback buffer that has no data (`"fallback": true`), so the file is as small as it gets
//!   and only meshopt-aware loaders open it.
//! * [`Fallback::Kept`]: the extension is only *used*; the uncompressed bytes stay in
//!   buffer 0 as well, so loaders without meshopt still play the file.

use serde_json::{Value, json};

use super::{ExportError, GltfDoc};
use crate::import::gltf_ext::MESHOPT_EXTENSIONS;

const EXTENSION: &str = MESHOPT_EXTENSIONS[0];

/// What the uncompressed fallback holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fallback {
    /// Extension required, fallback buffer without data (smallest file).
    None,
    /// Extension used but not required, uncompressed data kept (plays anywhere).
    Kept,
}

/// An accessor in a view to compress: index, its bytes, and its bytes as stored (filtered).
type Member = (usize, Vec<u8>, Vec<u8>);

/// A temporary view key marking views to compress; removed before the pass returns.
const MARK: &str = "__skelpack_meshopt";

/// `doc` with its animation data meshopt-compressed. Accessors whose element size is not a
/// multiple of 4 bytes, sparse accessors and accessors without data stay as they are.
pub fn compress_animation_data(doc: &GltfDoc, fallback: Fallback) -> Result<GltfDoc, ExportError> {
    if doc
        .array("extensionsUsed")
        .iter()
        .any(|e| e.as_str().is_some_and(|e| MESHOPT_EXTENSIONS.contains(&e)))
    {
        return Err(ExportError::new(
            "the document already uses meshopt compression",
        ));
    }
    let mut out = super::buffers::consolidate(doc, true);
    if out.buffers.len() != 1 {
        return Err(ExportError::new(
            "meshopt: the document's buffers cannot be merged (an unknown extension may refer to them)",
        ));
    }
    // 1. Animation accessors of one element size share one tightly packed view (marked):
    //    the codec's per-view overhead (~40 bytes) is paid once, and similar data sits
    //    together. Views nothing references any more are then dropped, buffer 0 repacked.
    //    Rotations that are exactly what the QUATERNION filter decodes to are stored
    //    filtered (in a view of their own).
    let mut groups: std::collections::BTreeMap<(usize, Filter), Vec<Member>> = Default::default();
    for ai in animation_accessors(&out) {
        if let Some(bytes) = out.element_bytes(ai) {
            let (filter, filtered) = match quat_filtered(&out, ai, &bytes) {
                Some(f) => (Filter::Quaternion, Some(f)),
                None => match exp_eligible(&out, ai)
                    .then(|| exp_filtered(&bytes, out.element_size(ai) / 4))
                    .flatten()
                {
                    Some(f) => (Filter::Exponential, Some(f)),
                    None => (Filter::None, None),
                },
            };
            let key = (out.element_size(ai), filter);
            let stored = filtered.unwrap_or_else(|| bytes.clone());
            groups.entry(key).or_default().push((ai, bytes, stored));
        }
    }
    unfilter_where_larger(&mut groups);
    for ((stride, _), members) in groups.iter_mut() {
        order_members(members, *stride);
    }
    let mut filtered_views: Vec<(Vec<u8>, Filter)> = Vec::new();
    for ((stride, filter), members) in groups {
        let all: Vec<u8> = members.iter().flat_map(|m| m.1.iter().copied()).collect();
        let view = out.push_view(&all, None);
        let filtered = (filter != Filter::None).then(|| {
            let stored = members.iter().flat_map(|m| m.2.iter().copied()).collect();
            filtered_views.push((stored, filter));
            filtered_views.len() - 1
        });
        out.json["bufferViews"][view][MARK] = json!({ "stride": stride, "filtered": filtered });
        let mut at = 0;
        for (ai, bytes, _) in members {
            let acc = &mut out.json["accessors"][ai];
            acc["bufferView"] = json!(view);
            acc["byteOffset"] = json!(at);
            at += bytes.len();
        }
    }
    super::compact::compact(&mut out);
    // 2. Buffer 0 rebuilt: marked views compressed into it (their uncompressed layout in the
    //    fallback), every other view copied.
    let old = std::mem::take(&mut out.buffers[0]);
    let mut stored: Vec<u8> = Vec::with_capacity(old.len());
    let mut fallback_len = 0usize;
    let mut any = false;
    for view in out.array_mut("bufferViews").iter_mut() {
        let off = view.get("byteOffset").and_then(Value::as_u64).unwrap_or(0) as usize;
        let len = view.get("byteLength").and_then(Value::as_u64).unwrap_or(0) as usize;
        let bytes = old
            .get(off..off + len)
            .ok_or_else(|| ExportError::new("meshopt: a buffer view lies outside buffer 0"))?;
        let mark = view.as_object_mut().and_then(|o| o.remove(MARK));
        let filtered = mark
            .as_ref()
            .and_then(|m| m["filtered"].as_u64())
            .map(|i| &filtered_views[i as usize]);
        let mark = mark.and_then(|m| m["stride"].as_u64());
        let aligned = |b: &mut Vec<u8>| {
            b.resize(b.len().next_multiple_of(4), 0);
            b.len()
        };
        let Some(stride) = mark.map(|s| s as usize).filter(|_| len > 0) else {
            let at = aligned(&mut stored);
            stored.extend_from_slice(bytes);
            view["byteOffset"] = json!(at);
            continue;
        };
        let packed = encode_attributes(filtered.map_or(bytes, |f| f.0.as_slice()), stride)?;
        if packed.len() >= len {
            let at = aligned(&mut stored);
            stored.extend_from_slice(bytes);
            view["byteOffset"] = json!(at);
            continue;
        }
        let (buffer, at) = match fallback {
            Fallback::None => {
                fallback_len = fallback_len.next_multiple_of(4);
                let at = fallback_len;
                fallback_len += len;
                (1, at)
            }
            Fallback::Kept => {
                let at = aligned(&mut stored);
                stored.extend_from_slice(bytes);
                (0, at)
            }
        };
        let packed_at = aligned(&mut stored);
        stored.extend_from_slice(&packed);
        view["buffer"] = json!(buffer);
        view["byteOffset"] = json!(at);
        view["extensions"][EXTENSION] = json!({
            "buffer": 0,
            "byteOffset": packed_at,
            "byteLength": packed.len(),
            "byteStride": stride,
            "count": len / stride,
            "mode": "ATTRIBUTES",
        });
        if let Some((_, filter)) = filtered {
            view["extensions"][EXTENSION]["filter"] = json!(filter.name());
        }
        any = true;
    }
    out.buffers[0] = stored;
    if !any {
        return Ok(out);
    }
    out.json["buffers"][0]["byteLength"] = json!(out.buffers[0].len());
    if fallback == Fallback::None {
        out.array_mut("buffers").push(json!({
            "byteLength": fallback_len.max(1),
            "extensions": { EXTENSION: { "fallback": true } },
        }));
        out.buffers.push(Vec::new());
    }
    add_name(&mut out, "extensionsUsed");
    if fallback == Fallback::None {
        add_name(&mut out, "extensionsRequired");
    }
    Ok(out)
}

/// The extension's filter a compressed view is stored with.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Filter {
    None,
    /// Normalized SHORT rotations (`quat_filtered`).
    Quaternion,
    /// 32-bit floats as a 24-bit mantissa and an 8-bit exponent (`exp_filtered`).
    Exponential,
}

impl Filter {
    fn name(self) -> &'static str {
        match self {
            Filter::None => "NONE",
            Filter::Quaternion => "QUATERNION",
            Filter::Exponential => "EXPONENTIAL",
        }
    }
}

/// Bytes a view of `bytes` takes once stored: meshoptimizer's encoding, or the bytes as
/// they are where that is not smaller (as [`compress_animation_data`] decides).
pub(super) fn view_bytes(bytes: &[u8], stride: usize) -> usize {
    if bytes.is_empty() {
        return 0;
    }
    encode_attributes(bytes, stride).map_or(bytes.len(), |p| p.len().min(bytes.len()))
}

/// Members at most one ordering pass handles together (`order_members`): the pairwise
/// boundary costs take `n^2` encodings of two members each.
const ORDER_WINDOW: usize = 96;

/// Orders the accessors of a view for the smallest encoding. meshoptimizer's vertex codec
/// delta-codes each byte lane against the previous element, so where one accessor ends and
/// the next begins costs bytes (a rotation at 15 filter bits next to one at 11 changes the
/// fourth component's lanes; channels far apart change every lane). Each pair's boundary is
/// priced by real encodings (`enc(a b) - enc(a) - enc(b)`), the order built nearest-next from
/// every start and improved by swaps on those prices, in windows of [`ORDER_WINDOW`] members;
/// the new order is kept only where the whole view then encodes smaller. The bytes each
/// accessor holds are unchanged (only its offset in the view moves).
fn order_members(members: &mut Vec<Member>, stride: usize) {
    if members.len() < 2 || members.iter().any(|m| !m.2.len().is_multiple_of(stride)) {
        return;
    }
    let cat = |m: &[Member]| -> Vec<u8> { m.iter().flat_map(|m| m.2.iter().copied()).collect() };
    let before = view_bytes(&cat(members), stride);
    let mut ordered: Vec<Member> = Vec::with_capacity(members.len());
    for window in members.chunks(ORDER_WINDOW) {
        let order = boundary_order(window, stride);
        ordered.extend(order.into_iter().map(|i| window[i].clone()));
    }
    if view_bytes(&cat(&ordered), stride) < before {
        *members = ordered;
    }
}

/// The order of `members` with the smallest summed boundary cost found (see
/// [`order_members`]); the identity where nothing is cheaper.
fn boundary_order(members: &[Member], stride: usize) -> Vec<usize> {
    let n = members.len();
    let identity: Vec<usize> = (0..n).collect();
    if n < 2 {
        return identity;
    }
    let enc = |b: &[u8]| encode_attributes(b, stride).map_or(i64::MAX / 4, |p| p.len() as i64);
    let alone: Vec<i64> = members.iter().map(|m| enc(&m.2)).collect();
    let mut cost = vec![vec![0i64; n]; n];
    let mut pair = Vec::new();
    for a in 0..n {
        for b in 0..n {
            if a != b {
                pair.clear();
                pair.extend_from_slice(&members[a].2);
                pair.extend_from_slice(&members[b].2);
                cost[a][b] = enc(&pair) - alone[a] - alone[b];
            }
        }
    }
    let total = |o: &[usize]| o.windows(2).map(|w| cost[w[0]][w[1]]).sum::<i64>();
    let mut best = identity.clone();
    let mut best_cost = total(&identity);
    for start in 0..n {
        let mut used = vec![false; n];
        used[start] = true;
        let mut order = vec![start];
        while order.len() < n {
            let last = *order.last().expect("starts with one");
            let next = (0..n)
                .filter(|&k| !used[k])
                .min_by_key(|&k| cost[last][k])
                .expect("members left");
            used[next] = true;
            order.push(next);
        }
        let c = total(&order);
        if c < best_cost {
            (best, best_cost) = (order, c);
        }
    }
    // Swaps while they lower the summed price (a few passes).
    for _ in 0..4 {
        let mut improved = false;
        for i in 0..n {
            for k in i + 1..n {
                best.swap(i, k);
                let c = total(&best);
                if c < best_cost {
                    best_cost = c;
                    improved = true;
                } else {
                    best.swap(i, k);
                }
            }
        }
        if !improved {
            break;
        }
    }
    best
}

/// Exponential-filtered accessors go back to the unfiltered view of their element size
/// where the two views together would store larger than one unfiltered view.
fn unfilter_where_larger(groups: &mut std::collections::BTreeMap<(usize, Filter), Vec<Member>>) {
    let strides: Vec<usize> = groups
        .keys()
        .filter(|k| k.1 == Filter::Exponential)
        .map(|k| k.0)
        .collect();
    for stride in strides {
        let exp = groups
            .remove(&(stride, Filter::Exponential))
            .unwrap_or_default();
        let plain = groups.remove(&(stride, Filter::None)).unwrap_or_default();
        let cat = |m: &[Member], stored: bool| -> Vec<u8> {
            m.iter()
                .flat_map(|m| if stored { &m.2 } else { &m.1 }.iter().copied())
                .collect()
        };
        let apart = view_bytes(&cat(&exp, true), stride) + view_bytes(&cat(&plain, false), stride);
        let mut merged = plain.clone();
        merged.extend(exp.iter().map(|m| (m.0, m.1.clone(), m.1.clone())));
        merged.sort_by_key(|m| m.0);
        if apart < view_bytes(&cat(&merged, false), stride) {
            groups.insert((stride, Filter::Exponential), exp);
            if !plain.is_empty() {
                groups.insert((stride, Filter::None), plain);
            }
        } else {
            groups.insert((stride, Filter::None), merged);
        }
    }
}

/// Whether accessor `ai` may be stored with the EXPONENTIAL filter: non-normalized floats
/// (the filter decodes to 32-bit floats).
fn exp_eligible(doc: &GltfDoc, ai: usize) -> bool {
    let a = &doc.array("accessors")[ai];
    a.get("componentType").and_then(Value::as_u64) == Some(5126)
        && a.get("normalized").and_then(Value::as_bool) != Some(true)
}

/// 32-bit floats (little-endian; elements of `comps` components) as the EXPONENTIAL
/// filter's inputs that meshoptimizer's decoder turns back into exactly the same bits, or
/// `None` where some value has no such input. Each component position (`x`, `y`, `z` of a
/// VEC3 ...) shares one exponent, the smallest its values need, so the mantissas are
/// integers on one step: the rounded translations of `--meshopt` exports (a power-of-two
/// step) delta-code far better this way than as floats.
pub fn exp_filtered(bytes: &[u8], comps: usize) -> Option<Vec<u8>> {
    if bytes.is_empty() || !bytes.len().is_multiple_of(4 * comps.max(1)) {
        return None;
    }
    let values: Vec<f32> = bytes
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let comps = comps.max(1);
    // The largest exponent e with v = m * 2^e, m an integer (None for zero).
    let own = |v: f32| -> Option<i32> {
        if v == 0.0 || !v.is_finite() {
            return None;
        }
        let bits = v.to_bits();
        let (exp, frac) = ((bits >> 23 & 0xff) as i32, bits & 0x7f_ffff);
        let (m, e) = if exp == 0 {
            (frac, -149)
        } else {
            (frac | 0x80_0000, exp - 150)
        };
        Some(e + m.trailing_zeros() as i32)
    };
    let shared: Vec<i32> = (0..comps)
        .map(|k| {
            values
                .iter()
                .skip(k)
                .step_by(comps)
                .filter_map(|&v| own(v))
                .min()
                .unwrap_or(0)
                .clamp(-126, 127)
        })
        .collect();
    let mut out = Vec::with_capacity(bytes.len());
    for (i, &v) in values.iter().enumerate() {
        if !v.is_finite() {
            return None;
        }
        let e = shared[i % comps];
        let m = (f64::from(v) / 2f64.powi(e)).round();
        if m.abs() >= f64::from(1 << 23) {
            return None;
        }
        let code = ((e as u32) << 24) | (m as i32 as u32 & 0xff_ffff);
        let mut decoded = [[code]];
        meshopt::encoding::decode_filter_exp(&mut decoded);
        if decoded[0][0] != v.to_bits() {
            return None;
        }
        out.extend_from_slice(&code.to_le_bytes());
    }
    Some(out)
}

/// A normalized SHORT VEC4 rotation output that meshoptimizer's QUATERNION filter
/// reproduces exactly (each element at the fewest bits that do): the filtered elements.
fn quat_filtered(doc: &GltfDoc, ai: usize, bytes: &[u8]) -> Option<Vec<u8>> {
    let a = &doc.array("accessors")[ai];
    let rotation_output = doc.array("animations").iter().any(|anim| {
        let samplers = anim.get("samplers").and_then(Value::as_array);
        anim.get("channels")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .any(|ch| {
                ch.pointer("/target/path").and_then(Value::as_str) == Some("rotation")
                    && ch
                        .get("sampler")
                        .and_then(Value::as_u64)
                        .and_then(|s| samplers?.get(s as usize))
                        .and_then(|s| s.get("output"))
                        .and_then(Value::as_u64)
                        == Some(ai as u64)
            })
    });
    if !rotation_output
        || a.get("componentType").and_then(Value::as_u64) != Some(5122)
        || a.get("normalized").and_then(Value::as_bool) != Some(true)
        || a.get("type").and_then(Value::as_str) != Some("VEC4")
    {
        return None;
    }
    // Each element at the bits most elements decode exactly at (one channel's bits: equal
    // fourth components and small steps delta-code best), else at the fewest that do.
    let elements: Vec<([f32; 4], [i16; 4])> = bytes
        .chunks_exact(8)
        .map(|e| {
            let codes: [i16; 4] =
                std::array::from_fn(|k| i16::from_le_bytes([e[2 * k], e[2 * k + 1]]));
            (codes.map(|c| f32::from(c) / 32767.0), codes)
        })
        .collect();
    let common = (4..=16)
        .rev()
        .max_by_key(|&bits| {
            elements
                .iter()
                .filter(|(q, c)| filter_preimage(*q, *c, bits).is_some())
                .count()
        })
        .unwrap_or(16);
    let mut out = Vec::with_capacity(bytes.len());
    for &(q, codes) in &elements {
        let enc = filter_preimage(q, codes, common)
            .or_else(|| (4..=16).find_map(|bits| filter_preimage(q, codes, bits)))?;
        out.extend(enc.iter().flat_map(|c| c.to_le_bytes()));
    }
    Some(out)
}

/// Filter input at `bits` that decodes to exactly `codes`: the encoder's own output for
/// `q`, or one step off it in x, y or z (the decoded quaternion is rounded, so re-encoding
/// it may land one step away).
fn filter_preimage(q: [f32; 4], codes: [i16; 4], bits: i32) -> Option<[i16; 4]> {
    let enc = meshopt::encoding::encode_filter_quat(&[q], bits)[0];
    (0..27).find_map(|n| {
        let d = [n % 3, n / 3 % 3, n / 9].map(|x| x as i16 - 1);
        let e = [
            enc[0].checked_add(d[0])?,
            enc[1].checked_add(d[1])?,
            enc[2].checked_add(d[2])?,
            enc[3],
        ];
        let mut dec = [e];
        meshopt::encoding::decode_filter_quat(&mut dec);
        (dec[0] == codes).then_some(e)
    })
}

fn add_name(doc: &mut GltfDoc, key: &str) {
    let list = doc.array_mut(key);
    if !list.iter().any(|e| e == EXTENSION) {
        list.push(json!(EXTENSION));
    }
}

/// Accessors the animation samplers reference, each once, in order.
pub(super) fn animation_accessors(doc: &GltfDoc) -> Vec<usize> {
    accessors_of(doc, None)
}

/// Accessors the samplers of animation `only` (or of all animations) reference.
fn accessors_of(doc: &GltfDoc, only: Option<usize>) -> Vec<usize> {
    let mut out: Vec<usize> = doc
        .array("animations")
        .iter()
        .enumerate()
        .filter(|(i, _)| only.is_none_or(|o| o == *i))
        .map(|(_, a)| a)
        .flat_map(|a| {
            a.get("samplers")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        })
        .flat_map(|s| [s.get("input"), s.get("output")])
        .filter_map(|v| v?.as_u64().map(|v| v as usize))
        .filter(|&i| i < doc.array("accessors").len())
        .collect();
    out.sort_unstable();
    out.dedup();
    out
}

/// meshoptimizer's vertex codec, format version 0, on elements of `stride` bytes.
pub(super) fn encode_attributes(bytes: &[u8], stride: usize) -> Result<Vec<u8>, ExportError> {
    if stride == 0
        || stride > 256
        || !stride.is_multiple_of(4)
        || !bytes.len().is_multiple_of(stride)
    {
        return Err(ExportError::new(format!(
            "meshopt: element size {stride} not encodable"
        )));
    }
    let count = bytes.len() / stride;
    // SAFETY: the bound is meshoptimizer's own for (count, stride); `bytes` holds count
    // elements of `stride` bytes; stride is 4..=256 and a multiple of 4 (its assertions).
    unsafe {
        use meshopt::ffi;
        let bound = ffi::meshopt_encodeVertexBufferBound(count, stride);
        let mut out = vec![0u8; bound];
        let n = ffi::meshopt_encodeVertexBufferLevel(
            out.as_mut_ptr(),
            out.len(),
            bytes.as_ptr().cast(),
            count,
            stride,
            2,
            0,
        );
        if n == 0 {
            return Err(ExportError::new("meshopt: the vertex encoder failed"));
        }
        out.truncate(n);
        Ok(out)
    }
}

/// Bytes the animation samplers' data occupies once stored, for animation `only` or all:
/// for a compressed view its compressed length pro-rated over its elements (animeval's
/// "stored" count), else count x element size; each accessor once.
pub fn stored_bytes(doc: &GltfDoc, only: Option<usize>) -> f64 {
    accessors_of(doc, only)
        .into_iter()
        .map(|ai| {
            let a = &doc.array("accessors")[ai];
            let count = a.get("count").and_then(Value::as_u64).unwrap_or(0) as f64;
            let elem = doc.element_size(ai) as f64;
            let ext = a
                .get("bufferView")
                .and_then(Value::as_u64)
                .and_then(|v| doc.array("bufferViews").get(v as usize))
                .and_then(|v| v.pointer(&format!("/extensions/{EXTENSION}")));
            let field = |e: &Value, k: &str| e.get(k).and_then(Value::as_f64).unwrap_or(0.0);
            match ext {
                Some(e) => {
                    let total = field(e, "count") * field(e, "byteStride");
                    field(e, "byteLength") * count * field(e, "byteStride") / total.max(1.0)
                }
                None => count * elem,
            }
        })
        .sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> GltfDoc {
        let mut d = GltfDoc::new();
        let times: Vec<f32> = (0..400).map(|i| i as f32 / 32.0).collect();
        let t = d.push_f32(&times, 1, "SCALAR", true, None);
        let values: Vec<f32> = (0..1200)
            .map(|i| (i % 3) as f32 + (i / 30) as f32)
            .collect();
        let v = d.push_f32(&values, 3, "VEC3", false, None);
        d.json["nodes"] = json!([{ "name": "a" }]);
        d.json["animations"] = json!([{
            "channels": [{ "sampler": 0, "target": { "node": 0, "path": "translation" } }],
            "samplers": [{ "input": t, "output": v }],
        }]);
        d
    }

    fn decoded(d: &GltfDoc) -> GltfDoc {
        let bytes = d.to_bytes(super::super::GltfFormat::Binary).unwrap();
        GltfDoc::from_bytes(std::path::Path::new("x.glb"), &bytes).unwrap()
    }

    fn accessor_values(d: &GltfDoc, ai: usize) -> Vec<u8> {
        d.element_bytes(ai).unwrap()
    }

    #[test]
    fn accessors_are_ordered_for_a_smaller_view_with_their_bytes_unchanged() {
        // Two kinds of 48-element channels, alternating: each boundary changes every byte
        // lane. Grouped by kind, only one boundary does.
        let member = |i: usize, kind: u8| -> Member {
            let bytes: Vec<u8> = (0..48 * 8)
                .map(|k| {
                    if k % 8 < 4 {
                        kind.wrapping_mul(97)
                    } else {
                        (k / 8) as u8
                    }
                })
                .collect();
            (i, bytes.clone(), bytes)
        };
        let mut members: Vec<Member> = (0..8).map(|i| member(i, (i % 2) as u8)).collect();
        let cat = |m: &[Member]| -> Vec<u8> { m.iter().flat_map(|m| m.2.clone()).collect() };
        let before = view_bytes(&cat(&members), 8);
        let orig = members.clone();
        order_members(&mut members, 8);
        assert!(view_bytes(&cat(&members), 8) < before);
        let mut ids: Vec<usize> = members.iter().map(|m| m.0).collect();
        ids.sort_unstable();
        assert_eq!(ids, (0..8).collect::<Vec<_>>(), "a permutation");
        for m in &members {
            assert_eq!(m, &orig[m.0], "bytes travel with their accessor");
        }
        // Already in its best order: left as it was.
        let mut same = vec![member(0, 0), member(1, 0)];
        order_members(&mut same, 8);
        assert_eq!(same, vec![member(0, 0), member(1, 0)]);
    }

    #[test]
    fn required_mode_has_a_dataless_fallback_and_decodes_to_the_same_bytes() {
        let d = doc();
        let m = compress_animation_data(&d, Fallback::None).unwrap();
        assert_eq!(m.json["extensionsRequired"], json!([EXTENSION]));
        assert_eq!(
            m.json["buffers"][1]["extensions"][EXTENSION]["fallback"],
            true
        );
        let bytes = m.to_bytes(super::super::GltfFormat::Binary).unwrap();
        assert!(bytes.len() < d.to_bytes(super::super::GltfFormat::Binary).unwrap().len());
        let back = decoded(&m);
        for ai in 0..2 {
            assert_eq!(accessor_values(&back, ai), accessor_values(&d, ai));
        }
        assert!(stored_bytes(&m, None) < stored_bytes(&d, None));
    }

    #[test]
    fn kept_mode_is_used_not_required_and_plays_without_the_extension() {
        let d = doc();
        let m = compress_animation_data(&d, Fallback::Kept).unwrap();
        assert!(m.json.get("extensionsRequired").is_none());
        assert_eq!(m.json["extensionsUsed"], json!([EXTENSION]));
        // A loader that ignores the extension reads the views as they are.
        let mut plain = m.clone();
        for v in plain.array_mut("bufferViews") {
            v.as_object_mut().unwrap().remove("extensions");
        }
        plain.json.as_object_mut().unwrap().remove("extensionsUsed");
        for ai in 0..2 {
            assert_eq!(accessor_values(&plain, ai), accessor_values(&d, ai));
            assert_eq!(accessor_values(&decoded(&m), ai), accessor_values(&d, ai));
        }
    }

    #[test]
    fn exponential_filter_is_exact_on_a_power_of_two_step_and_refuses_the_rest() {
        let step = 2f32.powi(-12);
        let values: Vec<f32> = (0..90)
            .map(|i| ((i as f32 * 0.31).sin() * 0.7 / step).round() * step + 0.0)
            .collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let f = exp_filtered(&bytes, 3).expect("values on a power-of-two step");
        let mut codes: Vec<[u32; 1]> = f
            .chunks_exact(4)
            .map(|b| [u32::from_le_bytes([b[0], b[1], b[2], b[3]])])
            .collect();
        meshopt::encoding::decode_filter_exp(&mut codes);
        let back: Vec<u8> = codes.iter().flat_map(|c| c[0].to_le_bytes()).collect();
        assert_eq!(back, bytes, "decodes to exactly the same floats");
        assert!(
            view_bytes(&f, 12) < view_bytes(&bytes, 12),
            "and stores smaller"
        );
        // A full 24-bit significand has no 24-bit signed mantissa; -0.0 decodes to 0.0.
        for bad in [1.0f32 / 3.0, -0.0] {
            let b: Vec<u8> = [0.5f32, 0.25, bad]
                .iter()
                .flat_map(|v| v.to_le_bytes())
                .collect();
            assert_eq!(exp_filtered(&b, 3), None, "{bad}");
        }
    }

    #[test]
    fn filter_decoded_rotations_are_stored_filtered_and_decode_to_the_same_codes() {
        let mut d = GltfDoc::new();
        let times: Vec<f32> = (0..30).map(|i| i as f32 / 30.0).collect();
        let t = d.push_f32(&times, 1, "SCALAR", true, None);
        let codes: Vec<i16> = (0..30)
            .flat_map(|i| {
                let q =
                    glam::Quat::from_rotation_y(i as f32 * 0.05) * glam::Quat::from_rotation_x(0.3);
                let bits = if i == 29 { 16 } else { 11 };
                super::super::channels::quat_filter_codes(glam::Vec4::from(q), bits)
            })
            .collect();
        let r = d.push_i16_normalized(&codes, 4, "VEC4");
        d.json["nodes"] = json!([{ "name": "a" }]);
        d.json["animations"] = json!([{
            "channels": [{ "sampler": 0, "target": { "node": 0, "path": "rotation" } }],
            "samplers": [{ "input": t, "output": r }],
        }]);
        let m = compress_animation_data(&d, Fallback::None).unwrap();
        let filtered = m
            .array("bufferViews")
            .iter()
            .filter(|v| {
                v.pointer(&format!("/extensions/{EXTENSION}/filter")) == Some(&json!("QUATERNION"))
            })
            .count();
        assert_eq!(filtered, 1);
        assert_eq!(decoded(&m).element_bytes(1), d.element_bytes(1));
        // Plain SHORT codes that no filter input reproduces stay unfiltered.
        let mut odd = codes.clone();
        odd[0] = 12345;
        odd[1] = 12345;
        odd[2] = 12345;
        odd[3] = 12345;
        let mut d2 = d.clone();
        d2.push_i16_normalized(&odd, 4, "VEC4");
        d2.json["animations"][0]["samplers"][0]["output"] = json!(2);
        let m2 = compress_animation_data(&d2, Fallback::None).unwrap();
        assert!(m2.array("bufferViews").iter().all(|v| {
            v.pointer(&format!("/extensions/{EXTENSION}/filter"))
                .is_none()
        }));
        assert_eq!(decoded(&m2).element_bytes(1), d2.element_bytes(2));
    }
}
