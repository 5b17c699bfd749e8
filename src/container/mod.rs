//! The `.skp` container (docs/FORMAT.md): magic, version, skeleton with names, per clip a
//! metadata block (playback: looping, root motion, additive) and a payload, CRC-32.
//! Version-1 files (no metadata blocks) still open. The reader validates every length, count and value and never panics
//! on bad bytes, nor allocates more than the file could describe.

pub mod bits;
pub mod dense;
pub mod meta;
pub mod payload;

use std::path::Path;

use crate::codec::CompressedClip;
use crate::model::{Joint, Skeleton, Transform};
use skelpack_runtime::read::name_of;

pub use skelpack_runtime::read::{
    MAGIC, MAX_JOINTS, MAX_MAGNITUDE, MAX_ROTATION_COMPONENT, OLDEST_VERSION, VERSION,
};

/// A container that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ContainerError {
    #[error("cannot read: {0}")]
    Io(#[from] std::io::Error),
    #[error("not a skelpack container (bad magic)")]
    BadMagic,
    #[error("unsupported container version {0} (this build reads {OLDEST_VERSION} to {VERSION})")]
    Version(u16),
    #[error("corrupt: {0}")]
    Corrupt(String),
}

impl From<skelpack_runtime::Error> for ContainerError {
    fn from(e: skelpack_runtime::Error) -> Self {
        match e {
            skelpack_runtime::Error::BadMagic => Self::BadMagic,
            skelpack_runtime::Error::Version(v) => Self::Version(v),
            skelpack_runtime::Error::Corrupt(m) => Self::Corrupt(m),
        }
    }
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
    let metas: Vec<Vec<u8>> = clips.iter().map(|c| meta::write(&c.playback)).collect();
    for ((c, p), m) in clips.iter().zip(&payloads).zip(&metas) {
        put_name(&mut out, &c.name);
        out.extend_from_slice(&(p.len() as u32).to_le_bytes());
        out.extend_from_slice(&(m.len() as u32).to_le_bytes());
    }
    for (p, m) in payloads.iter().zip(&metas) {
        out.extend_from_slice(m);
        out.extend_from_slice(p);
    }
    let crc = skelpack_runtime::read::checksum(&out);
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

/// Parses and validates container bytes (with the runtime crate's reader: one decoder).
pub fn from_bytes(bytes: &[u8]) -> Result<Container, ContainerError> {
    let layout = skelpack_runtime::read::parse(bytes)?;
    let body = &bytes[..bytes.len() - 4];
    let joints = layout
        .joints
        .iter()
        .map(|j| {
            let rest = Transform::new(j.translation, j.rotation, j.scale);
            let mut joint = Joint::new(name_of(body, &j.name), j.parent, rest);
            joint.deforming = j.deforming;
            joint
        })
        .collect();
    let skeleton = Skeleton::new(joints).map_err(ContainerError::Corrupt)?;
    let rest = skeleton.rest_pose();
    let clips = layout
        .clips
        .iter()
        .map(|c| {
            let name = name_of(body, &c.name);
            let m = skelpack_runtime::meta::parse(body, c.meta.clone(), name, rest.len())?;
            // An additive clip's rest tracks decode to the identity of its mode.
            let clip_rest: Vec<Transform> = match &m.additive {
                Some(a) => {
                    let id = skelpack_runtime::additive::identity(a.mode);
                    vec![crate::codec::runtime::to_transform(&id); rest.len()]
                }
                None => rest.clone(),
            };
            let mut clip = payload::read(&body[c.payload.clone()], name, &clip_rest)?;
            skelpack_runtime::meta::check_event_times(
                &m,
                clip.frame_count as u32,
                clip.sample_rate,
                name,
            )?;
            clip.playback = meta::read(&m, body);
            Ok(clip)
        })
        .collect::<Result<Vec<_>, ContainerError>>()?;
    Ok(Container { skeleton, clips })
}
