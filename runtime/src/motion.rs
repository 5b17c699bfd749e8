//! Root motion (docs/RUNTIME.md): the motion joint's travel between two times, across loop
//! wraps, as a rigid delta in the character's own frame.
//!
//! With `M(s) = (p(s), r(s))` the motion joint's decoded local transform at frame `s` of the
//! clip, the travel from the start of a cycle is `D(s) = (p(s) − p(0), r(s) · r(0)⁻¹)`. Unwrapped time `t = k · L + s` (`L` the
//! last frame, `0 ≤ s < L`) has travelled `U(t) = C^k ∘ D(s)`, where `C` is the source's
//! whole-cycle delta (stored exactly, so many cycles accumulate no compression error) and
//! `(pa, Ra) ∘ (pb, Rb) = (pa + Ra · pb, Ra · Rb)`. The delta between two times is
//! `U(t0)⁻¹ ∘ U(t1)`: its translation is expressed in the facing at `t0`, so an engine
//! applies it as `world.p += world.r · delta.p; world.r = world.r · delta.r`. `U(0)` is
//! exactly the identity, so deltas applied tick after tick telescope: after `N` cycles the
//! character stands at `C^N`, the source's own `N`-cycle travel, whatever the compression
//! error (which stays within one cycle's travel, not accumulated).

use glam::{DQuat, DVec3, Quat, Vec3};

use crate::clip::{Clip, JointPose};
use crate::meta::RootMotion;

/// A rigid motion: a translation and a rotation (unit quaternion x, y, z, w).
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MotionDelta {
    pub translation: [f32; 3],
    pub rotation: [f32; 4],
}

impl Default for MotionDelta {
    fn default() -> Self {
        Self {
            translation: [0.0; 3],
            rotation: [0.0, 0.0, 0.0, 1.0],
        }
    }
}

/// A rigid motion in the composition order of the module documentation, in double
/// precision (a delta is rounded to `f32` once, when returned).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rigid {
    pub p: DVec3,
    pub r: DQuat,
}

impl Rigid {
    pub const IDENTITY: Self = Self {
        p: DVec3::ZERO,
        r: DQuat::IDENTITY,
    };

    /// A translation and rotation given in single precision.
    pub fn from_f32(p: Vec3, r: Quat) -> Self {
        Self {
            p: p.as_dvec3(),
            r: r.as_dquat().normalize(),
        }
    }

    /// `self` followed by `b` (b expressed in the frame `self` ends in).
    pub fn then(self, b: Self) -> Self {
        Self {
            p: self.p + self.r * b.p,
            r: (self.r * b.r).normalize(),
        }
    }

    /// The motion that undoes `self`.
    pub fn inverse(self) -> Self {
        let ri = self.r.inverse();
        Self {
            p: -(ri * self.p),
            r: ri,
        }
    }

    /// `self` repeated `n` times (`n < 0`: the inverse repeated), by squaring.
    pub fn pow(self, n: i64) -> Self {
        let (mut base, mut n) = if n < 0 {
            (self.inverse(), n.unsigned_abs())
        } else {
            (self, n as u64)
        };
        let mut acc = Self::IDENTITY;
        while n > 0 {
            if n & 1 == 1 {
                acc = acc.then(base);
            }
            base = base.then(base);
            n >>= 1;
        }
        acc
    }

    /// The travel from `start` to `pose` (`D` of the module documentation).
    pub fn travel(start: Self, pose: Self) -> Self {
        Self {
            p: pose.p - start.p,
            r: (pose.r * start.r.inverse()).normalize(),
        }
    }

    pub fn to_delta(self) -> MotionDelta {
        MotionDelta {
            translation: self.p.as_vec3().to_array(),
            rotation: self.r.as_quat().to_array(),
        }
    }
}

/// A clip's root motion: the motion joint's tracks as a one-joint clip, its decoded pose
/// at frame 0, and the record.
#[derive(Clone, Debug)]
pub(crate) struct Motion {
    pub joint_clip: Box<Clip>,
    pub start: Rigid,
    pub record: RootMotion,
}

impl Motion {
    /// The motion of `record` over the motion joint's tracks `joint_clip`.
    pub fn new(joint_clip: Clip, record: RootMotion) -> Self {
        let mut m = Self {
            joint_clip: Box::new(joint_clip),
            start: Rigid::IDENTITY,
            record,
        };
        m.start = m.pose(0.0);
        m
    }

    /// The motion joint's decoded transform at frame `s`.
    fn pose(&self, s: f32) -> Rigid {
        let mut pose = [JointPose::default()];
        self.joint_clip.sample(s, &mut pose);
        Rigid::from_f32(
            Vec3::from_array(pose[0].translation),
            Quat::from_array(pose[0].rotation),
        )
    }

    fn cycle(&self) -> Rigid {
        Rigid::from_f32(
            Vec3::from_array(self.record.cycle_translation),
            Quat::from_array(self.record.cycle_rotation),
        )
    }

    /// `D(s)`: the travel from the cycle's start to frame `s` (within the clip).
    fn travel(&self, s: f32) -> Rigid {
        Rigid::travel(self.start, self.pose(s))
    }

    /// The delta from frame `f0` to frame `f1` of a clip whose last frame is `last`;
    /// `looping`: times wrap (else they clamp to the clip).
    pub fn delta(&self, f0: f32, f1: f32, last: f32, looping: bool) -> Rigid {
        let split = |f: f32| -> (i64, f32) {
            let f = if f.is_nan() { 0.0 } else { f };
            if !looping || last <= 0.0 || !f.is_finite() {
                return (0, f.clamp(0.0, last.max(0.0)));
            }
            let k = (f / last).floor();
            let s = (f - k * last).clamp(0.0, last);
            // Beyond ±2^40 cycles the count saturates (no clip plays that long).
            (k.clamp(-(2f32.powi(40)), 2f32.powi(40)) as i64, s)
        };
        let (k0, s0) = split(f0);
        let (k1, s1) = split(f1);
        self.travel(s0)
            .inverse()
            .then(self.cycle().pow(k1 - k0))
            .then(self.travel(s1))
    }
}
