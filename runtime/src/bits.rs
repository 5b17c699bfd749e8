//! Little-endian bit streams (least significant bit first).

/// Appends bit fields to a byte vector.
#[derive(Default)]
pub struct BitWriter {
    pub bytes: Vec<u8>,
    acc: u64,
    used: u32,
}

impl BitWriter {
    pub fn new() -> Self {
        Self::default()
    }

    /// Writes the low `n` bits of `v` (n <= 32).
    pub fn put(&mut self, v: u32, n: u32) {
        debug_assert!(n <= 32);
        if n == 0 {
            return;
        }
        let v = (v as u64) & ((1u64 << n) - 1);
        self.acc |= v << self.used;
        self.used += n;
        while self.used >= 8 {
            self.bytes.push(self.acc as u8);
            self.acc >>= 8;
            self.used -= 8;
        }
    }

    pub fn put_f32(&mut self, x: f32) {
        self.put(x.to_bits(), 32);
    }

    /// Bits written so far.
    pub fn len_bits(&self) -> u64 {
        self.bytes.len() as u64 * 8 + self.used as u64
    }

    /// Pads to a byte boundary and returns the bytes.
    pub fn finish(mut self) -> Vec<u8> {
        if self.used > 0 {
            self.bytes.push(self.acc as u8);
        }
        self.bytes
    }
}

/// Reads bit fields; every read is bounds-checked.
pub struct BitReader<'a> {
    bytes: &'a [u8],
    pos: u64,
}

/// Reading past the end of a bit stream.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutOfBits;

impl<'a> BitReader<'a> {
    pub fn new(bytes: &'a [u8]) -> Self {
        Self { bytes, pos: 0 }
    }

    /// Starts at bit `pos`.
    pub fn at(bytes: &'a [u8], pos: u64) -> Self {
        Self { bytes, pos }
    }

    pub fn position(&self) -> u64 {
        self.pos
    }

    pub fn remaining(&self) -> u64 {
        (self.bytes.len() as u64 * 8).saturating_sub(self.pos)
    }

    /// Reads `n` bits (n <= 32).
    #[inline]
    pub fn get(&mut self, n: u32) -> Result<u32, OutOfBits> {
        if n == 0 {
            return Ok(0);
        }
        if self.remaining() < n as u64 {
            return Err(OutOfBits);
        }
        let mut out = 0u64;
        let mut got = 0u32;
        while got < n {
            let byte = self.bytes[(self.pos / 8) as usize] as u64;
            let off = (self.pos % 8) as u32;
            let take = (8 - off).min(n - got);
            let bits = (byte >> off) & ((1u64 << take) - 1);
            out |= bits << got;
            got += take;
            self.pos += take as u64;
        }
        Ok(out as u32)
    }

    pub fn get_f32(&mut self) -> Result<f32, OutOfBits> {
        self.get(32).map(f32::from_bits)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_mixed_widths() {
        let mut w = BitWriter::new();
        let fields = [
            (5u32, 3u32),
            (0x1FFFF, 17),
            (0, 1),
            (0xDEADBEEF, 32),
            (1, 1),
            (300, 9),
        ];
        for (v, n) in fields {
            w.put(v, n);
        }
        assert_eq!(w.len_bits(), 63);
        let bytes = w.finish();
        assert_eq!(bytes.len(), 8);
        let mut r = BitReader::new(&bytes);
        for (v, n) in fields {
            assert_eq!(r.get(n).unwrap(), v & ((1u64 << n) - 1) as u32);
        }
        assert_eq!(r.get(8), Err(OutOfBits));
    }
}
