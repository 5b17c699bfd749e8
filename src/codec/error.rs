//! What every layer of the compressor shares: why a compression stopped, and the callback
//! that receives the first pass. Below both the pipeline and the [`Recompressor`]
//! (`super::Recompressor`) that drives it, so neither imports the other's internals.

use super::compressed::CompressedClip;
use crate::metric::{ErrorReport, Reference};

/// Why compression stopped without a result.
#[derive(Debug, thiserror::Error)]
pub enum CodecError {
    #[error("cancelled")]
    Cancelled,
    #[error("invalid clip: {0}")]
    InvalidClip(String),
}

/// Called with the first pass of a compression (every track encoded and repaired until each
/// joint holds its tolerance, before relaxation makes the clip smaller) and, at the default
/// effort and above, again with a smaller preview after the first relaxation sweeps; each
/// time with the reference
/// poses it was measured against, and its error matrix (`metric::measure` of it, so the
/// caller need not measure it again; the statistics are against the tolerances held).
pub type FirstPass<'a> = &'a mut (dyn FnMut(CompressedClip, &Reference, &ErrorReport) + Send);
