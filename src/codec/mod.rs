//! The compressor and decoder (DESIGN §4).

pub mod budget;
pub mod classify;

pub use classify::{Classification, TrackClass, classify};
pub mod curve;

pub use curve::{Curve, Interpolation};
