//! The `.skp` file (docs/FORMAT.md): magic, version, skeleton with names, a directory of
//! clips, their metadata blocks and payloads, CRC-32. [`parse`] validates every length, count and value so
//! decoding stays finite, never panics on bad bytes, and allocates no more than the file
//! could describe.

use std::ops::Range;

use glam::{Quat, Vec3};

use crate::error::Error;

pub const MAGIC: &[u8; 4] = b"SKPK";

/// The version this build writes; it reads [`OLDEST_VERSION`] to this.
pub const VERSION: u16 = 2;
/// The oldest version this build reads (version 1: no clip metadata blocks).
pub const OLDEST_VERSION: u16 = 1;
/// The most joints a clip can hold (its header stores the count in 16 bits).
pub const MAX_JOINTS: usize = u16::MAX as usize;
/// Bytes before the skeleton: magic, version, reserved, joint count, clip count.
pub const HEADER_BYTES: usize = 16;
/// Largest magnitude of any stored translation or scale value, range end or rest value:
/// far beyond any real scene, and small enough that interpolation (a Catmull-Rom segment
/// overshoots its keys by less than 2x) always yields finite numbers.
pub const MAX_MAGNITUDE: f32 = 1e15;
/// Ranged rotations store x, y, z of a unit quaternion: their range lies within this.
pub const MAX_ROTATION_COMPONENT: f32 = 1.0 + 1e-3;
/// The smallest joint record: name length, parent, 10 floats, flags.
const MIN_JOINT_BYTES: usize = 2 + 4 + 40 + 1;

/// One joint as stored: its name (a byte range of the file, valid UTF-8), parent (before
/// it), rest transform (rotation normalized) and whether it deforms a mesh.
#[derive(Clone, Debug, PartialEq)]
pub struct JointRecord {
    pub name: Range<usize>,
    pub parent: Option<usize>,
    pub translation: Vec3,
    pub rotation: Quat,
    pub scale: Vec3,
    pub deforming: bool,
}

/// One clip's directory entry: its name, metadata block ([`crate::meta`]; empty in a
/// version-1 file) and payload, as byte ranges of the file.
#[derive(Clone, Debug, PartialEq)]
pub struct ClipRecord {
    pub name: Range<usize>,
    pub meta: Range<usize>,
    pub payload: Range<usize>,
}

/// A validated file's layout (the clip payloads are validated by
/// [`crate::payload::parse`], their metadata blocks by [`crate::meta::parse`]).
#[derive(Clone, Debug, PartialEq)]
pub struct FileLayout {
    pub version: u16,
    pub joints: Vec<JointRecord>,
    pub clips: Vec<ClipRecord>,
}

/// The text of a validated name range.
pub fn name_of<'a>(bytes: &'a [u8], name: &Range<usize>) -> &'a str {
    std::str::from_utf8(bytes.get(name.clone()).unwrap_or_default()).unwrap_or_default()
}

/// A bounds-checked cursor over bytes.
struct Bytes<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<Range<usize>, Error> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| {
                Error::Corrupt(format!("{what} runs past the end of the file (truncated?)"))
            })?;
        let r = self.at..end;
        self.at = end;
        Ok(r)
    }

    fn array<const N: usize>(&mut self, what: &str) -> Result<[u8; N], Error> {
        let r = self.take(N, what)?;
        let mut a = [0u8; N];
        a.copy_from_slice(&self.b[r]);
        Ok(a)
    }

    fn u16(&mut self, what: &str) -> Result<u16, Error> {
        Ok(u16::from_le_bytes(self.array(what)?))
    }

    fn u32(&mut self, what: &str) -> Result<u32, Error> {
        Ok(u32::from_le_bytes(self.array(what)?))
    }

    fn f32(&mut self, what: &str) -> Result<f32, Error> {
        let x = f32::from_le_bytes(self.array(what)?);
        if x.is_finite() {
            Ok(x)
        } else {
            Err(Error::Corrupt(format!("{what} is not finite")))
        }
    }

    fn name(&mut self, what: &str) -> Result<Range<usize>, Error> {
        let n = self.u16(what)? as usize;
        let r = self.take(n, what)?;
        std::str::from_utf8(&self.b[r.clone()])
            .map_err(|_| Error::Corrupt(format!("{what} is not UTF-8")))?;
        Ok(r)
    }

    fn remaining(&self) -> usize {
        self.b.len() - self.at
    }
}

/// Checks the header and CRC and parses the skeleton and the clip directory.
pub fn parse(bytes: &[u8]) -> Result<FileLayout, Error> {
    if bytes.len() < 4 || &bytes[..4] != MAGIC {
        return Err(Error::BadMagic);
    }
    if bytes.len() < HEADER_BYTES + 4 {
        return Err(Error::Corrupt(
            "file is shorter than its header (truncated?)".into(),
        ));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if !(OLDEST_VERSION..=VERSION).contains(&version) {
        return Err(Error::Version(version));
    }
    if checksum(body) != u32::from_le_bytes([crc[0], crc[1], crc[2], crc[3]]) {
        return Err(Error::Corrupt(
            "checksum mismatch (truncated or damaged file)".into(),
        ));
    }
    let mut b = Bytes { b: body, at: 8 };
    let joint_count = b.u32("joint count")? as usize;
    let clip_count = b.u32("clip count")? as usize;
    if joint_count == 0 || joint_count > b.remaining() / MIN_JOINT_BYTES {
        return Err(Error::Corrupt(format!(
            "joint count {joint_count} does not fit the file"
        )));
    }
    let mut joints = Vec::with_capacity(joint_count);
    for i in 0..joint_count {
        let name = b.name("joint name")?;
        let text = name_of(body, &name);
        let parent = b.u32("joint parent")?;
        let parent = if parent == u32::MAX {
            None
        } else if (parent as usize) < i {
            Some(parent as usize)
        } else {
            return Err(Error::Corrupt(format!(
                "joint {i} '{text}' has parent {parent}, not before it"
            )));
        };
        let mut v = [0f32; 10];
        for x in &mut v {
            *x = b.f32("rest transform")?;
        }
        if v.iter().any(|x| x.abs() > MAX_MAGNITUDE) {
            return Err(Error::Corrupt(format!(
                "joint '{text}' rest transform holds a value beyond {MAX_MAGNITUDE:e}"
            )));
        }
        let q = Quat::from_xyzw(v[3], v[4], v[5], v[6]);
        if (q.length() - 1.0).abs() > 1e-3 {
            return Err(Error::Corrupt(format!(
                "joint '{text}' rest rotation is not a unit quaternion"
            )));
        }
        let deforming = b.array::<1>("joint flags")?[0] & 1 == 1;
        joints.push(JointRecord {
            name,
            parent,
            translation: Vec3::new(v[0], v[1], v[2]),
            rotation: q.normalize(),
            scale: Vec3::new(v[7], v[8], v[9]),
            deforming,
        });
    }
    // A directory entry holds a name length and a payload length (and a metadata length
    // from version 2 on).
    let entry_bytes = if version >= 2 { 10 } else { 6 };
    if clip_count > b.remaining() / entry_bytes {
        return Err(Error::Corrupt(format!(
            "clip count {clip_count} does not fit the file"
        )));
    }
    let mut dir = Vec::with_capacity(clip_count);
    for _ in 0..clip_count {
        let name = b.name("clip name")?;
        let len = b.u32("clip payload length")? as usize;
        let meta_len = if version >= 2 {
            b.u32("clip metadata length")? as usize
        } else {
            0
        };
        dir.push((name, meta_len, len));
    }
    let mut clips = Vec::with_capacity(clip_count);
    for (name, meta_len, len) in dir {
        let clip = name_of(body, &name);
        let meta = b.take(meta_len, &format!("clip '{clip}' metadata"))?;
        let payload = b.take(len, &format!("clip '{clip}' payload"))?;
        clips.push(ClipRecord {
            name,
            meta,
            payload,
        });
    }
    if b.remaining() != 0 {
        return Err(Error::Corrupt(format!(
            "{} unexpected bytes after the last clip",
            b.remaining()
        )));
    }
    Ok(FileLayout {
        version,
        joints,
        clips,
    })
}

/// The container's CRC-32 (ISO-HDLC, the checksum of zlib and PNG) of `bytes`, table-driven
/// sixteen bytes at a time.
pub fn checksum(bytes: &[u8]) -> u32 {
    const CRC32: crc::Crc<u32, crc::Table<16>> =
        crc::Crc::<u32, crc::Table<16>>::new(&crc::CRC_32_ISO_HDLC);
    CRC32.checksum(bytes)
}

#[cfg(test)]
mod tests {
    #[test]
    fn checksum_is_crc32_iso_hdlc() {
        // The catalogue's check value, and the empty input.
        assert_eq!(super::checksum(b"123456789"), 0xCBF4_3926);
        assert_eq!(super::checksum(b""), 0);
    }
}
