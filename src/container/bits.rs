//! Little-endian bit streams: the runtime crate's (one implementation for writer and reader).

pub use skelpack_runtime::bits::{BitReader, BitWriter, OutOfBits};
