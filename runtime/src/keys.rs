//! One animated track kept compact: its keys as fixed-width bit records in the clip's
//! [`PackedBits`] (the key's frame, for rotations the sign its value takes after hemisphere
//! alignment, then the quantized codes as stored, at the track's own widths) and a segment
//! table ([`crate::table`]). A key is dequantized when a
//! segment needs it, with the same function the reference decoder uses, so values are bit
//! for bit the same as decoding every key at open.

use glam::Vec4;

use crate::bits::BitWriter;
use crate::curve::{Interpolation, Segment};
use crate::packed::PackedBits;
use crate::payload::{AnimatedRecord, count_bits};
use crate::quant::{KeyFormat, KeyRange, decode};
use crate::table::{DENSE_SHIFT, OFFSET_BITS, dense_offset, entries, table_shift};

/// Bits one [`PackedBits::word`] read holds at any alignment.
const WORD_BITS: u32 = 57;

/// An animated track: how to read its keys and table from the clip's bits.
#[derive(Clone, Copy, Debug)]
pub struct KeyTrack {
    /// The joint it animates, and 0 translation, 1 rotation, 2 scale.
    pub joint: u32,
    pub kind: u8,
    interpolation: Interpolation,
    format: KeyFormat,
    range: KeyRange,
    /// Keys (at least 2).
    len: u32,
    /// Bit position of key 0's record; each record is `stride` bits.
    keys: usize,
    stride: u32,
    frame_bits: u8,
    /// Rotations: one sign bit after the frame.
    sign_bits: u8,
    /// Widths of the three code fields.
    code_bits: [u8; 3],
    /// Smallest-three: code 0 holds the dropped component's index at bit `index_shift`;
    /// its record field keeps it right above the `low_bits` of the value (32 / 32 for
    /// ranged formats, which makes the mapping the identity).
    low_bits: u8,
    index_shift: u8,
    /// Bit position of the segment table; each entry is `table_bits` bits (the segment,
    /// then in dense tables [`OFFSET_BITS`] of offsets), one per `2^table_shift` frames.
    table: usize,
    table_bits: u8,
    table_shift: u8,
}

/// Code field widths, then the value bits and index position of code 0 (see [`KeyTrack`]).
fn code_layout(format: KeyFormat, range: &KeyRange) -> ([u8; 3], u8, u8) {
    match format {
        KeyFormat::SmallestThree48 => ([17, 15, 15], 15, 16),
        KeyFormat::SmallestThreeWide { bits } => ([bits + 2, bits, bits], bits, 24),
        KeyFormat::RangedRotation { bits } | KeyFormat::RangedVector { bits } => {
            let w = |c: usize| if range.extent[c] > 0.0 { bits } else { 0 };
            ([w(0), w(1), w(2)], 32, 32)
        }
    }
}

impl KeyTrack {
    /// Writes track `a`'s key records (at `w`'s position) and then its segment table for a
    /// clip of `frame_count` frames. `a` must come from [`crate::payload::parse`].
    pub fn write(
        w: &mut BitWriter,
        joint: usize,
        kind: usize,
        a: &AnimatedRecord,
        frame_count: u32,
    ) -> Self {
        let (code_bits, low_bits, index_shift) = code_layout(a.format, &a.range);
        let n = a.frames.len();
        let mut t = Self {
            joint: joint as u32,
            kind: kind as u8,
            interpolation: a.interpolation,
            format: a.format,
            range: a.range,
            len: n as u32,
            keys: w.len_bits() as usize,
            stride: 0,
            frame_bits: count_bits(frame_count as usize) as u8,
            sign_bits: u8::from(kind == 1),
            code_bits,
            low_bits,
            index_shift,
            table: 0,
            table_bits: count_bits(n - 2) as u8,
            table_shift: table_shift(frame_count, n) as u8,
        };
        t.stride = t.frame_bits as u32
            + t.sign_bits as u32
            + code_bits.iter().map(|&b| b as u32).sum::<u32>();
        for ((&frame, codes), value) in a.frames.iter().zip(&a.codes).zip(&a.values) {
            w.put(frame, t.frame_bits as u32);
            if t.sign_bits > 0 {
                // Hemisphere alignment negated the decoded key (negation is exact).
                let flipped = decode(a.format, &a.range, *codes) != *value;
                w.put(u32::from(flipped), 1);
            }
            let c0 = codes[0] as u64;
            let low = c0 & ((1u64 << low_bits) - 1);
            w.put(
                (low | (c0 >> index_shift) << low_bits) as u32,
                code_bits[0] as u32,
            );
            w.put(codes[1], code_bits[1] as u32);
            w.put(codes[2], code_bits[2] as u32);
        }
        t.table = w.len_bits() as usize;
        let dense = t.table_shift as u32 == DENSE_SHIFT;
        if dense {
            t.table_bits += OFFSET_BITS as u8;
        }
        for (start, offsets) in entries(&a.frames, frame_count, t.table_shift as u32) {
            if dense {
                w.put(start << OFFSET_BITS | offsets, t.table_bits as u32);
            } else {
                w.put(start, t.table_bits as u32);
            }
        }
        t
    }

    /// Number of keys.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// Always false: a track has at least two keys.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// Key `i`'s frame.
    #[inline(always)]
    pub fn frame(&self, bits: &PackedBits, i: usize) -> u32 {
        bits.get(self.keys + i * self.stride as usize, self.frame_bits as u32)
    }

    /// Key `i`'s value as the reference decoder holds it (rotations hemisphere-aligned).
    #[inline(always)]
    pub fn value(&self, bits: &PackedBits, i: usize) -> Vec4 {
        self.key(bits, i).1
    }

    /// Key `i`'s frame and value, from one 64-bit read of its record (two for records
    /// beyond 57 bits: the frame, sign and first code, then the other two codes).
    #[inline(always)]
    pub fn key(&self, bits: &PackedBits, i: usize) -> (u32, Vec4) {
        let pos = self.keys + i * self.stride as usize;
        let mask = |width: u8| (1u64 << width) - 1;
        let (frame_bits, sign_bits) = (self.frame_bits, self.sign_bits);
        // Frame <= 24 bits, sign 1, first code <= 25: the head fits one read.
        let head = bits.word(pos);
        let frame = (head & mask(frame_bits)) as u32;
        let negate = (head >> frame_bits) & mask(sign_bits) != 0;
        let c0 = (head >> (frame_bits + sign_bits)) & mask(self.code_bits[0]);
        let head_bits = frame_bits + sign_bits + self.code_bits[0];
        // The other two codes: <= 48 bits.
        let tail = if self.stride <= WORD_BITS {
            head >> head_bits
        } else {
            bits.word(pos + head_bits as usize)
        };
        let codes = [
            ((c0 & mask(self.low_bits)) | (c0 >> self.low_bits) << self.index_shift) as u32,
            (tail & mask(self.code_bits[1])) as u32,
            ((tail >> self.code_bits[1]) & mask(self.code_bits[2])) as u32,
        ];
        let v = decode(self.format, &self.range, codes);
        (frame, if negate { -v } else { v })
    }

    /// The segment holding frame `fi` (the last key at or before it, at most the
    /// second-to-last key): one read of a dense table, or a sparse table's block segment
    /// and a step forward over the keys in the block.
    #[inline(always)]
    pub fn segment_at(&self, bits: &PackedBits, fi: u32) -> usize {
        let width = self.table_bits as u32;
        let block = (fi >> self.table_shift) as usize;
        let entry = bits.get(self.table + block * width as usize, width);
        if self.table_shift as u32 == DENSE_SHIFT {
            return ((entry >> OFFSET_BITS) + dense_offset(entry, fi)) as usize;
        }
        self.step(bits, entry as usize, fi)
    }

    /// The segment holding frame `fi` (the last key at or before it, at most the
    /// second-to-last key), searched forward from segment `s`.
    #[inline(always)]
    pub fn step(&self, bits: &PackedBits, mut s: usize, fi: u32) -> usize {
        while s + 2 < self.len as usize && self.frame(bits, s + 1) <= fi {
            s += 1;
        }
        s
    }

    /// Segment `s` prepared for evaluation (its keys dequantized; a slerp arc or Hermite
    /// ends computed), exactly as the reference decoder prepares it. The arc's sine is
    /// computed inline ([`crate::sin::sin_inline`]): call it from code compiled with FMA.
    #[inline(always)]
    pub fn segment(&self, bits: &PackedBits, s: usize) -> Segment {
        self.segment_from(bits, s, None).0
    }

    /// Like [`KeyTrack::segment`], with key `s` (frame and value) given when the caller
    /// already has it (`first`, as returned for the previous segment); also returns key
    /// `s + 1`, which starts the next segment.
    #[inline(always)]
    pub fn segment_from(
        &self,
        bits: &PackedBits,
        s: usize,
        first: Option<(f32, Vec4)>,
    ) -> (Segment, (f32, Vec4)) {
        let key = |i: usize| {
            let (frame, value) = self.key(bits, i);
            (frame as f32, value)
        };
        let rotation = self.kind == 1;
        let (a, b) = (first.unwrap_or_else(|| key(s)), key(s + 1));
        let window = match self.interpolation {
            // Linear segments read only their two ends.
            Interpolation::Linear => [a, a, b, b],
            Interpolation::CatmullRom => [
                if s > 0 { key(s - 1) } else { a },
                a,
                b,
                if s + 2 < self.len as usize {
                    key(s + 2)
                } else {
                    b
                },
            ],
        };
        (
            Segment::new_inline(self.interpolation, rotation, &window),
            b,
        )
    }

    /// Bytes of the track's description (its keys and table live in the clip's bits).
    pub fn memory_bytes(&self) -> usize {
        std::mem::size_of::<Self>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::curve::align_hemispheres;
    use glam::Quat;

    /// A track of `n` keys with pseudo-random codes in `format`, decoded as the payload
    /// parser does (rotations hemisphere-aligned).
    fn record(format: KeyFormat, rotation: bool, n: u32) -> AnimatedRecord {
        let range = KeyRange {
            min: [-0.5, 0.25, -2.0],
            extent: [1.0, 0.0, 3.0],
            reference: Quat::from_rotation_y(0.3),
            reference_code: [0; 3],
        };
        let (code_bits, low_bits, _) = code_layout(format, &range);
        let mut x = 7u32;
        let mut rand = |bits: u8| {
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            (x >> 4) & ((1u32 << bits.min(28)) - 1)
        };
        let codes: Vec<[u32; 3]> = (0..n)
            .map(|_| {
                let value_bits = code_bits[0].min(low_bits);
                let mut c0 = rand(value_bits);
                if low_bits < 32 {
                    let shift = if code_bits[1] == 15 { 16 } else { 24 };
                    c0 |= rand(2) << shift;
                }
                [c0, rand(code_bits[1]), rand(code_bits[2])]
            })
            .collect();
        let mut values: Vec<Vec4> = codes.iter().map(|c| decode(format, &range, *c)).collect();
        if rotation {
            align_hemispheres(&mut values);
        }
        AnimatedRecord {
            format,
            range,
            interpolation: Interpolation::Linear,
            order: 1,
            frames: (0..n).map(|i| i * 3).collect(),
            codes,
            values,
        }
    }

    #[test]
    fn key_records_give_back_every_frame_and_value_bit_for_bit() {
        let formats = [
            (KeyFormat::SmallestThree48, true),
            (KeyFormat::SmallestThreeWide { bits: 19 }, true),
            (KeyFormat::RangedRotation { bits: 13 }, true),
            (KeyFormat::RangedVector { bits: 24 }, false),
        ];
        for (format, rotation) in formats {
            let a = record(format, rotation, 40);
            let kind = if rotation { 1 } else { 0 };
            let frames = a.frames[39] + 1;
            let mut w = BitWriter::new();
            w.put(5, 3); // the track need not start at bit 0
            let t = KeyTrack::write(&mut w, 2, kind, &a, frames);
            let bits = PackedBits::new(w);
            let mut flips = 0;
            for i in 0..a.frames.len() {
                assert_eq!(t.frame(&bits, i), a.frames[i], "{format:?} key {i}");
                let (got, want) = (t.value(&bits, i), a.values[i]);
                assert_eq!(
                    got.to_array().map(f32::to_bits),
                    want.to_array().map(f32::to_bits)
                );
                flips += usize::from(decode(format, &a.range, a.codes[i]) != want);
            }
            if rotation {
                assert!(flips > 0, "{format:?}: the test covers hemisphere flips");
            }
            for f in 0..frames {
                let s = t.segment_at(&bits, f);
                assert_eq!(s, (f / 3).min(38) as usize, "{format:?} frame {f}");
                assert_eq!(t.step(&bits, s.saturating_sub(2), f), s);
            }
            // Keys on every frame: blocks whose frames lie 0 to 3 segments past the first.
            let mut dense = a.clone();
            dense.frames = (0..40).map(|i| i + 2 * u32::from(i > 20)).collect();
            let mut w = BitWriter::new();
            let t = KeyTrack::write(&mut w, 2, kind, &dense, 43);
            let bits = PackedBits::new(w);
            for f in 0..43 {
                let want = dense.frames.iter().rposition(|&k| k <= f).unwrap().min(38);
                assert_eq!(t.segment_at(&bits, f), want, "{format:?} dense frame {f}");
            }
        }
    }
}
