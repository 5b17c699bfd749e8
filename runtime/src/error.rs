//! Why a container could not be opened.

use std::fmt;

use crate::read::{OLDEST_VERSION, VERSION};

/// A container that could not be read: every corrupt input ends here, never in a panic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Error {
    /// The bytes do not start with `SKPK`.
    BadMagic,
    /// A container version this build does not read.
    Version(u16),
    /// Damaged, truncated or inconsistent bytes; the message names the field.
    Corrupt(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BadMagic => write!(f, "not a skelpack container (bad magic)"),
            Self::Version(v) => write!(
                f,
                "unsupported container version {v} (this build reads {OLDEST_VERSION} to {VERSION})"
            ),
            Self::Corrupt(m) => write!(f, "corrupt: {m}"),
        }
    }
}

impl std::error::Error for Error {}
