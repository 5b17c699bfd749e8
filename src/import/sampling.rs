//! Spec-exact evaluation of glTF animation samplers; the sampler lives in the model
//! ([`crate::model::sampling`]) so that a [`crate::model::Clip`] can keep the source's own
//! curves between its frames.

pub use crate::model::sampling::{Interpolation, Keyframes};
