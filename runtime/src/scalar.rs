//! Scalar tracks (`.skp` metadata record 5, docs/FORMAT.md): per clip, named curves of
//! `targets` floats per key — a mesh's morph-target weights — kept linear between their
//! keys. [`parse`] validates the record; [`ScalarTrackRecord::sample`] evaluates a track
//! straight from the file's bytes (no allocation).
//!
//! Record layout: `u32` track count, then per track `u16` name length (≥ 1), `u16` targets
//! (≥ 1), `u32` keys (≥ 1), `u8` storage ([`STORAGE_F32`] or [`STORAGE_UNORM16`]), `f32`
//! the largest error the compressor measured (scene units of vertex displacement,
//! informative), the UTF-8 name, `keys` `f32` key times (seconds from the clip's frame 0,
//! finite, at least 0, increasing), and `keys × targets` values, key by key: `f32` (finite)
//! or `u16` (the weight × 65535, rounded).

use std::ops::Range;

use crate::error::Error;

/// Values stored as `f32`.
pub const STORAGE_F32: u8 = 0;
/// Values stored as `u16`: `value = stored / 65535` (normalized unsigned 16-bit).
pub const STORAGE_UNORM16: u8 = 1;
/// Bytes of a track's fixed part (name length, targets, keys, storage, error).
pub const TRACK_FIXED_BYTES: usize = 2 + 2 + 4 + 1 + 4;

/// One scalar track of a clip: byte ranges of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarTrackRecord {
    /// The track's name (valid UTF-8): the node whose mesh's weights it drives.
    pub name: Range<usize>,
    pub targets: usize,
    pub keys: usize,
    /// [`STORAGE_F32`] or [`STORAGE_UNORM16`].
    pub storage: u8,
    /// The largest vertex displacement (scene units) the compressor measured against the
    /// source (informative).
    pub max_error: f32,
    /// `keys` `f32` times.
    pub times: Range<usize>,
    /// `keys × targets` values.
    pub values: Range<usize>,
}

fn corrupt(clip: &str, what: &str) -> Error {
    Error::Corrupt(format!("clip '{clip}' scalar tracks: {what}"))
}

fn u16_at(b: &[u8], at: usize) -> u16 {
    u16::from_le_bytes([b[at], b[at + 1]])
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(b, at))
}

/// The scalar-track record at `range` of `bytes`, validated (see the module documentation).
pub fn parse(
    bytes: &[u8],
    range: Range<usize>,
    clip: &str,
) -> Result<Vec<ScalarTrackRecord>, Error> {
    let b = &bytes[range.clone()];
    if b.len() < 4 {
        return Err(corrupt(clip, "the record is too short"));
    }
    let count = u32_at(b, 0) as usize;
    // Every track takes at least its fixed part, a name byte, a time and a value.
    if count > (b.len() - 4) / (TRACK_FIXED_BYTES + 1 + 4 + 2) {
        return Err(corrupt(clip, "the track count exceeds the record"));
    }
    let mut out = Vec::with_capacity(count);
    let mut at = 4;
    for i in 0..count {
        if b.len() - at < TRACK_FIXED_BYTES {
            return Err(corrupt(clip, &format!("track {i} runs past the record")));
        }
        let name_len = u16_at(b, at) as usize;
        let targets = u16_at(b, at + 2) as usize;
        let keys = u32_at(b, at + 4) as usize;
        let storage = b[at + 8];
        let max_error = f32_at(b, at + 9);
        at += TRACK_FIXED_BYTES;
        if name_len == 0 || targets == 0 || keys == 0 {
            return Err(corrupt(clip, &format!("track {i} is empty")));
        }
        let width = match storage {
            STORAGE_F32 => 4,
            STORAGE_UNORM16 => 2,
            s => return Err(corrupt(clip, &format!("track {i}: storage {s} unknown"))),
        };
        if !(max_error.is_finite() && max_error >= 0.0) {
            return Err(corrupt(clip, &format!("track {i}: bad error {max_error}")));
        }
        let left = (b.len() - at) as u64;
        let need = name_len as u64 + keys as u64 * 4 + keys as u64 * targets as u64 * width;
        if need > left {
            return Err(corrupt(clip, &format!("track {i} runs past the record")));
        }
        let name = range.start + at..range.start + at + name_len;
        if std::str::from_utf8(&bytes[name.clone()]).is_err() {
            return Err(corrupt(clip, &format!("track {i}'s name is not UTF-8")));
        }
        at += name_len;
        let times = range.start + at..range.start + at + keys * 4;
        let mut last = 0.0f32;
        for k in 0..keys {
            let t = f32_at(b, at + 4 * k);
            if !t.is_finite() || t < last || (k > 0 && t == last) {
                return Err(corrupt(
                    clip,
                    &format!("track {i}: key time {t} is not finite, negative or increasing"),
                ));
            }
            last = t;
        }
        at += keys * 4;
        let n = keys * targets * width as usize;
        let values = range.start + at..range.start + at + n;
        if storage == STORAGE_F32 && (0..keys * targets).any(|v| !f32_at(b, at + 4 * v).is_finite())
        {
            return Err(corrupt(clip, &format!("track {i}: a value is not finite")));
        }
        at += n;
        out.push(ScalarTrackRecord {
            name,
            targets,
            keys,
            storage,
            max_error,
            times,
            values,
        });
    }
    if at != b.len() {
        return Err(corrupt(clip, "bytes after the last track"));
    }
    Ok(out)
}

impl ScalarTrackRecord {
    /// Key `k`'s time (seconds from frame 0).
    pub fn time(&self, bytes: &[u8], k: usize) -> f32 {
        f32_at(bytes, self.times.start + 4 * k)
    }

    /// Value `target` of key `k`.
    pub fn value(&self, bytes: &[u8], k: usize, target: usize) -> f32 {
        let v = k * self.targets + target;
        match self.storage {
            STORAGE_UNORM16 => u16_at(bytes, self.values.start + 2 * v) as f32 / 65535.0,
            _ => f32_at(bytes, self.values.start + 4 * v),
        }
    }

    /// Every target's value at `seconds` from frame 0 into `out` (its first
    /// `min(out.len(), targets)` entries): linear between keys, held before the first key
    /// and after the last. Allocates nothing.
    pub fn sample(&self, bytes: &[u8], seconds: f32, out: &mut [f32]) {
        let n = self.targets.min(out.len());
        // The first key after `seconds` (keys are increasing).
        let (mut lo, mut hi) = (0, self.keys);
        while lo < hi {
            let mid = (lo + hi) / 2;
            if self.time(bytes, mid) <= seconds {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        if lo == 0 || lo == self.keys {
            let k = lo.saturating_sub(1);
            for (i, o) in out[..n].iter_mut().enumerate() {
                *o = self.value(bytes, k, i);
            }
            return;
        }
        let (a, b) = (lo - 1, lo);
        let (ta, tb) = (self.time(bytes, a), self.time(bytes, b));
        let u = ((seconds - ta) / (tb - ta)).clamp(0.0, 1.0);
        for (i, o) in out[..n].iter_mut().enumerate() {
            let (va, vb) = (self.value(bytes, a, i), self.value(bytes, b, i));
            *o = va + (vb - va) * u;
        }
    }
}

/// Writes one track of a scalar-track record (after its `u32` count). `values` holds
/// `times.len() × targets` entries: `f32` values, or for [`STORAGE_UNORM16`] the stored
/// `u16`s as `f32` integers.
pub fn put_track(
    out: &mut Vec<u8>,
    name: &str,
    targets: u16,
    storage: u8,
    max_error: f32,
    times: &[f32],
    values: &[f32],
) {
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.extend_from_slice(&targets.to_le_bytes());
    out.extend_from_slice(&(times.len() as u32).to_le_bytes());
    out.push(storage);
    out.extend_from_slice(&max_error.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    for t in times {
        out.extend_from_slice(&t.to_le_bytes());
    }
    for &v in values {
        if storage == STORAGE_UNORM16 {
            out.extend_from_slice(&(v as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&v.to_le_bytes());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record() -> Vec<u8> {
        let mut b = 2u32.to_le_bytes().to_vec();
        put_track(
            &mut b,
            "Face",
            2,
            STORAGE_F32,
            1e-5,
            &[0.0, 1.0],
            &[0.0, 1.0, 1.0, 0.5],
        );
        put_track(&mut b, "Eyes", 1, STORAGE_UNORM16, 0.0, &[0.5], &[65535.0]);
        b
    }

    #[test]
    fn tracks_are_read_and_sampled() {
        let b = record();
        let t = parse(&b, 0..b.len(), "c").unwrap();
        assert_eq!(t.len(), 2);
        assert_eq!(&b[t[0].name.clone()], b"Face");
        let mut w = [0.0; 2];
        t[0].sample(&b, 0.25, &mut w);
        assert_eq!(w, [0.25, 0.875]);
        t[0].sample(&b, 7.0, &mut w);
        assert_eq!(w, [1.0, 0.5]);
        t[0].sample(&b, -1.0, &mut w);
        assert_eq!(w, [0.0, 1.0]);
        let mut one = [0.0; 1];
        t[1].sample(&b, 0.0, &mut one);
        assert_eq!(one, [1.0]);
    }

    #[test]
    fn bad_records_are_refused() {
        let b = record();
        for cut in 0..b.len() {
            assert!(parse(&b[..cut], 0..cut, "c").is_err(), "cut {cut}");
        }
        // Times out of order, an unknown storage, a NaN value.
        let first = 4 + TRACK_FIXED_BYTES + 4;
        for (at, v) in [
            (first, 2.0f32.to_le_bytes()),
            (first + 8, f32::NAN.to_le_bytes()),
        ] {
            let mut bad = b.clone();
            bad[at..at + 4].copy_from_slice(&v);
            assert!(parse(&bad, 0..bad.len(), "c").is_err());
        }
        let mut bad = b.clone();
        bad[4 + 8] = 9;
        assert!(parse(&bad, 0..bad.len(), "c").is_err());
    }
}
