//! Writes a clip's metadata block (docs/FORMAT.md; read by
//! [`skelpack_runtime::meta::parse`]): one tagged record per playback flag that is set,
//! and one for the clip's events when it has any.

use skelpack_runtime::meta::{
    BaseKind, TAG_ADDITIVE, TAG_EVENTS, TAG_LOOPING, TAG_ROOT_MOTION, TAG_SCALAR_TRACKS, put_event,
    put_record,
};
use skelpack_runtime::scalar::{STORAGE_F32, STORAGE_UNORM16, put_track};

use crate::model::Event;
use crate::model::event::MAX_EVENT_TEXT;
use crate::model::playback::{Additive, AdditiveBase, Playback};
use crate::model::scalar::{ScalarStorage, StoredScalarTrack};

/// The metadata block of a clip played as `p` (empty for a plain clip).
pub fn write(p: &Playback) -> Vec<u8> {
    let mut out = Vec::new();
    if p.looping {
        put_record(&mut out, TAG_LOOPING, &[]);
    }
    if let Some(m) = &p.root_motion {
        let mut b = Vec::with_capacity(skelpack_runtime::meta::ROOT_MOTION_BYTES);
        b.extend_from_slice(&(m.joint as u32).to_le_bytes());
        for x in m
            .start_translation
            .iter()
            .chain(&m.start_rotation)
            .chain(&m.cycle_translation)
            .chain(&m.cycle_rotation)
        {
            b.extend_from_slice(&x.to_le_bytes());
        }
        put_record(&mut out, TAG_ROOT_MOTION, &b);
    }
    if let Some(a) = &p.additive {
        put_record(&mut out, TAG_ADDITIVE, &additive_record(a));
    }
    if !p.events.is_empty() {
        put_record(&mut out, TAG_EVENTS, &events_record(&p.events));
    }
    if !p.scalar_tracks.is_empty() {
        put_record(
            &mut out,
            TAG_SCALAR_TRACKS,
            &scalar_record(&p.scalar_tracks),
        );
    }
    out
}

/// The scalar-track record (tracks with more targets than 65535 or an empty name cannot
/// be stored and are left out; importers make neither).
fn scalar_record(tracks: &[StoredScalarTrack]) -> Vec<u8> {
    let kept: Vec<&StoredScalarTrack> = tracks
        .iter()
        .filter(|t| {
            !t.name.is_empty()
                && t.name.len() <= u16::MAX as usize
                && (1..=u16::MAX as usize).contains(&t.targets)
                && !t.times.is_empty()
                && t.values.len() == t.times.len() * t.targets
        })
        .collect();
    let mut b = (kept.len() as u32).to_le_bytes().to_vec();
    for t in kept {
        let storage = match t.storage {
            ScalarStorage::Float => STORAGE_F32,
            ScalarStorage::Unorm16 => STORAGE_UNORM16,
        };
        put_track(
            &mut b,
            &t.name,
            t.targets as u16,
            storage,
            t.max_error,
            &t.times,
            &t.values,
        );
    }
    b
}

/// The events record: events sorted by time, times at least 0, empty names and text
/// beyond the record's limits left out (settings and importers refuse them first).
fn events_record(events: &[Event]) -> Vec<u8> {
    let mut kept: Vec<&Event> = events
        .iter()
        .filter(|e| {
            !e.name.is_empty()
                && e.name.len() <= MAX_EVENT_TEXT
                && e.payload.as_ref().is_none_or(|p| p.len() <= MAX_EVENT_TEXT)
                && e.time.is_finite()
        })
        .collect();
    kept.sort_by(|a, b| a.time.total_cmp(&b.time));
    let mut b = (kept.len() as u32).to_le_bytes().to_vec();
    for e in kept {
        put_event(&mut b, e.time.max(0.0), &e.name, e.payload.as_deref());
    }
    b
}

fn additive_record(a: &Additive) -> Vec<u8> {
    let (kind, frame, name) = match &a.base {
        AdditiveBase::Rest => (BaseKind::Rest, 0, ""),
        AdditiveBase::Frame { clip, frame } => (BaseKind::Frame, *frame, clip.as_str()),
        AdditiveBase::Clip { clip } => (BaseKind::Clip, 0, clip.as_str()),
    };
    let name = &name.as_bytes()[..name.len().min(u16::MAX as usize)];
    let mut b = vec![a.mode as u8, kind as u8];
    b.extend_from_slice(&frame.to_le_bytes());
    b.extend_from_slice(&(name.len() as u16).to_le_bytes());
    b.extend_from_slice(name);
    b
}

/// The playback a parsed metadata block describes (`bytes` the file it was read from).
pub fn read(meta: &skelpack_runtime::ClipMeta, bytes: &[u8]) -> Playback {
    let additive = meta.additive.as_ref().map(|a| {
        let clip = skelpack_runtime::read::name_of(bytes, &a.base_clip).to_owned();
        Additive {
            mode: a.mode,
            base: match a.base {
                BaseKind::Rest => AdditiveBase::Rest,
                BaseKind::Frame => AdditiveBase::Frame {
                    clip,
                    frame: a.base_frame,
                },
                BaseKind::Clip => AdditiveBase::Clip { clip },
            },
        }
    });
    let text = |r: &std::ops::Range<usize>| skelpack_runtime::read::name_of(bytes, r).to_owned();
    Playback {
        looping: meta.looping,
        root_motion: meta.root_motion,
        additive,
        events: meta
            .events
            .iter()
            .map(|e| Event {
                name: text(&e.name),
                time: e.time,
                payload: e.payload.as_ref().map(text),
            })
            .collect(),
        scalar_tracks: meta
            .scalar_tracks
            .iter()
            .map(|t| StoredScalarTrack {
                name: text(&t.name),
                targets: t.targets,
                times: (0..t.keys).map(|k| t.time(bytes, k)).collect(),
                values: (0..t.keys * t.targets)
                    .map(|v| match t.storage {
                        STORAGE_UNORM16 => {
                            (t.value(bytes, v / t.targets, v % t.targets) * 65535.0).round()
                        }
                        _ => t.value(bytes, v / t.targets, v % t.targets),
                    })
                    .collect(),
                storage: if t.storage == STORAGE_UNORM16 {
                    ScalarStorage::Unorm16
                } else {
                    ScalarStorage::Float
                },
                max_error: t.max_error,
            })
            .collect(),
    }
}
