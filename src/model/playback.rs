//! How a clip is played beyond its poses: whether it loops, which joint carries root
//! motion, whether it is an additive layer on a base, its events, and its scalar tracks
//! (morph-target weights) as compressed. Stored in a `.skp` clip's
//! metadata block (docs/FORMAT.md) and reported by `inspect` / `report`.

use serde::Serialize;

pub use skelpack_runtime::meta::{AdditiveMode, RootMotion};

/// What an additive clip is applied on.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum AdditiveBase {
    /// The skeleton's rest pose.
    Rest,
    /// One frame of another clip.
    Frame { clip: String, frame: u32 },
    /// Another clip, played in sync (the same frame).
    Clip { clip: String },
}

/// An additive clip's mode and base.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Additive {
    pub mode: AdditiveMode,
    pub base: AdditiveBase,
}

/// A clip's playback flags (all off: a full-body clip played once) and its events.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Playback {
    pub looping: bool,
    pub root_motion: Option<RootMotion>,
    pub additive: Option<Additive>,
    /// Named times the game reacts to, sorted by time (seconds from frame 0).
    pub events: Vec<super::Event>,
    /// Morph-target weights, compressed (a `.skp`'s scalar-track record).
    pub scalar_tracks: Vec<super::StoredScalarTrack>,
}
