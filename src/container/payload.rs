//! One clip's payload: a 24-byte header, a metadata bit stream (track classes, constants,
//! descriptors, ranges, key times) and a key block holding every animated key's code in the
//! order forward playback first needs it. docs/FORMAT.md documents every field.

use glam::{Quat, Vec4};

use super::bits::{BitReader, BitWriter, OutOfBits};
use super::{ContainerError, MAX_MAGNITUDE, MAX_ROTATION_COMPONENT};
use crate::codec::predict::{
    SEGMENT_KEYS, WIDTH_BITS, best_order, predict, segment_widths, stored_components, unzigzag,
    zigzag,
};
use crate::codec::quantize::{Codes, Format, Range, decode};
use crate::codec::report::{CLIP_HEADER_BYTES, payload_bits};
use crate::codec::track::{count_bits, gap_width};
use crate::codec::{Animated, ClipReport, CompressedClip, Curve, Interpolation, TrackData};
use crate::model::Transform;

const CLASS_REST: u32 = 0;
const CLASS_CONSTANT: u32 = 1;
const CLASS_ANIMATED: u32 = 2;
const FORMAT_S3: u32 = 0;
const FORMAT_RANGED_ROTATION: u32 = 1;
const FORMAT_RANGED_VECTOR: u32 = 2;
const FORMAT_S3_WIDE: u32 = 3;
/// Largest frame count a clip may declare (about 23 hours at 120 fps).
pub const MAX_FRAMES: u32 = 10_000_000;

/// Frames after which key `i` of a track is first needed by forward playback: a linear
/// segment needs its two ends, a Catmull-Rom segment also the key before and after.
pub fn need_frame(frames: &[u32], interpolation: Interpolation, i: usize) -> u32 {
    let lag = match interpolation {
        Interpolation::Linear => 1,
        Interpolation::CatmullRom => 2,
    };
    frames[i.saturating_sub(lag)]
}

/// Every animated key as `(track, key)` in key-block order.
pub fn key_order(tracks: &[(usize, &Curve)]) -> Vec<(usize, usize)> {
    let mut all: Vec<(u32, usize, usize)> = Vec::new();
    for (t, (_, curve)) in tracks.iter().enumerate() {
        for i in 0..curve.len() {
            all.push((need_frame(&curve.frames, curve.interpolation, i), t, i));
        }
    }
    all.sort_unstable();
    all.into_iter().map(|(_, t, i)| (t, i)).collect()
}

fn put_codes(w: &mut BitWriter, format: Format, range: &Range, c: &Codes) {
    match format {
        Format::SmallestThree48 => {
            w.put(c[0] >> 16, 2);
            w.put(0, 1);
            w.put(c[0] & 0x7FFF, 15);
            w.put(c[1], 15);
            w.put(c[2], 15);
        }
        Format::SmallestThreeWide { bits } => {
            w.put(c[0] >> 24, 2);
            w.put(c[0] & 0xFF_FFFF, bits as u32);
            w.put(c[1], bits as u32);
            w.put(c[2], bits as u32);
        }
        Format::RangedRotation { bits } | Format::RangedVector { bits } => {
            for (code, extent) in c.iter().zip(range.extent) {
                if extent > 0.0 {
                    w.put(*code, bits as u32);
                }
            }
        }
    }
}

fn get_codes(r: &mut BitReader, format: Format, range: &Range) -> Result<Codes, OutOfBits> {
    Ok(match format {
        Format::SmallestThree48 => {
            let idx = r.get(2)?;
            r.get(1)?;
            [r.get(15)? | idx << 16, r.get(15)?, r.get(15)?]
        }
        Format::SmallestThreeWide { bits } => {
            let idx = r.get(2)?;
            let b = bits as u32;
            [r.get(b)? | idx << 24, r.get(b)?, r.get(b)?]
        }
        Format::RangedRotation { bits } | Format::RangedVector { bits } => {
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

/// Writes and reads one track's keys in the key block: S3 keys as 48 bits; ranged keys with
/// second-order prediction per segment ([`crate::codec::predict`]). The first key of a
/// segment carries the segment's residual widths and its codes in full.
struct KeyCoding {
    widths: Vec<[u32; 3]>,
    order: u8,
}

impl KeyCoding {
    fn new(format: Format, range: &Range, codes: &[Codes], frames: &[u32]) -> Self {
        let bits = match format {
            Format::SmallestThree48 | Format::SmallestThreeWide { .. } => {
                return Self {
                    widths: Vec::new(),
                    order: 2,
                };
            }
            Format::RangedRotation { bits } | Format::RangedVector { bits } => bits as u32,
        };
        let order = best_order(format, range, codes, frames);
        let widths = segment_widths(
            codes,
            frames,
            &stored_components(format, range),
            bits,
            order,
        );
        Self { widths, order }
    }

    fn put(
        &self,
        w: &mut BitWriter,
        format: Format,
        range: &Range,
        codes: &[Codes],
        frames: &[u32],
        i: usize,
    ) {
        let bits = match format {
            Format::SmallestThree48 | Format::SmallestThreeWide { .. } => {
                return put_codes(w, format, range, &codes[i]);
            }
            Format::RangedRotation { bits } | Format::RangedVector { bits } => bits as u32,
        };
        let start = i - i % SEGMENT_KEYS;
        let seg = &self.widths[i / SEGMENT_KEYS];
        for c in stored_components(format, range) {
            if i == start {
                w.put(seg[c], WIDTH_BITS);
                w.put(codes[i][c], bits);
            } else {
                let r = codes[i][c] as i64
                    - predict(codes, frames, start, i, c, (1u64 << bits) - 1, self.order);
                w.put(zigzag(r) as u32, seg[c]);
            }
        }
    }

    /// Reads key `i`; `codes[..i]` of this track must already be decoded.
    #[allow(clippy::too_many_arguments)]
    fn get(
        r: &mut BitReader,
        format: Format,
        range: &Range,
        codes: &[Codes],
        frames: &[u32],
        i: usize,
        seg: &mut [u32; 3],
        order: u8,
    ) -> Result<Codes, OutOfBits> {
        let bits = match format {
            Format::SmallestThree48 | Format::SmallestThreeWide { .. } => {
                return get_codes(r, format, range);
            }
            Format::RangedRotation { bits } | Format::RangedVector { bits } => bits as u32,
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
}

/// Serializes a compressed clip's payload.
pub fn write(clip: &CompressedClip) -> Vec<u8> {
    let frames = clip.frame_count;
    let cbits = count_bits(frames);
    let mut meta = BitWriter::new();
    let mut animated: Vec<(usize, &Animated)> = Vec::new();
    for (j, joint) in clip.tracks.iter().enumerate() {
        for (k, t) in joint.iter().enumerate() {
            match t {
                TrackData::Rest => meta.put(CLASS_REST, 2),
                TrackData::Constant { value, quantized } => {
                    meta.put(CLASS_CONSTANT, 2);
                    meta.put(*quantized as u32, 1);
                    if k == 1 && *quantized {
                        put_codes(
                            &mut meta,
                            Format::SmallestThree48,
                            &Range::default(),
                            &crate::codec::quantize::encode(
                                Format::SmallestThree48,
                                &Range::default(),
                                *value,
                            ),
                        );
                    } else {
                        let n = if k == 1 { 4 } else { 3 };
                        for c in 0..n {
                            meta.put_f32(value[c]);
                        }
                    }
                }
                TrackData::Animated(a) => {
                    meta.put(CLASS_ANIMATED, 2);
                    let (f, bits) = match a.format {
                        Format::SmallestThree48 => (FORMAT_S3, 15),
                        Format::SmallestThreeWide { bits } => (FORMAT_S3_WIDE, bits),
                        Format::RangedRotation { bits } => (FORMAT_RANGED_ROTATION, bits),
                        Format::RangedVector { bits } => (FORMAT_RANGED_VECTOR, bits),
                    };
                    meta.put(f, 2);
                    meta.put(bits as u32, 5);
                    // Predictor: 0 second order, 1 first order.
                    let order = best_order(a.format, &a.range, &a.codes, &a.curve.frames);
                    meta.put((order == 1) as u32, 2);
                    meta.put(
                        (a.curve.interpolation == Interpolation::CatmullRom) as u32,
                        1,
                    );
                    let mask = (0..3)
                        .filter(|&c| a.range.extent[c] > 0.0)
                        .fold(0u32, |m, c| m | 1 << c);
                    meta.put(
                        if matches!(
                            a.format,
                            Format::SmallestThree48 | Format::SmallestThreeWide { .. }
                        ) {
                            0
                        } else {
                            mask
                        },
                        3,
                    );
                    if let Format::RangedRotation { .. } = a.format {
                        put_codes(
                            &mut meta,
                            Format::SmallestThree48,
                            &Range::default(),
                            &a.range.reference_code,
                        );
                    }
                    if !matches!(
                        a.format,
                        Format::SmallestThree48 | Format::SmallestThreeWide { .. }
                    ) {
                        for c in 0..3 {
                            meta.put_f32(a.range.min[c]);
                        }
                        for c in 0..3 {
                            if mask & (1 << c) != 0 {
                                meta.put_f32(a.range.extent[c]);
                            }
                        }
                    }
                    let keys = &a.curve.frames;
                    meta.put(keys.len() as u32, cbits);
                    let gw = gap_width(keys);
                    meta.put(gw, 5);
                    for w in keys.windows(2).take(keys.len().saturating_sub(2)) {
                        meta.put(w[1] - w[0] - 1, gw);
                    }
                    animated.push((j * 3 + k, a));
                }
            }
        }
    }
    let curves: Vec<(usize, &Curve)> = animated.iter().map(|(i, a)| (*i, &a.curve)).collect();
    let layouts: Vec<KeyCoding> = animated
        .iter()
        .map(|(_, a)| KeyCoding::new(a.format, &a.range, &a.codes, &a.curve.frames))
        .collect();
    let mut block = BitWriter::new();
    for (t, i) in key_order(&curves) {
        let a = animated[t].1;
        layouts[t].put(&mut block, a.format, &a.range, &a.codes, &a.curve.frames, i);
    }
    debug_assert_eq!(
        (meta.len_bits(), block.len_bits()),
        payload_bits(&clip.tracks, frames)
    );
    let meta = meta.finish();
    let block = block.finish();
    let mut out = Vec::with_capacity(CLIP_HEADER_BYTES as usize + meta.len() + block.len());
    out.extend_from_slice(&(frames as u32).to_le_bytes());
    out.extend_from_slice(&clip.sample_rate.to_le_bytes());
    out.extend_from_slice(&clip.start_time.to_le_bytes());
    out.extend_from_slice(&(clip.tracks.len() as u16).to_le_bytes());
    out.push(cbits as u8);
    out.push(0);
    out.extend_from_slice(&(meta.len() as u32).to_le_bytes());
    out.extend_from_slice(&(block.len() as u32).to_le_bytes());
    out.extend_from_slice(&meta);
    out.extend_from_slice(&block);
    out
}

fn le_u32(b: &[u8], at: usize) -> u32 {
    u32::from_le_bytes(b[at..at + 4].try_into().expect("4 bytes"))
}

/// Parses and validates a payload for a skeleton with `rest` values.
pub fn read(
    bytes: &[u8],
    name: &str,
    rest: &[Transform],
) -> Result<CompressedClip, ContainerError> {
    let bad = |m: String| ContainerError::Corrupt(format!("clip '{name}': {m}"));
    let short =
        |_: OutOfBits| ContainerError::Corrupt(format!("clip '{name}': metadata ends early"));
    if bytes.len() < CLIP_HEADER_BYTES as usize {
        return Err(bad(format!(
            "payload of {} bytes is shorter than its header",
            bytes.len()
        )));
    }
    let frames = le_u32(bytes, 0);
    let rate = f32::from_le_bytes(bytes[4..8].try_into().expect("4"));
    let start = f32::from_le_bytes(bytes[8..12].try_into().expect("4"));
    let joints = u16::from_le_bytes(bytes[12..14].try_into().expect("2")) as usize;
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
    if joints != rest.len() {
        return Err(bad(format!(
            "{joints} joints but the skeleton has {}",
            rest.len()
        )));
    }
    if cbits != count_bits(frames as usize) {
        return Err(bad(format!(
            "key count width {cbits} does not fit {frames} frames"
        )));
    }
    let body = &bytes[CLIP_HEADER_BYTES as usize..];
    if meta_len.checked_add(block_len) != Some(body.len()) {
        return Err(bad(format!(
            "section lengths {meta_len} + {block_len} do not add up to {}",
            body.len()
        )));
    }
    let mut r = BitReader::new(&body[..meta_len]);
    let mut tracks: Vec<[TrackData; 3]> = Vec::with_capacity(joints);
    let mut animated: Vec<(usize, Format, Range, Vec<u32>, Interpolation, u8)> = Vec::new();
    for j in 0..joints {
        let mut joint: [TrackData; 3] = [TrackData::Rest, TrackData::Rest, TrackData::Rest];
        for (k, slot) in joint.iter_mut().enumerate() {
            let rot = k == 1;
            *slot = match r.get(2).map_err(short)? {
                CLASS_REST => TrackData::Rest,
                CLASS_CONSTANT => {
                    let quantized = r.get(1).map_err(short)? == 1;
                    let value = if rot && quantized {
                        decode(
                            Format::SmallestThree48,
                            &Range::default(),
                            get_codes(&mut r, Format::SmallestThree48, &Range::default())
                                .map_err(short)?,
                        )
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
                    TrackData::Constant { value, quantized }
                }
                CLASS_ANIMATED => {
                    if frames < 2 {
                        return Err(bad(format!(
                            "joint {j}: animated track in a one-frame clip"
                        )));
                    }
                    let f = r.get(2).map_err(short)?;
                    let bits = r.get(5).map_err(short)? as u8;
                    let order = match r.get(2).map_err(short)? {
                        0 => 2u8,
                        1 => 1u8,
                        p => {
                            return Err(bad(format!("joint {j} track {k}: unknown predictor {p}")));
                        }
                    };
                    let interp = if r.get(1).map_err(short)? == 1 {
                        Interpolation::CatmullRom
                    } else {
                        Interpolation::Linear
                    };
                    let mask = r.get(3).map_err(short)?;
                    let format = match (f, rot) {
                        (FORMAT_S3, true) if bits == 15 && mask == 0 => Format::SmallestThree48,
                        (FORMAT_S3_WIDE, true) if (16..=23).contains(&bits) && mask == 0 => {
                            Format::SmallestThreeWide { bits }
                        }
                        (FORMAT_RANGED_ROTATION, true) if (1..=24).contains(&bits) => {
                            Format::RangedRotation { bits }
                        }
                        (FORMAT_RANGED_VECTOR, false) if (1..=24).contains(&bits) => {
                            Format::RangedVector { bits }
                        }
                        _ => {
                            return Err(bad(format!(
                                "joint {j} track {k}: invalid format {f} / {bits} bits / mask {mask}"
                            )));
                        }
                    };
                    let mut range = Range::default();
                    if let Format::RangedRotation { .. } = format {
                        let c = get_codes(&mut r, Format::SmallestThree48, &Range::default())
                            .map_err(short)?;
                        range.reference_code = c;
                        range.reference =
                            Quat::from_vec4(decode(Format::SmallestThree48, &Range::default(), c));
                    }
                    if !matches!(
                        format,
                        Format::SmallestThree48 | Format::SmallestThreeWide { .. }
                    ) {
                        for c in 0..3 {
                            range.min[c] = r.get_f32().map_err(short)?;
                        }
                        for c in 0..3 {
                            if mask & (1 << c) != 0 {
                                range.extent[c] = r.get_f32().map_err(short)?;
                                if !(range.extent[c].is_finite() && range.extent[c] > 0.0) {
                                    return Err(bad(format!(
                                        "joint {j} track {k}: invalid range extent"
                                    )));
                                }
                            }
                        }
                        // Every code must decode to a finite value: both ends of each
                        // component's range (as the decoder computes them) are bounded.
                        let limit = if rot {
                            MAX_ROTATION_COMPONENT
                        } else {
                            MAX_MAGNITUDE
                        };
                        let within = (0..3).all(|c| {
                            let (lo, hi) = (range.min[c], range.min[c] + range.extent[c]);
                            lo.is_finite()
                                && hi.is_finite()
                                && lo.abs() <= limit
                                && hi.abs() <= limit
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
                    for _ in 0..keys - 2 {
                        let next =
                            *kf.last().expect("one") as u64 + r.get(gw).map_err(short)? as u64 + 1;
                        if next >= frames as u64 - 1 {
                            return Err(bad(format!(
                                "joint {j} track {k}: key times exceed the clip"
                            )));
                        }
                        kf.push(next as u32);
                    }
                    kf.push(frames - 1);
                    animated.push((j * 3 + k, format, range, kf, interp, order));
                    TrackData::Rest // filled in below
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
    let placeholder: Vec<Curve> = animated
        .iter()
        .map(|(_, _, _, kf, interp, _)| Curve {
            interpolation: *interp,
            is_rotation: false,
            frames: kf.clone(),
            values: Vec::new(),
        })
        .collect();
    let refs: Vec<(usize, &Curve)> = animated
        .iter()
        .zip(&placeholder)
        .map(|((i, ..), c)| (*i, c))
        .collect();
    let mut codes: Vec<Vec<Codes>> = animated
        .iter()
        .map(|(_, _, _, kf, ..)| vec![[0; 3]; kf.len()])
        .collect();
    let mut br = BitReader::new(&body[meta_len..]);
    let mut widths: Vec<[u32; 3]> = vec![[0; 3]; animated.len()];
    for (t, i) in key_order(&refs) {
        let (_, format, range, kf, _, order) = &animated[t];
        let c = KeyCoding::get(
            &mut br,
            *format,
            range,
            &codes[t],
            kf,
            i,
            &mut widths[t],
            *order,
        )
        .map_err(|_| bad("key block ends early or holds an invalid code".into()))?;
        codes[t][i] = c;
    }
    if br.remaining() >= 8 {
        return Err(bad("key block has trailing bytes".into()));
    }
    for ((slot, format, range, kf, interp, _), codes) in animated.into_iter().zip(codes) {
        let rot = slot % 3 == 1;
        let values = codes.iter().map(|c| decode(format, &range, *c)).collect();
        let curve = Curve::new(interp, rot, kf.clone(), values);
        tracks[slot / 3][slot % 3] = TrackData::Animated(Animated {
            curve,
            format,
            range,
            codes,
            insert_order: Vec::new(),
        });
    }
    Ok(CompressedClip {
        name: name.to_owned(),
        sample_rate: rate,
        frame_count: frames as usize,
        start_time: start,
        rest: rest.to_vec(),
        local_tolerance: vec![[0.0; 3]; joints],
        tracks,
        report: ClipReport::default(),
    })
}
