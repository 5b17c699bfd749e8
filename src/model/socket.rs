//! Sockets: nodes that are not joints but hang rigidly from one (a weapon slot, a camera, a
//! `Head_end` tip, a robot's rigid plate). They do not animate on their own; where they are
//! follows from their joint, so a joint's error budget has to cover them (docs/EXPORT.md,
//! "Sockets").

use glam::DAffine3;

/// A non-joint node attached under a joint of the skeleton.
#[derive(Clone, Debug, PartialEq)]
pub struct Socket {
    /// The node's name in the source (unique names are not guaranteed by any format).
    pub name: String,
    /// The nearest joint above the node: the one whose motion carries it.
    pub joint: usize,
    /// The node's transform in the joint's local space: the chain of the node transforms
    /// from the joint down to the socket (the lever from the joint).
    pub offset: DAffine3,
    /// The glTF node this socket came from, if any.
    pub source_node: Option<usize>,
}

impl Socket {
    /// The socket's origin in its joint's local space.
    pub fn lever(&self) -> glam::DVec3 {
        self.offset.translation
    }
}
