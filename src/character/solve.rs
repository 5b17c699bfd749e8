//! Animation controls (what a clip animates) and their solution into local joint transforms:
//! forward kinematics for the body and arms, analytic two-bone IK for the legs so planted
//! feet stay where they are put.

use glam::{DMat3, DQuat, DVec3, EulerRot};

use super::rig::{self, FINGERS, RigJoint, SHIN, Side, THIGH};
use crate::model::Transform;

/// An arm: hang (`down`, radians from the T-pose), forward `swing`, `twist` about the arm,
/// `elbow` bend, and the hand's (pitch, yaw, roll), mirrored for the right side.
#[derive(Clone, Copy, Debug, Default)]
pub struct Arm {
    pub down: f64,
    pub swing: f64,
    pub twist: f64,
    pub elbow: f64,
    pub hand: DVec3,
    /// Finger curl per finger (thumb first), radians per phalanx.
    pub curl: [f64; 5],
    pub spread: f64,
}

/// A foot: the ankle's world position, heading offset, pitch (toe down positive) and toe bend.
#[derive(Clone, Copy, Debug, Default)]
pub struct Foot {
    pub ankle: DVec3,
    pub yaw: f64,
    pub pitch: f64,
    pub toe: f64,
}

/// Everything a clip animates at one instant. Euler triples are (pitch X, yaw Y, roll Z).
#[derive(Clone, Copy, Debug, Default)]
pub struct Controls {
    pub root: DVec3,
    pub heading: f64,
    /// Hips relative to the root (y is the hips height).
    pub hips: DVec3,
    pub hips_rot: DVec3,
    pub spine: [DVec3; 3],
    pub neck: DVec3,
    pub head: DVec3,
    pub jaw: f64,
    pub clavicle: [DVec3; 2],
    pub arms: [Arm; 2],
    pub feet: [Foot; 2],
    /// Extra rotation of the sword in the hand.
    pub sword: DVec3,
}

fn euler(v: DVec3) -> DQuat {
    DQuat::from_euler(EulerRot::YXZ, v.y, v.x, v.z)
}

fn mirrored(v: DVec3, s: f64) -> DVec3 {
    DVec3::new(v.x, v.y * s, v.z * s)
}

/// Two-bone IK in the parent's space: the thigh rotation and knee bend that put the ankle
/// at `d` (relative to the hip joint), the knee pointing towards `pole`.
fn two_bone(d: DVec3, pole: DVec3) -> (DQuat, f64) {
    let dist = d.length().clamp(0.05, THIGH + SHIN - 1e-4);
    let dn = d.normalize_or(-DVec3::Y);
    let knee_interior = ((THIGH * THIGH + SHIN * SHIN - dist * dist) / (2.0 * THIGH * SHIN))
        .clamp(-1.0, 1.0)
        .acos();
    let bend = std::f64::consts::PI - knee_interior;
    let alpha = ((THIGH * THIGH + dist * dist - SHIN * SHIN) / (2.0 * THIGH * dist))
        .clamp(-1.0, 1.0)
        .acos();
    let f = (pole - dn * pole.dot(dn)).normalize_or(DVec3::Z);
    let dir = dn * alpha.cos() + f * alpha.sin();
    let fwd = -dn * alpha.sin() + f * alpha.cos();
    let y = -dir;
    let x = y.cross(fwd);
    (
        DQuat::from_mat3(&DMat3::from_cols(x, y, fwd)).normalize(),
        bend,
    )
}

/// Local transforms of every rig joint for `c`.
pub fn solve(joints: &[RigJoint], c: &Controls) -> Vec<Transform> {
    let mut rot: Vec<DQuat> = joints.iter().map(|j| j.rotation).collect();
    let mut pos: Vec<DVec3> = joints.iter().map(|j| j.offset).collect();
    let at = |n: &str| rig::index(joints, n);
    let heading = DQuat::from_rotation_y(c.heading);
    pos[at("Root")] = c.root;
    rot[at("Root")] = heading;
    pos[at("Hips")] = c.hips;
    rot[at("Hips")] = euler(c.hips_rot);
    for (k, n) in ["Spine", "Spine1", "Spine2"].iter().enumerate() {
        rot[at(n)] = euler(c.spine[k]);
    }
    rot[at("Neck")] = euler(c.neck);
    rot[at("Head")] = euler(c.head);
    rot[at("Jaw")] = DQuat::from_rotation_x(c.jaw);
    for side in Side::BOTH {
        let (s, p, i) = (side.sign(), side.prefix(), side.index());
        let a = &c.arms[i];
        rot[at(&format!("{p}Shoulder"))] = euler(mirrored(c.clavicle[i], s));
        rot[at(&format!("{p}Arm"))] = DQuat::from_rotation_x(-a.swing)
            * DQuat::from_rotation_z(-s * a.down)
            * DQuat::from_rotation_x(s * a.twist);
        rot[at(&format!("{p}ForeArm"))] = DQuat::from_rotation_y(-s * a.elbow);
        rot[at(&format!("{p}Hand"))] = euler(mirrored(a.hand, s));
        const SPREAD: [f64; 5] = [0.0, 1.0, 0.3, -0.4, -1.0];
        const PHALANX: [f64; 3] = [1.0, 1.1, 0.8];
        for (f, name) in FINGERS.iter().enumerate() {
            for (k, w) in PHALANX.iter().enumerate() {
                let curl = a.curl[f] * w;
                let q = if f == 0 {
                    DQuat::from_rotation_y(s * curl * 0.6) * DQuat::from_rotation_z(-s * curl * 0.5)
                } else if k == 0 {
                    DQuat::from_rotation_y(-s * a.spread * SPREAD[f])
                        * DQuat::from_rotation_z(-s * curl)
                } else {
                    DQuat::from_rotation_z(-s * curl)
                };
                rot[at(&format!("{p}Hand{name}{}", k + 1))] = q;
            }
        }
    }
    let sword = at("Sword");
    rot[sword] = joints[sword].rotation * euler(c.sword);

    // Legs: the ankle goes where the foot control says, whatever the hips do.
    let hips_rot = heading * rot[at("Hips")];
    let hips_pos = c.root + heading * c.hips;
    for side in Side::BOTH {
        let (s, p, i) = (side.sign(), side.prefix(), side.index());
        let f = &c.feet[i];
        let hip = DVec3::new(
            rig::HIP_OFFSET[0] * s,
            rig::HIP_OFFSET[1],
            rig::HIP_OFFSET[2],
        );
        let facing = DQuat::from_rotation_y(c.heading + f.yaw);
        let d = hips_rot.inverse() * (f.ankle - hips_pos) - hip;
        let pole = hips_rot.inverse() * (facing * DVec3::Z);
        let (thigh, bend) = two_bone(d, pole);
        let knee = DQuat::from_rotation_x(bend);
        rot[at(&format!("{p}UpLeg"))] = thigh;
        rot[at(&format!("{p}Leg"))] = knee;
        let parent = hips_rot * thigh * knee;
        let want = facing * DQuat::from_rotation_x(f.pitch);
        rot[at(&format!("{p}Foot"))] = (parent.inverse() * want).normalize();
        rot[at(&format!("{p}ToeBase"))] = DQuat::from_rotation_x(-f.toe);
    }
    pos.iter()
        .zip(&rot)
        .map(|(p, r)| Transform::new(p.as_vec3(), r.normalize().as_quat(), glam::Vec3::ONE))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ik_reaches_its_target() {
        for d in [
            DVec3::new(0.0, -0.7, 0.2),
            DVec3::new(0.1, -0.5, -0.2),
            DVec3::new(0.0, -0.8, 0.0),
        ] {
            let (q, bend) = two_bone(d, DVec3::Z);
            let ankle = q
                * (DVec3::new(0.0, -THIGH, 0.0)
                    + DQuat::from_rotation_x(bend) * DVec3::new(0.0, -SHIN, 0.0));
            assert!((ankle - d).length() < 1e-9, "{ankle} vs {d}");
            // The knee bends forward.
            assert!((q * DVec3::new(0.0, -THIGH, 0.0)).z >= d.z * THIGH / d.length() - 1e-9);
        }
    }
}
