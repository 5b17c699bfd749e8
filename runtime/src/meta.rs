//! A clip's metadata block (`.skp` version 2, docs/FORMAT.md): a list of tagged records
//! (`u16` tag, `u32` length, bytes) saying how the clip is played — looping, root motion,
//! additive on a base. Readers skip tags they do not know, so later versions can add
//! records (events, scalar tracks) that older readers ignore. [`parse`] validates every
//! record it knows and refuses a repeated one.

use std::ops::Range;

use crate::error::Error;

/// The clip loops: its last frame is followed by its first (no payload).
pub const TAG_LOOPING: u16 = 1;
/// A joint's motion is root motion: `u32` joint index, then the source's motion-joint
/// transform at frame 0 and its whole-cycle delta, each as 3 `f32` translation and 4 `f32`
/// rotation (x, y, z, w; unit).
pub const TAG_ROOT_MOTION: u16 = 2;
/// The clip is additive: `u8` mode, `u8` base kind, `u32` base frame, `u16` base clip name
/// length, UTF-8 base clip name.
pub const TAG_ADDITIVE: u16 = 3;
/// The clip's events, sorted by time: `u32` count, then per event `f32` time (seconds
/// from frame 0, finite, at least 0, not before the previous event's), `u16` name length
/// (≥ 1), `u8` 1 when a payload follows (else 0), `u32` payload length (0 without one),
/// the UTF-8 name, the UTF-8 payload.
pub const TAG_EVENTS: u16 = 4;
/// The clip's scalar tracks (morph-target weights): see [`crate::scalar`] for the layout.
pub const TAG_SCALAR_TRACKS: u16 = 5;
/// Bytes of an event's fixed part (time, lengths, payload flag).
pub const EVENT_FIXED_BYTES: usize = 4 + 2 + 1 + 4;
/// Bytes of a record's tag and length.
pub const RECORD_HEADER_BYTES: usize = 6;
/// Bytes of a root-motion record's payload.
pub const ROOT_MOTION_BYTES: usize = 4 + 2 * (12 + 16);
/// Bytes of an additive record's payload before the base clip's name.
pub const ADDITIVE_FIXED_BYTES: usize = 1 + 1 + 4 + 2;

/// How an additive pose is put on a base pose (ACL's additive formats; `base ⊕ additive`,
/// per joint, in local space).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum AdditiveMode {
    /// Transform product: `additive · base` (ACL `relative`).
    Relative = 0,
    /// Translation added, rotation `additive.r · base.r`, scale `base.s · additive.s`
    /// (ACL `additive0`).
    Additive0 = 1,
    /// As `Additive0` with scale `base.s · (1 + additive.s)` (ACL `additive1`).
    Additive1 = 2,
}

impl AdditiveMode {
    /// The mode stored as `code`.
    pub fn from_code(code: u8) -> Option<Self> {
        match code {
            0 => Some(Self::Relative),
            1 => Some(Self::Additive0),
            2 => Some(Self::Additive1),
            _ => None,
        }
    }

    /// The name ACL's SJSON and skelpack's settings use.
    pub fn name(self) -> &'static str {
        match self {
            Self::Relative => "relative",
            Self::Additive0 => "additive0",
            Self::Additive1 => "additive1",
        }
    }
}

/// What an additive clip was made against.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum BaseKind {
    /// The skeleton's rest pose.
    Rest = 0,
    /// One frame of another clip (the base clip, `base_frame`).
    Frame = 1,
    /// Another clip played in sync (same time).
    Clip = 2,
}

/// A root-motion record: which joint carries the motion, its source transform at frame 0
/// (the pose an engine playing the clip in place gives that joint), and the source's
/// motion over one whole cycle (so that playing many cycles accumulates no compression
/// drift).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RootMotion {
    pub joint: usize,
    pub start_translation: [f32; 3],
    pub start_rotation: [f32; 4],
    pub cycle_translation: [f32; 3],
    pub cycle_rotation: [f32; 4],
}

/// An additive record. `base_clip` is a byte range of the file (valid UTF-8; empty for a
/// rest base).
#[derive(Clone, Debug, PartialEq)]
pub struct Additive {
    pub mode: AdditiveMode,
    pub base: BaseKind,
    pub base_frame: u32,
    pub base_clip: Range<usize>,
}

/// One event record. `name` and `payload` are byte ranges of the file (valid UTF-8).
#[derive(Clone, Debug, PartialEq)]
pub struct EventRecord {
    /// Seconds from the clip's frame 0.
    pub time: f32,
    pub name: Range<usize>,
    pub payload: Option<Range<usize>>,
}

/// A clip's metadata (all default for a version-1 file).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ClipMeta {
    pub looping: bool,
    pub root_motion: Option<RootMotion>,
    pub additive: Option<Additive>,
    /// Events sorted by time (empty for files written before events existed).
    pub events: Vec<EventRecord>,
    /// Scalar tracks (empty for files written before they existed).
    pub scalar_tracks: Vec<crate::scalar::ScalarTrackRecord>,
}

fn corrupt(clip: &str, what: &str) -> Error {
    Error::Corrupt(format!("clip '{clip}' metadata: {what}"))
}

fn u32_at(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn f32_at(b: &[u8], at: usize) -> f32 {
    f32::from_bits(u32_at(b, at))
}

/// A translation and unit rotation (7 `f32`) at `at` of `b`, checked finite, within
/// [`crate::read::MAX_MAGNITUDE`] and unit; the rotation is returned normalized.
fn rigid_at(b: &[u8], at: usize, clip: &str) -> Result<([f32; 3], [f32; 4]), Error> {
    let t: [f32; 3] = std::array::from_fn(|i| f32_at(b, at + 4 * i));
    let r: [f32; 4] = std::array::from_fn(|i| f32_at(b, at + 12 + 4 * i));
    let finite = t.iter().chain(&r).all(|x| x.is_finite());
    if !finite || t.iter().any(|x| x.abs() > crate::read::MAX_MAGNITUDE) {
        return Err(corrupt(
            clip,
            "a root-motion transform is not finite or too large",
        ));
    }
    let norm = r.iter().map(|x| x * x).sum::<f32>().sqrt();
    if (norm - 1.0).abs() > 1e-3 {
        return Err(corrupt(
            clip,
            "a root-motion rotation is not a unit quaternion",
        ));
    }
    Ok((t, r.map(|x| x / norm)))
}

/// Parses the metadata block at `range` of the file `bytes`, for a clip named `clip` of a
/// skeleton of `joints` joints. Records fill the block exactly; a known record with a wrong
/// length or value, or one that repeats, is an error; unknown tags are skipped.
pub fn parse(
    bytes: &[u8],
    range: Range<usize>,
    clip: &str,
    joints: usize,
) -> Result<ClipMeta, Error> {
    let mut meta = ClipMeta::default();
    let mut seen = [false; 6];
    let mut at = range.start;
    let end = range.end.min(bytes.len());
    while at < end {
        if end - at < RECORD_HEADER_BYTES {
            return Err(corrupt(clip, "a record header runs past the block"));
        }
        let tag = u16::from_le_bytes([bytes[at], bytes[at + 1]]);
        let len = u32_at(bytes, at + 2) as usize;
        let body = at + RECORD_HEADER_BYTES;
        if len > end - body {
            return Err(corrupt(clip, &format!("record {tag} runs past the block")));
        }
        let b = &bytes[body..body + len];
        if let Some(s) = seen.get_mut(tag as usize) {
            if *s {
                return Err(corrupt(clip, &format!("record {tag} appears twice")));
            }
            *s = true;
        }
        match tag {
            TAG_LOOPING => {
                if len != 0 {
                    return Err(corrupt(clip, "the looping record is not empty"));
                }
                meta.looping = true;
            }
            TAG_ROOT_MOTION => {
                if len != ROOT_MOTION_BYTES {
                    return Err(corrupt(clip, "the root-motion record has the wrong length"));
                }
                let joint = u32_at(b, 0) as usize;
                if joint >= joints {
                    return Err(corrupt(
                        clip,
                        &format!("root-motion joint {joint} not in the skeleton"),
                    ));
                }
                let (start_translation, start_rotation) = rigid_at(b, 4, clip)?;
                let (cycle_translation, cycle_rotation) = rigid_at(b, 32, clip)?;
                meta.root_motion = Some(RootMotion {
                    joint,
                    start_translation,
                    start_rotation,
                    cycle_translation,
                    cycle_rotation,
                });
            }
            TAG_ADDITIVE => {
                if len < ADDITIVE_FIXED_BYTES {
                    return Err(corrupt(clip, "the additive record is too short"));
                }
                let mode = AdditiveMode::from_code(b[0])
                    .ok_or_else(|| corrupt(clip, &format!("additive mode {} unknown", b[0])))?;
                let base = match b[1] {
                    0 => BaseKind::Rest,
                    1 => BaseKind::Frame,
                    2 => BaseKind::Clip,
                    k => return Err(corrupt(clip, &format!("additive base kind {k} unknown"))),
                };
                let base_frame = u32_at(b, 2);
                let name_len = u16::from_le_bytes([b[6], b[7]]) as usize;
                if name_len != len - ADDITIVE_FIXED_BYTES {
                    return Err(corrupt(
                        clip,
                        "the additive record's base name length is wrong",
                    ));
                }
                let name = body + ADDITIVE_FIXED_BYTES..body + len;
                if std::str::from_utf8(&bytes[name.clone()]).is_err() {
                    return Err(corrupt(clip, "the additive base name is not UTF-8"));
                }
                if (base == BaseKind::Rest) != name.is_empty() {
                    return Err(corrupt(
                        clip,
                        "an additive base names a clip exactly when it is not the rest pose",
                    ));
                }
                meta.additive = Some(Additive {
                    mode,
                    base,
                    base_frame,
                    base_clip: name,
                });
            }
            TAG_EVENTS => meta.events = events(bytes, body..body + len, clip)?,
            TAG_SCALAR_TRACKS => {
                meta.scalar_tracks = crate::scalar::parse(bytes, body..body + len, clip)?
            }
            _ => {}
        }
        at = body + len;
    }
    Ok(meta)
}

/// The events record at `range` of `bytes` (see [`TAG_EVENTS`]), validated.
fn events(bytes: &[u8], range: Range<usize>, clip: &str) -> Result<Vec<EventRecord>, Error> {
    let b = &bytes[range.clone()];
    if b.len() < 4 {
        return Err(corrupt(clip, "the events record is too short"));
    }
    let count = u32_at(b, 0) as usize;
    // Every event takes at least its fixed part and one name byte.
    if count > (b.len() - 4) / (EVENT_FIXED_BYTES + 1) {
        return Err(corrupt(clip, "the event count exceeds the record"));
    }
    let mut out = Vec::with_capacity(count);
    let mut at = 4;
    let mut last = 0.0f32;
    for i in 0..count {
        if b.len() - at < EVENT_FIXED_BYTES {
            return Err(corrupt(clip, &format!("event {i} runs past the record")));
        }
        let time = f32_at(b, at);
        let name_len = u16::from_le_bytes([b[at + 4], b[at + 5]]) as usize;
        let has_payload = b[at + 6];
        let payload_len = u32_at(b, at + 7) as usize;
        at += EVENT_FIXED_BYTES;
        if !time.is_finite() || time < last {
            return Err(corrupt(
                clip,
                &format!("event {i}'s time {time} is not finite or before the previous one"),
            ));
        }
        last = time;
        if name_len == 0 || has_payload > 1 || (has_payload == 0 && payload_len != 0) {
            return Err(corrupt(
                clip,
                &format!("event {i} has a bad name or payload"),
            ));
        }
        if payload_len > b.len() - at || name_len > b.len() - at - payload_len {
            return Err(corrupt(clip, &format!("event {i} runs past the record")));
        }
        let name = range.start + at..range.start + at + name_len;
        let payload = name.end..name.end + payload_len;
        at += name_len + payload_len;
        let utf8 = |r: &Range<usize>| std::str::from_utf8(&bytes[r.clone()]).is_ok();
        if !utf8(&name) || !utf8(&payload) {
            return Err(corrupt(clip, &format!("event {i}'s text is not UTF-8")));
        }
        out.push(EventRecord {
            time,
            name,
            payload: (has_payload == 1).then_some(payload),
        });
    }
    if at != b.len() {
        return Err(corrupt(
            clip,
            "the events record has bytes after its last event",
        ));
    }
    Ok(out)
}

/// Checks that no event lies after the end of its clip (`frame_count` frames at `rate`):
/// what a metadata block cannot check alone, every reader checks once the payload is read.
pub fn check_event_times(
    meta: &ClipMeta,
    frame_count: u32,
    rate: f32,
    clip: &str,
) -> Result<(), Error> {
    let duration = frame_count.saturating_sub(1) as f32 / rate;
    match meta
        .events
        .iter()
        .find(|e| e.time > duration * (1.0 + 1e-6))
    {
        Some(e) => Err(corrupt(
            clip,
            &format!(
                "an event at {} s lies after the clip's end ({duration} s)",
                e.time
            ),
        )),
        None => Ok(()),
    }
}

/// Writes one event of an events record (after its `u32` count).
pub fn put_event(out: &mut Vec<u8>, time: f32, name: &str, payload: Option<&str>) {
    out.extend_from_slice(&time.to_le_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes());
    out.push(payload.is_some() as u8);
    let p = payload.unwrap_or("");
    out.extend_from_slice(&(p.len() as u32).to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(p.as_bytes());
}

/// Writes one record.
pub fn put_record(out: &mut Vec<u8>, tag: u16, body: &[u8]) {
    out.extend_from_slice(&tag.to_le_bytes());
    out.extend_from_slice(&(body.len() as u32).to_le_bytes());
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn looping_and_root_motion() -> Vec<u8> {
        let mut b = Vec::new();
        put_record(&mut b, TAG_LOOPING, &[]);
        let mut rm = 1u32.to_le_bytes().to_vec();
        for x in [
            0.0f32, 1.0, 2.0, 0.0, 0.0, 0.0, 1.0, 0.5, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0,
        ] {
            rm.extend_from_slice(&x.to_le_bytes());
        }
        put_record(&mut b, TAG_ROOT_MOTION, &rm);
        b
    }

    #[test]
    fn records_are_read_and_unknown_tags_skipped() {
        let mut b = looping_and_root_motion();
        put_record(&mut b, 999, b"a later record");
        let m = parse(&b, 0..b.len(), "c", 2).unwrap();
        assert!(m.looping);
        let r = m.root_motion.unwrap();
        assert_eq!(r.joint, 1);
        assert_eq!(r.start_translation, [0.0, 1.0, 2.0]);
        assert_eq!(r.cycle_translation, [0.5, 0.0, 0.0]);
        assert!(m.additive.is_none());
    }

    fn two_events() -> Vec<u8> {
        let mut body = 2u32.to_le_bytes().to_vec();
        put_event(&mut body, 0.25, "step_l", None);
        put_event(&mut body, 0.5, "hit", Some("sfx/hit.wav"));
        let mut b = Vec::new();
        put_record(&mut b, TAG_EVENTS, &body);
        b
    }

    #[test]
    fn events_are_read_and_checked() {
        let b = two_events();
        let m = parse(&b, 0..b.len(), "c", 1).unwrap();
        assert_eq!(m.events.len(), 2);
        assert_eq!(m.events[0].time, 0.25);
        assert_eq!(&b[m.events[0].name.clone()], b"step_l");
        assert_eq!(m.events[0].payload, None);
        assert_eq!(&b[m.events[1].payload.clone().unwrap()], b"sfx/hit.wav");
        // Every cut is refused (the record runs past the block or ends mid-event).
        for cut in 1..b.len() {
            assert!(parse(&b, 0..cut, "c", 1).is_err(), "cut {cut}");
        }
        // Out of order, a NaN time, an empty name.
        let time_at = RECORD_HEADER_BYTES + 4;
        for (at, v) in [
            (time_at, 0.75f32.to_le_bytes()),
            (time_at, f32::NAN.to_le_bytes()),
        ] {
            let mut bad = b.clone();
            bad[at..at + 4].copy_from_slice(&v);
            assert!(parse(&bad, 0..bad.len(), "c", 1).is_err());
        }
        let mut bad = b.clone();
        bad[time_at + 4] = 0;
        assert!(parse(&bad, 0..bad.len(), "c", 1).is_err());
    }

    #[test]
    fn bad_records_are_refused() {
        let b = looping_and_root_motion();
        // The root-motion joint beyond the skeleton.
        assert!(parse(&b, 0..b.len(), "c", 1).is_err());
        // Every cut short of the end (a record runs past the block) but the one after the
        // looping record.
        for cut in 1..b.len() {
            let r = parse(&b, 0..cut, "c", 2);
            assert_eq!(r.is_ok(), cut == RECORD_HEADER_BYTES, "cut {cut}");
        }
        // A repeated record.
        let mut twice = b.clone();
        put_record(&mut twice, TAG_LOOPING, &[]);
        let e = parse(&twice, 0..twice.len(), "c", 2).unwrap_err();
        assert!(e.to_string().contains("twice"), "{e}");
        // An additive record with an unknown mode, and one naming a clip for a rest base.
        for body in [[7u8, 0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 0, 0, 0, 1, 0]] {
            let mut a = Vec::new();
            let mut body = body.to_vec();
            if body[6] == 1 {
                body.push(b'x');
            }
            put_record(&mut a, TAG_ADDITIVE, &body);
            assert!(parse(&a, 0..a.len(), "c", 2).is_err());
        }
    }
}
