//! The action-cache record naming a result blob: a minimal `ActionResult` of Bazel's remote
//! execution API (`build.bazel.remote.execution.v2`), so caches that check what is written to
//! `/ac/` (bazel-remote does) accept it.
//!
//! `ActionResult { output_files: [OutputFile { path, digest: Digest { hash, size_bytes } }] }`
//! in protobuf's wire format, written and read here by hand (four fields; no protobuf
//! dependency). Reading walks every field with bounds checks and skips unknown ones.

/// The path the result blob is recorded under.
pub const OUTPUT_PATH: &str = "skelpack-clip-result";

/// A blob's SHA-256 (lower-case hex) and size.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlobDigest {
    pub hash: String,
    pub size: u64,
}

fn varint(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push((v as u8) | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn field_bytes(out: &mut Vec<u8>, field: u64, bytes: &[u8]) {
    varint(out, field << 3 | 2);
    varint(out, bytes.len() as u64);
    out.extend_from_slice(bytes);
}

/// The `ActionResult` naming blob `hash` of `size` bytes.
pub fn encode(hash: &str, size: u64) -> Vec<u8> {
    let mut digest = Vec::new();
    field_bytes(&mut digest, 1, hash.as_bytes());
    varint(&mut digest, 2 << 3);
    varint(&mut digest, size);
    let mut file = Vec::new();
    field_bytes(&mut file, 1, OUTPUT_PATH.as_bytes());
    field_bytes(&mut file, 2, &digest);
    let mut action = Vec::new();
    field_bytes(&mut action, 2, &file);
    action
}

/// One protobuf field: its number and, for a varint, the value, for bytes, the slice.
enum Value<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

fn read_varint(b: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    for shift in (0..64).step_by(7) {
        let byte = *b.get(*at)?;
        *at += 1;
        v |= u64::from(byte & 0x7f) << shift;
        if byte < 0x80 {
            return Some(v);
        }
    }
    None
}

/// The fields of one message, or `None` if it is malformed.
fn fields(b: &[u8]) -> Option<Vec<(u64, Value<'_>)>> {
    let mut at = 0;
    let mut out = Vec::new();
    while at < b.len() {
        let tag = read_varint(b, &mut at)?;
        let value = match tag & 7 {
            0 => Value::Varint(read_varint(b, &mut at)?),
            1 | 5 => {
                at = at.checked_add(if tag & 7 == 1 { 8 } else { 4 })?;
                (at <= b.len()).then_some(Value::Fixed)?
            }
            2 => {
                let len = usize::try_from(read_varint(b, &mut at)?).ok()?;
                let end = at.checked_add(len).filter(|&e| e <= b.len())?;
                let v = Value::Bytes(&b[at..end]);
                at = end;
                v
            }
            _ => return None,
        };
        out.push((tag >> 3, value));
    }
    Some(out)
}

/// The digest of the result blob an `ActionResult` names, if it is well formed and names one.
pub fn parse(bytes: &[u8]) -> Option<BlobDigest> {
    for (n, v) in fields(bytes)? {
        let (2, Value::Bytes(file)) = (n, v) else {
            continue;
        };
        let file = fields(file)?;
        let path_is_ours = file
            .iter()
            .any(|(n, v)| *n == 1 && matches!(v, Value::Bytes(p) if *p == OUTPUT_PATH.as_bytes()));
        if !path_is_ours {
            continue;
        }
        let (mut hash, mut size) = (None, None);
        for (n, v) in file {
            let (2, Value::Bytes(digest)) = (n, v) else {
                continue;
            };
            for (n, v) in fields(digest)? {
                match (n, v) {
                    (1, Value::Bytes(h)) => hash = std::str::from_utf8(h).ok().map(str::to_owned),
                    (2, Value::Varint(s)) => size = Some(s),
                    _ => {}
                }
            }
        }
        let hash = hash.filter(|h| h.len() == 64 && h.bytes().all(|c| c.is_ascii_hexdigit()))?;
        return Some(BlobDigest {
            hash,
            size: size.unwrap_or(0),
        });
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_action_reads_back_and_a_damaged_one_is_refused() {
        let hash = "ab".repeat(32);
        let bytes = encode(&hash, 123_456);
        assert_eq!(
            parse(&bytes),
            Some(BlobDigest {
                hash: hash.clone(),
                size: 123_456
            })
        );
        for cut in 0..bytes.len() {
            assert_eq!(parse(&bytes[..cut]), None, "cut at {cut}");
        }
        let mut other = bytes.clone();
        let at = bytes.len() - 70;
        other[at] ^= 0x01;
        assert_ne!(parse(&other).map(|d| d.hash), Some(hash));
        assert_eq!(parse(b"\xff\xff\xff"), None);
    }
}
