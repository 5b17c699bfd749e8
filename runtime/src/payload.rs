//! One clip's payload (docs/FORMAT.md): a 24-byte header, a metadata bit stream (track
//! classes, constants, descriptors, ranges, key times) and a key block holding every
//! animated key's code in the order forward playback first needs it. [`parse`] validates
//! it and decodes every key.

use glam::{Quat, Vec4};

use crate::bits::{BitReader, OutOfBits};
use crate::curve::{Interpolation, align_hemispheres};
use crate::error::Error;
use crate::predict::{Codes, SEGMENT_KEYS, WIDTH_BITS, predict, unzigzag};
use crate::quant::{KeyFormat, KeyRange, decode};
use crate::read::{MAX_MAGNITUDE, MAX_ROTATION_COMPONENT};

pub const CLASS_REST: u32 = 0;
pub const CLASS_CONSTANT: u32 = 1;
pub const CLASS_ANIMATED: u32 = 2;
pub const FORMAT_S3: u32 = 0;
pub const FORMAT_RANGED_ROTATION: u32 = 1;
pub const FORMAT_RANGED_VECTOR: u32 = 2;
pub const FORMAT_S3_WIDE: u32 = 3;
/// Bytes of a payload's header.
pub const CLIP_HEADER_BYTES: usize = 24;
/// Largest frame count a clip may declare (about 23 hours at 120 fps).
pub const MAX_FRAMES: u32 = 10_000_000;

/// Bits of the key-count field: enough for `frame_count`.
pub fn count_bits(frame_count: usize) -> u32 {
    32 - (frame_count as u32).leading_zeros()
}

/// Frames after which key `i` of a track is first needed by forward playback: a linear
/// segment needs its two ends, a Catmull-Rom segment also the key before and after.
pub fn need_frame(frames: &[u32], interpolation: Interpolation, i: usize) -> u32 {
    let lag = match interpolation {
        Interpolation::Linear => 1,
        Interpolation::CatmullRom => 2,
    };
    frames[i.saturating_sub(lag)]
}

/// Every animated key as `(track, key)` in key-block order, from each track's key frames
/// and interpolation.
pub fn key_order<'a>(
    tracks: impl Iterator<Item = (&'a [u32], Interpolation)>,
) -> Vec<(usize, usize)> {
    let mut all: Vec<(u32, usize, usize)> = Vec::new();
    for (t, (frames, interpolation)) in tracks.enumerate() {
        for i in 0..frames.len() {
            all.push((need_frame(frames, interpolation, i), t, i));
        }
    }
    all.sort_unstable();
    all.into_iter().map(|(_, t, i)| (t, i)).collect()
}

/// The components a ranged format stores (those whose range varies); none for S3.
pub fn stored_components(format: KeyFormat, range: &KeyRange) -> impl Iterator<Item = usize> {
    let ranged = !matches!(
        format,
        KeyFormat::SmallestThree48 | KeyFormat::SmallestThreeWide { .. }
    );
    let extent = range.extent;
    (0..3).filter(move |&c| ranged && extent[c] > 0.0)
}

/// Reads one value's codes in `format` (ranged formats: only the varying components).
pub fn get_codes(
    r: &mut BitReader,
    format: KeyFormat,
    range: &KeyRange,
) -> Result<Codes, OutOfBits> {
    Ok(match format {
        KeyFormat::SmallestThree48 => {
            let idx = r.get(2)?;
            r.get(1)?;
            [r.get(15)? | idx << 16, r.get(15)?, r.get(15)?]
        }
        KeyFormat::SmallestThreeWide { bits } => {
            let idx = r.get(2)?;
            let b = bits as u32;
            [r.get(b)? | idx << 24, r.get(b)?, r.get(b)?]
        }
        KeyFormat::RangedRotation { bits } | KeyFormat::RangedVector { bits } => {
            let mut c = [0u32; 3];
            for (k, code) in c.iter_mut().enumerate() {
                if range.extent[k] > 0.0 {
                    *code = r.get(bits as u32)?;
                }
            }
            c
        }
    })
}

/// Reads key `i` of a track from the key block; `codes[..i]` must already be decoded and
/// `seg` holds the residual widths of the key's segment (read at its first key).
#[allow(clippy::too_many_arguments)]
fn get_key(
    r: &mut BitReader,
    format: KeyFormat,
    range: &KeyRange,
    codes: &[Codes],
    frames: &[u32],
    i: usize,
    seg: &mut [u32; 3],
    order: u8,
) -> Result<Codes, OutOfBits> {
    let bits = match format {
        KeyFormat::SmallestThree48 | KeyFormat::SmallestThreeWide { .. } => {
            return get_codes(r, format, range);
        }
        KeyFormat::RangedRotation { bits } | KeyFormat::RangedVector { bits } => bits as u32,
    };
    let start = i - i % SEGMENT_KEYS;
    let mut out = [0u32; 3];
    let max = (1u64 << bits) - 1;
    for c in stored_components(format, range) {
        if i == start {
            seg[c] = r.get(WIDTH_BITS)?;
            if seg[c] > bits + 1 {
                return Err(OutOfBits);
            }
            out[c] = r.get(bits)?;
        } else {
            let z = r.get(seg[c])? as u64;
            let v = predict(codes, frames, start, i, c, max, order) + unzigzag(z);
            if v < 0 || v as u64 > max {
                return Err(OutOfBits);
            }
            out[c] = v as u32;
        }
    }
    Ok(out)
}

/// One track as stored.
#[derive(Clone, Debug, PartialEq)]
pub enum TrackRecord {
    /// The joint's rest value.
    Rest,
    /// One value (`quantized`: stored as S3 48 rather than raw f32).
    Constant {
        value: Vec4,
        quantized: bool,
    },
    Animated(AnimatedRecord),
}

/// An animated track: descriptor, key frames, codes and decoded values.
#[derive(Clone, Debug, PartialEq)]
pub struct AnimatedRecord {
    pub format: KeyFormat,
    pub range: KeyRange,
    pub interpolation: Interpolation,
    /// Predictor order of ranged keys (1 or 2).
    pub order: u8,
    /// Strictly increasing frames, from 0 to the clip's last frame.
    pub frames: Vec<u32>,
    pub codes: Vec<Codes>,
    /// Decoded values; rotations aligned to their predecessor's hemisphere.
    pub values: Vec<Vec4>,
}

/// A validated payload.
#[derive(Clone, Debug, PartialEq)]
pub struct PayloadRecord {
    pub frame_count: u32,
    pub sample_rate: f32,
    pub start_time: f32,
    /// `[joint][T, R, S]`.
    pub tracks: Vec<[TrackRecord; 3]>,
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn le_f32(b: &[u8], at: usize) -> f32 {
    f32::from_bits(le_u32(b, at))
}

/// Parses and validates the payload of clip `name` for a skeleton of `joints` joints.
pub fn parse(bytes: &[u8], name: &str, joints: usize) -> Result<PayloadRecord, Error> {
    let bad = |m: String| Error::Corrupt(format!("clip '{name}': {m}"));
    let short = |_: OutOfBits| Error::Corrupt(format!("clip '{name}': metadata ends early"));
    if bytes.len() < CLIP_HEADER_BYTES {
        return Err(bad(format!(
            "payload of {} bytes is shorter than its header",
            bytes.len()
        )));
    }
    let frames = le_u32(bytes, 0);
    let rate = le_f32(bytes, 4);
    let start = le_f32(bytes, 8);
    let stored_joints = u16::from_le_bytes([bytes[12], bytes[13]]) as usize;
    let cbits = bytes[14] as u32;
    let meta_len = le_u32(bytes, 16) as usize;
    let block_len = le_u32(bytes, 20) as usize;
    if frames == 0 || frames > MAX_FRAMES {
        return Err(bad(format!("frame count {frames} out of range")));
    }
    // Frame times `start + i / rate` must be finite too.
    let end = start + (frames - 1) as f32 / rate;
    if !(rate.is_finite() && rate > 0.0 && start.is_finite() && end.is_finite()) {
        return Err(bad(format!(
            "sample rate {rate} / start time {start} invalid"
        )));
    }
    if stored_joints != joints {
        return Err(bad(format!(
            "{stored_joints} joints but the skeleton has {joints}"
        )));
    }
    if cbits != count_bits(frames as usize) {
        return Err(bad(format!(
            "key count width {cbits} does not fit {frames} frames"
        )));
    }
    let body = &bytes[CLIP_HEADER_BYTES..];
    if meta_len.checked_add(block_len) != Some(body.len()) {
        return Err(bad(format!(
            "section lengths {meta_len} + {block_len} do not add up to {}",
            body.len()
        )));
    }
    let mut r = BitReader::new(&body[..meta_len]);
    let mut tracks: Vec<[TrackRecord; 3]> = Vec::with_capacity(joints);
    // (slot, descriptor with empty codes and values)
    let mut animated: Vec<(usize, AnimatedRecord)> = Vec::new();
    for j in 0..joints {
        let mut joint = [TrackRecord::Rest, TrackRecord::Rest, TrackRecord::Rest];
        for (k, slot) in joint.iter_mut().enumerate() {
            let rot = k == 1;
            *slot = match r.get(2).map_err(short)? {
                CLASS_REST => TrackRecord::Rest,
                CLASS_CONSTANT => {
                    let quantized = r.get(1).map_err(short)? == 1;
                    let value = if rot && quantized {
                        let s3 = KeyFormat::SmallestThree48;
                        let range = KeyRange::default();
                        decode(s3, &range, get_codes(&mut r, s3, &range).map_err(short)?)
                    } else {
                        let n = if rot { 4 } else { 3 };
                        let mut v = Vec4::ZERO;
                        for c in 0..n {
                            v[c] = r.get_f32().map_err(short)?;
                        }
                        if !v.is_finite() || v.abs().max_element() > MAX_MAGNITUDE {
                            return Err(bad(format!(
                                "joint {j}: constant is not finite or beyond {MAX_MAGNITUDE:e}"
                            )));
                        }
                        if rot && (v.length() - 1.0).abs() > 1e-3 {
                            return Err(bad(format!(
                                "joint {j}: constant rotation is not a unit quaternion"
                            )));
                        }
                        v
                    };
                    TrackRecord::Constant { value, quantized }
                }
                CLASS_ANIMATED => {
                    if frames < 2 {
                        return Err(bad(format!(
                            "joint {j}: animated track in a one-frame clip"
                        )));
                    }
                    let a = animated_descriptor(&mut r, j, k, frames, cbits, &bad, &short)?;
                    animated.push((j * 3 + k, a));
                    TrackRecord::Rest // filled in below
                }
                c => return Err(bad(format!("joint {j}: unknown track class {c}"))),
            };
        }
        tracks.push(joint);
    }
    if r.remaining() >= 8 {
        return Err(bad("metadata has trailing bytes".into()));
    }
    // Key block: codes in need order (sizes depend on the data, so check the end only).
    let order = key_order(
        animated
            .iter()
            .map(|(_, a)| (a.frames.as_slice(), a.interpolation)),
    );
    let mut br = BitReader::new(&body[meta_len..]);
    let mut widths: Vec<[u32; 3]> = vec![[0; 3]; animated.len()];
    for (t, i) in order {
        let a = &mut animated[t].1;
        let c = get_key(
            &mut br,
            a.format,
            &a.range,
            &a.codes,
            &a.frames,
            i,
            &mut widths[t],
            a.order,
        )
        .map_err(|_| bad("key block ends early or holds an invalid code".into()))?;
        // Keys of a track arrive in increasing order (need frames never decrease).
        a.codes.push(c);
    }
    if br.remaining() >= 8 {
        return Err(bad("key block has trailing bytes".into()));
    }
    for (slot, mut a) in animated {
        a.values = a
            .codes
            .iter()
            .map(|c| decode(a.format, &a.range, *c))
            .collect();
        if slot % 3 == 1 {
            align_hemispheres(&mut a.values);
        }
        tracks[slot / 3][slot % 3] = TrackRecord::Animated(a);
    }
    Ok(PayloadRecord {
        frame_count: frames,
        sample_rate: rate,
        start_time: start,
        tracks,
    })
}

/// Reads an animated track's descriptor, range and key frames from the metadata.
fn animated_descriptor(
    r: &mut BitReader,
    j: usize,
    k: usize,
    frames: u32,
    cbits: u32,
    bad: &dyn Fn(String) -> Error,
    short: &dyn Fn(OutOfBits) -> Error,
) -> Result<AnimatedRecord, Error> {
    let rot = k == 1;
    let f = r.get(2).map_err(short)?;
    let bits = r.get(5).map_err(short)? as u8;
    let order = match r.get(2).map_err(short)? {
        0 => 2u8,
        1 => 1u8,
        p => {
            return Err(bad(format!("joint {j} track {k}: unknown predictor {p}")));
        }
    };
    let interpolation = if r.get(1).map_err(short)? == 1 {
        Interpolation::CatmullRom
    } else {
        Interpolation::Linear
    };
    let mask = r.get(3).map_err(short)?;
    let format = match (f, rot) {
        (FORMAT_S3, true) if bits == 15 && mask == 0 => KeyFormat::SmallestThree48,
        (FORMAT_S3_WIDE, true) if (16..=23).contains(&bits) && mask == 0 => {
            KeyFormat::SmallestThreeWide { bits }
        }
        // A ranged track varies in at least one component: its keys then take bits, so
        // the key count (and what the layouts allocate for it) is bounded by the file.
        (FORMAT_RANGED_ROTATION, true) if (1..=24).contains(&bits) && mask != 0 => {
            KeyFormat::RangedRotation { bits }
        }
        (FORMAT_RANGED_VECTOR, false) if (1..=24).contains(&bits) && mask != 0 => {
            KeyFormat::RangedVector { bits }
        }
        _ => {
            return Err(bad(format!(
                "joint {j} track {k}: invalid format {f} / {bits} bits / mask {mask}"
            )));
        }
    };
    let mut range = KeyRange::default();
    if let KeyFormat::RangedRotation { .. } = format {
        let s3 = KeyFormat::SmallestThree48;
        let c = get_codes(r, s3, &KeyRange::default()).map_err(short)?;
        range.reference_code = c;
        range.reference = Quat::from_vec4(decode(s3, &KeyRange::default(), c));
    }
    if !matches!(
        format,
        KeyFormat::SmallestThree48 | KeyFormat::SmallestThreeWide { .. }
    ) {
        for c in 0..3 {
            range.min[c] = r.get_f32().map_err(short)?;
        }
        for c in 0..3 {
            if mask & (1 << c) != 0 {
                range.extent[c] = r.get_f32().map_err(short)?;
                if !(range.extent[c].is_finite() && range.extent[c] > 0.0) {
                    return Err(bad(format!("joint {j} track {k}: invalid range extent")));
                }
            }
        }
        // Every code must decode to a finite value: both ends of each component's range
        // (as the decoder computes them) are bounded.
        let limit = if rot {
            MAX_ROTATION_COMPONENT
        } else {
            MAX_MAGNITUDE
        };
        let within = (0..3).all(|c| {
            let (lo, hi) = (range.min[c], range.min[c] + range.extent[c]);
            lo.is_finite() && hi.is_finite() && lo.abs() <= limit && hi.abs() <= limit
        });
        if !within {
            return Err(bad(format!(
                "joint {j} track {k}: range is not finite or beyond {limit:e}"
            )));
        }
    }
    let keys = r.get(cbits).map_err(short)?;
    if keys < 2 || keys > frames {
        return Err(bad(format!(
            "joint {j} track {k}: {keys} keys for {frames} frames"
        )));
    }
    let gw = r.get(5).map_err(short)?;
    // Bound the allocation by what the stream can hold.
    if (keys as u64 - 2) * gw as u64 > r.remaining() {
        return Err(bad(format!(
            "joint {j} track {k}: key times run past the metadata"
        )));
    }
    let mut kf = Vec::with_capacity(keys as usize);
    kf.push(0u32);
    let mut last = 0u64;
    for _ in 0..keys - 2 {
        let next = last + r.get(gw).map_err(short)? as u64 + 1;
        if next >= frames as u64 - 1 {
            return Err(bad(format!(
                "joint {j} track {k}: key times exceed the clip"
            )));
        }
        kf.push(next as u32);
        last = next;
    }
    kf.push(frames - 1);
    Ok(AnimatedRecord {
        format,
        range,
        interpolation,
        order,
        codes: Vec::with_capacity(kf.len()),
        frames: kf,
        values: Vec::new(),
    })
}
