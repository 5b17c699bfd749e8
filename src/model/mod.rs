//! The in-memory animation model every other module speaks: a [`Skeleton`] of joints, a
//! [`Clip`] of dense per-joint tracks sampled at a uniform rate, and [`Pose`] evaluation
//! into object space (the scene root's frame).

mod ancestry;
mod clip;
pub mod event;
pub mod playback;
mod pose;
pub mod sampling;
pub mod scalar;
mod skeleton;
mod socket;
pub mod source_curve;
mod transform;
mod units;

pub use ancestry::{Ancestry, at_or_above};
pub use clip::{Clip, JointTracks, TrackKind};
pub use event::Event;
pub use pose::{ObjectPose, Pose, local_to_object, local_to_object_f64};
pub use scalar::{ScalarTrack, StoredScalarTrack};
pub use skeleton::{Joint, Skeleton};
pub use socket::Socket;
pub use source_curve::SourceCurve;
pub use transform::{
    SlerpArc, Transform, angle_of_chord_squared, nlerp_shortest, quat_angle, quat_chord_squared,
    slerp_shortest,
};
pub use units::{Confidence, LengthUnit, Units, format_mm};
