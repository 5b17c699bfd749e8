//! A cached clip result as bytes: what `compress` and `report` need back, checked on read.
//!
//! Layout (little-endian): magic `SKPC`, `u32` version, the 32-byte key the result belongs
//! to, then five length-prefixed (`u32`) parts — the clip's name, its `.skp` metadata block
//! and payload (docs/FORMAT.md), its local tolerances (`f32` × 3 per joint) and its report
//! (JSON).
//! Reading checks every length against the bytes left, the key, the payload with the
//! container's own validating reader, and the joint count against the skeleton.

use crate::codec::runtime::to_transform;
use crate::codec::{ClipReport, CompressedClip};
use crate::container::{meta, payload};
use crate::model::Skeleton;

use super::Key;

const MAGIC: &[u8; 4] = b"SKPC";
const VERSION: u32 = 2;

fn part(out: &mut Vec<u8>, bytes: &[u8]) {
    out.extend_from_slice(&(bytes.len() as u32).to_le_bytes());
    out.extend_from_slice(bytes);
}

/// The bytes of `clip`'s result under `key`.
pub fn encode(key: &Key, clip: &CompressedClip) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(key);
    part(&mut out, clip.name.as_bytes());
    part(&mut out, &meta::write(&clip.playback));
    part(&mut out, &payload::write(clip));
    let tolerances: Vec<u8> = clip
        .local_tolerance
        .iter()
        .flatten()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    part(&mut out, &tolerances);
    let report = serde_json::to_vec(&clip.report).expect("a report serializes");
    part(&mut out, &report);
    out
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.bytes.len())
            .ok_or("truncated")?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn part(&mut self) -> Result<&'a [u8], String> {
        let len = u32::from_le_bytes(self.take(4)?.try_into().expect("4 bytes"));
        self.take(len as usize)
    }
}

/// The result stored in `bytes`, if they are one, for `key`, on `skeleton`.
pub fn decode(key: &Key, bytes: &[u8], skeleton: &Skeleton) -> Result<CompressedClip, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a skelpack cache entry".into());
    }
    if r.take(4)? != VERSION.to_le_bytes() {
        return Err("another cache entry version".into());
    }
    if r.take(32)? != key {
        return Err("the entry belongs to another key".into());
    }
    let name = std::str::from_utf8(r.part()?).map_err(|_| "name is not UTF-8")?;
    let meta_bytes = r.part()?;
    let payload_bytes = r.part()?;
    let tolerances = r.part()?;
    let report = r.part()?;
    if r.at != bytes.len() {
        return Err("trailing bytes".into());
    }
    let rest = skeleton.rest_pose();
    let m = skelpack_runtime::meta::parse(meta_bytes, 0..meta_bytes.len(), name, rest.len())
        .map_err(|e| e.to_string())?;
    // As the container reads it: an additive clip's rest tracks decode to its identity.
    let clip_rest = match &m.additive {
        Some(a) => vec![to_transform(&skelpack_runtime::additive::identity(a.mode)); rest.len()],
        None => rest.clone(),
    };
    let mut clip = payload::read(payload_bytes, name, &clip_rest).map_err(|e| e.to_string())?;
    skelpack_runtime::meta::check_event_times(&m, clip.frame_count as u32, clip.sample_rate, name)
        .map_err(|e| e.to_string())?;
    clip.playback = meta::read(&m, meta_bytes);
    if tolerances.len() != rest.len() * 12 {
        return Err("tolerances do not match the skeleton".into());
    }
    clip.local_tolerance = tolerances
        .chunks_exact(12)
        .map(|c| {
            let f = |i: usize| f32::from_le_bytes(c[i * 4..i * 4 + 4].try_into().expect("4"));
            [f(0), f(1), f(2)]
        })
        .collect();
    clip.report = serde_json::from_slice::<ClipReport>(report).map_err(|e| e.to_string())?;
    Ok(clip)
}
