//! The default character's skeleton: a 59-joint humanoid in a T-pose (metres, Y up, facing
//! +Z, 1.8 m tall, feet on the ground) with five three-joint fingers per hand and a sword
//! held in the right hand (`Sword`, with `SwordTip` one metre down the blade).
//!
//! Rest rotations are identity except the sword's, so a joint's rest frame is the world's.

use glam::{DQuat, DVec3};

/// Side of a limb: `Left` is +X (the character faces +Z).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Left,
    Right,
}

impl Side {
    pub const BOTH: [Side; 2] = [Side::Left, Side::Right];

    /// +1 for left, -1 for right: mirrors X.
    pub fn sign(self) -> f64 {
        match self {
            Side::Left => 1.0,
            Side::Right => -1.0,
        }
    }

    pub fn prefix(self) -> &'static str {
        match self {
            Side::Left => "Left",
            Side::Right => "Right",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// Finger names, thumb first.
pub const FINGERS: [&str; 5] = ["Thumb", "Index", "Middle", "Ring", "Pinky"];

/// Left-hand finger joint offsets (from the hand, then from each previous phalanx).
pub const FINGER_OFFSETS: [[[f64; 3]; 3]; 5] = [
    [
        [0.025, -0.015, 0.03],
        [0.032, -0.004, 0.02],
        [0.028, 0.0, 0.006],
    ],
    [[0.09, 0.0, 0.032], [0.045, 0.0, 0.0], [0.027, 0.0, 0.0]],
    [[0.095, 0.0, 0.011], [0.05, 0.0, 0.0], [0.03, 0.0, 0.0]],
    [[0.09, 0.0, -0.011], [0.045, 0.0, 0.0], [0.028, 0.0, 0.0]],
    [[0.08, -0.002, -0.031], [0.035, 0.0, 0.0], [0.022, 0.0, 0.0]],
];

/// Leg lengths: hip joint to knee, knee to ankle.
pub const THIGH: f64 = 0.42;
pub const SHIN: f64 = 0.39;
/// Rest height of the ankle joint above the ground.
pub const ANKLE_HEIGHT: f64 = 0.08;
/// Rest height of the hips joint.
pub const HIPS_HEIGHT: f64 = 0.95;
/// The hip joint relative to the hips (left side; mirror X for the right).
pub const HIP_OFFSET: [f64; 3] = [0.09, -0.06, 0.0];
/// Blade length from the grip to `SwordTip`.
pub const BLADE: f64 = 1.0;

/// One joint of the rig: name, parent index, rest offset, rest rotation.
#[derive(Clone, Debug)]
pub struct RigJoint {
    pub name: String,
    pub parent: Option<usize>,
    pub offset: DVec3,
    pub rotation: DQuat,
}

/// The rig's joints, parents first in depth-first order (the order glTF importers read back).
pub fn joints() -> Vec<RigJoint> {
    let mut j = Vec::new();
    let add = |j: &mut Vec<RigJoint>, name: String, parent: Option<usize>, o: [f64; 3]| {
        j.push(RigJoint {
            name,
            parent,
            offset: DVec3::from(o),
            rotation: DQuat::IDENTITY,
        });
        j.len() - 1
    };
    let root = add(&mut j, "Root".into(), None, [0.0; 3]);
    let hips = add(&mut j, "Hips".into(), Some(root), [0.0, HIPS_HEIGHT, 0.0]);
    let spine = add(&mut j, "Spine".into(), Some(hips), [0.0, 0.10, 0.0]);
    let spine1 = add(&mut j, "Spine1".into(), Some(spine), [0.0, 0.12, 0.0]);
    let spine2 = add(&mut j, "Spine2".into(), Some(spine1), [0.0, 0.12, 0.0]);
    let neck = add(&mut j, "Neck".into(), Some(spine2), [0.0, 0.16, 0.0]);
    let head = add(&mut j, "Head".into(), Some(neck), [0.0, 0.09, 0.0]);
    add(&mut j, "HeadTop".into(), Some(head), [0.0, 0.25, 0.0]);
    add(&mut j, "Jaw".into(), Some(head), [0.0, 0.02, 0.045]);
    for side in Side::BOTH {
        let (s, p) = (side.sign(), side.prefix());
        let sh = add(
            &mut j,
            format!("{p}Shoulder"),
            Some(spine2),
            [0.03 * s, 0.12, -0.01],
        );
        let arm = add(&mut j, format!("{p}Arm"), Some(sh), [0.15 * s, 0.0, 0.0]);
        let fore = add(
            &mut j,
            format!("{p}ForeArm"),
            Some(arm),
            [0.28 * s, 0.0, 0.0],
        );
        let hand = add(&mut j, format!("{p}Hand"), Some(fore), [0.25 * s, 0.0, 0.0]);
        for (f, name) in FINGERS.iter().enumerate() {
            let mut parent = hand;
            for (k, o) in FINGER_OFFSETS[f].iter().enumerate() {
                let o = [o[0] * s, o[1], o[2]];
                parent = add(&mut j, format!("{p}Hand{name}{}", k + 1), Some(parent), o);
            }
        }
        if side == Side::Right {
            let sword = add(&mut j, "Sword".into(), Some(hand), [-0.075, -0.025, 0.0]);
            // The blade runs along the sword's +Y, which the rest pose points forward (+Z).
            j[sword].rotation = DQuat::from_rotation_x(std::f64::consts::FRAC_PI_2);
            add(&mut j, "SwordTip".into(), Some(sword), [0.0, BLADE, 0.0]);
        }
    }
    for side in Side::BOTH {
        let (s, p) = (side.sign(), side.prefix());
        let o = HIP_OFFSET;
        let up = add(
            &mut j,
            format!("{p}UpLeg"),
            Some(hips),
            [o[0] * s, o[1], o[2]],
        );
        let leg = add(&mut j, format!("{p}Leg"), Some(up), [0.0, -THIGH, 0.0]);
        let foot = add(&mut j, format!("{p}Foot"), Some(leg), [0.0, -SHIN, 0.0]);
        let toe = add(
            &mut j,
            format!("{p}ToeBase"),
            Some(foot),
            [0.0, -0.055, 0.12],
        );
        add(&mut j, format!("{p}ToeEnd"), Some(toe), [0.0, 0.0, 0.07]);
    }
    j
}

/// Index of a joint by name (the rig is fixed, so a miss is a programming error).
pub fn index(joints: &[RigJoint], name: &str) -> usize {
    joints
        .iter()
        .position(|j| j.name == name)
        .unwrap_or_else(|| panic!("the rig has no joint '{name}'"))
}

/// Rest-pose world positions and rotations.
pub fn rest_world(joints: &[RigJoint]) -> Vec<(DVec3, DQuat)> {
    let mut out: Vec<(DVec3, DQuat)> = Vec::with_capacity(joints.len());
    for j in joints {
        let w = match j.parent {
            Some(p) => {
                let (pp, pr) = out[p];
                (pp + pr * j.offset, pr * j.rotation)
            }
            None => (j.offset, j.rotation),
        };
        out.push(w);
    }
    out
}
