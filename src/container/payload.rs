//! One clip's payload: a 24-byte header, a metadata bit stream (track classes, constants,
//! descriptors, ranges, key times) and a key block holding every animated key's code in the
//! order forward playback first needs it. docs/FORMAT.md documents every field.

use super::ContainerError;
use super::bits::BitWriter;
use crate::codec::predict::{
    SEGMENT_KEYS, WIDTH_BITS, best_order, predict, segment_widths, stored_components, zigzag,
};
use crate::codec::quantize::{Codes, Format, Range};
use crate::codec::report::{CLIP_HEADER_BYTES, payload_bits};
use crate::codec::track::{count_bits, gap_width};
use crate::codec::{Animated, ClipReport, CompressedClip, Curve, Interpolation, TrackData};
use crate::model::Transform;
use skelpack_runtime::payload::{AnimatedRecord, PayloadRecord, TrackRecord};
pub use skelpack_runtime::payload::{
    CLASS_ANIMATED, CLASS_CONSTANT, CLASS_REST, FORMAT_RANGED_ROTATION, FORMAT_RANGED_VECTOR,
    FORMAT_S3, FORMAT_S3_WIDE, MAX_FRAMES, need_frame,
};

/// Every animated key as `(track, key)` in key-block order.
pub fn key_order(tracks: &[(usize, &Curve)]) -> Vec<(usize, usize)> {
    skelpack_runtime::payload::key_order(
        tracks
            .iter()
            .map(|(_, c)| (c.frames.as_slice(), c.interpolation.into())),
    )
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

/// Writes one track's keys in the key block: S3 keys as 48 bits; ranged keys with
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

/// A validated payload (parsed by the runtime crate) as a compressed clip.
pub fn from_record(p: PayloadRecord, name: &str, rest: &[Transform]) -> CompressedClip {
    let joints = p.tracks.len();
    let tracks = p
        .tracks
        .into_iter()
        .map(|joint| {
            joint.map(|t| match t {
                TrackRecord::Rest => TrackData::Rest,
                TrackRecord::Constant { value, quantized } => {
                    TrackData::Constant { value, quantized }
                }
                TrackRecord::Animated(a) => TrackData::Animated(Box::new(animated(a))),
            })
        })
        .collect();
    CompressedClip {
        name: name.to_owned(),
        sample_rate: p.sample_rate,
        frame_count: p.frame_count as usize,
        start_time: p.start_time,
        rest: rest.to_vec(),
        local_tolerance: vec![[0.0; 3]; joints],
        tracks,
        report: ClipReport::default(),
        playback: Default::default(),
    }
}

fn animated(a: AnimatedRecord) -> Animated {
    let is_rotation = matches!(
        a.format,
        skelpack_runtime::quant::KeyFormat::SmallestThree48
            | skelpack_runtime::quant::KeyFormat::SmallestThreeWide { .. }
            | skelpack_runtime::quant::KeyFormat::RangedRotation { .. }
    );
    // The runtime aligned rotation hemispheres as `Curve::new` does.
    let curve = Curve::new(a.interpolation.into(), is_rotation, a.frames, a.values);
    Animated {
        curve,
        format: a.format.into(),
        range: a.range.into(),
        codes: a.codes,
        insert_order: Vec::new(),
    }
}

/// Parses and validates a payload for a skeleton with `rest` values.
pub fn read(
    bytes: &[u8],
    name: &str,
    rest: &[Transform],
) -> Result<CompressedClip, ContainerError> {
    let p = skelpack_runtime::payload::parse(bytes, name, rest.len())?;
    Ok(from_record(p, name, rest))
}
