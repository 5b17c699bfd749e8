//! The runtime decoder (the `skelpack-runtime` crate) on a [`CompressedClip`] in memory:
//! the clip's payload is written as the container stores it and read back by the runtime,
//! so what is sampled here is exactly what an engine embedding the runtime decodes.
//! Engines use `skelpack_runtime` directly (docs/RUNTIME.md).

use std::cell::RefCell;

use glam::{Quat, Vec3};
use skelpack_runtime::{Clip, CursorState, JointPose};

use super::CompressedClip;
use crate::container::{meta, payload};
use crate::model::Transform;

/// A runtime clip built from a compressed clip.
#[derive(Clone, Debug)]
pub struct RuntimeClip {
    clip: Clip,
    scratch: RefCell<Vec<JointPose>>,
}

/// A runtime pose as the model's transform.
pub fn to_transform(p: &JointPose) -> Transform {
    Transform::new(
        Vec3::from_array(p.translation),
        Quat::from_array(p.rotation),
        Vec3::from_array(p.scale),
    )
}

/// The model's transform as a runtime pose.
pub fn to_joint_pose(t: &Transform) -> JointPose {
    JointPose {
        translation: t.translation.to_array(),
        rotation: t.rotation.to_array(),
        scale: t.scale.to_array(),
    }
}

fn copy_out(from: &[JointPose], out: &mut [Transform]) {
    for (o, p) in out.iter_mut().zip(from) {
        *o = to_transform(p);
    }
}

impl RuntimeClip {
    /// Lays out `clip` through its container payload and metadata block (panics only if
    /// skelpack wrote a payload its own reader refuses, which `container::write` also
    /// checks).
    pub fn new(clip: &CompressedClip) -> Self {
        let rest: Vec<JointPose> = clip.rest.iter().map(to_joint_pose).collect();
        let bytes = payload::write(clip);
        let record = skelpack_runtime::payload::parse(&bytes, &clip.name, rest.len())
            .expect("the runtime reads every payload skelpack writes");
        let block = meta::write(&clip.playback);
        let playback =
            skelpack_runtime::meta::parse(&block, 0..block.len(), &clip.name, rest.len())
                .expect("the runtime reads every metadata block skelpack writes");
        Self {
            clip: Clip::new(&record, &rest).with_playback(&record, &rest, &playback),
            scratch: RefCell::new(rest),
        }
    }

    /// The runtime's clip.
    pub fn clip(&self) -> &Clip {
        &self.clip
    }

    /// Random access: every joint's local transform at a fractional frame.
    pub fn sample(&self, frame: f32, out: &mut [Transform]) {
        let mut s = self.scratch.borrow_mut();
        self.clip.sample(frame, &mut s);
        copy_out(&s, out);
    }

    /// A cursor for forward playback from frame 0.
    pub fn cursor(&self) -> Cursor<'_> {
        Cursor {
            clip: &self.clip,
            state: self.clip.cursor_state(),
            scratch: self.scratch.borrow().clone(),
        }
    }
}

/// Forward playback over a [`RuntimeClip`].
pub struct Cursor<'a> {
    clip: &'a Clip,
    state: CursorState,
    scratch: Vec<JointPose>,
}

impl Cursor<'_> {
    /// Restarts from frame 0.
    pub fn reset(&mut self) {
        self.state.reset();
    }

    /// Decodes the pose at `frame`; moving forward reads on, moving back restarts.
    pub fn sample(&mut self, frame: f32, out: &mut [Transform]) {
        self.clip
            .sample_forward(&mut self.state, frame, &mut self.scratch);
        copy_out(&self.scratch, out);
    }
}
