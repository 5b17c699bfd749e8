//! The default character's meshes: one axis-aligned box per body part in the bind pose, each
//! rigidly bound to one joint (a "body" mesh), plus the sword bound to the `Sword` joint.

use glam::{DVec3, Mat4};

use super::rig::{self, FINGER_OFFSETS, FINGERS, RigJoint, Side};
use crate::import::SkinnedMesh;

/// Soft slate blue for the body, brushed steel for the sword.
pub const BODY_COLOR: [f32; 4] = [0.36, 0.55, 0.78, 1.0];
pub const SWORD_COLOR: [f32; 4] = [0.78, 0.79, 0.82, 1.0];

/// A box on a joint: corners relative to the joint's rest world position.
struct Part {
    joint: usize,
    min: DVec3,
    max: DVec3,
}

fn part(joints: &[RigJoint], name: &str, min: [f64; 3], max: [f64; 3]) -> Part {
    Part {
        joint: rig::index(joints, name),
        min: DVec3::from(min),
        max: DVec3::from(max),
    }
}

/// A box around the segment from the joint to `to` (relative), `r` thick on the other axes.
fn segment(joints: &[RigJoint], name: &str, to: DVec3, r: [f64; 3]) -> Part {
    let r = DVec3::from(r);
    let lo = DVec3::ZERO.min(to) - r;
    let hi = DVec3::ZERO.max(to) + r;
    Part {
        joint: rig::index(joints, name),
        min: lo,
        max: hi,
    }
}

fn body_parts(j: &[RigJoint]) -> Vec<Part> {
    let mut p = vec![
        part(j, "Hips", [-0.16, -0.1, -0.1], [0.16, 0.1, 0.1]),
        part(j, "Spine", [-0.14, 0.0, -0.09], [0.14, 0.12, 0.09]),
        part(j, "Spine1", [-0.15, 0.0, -0.1], [0.15, 0.12, 0.1]),
        part(j, "Spine2", [-0.18, 0.0, -0.11], [0.18, 0.17, 0.11]),
        part(j, "Neck", [-0.045, 0.0, -0.045], [0.045, 0.1, 0.045]),
        part(j, "Head", [-0.095, 0.0, -0.105], [0.095, 0.24, 0.11]),
        part(j, "Jaw", [-0.07, -0.035, -0.04], [0.07, 0.01, 0.06]),
    ];
    for side in Side::BOTH {
        let (s, n) = (side.sign(), side.prefix());
        let x = DVec3::X * s;
        p.push(segment(
            j,
            &format!("{n}Shoulder"),
            x * 0.15,
            [0.02, 0.05, 0.05],
        ));
        p.push(segment(
            j,
            &format!("{n}Arm"),
            x * 0.28,
            [0.02, 0.055, 0.055],
        ));
        p.push(segment(
            j,
            &format!("{n}ForeArm"),
            x * 0.25,
            [0.01, 0.045, 0.045],
        ));
        p.push(segment(
            j,
            &format!("{n}Hand"),
            x * 0.085,
            [0.005, 0.018, 0.045],
        ));
        for (f, name) in FINGERS.iter().enumerate() {
            for k in 0..3 {
                let next = FINGER_OFFSETS[f][(k + 1).min(2)];
                let len = if k < 2 { 1.0 } else { 0.8 };
                let to = DVec3::new(next[0] * s, next[1], next[2]) * len;
                let r = if f == 0 { 0.011 } else { 0.009 };
                p.push(segment(
                    j,
                    &format!("{n}Hand{name}{}", k + 1),
                    to,
                    [0.003, r, r],
                ));
            }
        }
        p.push(segment(
            j,
            &format!("{n}UpLeg"),
            -DVec3::Y * rig::THIGH,
            [0.07, 0.0, 0.07],
        ));
        p.push(segment(
            j,
            &format!("{n}Leg"),
            -DVec3::Y * rig::SHIN,
            [0.055, 0.0, 0.055],
        ));
        p.push(part(
            j,
            &format!("{n}Foot"),
            [-0.05, -0.08, -0.06],
            [0.05, 0.03, 0.12],
        ));
        p.push(part(
            j,
            &format!("{n}ToeBase"),
            [-0.048, -0.025, 0.0],
            [0.048, 0.02, 0.08],
        ));
    }
    p
}

fn sword_parts(j: &[RigJoint]) -> Vec<Part> {
    // In rest-world terms the blade points +Z from the grip; the blade is flat in X.
    vec![
        part(j, "Sword", [-0.016, -0.016, -0.12], [0.016, 0.016, 0.03]),
        part(j, "Sword", [-0.026, -0.026, -0.16], [0.026, 0.026, -0.12]),
        part(j, "Sword", [-0.014, -0.1, 0.03], [0.014, 0.1, 0.055]),
        part(
            j,
            "Sword",
            [-0.005, -0.028, 0.055],
            [0.005, 0.028, rig::BLADE - 0.06],
        ),
        part(
            j,
            "Sword",
            [-0.004, -0.012, rig::BLADE - 0.06],
            [0.004, 0.012, rig::BLADE],
        ),
    ]
}

fn build(
    name: &str,
    parts: &[Part],
    world: &[(DVec3, glam::DQuat)],
    color: [f32; 4],
) -> SkinnedMesh {
    let mut m = SkinnedMesh {
        name: name.into(),
        base_color: color,
        inverse_bind: world
            .iter()
            .map(|&(p, r)| Mat4::from_rotation_translation(r.as_quat(), p.as_vec3()).inverse())
            .collect(),
        ..SkinnedMesh::default()
    };
    // Six faces: normal, and the two in-face axes (u, v) with u x v = normal.
    const FACES: [([f64; 3], [f64; 3], [f64; 3]); 6] = [
        ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]),
        ([-1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 0.0]),
        ([0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]),
        ([0.0, -1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0]),
        ([0.0, 0.0, 1.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]),
        ([0.0, 0.0, -1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]),
    ];
    for p in parts {
        let origin = world[p.joint].0;
        let center = origin + (p.min + p.max) * 0.5;
        let half = (p.max - p.min) * 0.5;
        for (n, u, v) in FACES {
            let (n, u, v) = (DVec3::from(n), DVec3::from(u), DVec3::from(v));
            let base = m.positions.len() as u32;
            for (a, b) in [(-1.0, -1.0), (1.0, -1.0), (1.0, 1.0), (-1.0, 1.0)] {
                let q = center + (n + u * a + v * b) * half;
                m.positions.push(q.as_vec3());
                m.normals.push(n.as_vec3());
                m.joints.push([p.joint as u16, 0, 0, 0]);
                m.weights.push([1.0, 0.0, 0.0, 0.0]);
            }
            m.indices
                .extend([base, base + 1, base + 2, base, base + 2, base + 3]);
        }
    }
    m
}

/// The body and sword meshes in the bind (rest) pose.
pub fn meshes(joints: &[RigJoint]) -> Vec<SkinnedMesh> {
    let world = rig::rest_world(joints);
    vec![
        build("Body", &body_parts(joints), &world, BODY_COLOR),
        build("Sword", &sword_parts(joints), &world, SWORD_COLOR),
    ]
}
