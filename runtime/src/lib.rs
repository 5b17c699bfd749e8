//! skelpack's runtime: reads a `.skp` container and samples poses, for engines to embed.
//!
//! ```no_run
//! use skelpack_runtime::{JointPose, Skp};
//! let skp = Skp::open(std::fs::read("walk.skp").unwrap()).unwrap();
//! let clip = skp.clip(0);
//! let mut pose = vec![JointPose::default(); skp.joint_count()];
//! clip.sample(12.5, &mut pose); // random access, at frame 12.5
//! let mut cursor = skelpack_runtime::Cursor::new(clip);
//! cursor.sample(13.0, &mut pose); // forward playback
//! ```
//!
//! The file is validated on open (every corrupt input gives an [`Error`], never a panic);
//! each clip's keys are laid out for sampling ([`ClipLayout`]: decoded and prepared for
//! speed, or compact, about the size of the file), which then allocates nothing. A C API
//! ([`capi`], `include/skelpack.h`) wraps the same types. docs/RUNTIME.md documents
//! embedding, memory and speed.

pub mod additive;
pub mod bits;
pub mod capi;
pub mod clip;
pub mod cpu;
pub mod cursor;
pub mod curve;
mod error;
pub mod events;
mod fixed;
pub mod keys;
mod lanes;
pub mod meta;
pub mod motion;
pub mod packed;
pub mod payload;
pub mod predict;
mod prepared;
pub mod quant;
pub mod read;
pub mod scalar;
pub mod sin;
mod skp;
pub mod table;

pub use additive::apply_additive;
pub use clip::{Clip, ClipLayout, JointPose};
pub use cursor::{Cursor, CursorState};
pub use error::Error;
pub use meta::ClipMeta;
pub use motion::MotionDelta;
pub use skp::Skp;
