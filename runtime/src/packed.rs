//! A read-only array of bit fields (least significant bit first) that any field of up to
//! 32 bits is read from with one unaligned 64-bit load: the compact form a clip's keys and
//! segment tables keep in memory.

use crate::bits::BitWriter;

/// Bytes of zero padding after the last field, so every field and word is read with one
/// load.
const PADDING: usize = 16;

/// Bit fields written with a [`BitWriter`], addressed by bit position.
#[derive(Clone, Debug, Default)]
pub struct PackedBits {
    bytes: Vec<u8>,
}

impl PackedBits {
    /// Freezes the fields written so far.
    pub fn new(w: BitWriter) -> Self {
        let mut bytes = w.finish();
        bytes.extend_from_slice(&[0; PADDING]);
        bytes.shrink_to_fit();
        Self { bytes }
    }

    /// The `width`-bit field (`width <= 32`) starting at bit `pos`; 0 for a width of 0.
    /// Panics only for a position beyond the fields written.
    #[inline(always)]
    pub fn get(&self, pos: usize, width: u32) -> u32 {
        let at = pos / 8;
        let word: [u8; 8] = self.bytes[at..at + 8].try_into().unwrap_or([0; 8]);
        ((u64::from_le_bytes(word) >> (pos % 8)) & ((1u64 << width) - 1)) as u32
    }

    /// The 64 bits from bit `pos`, of which the low 57 (at least) are fields from `pos` on.
    /// Panics only for a position beyond the fields written.
    #[inline(always)]
    pub fn word(&self, pos: usize) -> u64 {
        let at = pos / 8;
        let word: [u8; 8] = self.bytes[at..at + 8].try_into().unwrap_or([0; 8]);
        u64::from_le_bytes(word) >> (pos % 8)
    }

    /// Bytes held (fields and padding).
    pub fn len_bytes(&self) -> usize {
        self.bytes.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_read_back_at_every_alignment_and_width() {
        let mut w = BitWriter::new();
        let mut fields = Vec::new();
        let mut x = 0x1234_5678u32;
        for i in 0..200u32 {
            let width = i % 33;
            x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let v = if width == 32 {
                x
            } else {
                x & ((1 << width) - 1)
            };
            fields.push((w.len_bits() as usize, width, v));
            w.put(v, width);
        }
        let p = PackedBits::new(w);
        for (pos, width, v) in fields {
            assert_eq!(p.get(pos, width), v, "field at bit {pos}, {width} bits");
            assert_eq!(
                p.word(pos) & ((1u64 << width) - 1),
                v as u64,
                "word at bit {pos}"
            );
        }
    }
}
