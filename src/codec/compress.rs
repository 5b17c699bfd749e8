//! One clip compressed from scratch: a [`Recompressor`] used once. The pipeline itself is
//! `pipeline/` (prepare → floors → budgets → encode → repair → relax → refine → report).

use super::compressed::CompressedClip;
use super::control::Control;
use super::error::CodecError;
use super::memo::Recompressor;
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

/// Compresses one clip so every evaluated joint stays within its tolerance at every sample
/// and midpoint; the report says so (`contract_met`) or names the joints that cannot.
/// [`Recompressor`] compresses the same clip again under new settings faster, to the same
/// bytes.
pub fn compress(
    skeleton: &Skeleton,
    clip: &Clip,
    settings: &Resolved,
    control: &Control,
) -> Result<CompressedClip, CodecError> {
    Recompressor::new().compress(skeleton, clip, settings, control)
}
