//! The compressor and decoder (DESIGN §4): classify tracks against hierarchical budgets,
//! fit keys (linear or Catmull-Rom), quantize (smallest-three, range-reduced variable
//! widths), verify in object space, repair and relax.

pub mod budget;
pub mod classify;
mod compress;
mod compressed;
mod control;
pub mod curve;
mod error;
pub mod fit;
pub mod floor;
pub mod grid;
mod memo;
mod pipeline;
pub mod playback;
pub mod predict;
pub mod quantize;
mod refine;
pub mod report;
mod reuse;
pub mod scalar;
pub mod size_budget;
pub mod track;
mod verify;
mod widths;

pub use classify::{Classification, TrackClass, classify};
pub use compress::compress;
pub use compressed::CompressedClip;
pub use control::Control;
pub use curve::{Curve, Interpolation};
pub use error::{CodecError, FirstPass};
pub use memo::{Recompressor, Reuse};
pub use report::{ClipReport, JointCost};
pub use track::{Animated, TrackData};
pub mod runtime;

pub use runtime::{Cursor, RuntimeClip};
