//! Visual error (DESIGN §2): three markers per joint at its marker offset along local X, Y, Z,
//! compared in object space between a reference and a candidate, at every raw sample and at
//! the midpoints between samples. `attribution` splits each joint's error into what its own
//! tracks cause and what it inherits from its ancestors.

mod attribution;
mod limits;
mod markers;
mod report;
mod sockets;
mod visual_error;

pub use attribution::{
    Attribution, Contribution, attribute, caused_ratios, contributions, responsible,
};
pub use limits::{JointLimits, SocketMarker};
pub use markers::{
    JointMarkers, SquareTest, joint_error, joint_error_squared, marker_error, marker_within,
    socket_error,
};
pub use report::{ErrorReport, ErrorStats, exceeds};
pub use sockets::{SocketError, socket_errors, worst_socket};
pub use visual_error::{
    PoseSource, Reference, joint_error_f32, measure, measure_joint_max, to_f64,
};
