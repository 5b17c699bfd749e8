//! The `.skp` container (docs/FORMAT.md): magic, version, skeleton with names, one payload
//! per clip, CRC-32. The reader validates every length, count and value and never panics
//! on bad bytes, nor allocates more than the file could describe.

pub mod bits;
pub mod dense;
pub mod payload;

use std::path::Path;

use glam::{Quat, Vec3};

use crate::codec::CompressedClip;
use crate::model::{Joint, Skeleton, Transform};

pub const MAGIC: &[u8; 4] = b"SKPK";
pub const VERSION: u16 = 1;
/// The most joints a clip can hold (its header stores the count in 16 bits).
pub const MAX_JOINTS: usize = u16::MAX as usize;
const HEADER_BYTES: usize = 16;
/// Largest magnitude of any stored translation or scale value, range end or rest value:
/// far beyond any real scene, and small enough that interpolation (a Catmull-Rom segment
/// overshoots its keys by less than 2x) always yields finite numbers.
pub const MAX_MAGNITUDE: f32 = 1e15;
/// Ranged rotations store x, y, z of a unit quaternion: their range lies within this.
pub const MAX_ROTATION_COMPONENT: f32 = 1.0 + 1e-3;
/// The smallest joint record: name length, parent, 10 floats, flags.
const MIN_JOINT_BYTES: usize = 2 + 4 + 40 + 1;

/// A container that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a skelpack container (bad magic)")]
    BadMagic,
    #[error("unsupported container version {0} (this build reads {VERSION})")]
    Version(u16),
    #[error("corrupt: {0}")]
    Corrupt(String),
}

/// A decoded container: the skeleton and its compressed clips.
#[derive(Clone, Debug)]
pub struct Container {
    pub skeleton: Skeleton,
    pub clips: Vec<CompressedClip>,
}

/// Serializes a skeleton and its clips.
pub fn to_bytes(skeleton: &Skeleton, clips: &[CompressedClip]) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&VERSION.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out.extend_from_slice(&(skeleton.len() as u32).to_le_bytes());
    out.extend_from_slice(&(clips.len() as u32).to_le_bytes());
    for j in &skeleton.joints {
        put_name(&mut out, &j.name);
        out.extend_from_slice(&j.parent.map_or(u32::MAX, |p| p as u32).to_le_bytes());
        let r = &j.rest;
        for x in r
            .translation
            .to_array()
            .into_iter()
            .chain(r.rotation.to_array())
            .chain(r.scale.to_array())
        {
            out.extend_from_slice(&x.to_le_bytes());
        }
        out.push(j.deforming as u8);
    }
    let payloads: Vec<Vec<u8>> = clips.iter().map(payload::write).collect();
    for (c, p) in clips.iter().zip(&payloads) {
        put_name(&mut out, &c.name);
        out.extend_from_slice(&(p.len() as u32).to_le_bytes());
    }
    for p in &payloads {
        out.extend_from_slice(p);
    }
    let crc = crc32fast::hash(&out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// Writes a container atomically, after checking that the validating reader accepts the
/// bytes (so skelpack never writes a file it would refuse to read).
pub fn write(path: &Path, skeleton: &Skeleton, clips: &[CompressedClip]) -> std::io::Result<u64> {
    if skeleton.len() > MAX_JOINTS {
        return Err(std::io::Error::other(format!(
            "a .skp holds at most {MAX_JOINTS} joints (a clip's joint count is 16 bits); this \
             skeleton has {} (write glTF instead)",
            skeleton.len()
        )));
    }
    let bytes = to_bytes(skeleton, clips);
    from_bytes(&bytes).map_err(|e| std::io::Error::other(format!("cannot be stored: {e}")))?;
    crate::fsutil::write_atomic(path, &bytes)?;
    Ok(bytes.len() as u64)
}

/// Reads and validates a container file.
pub fn read(path: &Path) -> Result<Container, ContainerError> {
    from_bytes(&std::fs::read(path)?)
}

fn put_name(out: &mut Vec<u8>, name: &str) {
    let b = name.as_bytes();
    let n = b.len().min(u16::MAX as usize);
    out.extend_from_slice(&(n as u16).to_le_bytes());
    out.extend_from_slice(&b[..n]);
}

/// A bounds-checked cursor over bytes.
struct Bytes<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Bytes<'a> {
    fn take(&mut self, n: usize, what: &str) -> Result<&'a [u8], ContainerError> {
        let end = self
            .at
            .checked_add(n)
            .filter(|&e| e <= self.b.len())
            .ok_or_else(|| {
                ContainerError::Corrupt(format!(
                    "{what} runs past the end of the file (truncated?)"
                ))
            })?;
        let s = &self.b[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn u16(&mut self, what: &str) -> Result<u16, ContainerError> {
        Ok(u16::from_le_bytes(
            self.take(2, what)?.try_into().expect("2"),
        ))
    }

    fn u32(&mut self, what: &str) -> Result<u32, ContainerError> {
        Ok(u32::from_le_bytes(
            self.take(4, what)?.try_into().expect("4"),
        ))
    }

    fn f32(&mut self, what: &str) -> Result<f32, ContainerError> {
        let x = f32::from_le_bytes(self.take(4, what)?.try_into().expect("4"));
        if x.is_finite() {
            Ok(x)
        } else {
            Err(ContainerError::Corrupt(format!("{what} is not finite")))
        }
    }

    fn name(&mut self, what: &str) -> Result<String, ContainerError> {
        let n = self.u16(what)? as usize;
        let s = self.take(n, what)?;
        String::from_utf8(s.to_vec())
            .map_err(|_| ContainerError::Corrupt(format!("{what} is not UTF-8")))
    }

    fn remaining(&self) -> usize {
        self.b.len() - self.at
    }
}

/// Parses and validates container bytes.
pub fn from_bytes(bytes: &[u8]) -> Result<Container, ContainerError> {
    if bytes.len() < 4 || &bytes[..4] != MAGIC {
        return Err(ContainerError::BadMagic);
    }
    if bytes.len() < HEADER_BYTES + 4 {
        return Err(ContainerError::Corrupt(
            "file is shorter than its header (truncated?)".into(),
        ));
    }
    let (body, crc) = bytes.split_at(bytes.len() - 4);
    let version = u16::from_le_bytes([bytes[4], bytes[5]]);
    if version != VERSION {
        return Err(ContainerError::Version(version));
    }
    if crc32fast::hash(body) != u32::from_le_bytes(crc.try_into().expect("4")) {
        return Err(ContainerError::Corrupt(
            "checksum mismatch (truncated or damaged file)".into(),
        ));
    }
    let mut b = Bytes { b: body, at: 8 };
    let joint_count = b.u32("joint count")? as usize;
    let clip_count = b.u32("clip count")? as usize;
    if joint_count == 0 || joint_count > b.remaining() / MIN_JOINT_BYTES {
        return Err(ContainerError::Corrupt(format!(
            "joint count {joint_count} does not fit the file"
        )));
    }
    let mut joints = Vec::with_capacity(joint_count);
    for i in 0..joint_count {
        let name = b.name("joint name")?;
        let parent = b.u32("joint parent")?;
        let parent = if parent == u32::MAX {
            None
        } else if (parent as usize) < i {
            Some(parent as usize)
        } else {
            return Err(ContainerError::Corrupt(format!(
                "joint {i} '{name}' has parent {parent}, not before it"
            )));
        };
        let mut v = [0f32; 10];
        for x in &mut v {
            *x = b.f32("rest transform")?;
        }
        if v.iter().any(|x| x.abs() > MAX_MAGNITUDE) {
            return Err(ContainerError::Corrupt(format!(
                "joint '{name}' rest transform holds a value beyond {MAX_MAGNITUDE:e}"
            )));
        }
        let q = Quat::from_xyzw(v[3], v[4], v[5], v[6]);
        if (q.length() - 1.0).abs() > 1e-3 {
            return Err(ContainerError::Corrupt(format!(
                "joint '{name}' rest rotation is not a unit quaternion"
            )));
        }
        let rest = Transform::new(
            Vec3::new(v[0], v[1], v[2]),
            q.normalize(),
            Vec3::new(v[7], v[8], v[9]),
        );
        let mut j = Joint::new(name, parent, rest);
        j.deforming = b.take(1, "joint flags")?[0] & 1 == 1;
        joints.push(j);
    }
    let skeleton = Skeleton::new(joints).map_err(ContainerError::Corrupt)?;
    if clip_count > b.remaining() / 6 {
        return Err(ContainerError::Corrupt(format!(
            "clip count {clip_count} does not fit the file"
        )));
    }
    let mut dir = Vec::with_capacity(clip_count);
    for _ in 0..clip_count {
        let name = b.name("clip name")?;
        let len = b.u32("clip payload length")? as usize;
        dir.push((name, len));
    }
    let rest = skeleton.rest_pose();
    let mut clips = Vec::with_capacity(clip_count);
    for (name, len) in dir {
        let p = b.take(len, &format!("clip '{name}' payload"))?;
        clips.push(payload::read(p, &name, &rest)?);
    }
    if b.remaining() != 0 {
        return Err(ContainerError::Corrupt(format!(
            "{} unexpected bytes after the last clip",
            b.remaining()
        )));
    }
    Ok(Container { skeleton, clips })
}
