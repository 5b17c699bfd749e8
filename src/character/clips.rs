//! The default character's clips, as functions of time that fill [`Controls`]: an idle with
//! breathing and finger play, a walk cycle with planted feet, and a jumping overhead sword
//! strike with a ground impact. Several harmonics with phase offsets per joint keep the
//! motion from being trivially compressible.

use std::f64::consts::{PI, TAU};

use glam::DVec3;

use super::rig::{ANKLE_HEIGHT, Side};
use super::solve::{Arm, Controls, Foot};

/// Sample rate of every clip.
pub const RATE: f64 = 30.0;

/// A clip: name, duration in seconds and its pose function.
pub struct Motion {
    pub name: &'static str,
    pub duration: f64,
    pub pose: fn(f64) -> Controls,
}

/// The three clips, in the order they are exported.
pub const MOTIONS: [Motion; 3] = [
    Motion {
        name: "Idle",
        duration: 3.0,
        pose: idle,
    },
    Motion {
        name: "Walk",
        duration: WALK_PERIOD,
        pose: walk,
    },
    Motion {
        name: "JumpAttack",
        duration: 2.0,
        pose: jump_attack,
    },
];

/// Sum of harmonics `amp * sin(TAU * k * t / period + phase)`.
fn wave(t: f64, period: f64, h: &[(f64, f64, f64)]) -> f64 {
    h.iter()
        .map(|&(a, k, ph)| a * (TAU * k * t / period + ph).sin())
        .sum()
}

fn smoothstep(e0: f64, e1: f64, x: f64) -> f64 {
    let u = ((x - e0) / (e1 - e0)).clamp(0.0, 1.0);
    u * u * (3.0 - 2.0 * u)
}

/// Interpolates `(time, value)` keys with a time-parameterized Catmull-Rom spline (flat at
/// the ends), holding the end values outside.
fn keyed(t: f64, keys: &[(f64, f64)]) -> f64 {
    let n = keys.len();
    if t <= keys[0].0 {
        return keys[0].1;
    }
    if t >= keys[n - 1].0 {
        return keys[n - 1].1;
    }
    let i = keys.partition_point(|k| k.0 <= t) - 1;
    let slope = |j: usize| -> f64 {
        if j == 0 || j == n - 1 {
            0.0
        } else {
            (keys[j + 1].1 - keys[j - 1].1) / (keys[j + 1].0 - keys[j - 1].0)
        }
    };
    let (t0, t1) = (keys[i].0, keys[i + 1].0);
    let dt = t1 - t0;
    let u = (t - t0) / dt;
    let (u2, u3) = (u * u, u * u * u);
    keys[i].1 * (2.0 * u3 - 3.0 * u2 + 1.0)
        + slope(i) * dt * (u3 - 2.0 * u2 + u)
        + keys[i + 1].1 * (-2.0 * u3 + 3.0 * u2)
        + slope(i + 1) * dt * (u3 - u2)
}

/// A decaying oscillation starting at `t0` (zero before it).
fn ring(t: f64, t0: f64, freq: f64, decay: f64) -> f64 {
    if t < t0 {
        0.0
    } else {
        let x = t - t0;
        (TAU * freq * x).sin() * (-decay * x).exp()
    }
}

/// The neutral standing pose everything starts from: arms hanging, sword held forward-down.
fn stance() -> Controls {
    let mut c = Controls {
        hips: DVec3::new(0.0, 0.925, 0.0),
        ..Controls::default()
    };
    for side in Side::BOTH {
        let (s, i) = (side.sign(), side.index());
        c.feet[i] = Foot {
            ankle: DVec3::new(0.11 * s, ANKLE_HEIGHT, 0.0),
            yaw: 0.12 * s,
            ..Foot::default()
        };
        c.arms[i] = Arm {
            down: 1.3,
            swing: 0.05,
            elbow: 0.25,
            curl: [0.25, 0.3, 0.35, 0.4, 0.45],
            spread: 0.05,
            ..Arm::default()
        };
    }
    // The sword hand: a fist around the grip, the blade pointing forward and down.
    let r = &mut c.arms[Side::Right.index()];
    r.elbow = 0.35;
    r.swing = 0.15;
    // Deviating the wrist tilts the blade down along the forearm.
    r.hand = DVec3::new(0.0, 1.0, 0.0);
    r.curl = [0.9, 1.35, 1.4, 1.45, 1.5];
    r.spread = 0.0;
    c
}

/// Idle, 3 s, loops: breathing, weight shift, looking around, fingers playing.
pub fn idle(t: f64) -> Controls {
    const P: f64 = 3.0;
    let mut c = stance();
    let breath = wave(t, P, &[(1.0, 1.0, 0.0), (0.3, 2.0, 1.1), (0.08, 3.0, 0.4)]);
    c.hips.x = wave(t, P, &[(0.022, 1.0, 0.3), (0.004, 2.0, 1.7)]);
    c.hips.y += wave(t, P, &[(0.006, 2.0, 0.9), (0.002, 3.0, 0.2)]);
    c.hips_rot = DVec3::new(
        wave(t, P, &[(0.012, 1.0, 2.0)]),
        wave(t, P, &[(0.03, 1.0, 1.0), (0.01, 2.0, 0.1)]),
        wave(t, P, &[(0.035, 1.0, 0.3 + PI), (0.006, 3.0, 0.5)]),
    );
    for k in 0..3 {
        let w = [0.4, 0.7, 1.0][k];
        c.spine[k] = DVec3::new(
            -0.018 * breath * w,
            wave(t, P, &[(0.02 * w, 1.0, 1.3 + 0.2 * k as f64)]),
            -c.hips_rot.z * 0.35 + wave(t, P, &[(0.006, 2.0, k as f64)]),
        );
    }
    for i in 0..2 {
        c.clavicle[i] = DVec3::new(0.0, 0.0, 0.03 * breath);
    }
    c.neck = DVec3::new(0.01 * breath, wave(t, P, &[(0.08, 1.0, 0.6)]), 0.0);
    c.head = DVec3::new(
        wave(t, P, &[(0.05, 2.0, 0.3), (0.02, 3.0, 1.9)]),
        wave(t, P, &[(0.22, 1.0, 0.6), (0.06, 3.0, 0.2)]),
        wave(t, P, &[(0.03, 1.0, 2.4)]),
    );
    c.jaw = 0.02 + 0.015 * breath;
    for side in Side::BOTH {
        let (i, ph) = (side.index(), side.index() as f64 * 1.9);
        let a = &mut c.arms[i];
        a.down += wave(t, P, &[(0.03, 1.0, ph), (0.01, 2.0, ph + 0.7)]) - 0.02 * breath;
        a.swing += wave(t, P, &[(0.04, 1.0, ph + 1.2), (0.012, 3.0, ph)]);
        a.elbow += wave(t, P, &[(0.05, 1.0, ph + 2.1)]);
        a.hand += DVec3::new(
            wave(t, P, &[(0.06, 1.0, ph + 0.4)]),
            wave(t, P, &[(0.05, 2.0, ph + 0.9)]),
            wave(t, P, &[(0.04, 1.0, ph + 2.6)]),
        );
    }
    // Left fingers ripple pinky to index; the sword fist re-grips.
    let left = &mut c.arms[Side::Left.index()];
    for f in 0..5 {
        let ph = 0.9 * (4 - f) as f64;
        left.curl[f] += wave(t, P, &[(0.22, 2.0, ph), (0.08, 3.0, ph * 1.3)]) + 0.12;
    }
    left.spread += wave(t, P, &[(0.08, 1.0, 0.5)]);
    let right = &mut c.arms[Side::Right.index()];
    for f in 0..5 {
        right.curl[f] += wave(t, P, &[(0.05, 2.0, 0.3 * f as f64 + 2.0)]);
    }
    c.sword = DVec3::new(0.0, wave(t, P, &[(0.05, 1.0, 0.9)]), 0.0);
    c.feet[Side::Left.index()].ankle.z = 0.05;
    c.feet[Side::Right.index()].ankle.z = -0.04;
    c
}

/// Length of one walk cycle in seconds.
pub const WALK_PERIOD: f64 = 1.2;
/// How far a stance foot travels relative to the hips: the step length.
const STEP: f64 = 0.5;

/// One foot's walk: planted for half the cycle (phase 0 = heel strike), then swung forward.
fn walk_foot(t: f64, phase_offset: f64, x: f64, speed: f64) -> Foot {
    let p = (t / WALK_PERIOD + phase_offset).rem_euclid(1.0);
    let cycles = (t / WALK_PERIOD + phase_offset).floor();
    // The plant of the current cycle: the hips pass over it mid-stance.
    let t_plant = (cycles - phase_offset) * WALK_PERIOD;
    let plant = speed * t_plant + STEP * 0.5;
    let (z, lift, pitch, toe);
    if p < 0.5 {
        let u = p / 0.5;
        z = plant;
        // Heel strike (toes up), flat, then heel-off (toes down, toes bending).
        pitch = -0.25 * (1.0 - smoothstep(0.0, 0.18, u)) + 0.45 * smoothstep(0.72, 1.0, u);
        lift = 0.0;
        toe = 0.5 * smoothstep(0.72, 1.0, u);
    } else {
        let u = (p - 0.5) / 0.5;
        let s = smoothstep(0.0, 1.0, u);
        z = plant + speed * WALK_PERIOD * s;
        lift = 0.1 * (PI * u).sin().powf(1.3) + 0.015 * (TAU * u).sin();
        pitch = 0.45 * (1.0 - smoothstep(0.0, 0.35, u)) - 0.25 * smoothstep(0.6, 1.0, u);
        toe = 0.5 * (1.0 - smoothstep(0.0, 0.3, u));
    }
    // Pitching about the ball (heel-off) or the heel (strike) moves the ankle up.
    let raise = if pitch > 0.0 {
        0.125 * pitch.sin()
    } else {
        0.07 * (-pitch).sin()
    };
    Foot {
        ankle: DVec3::new(x, ANKLE_HEIGHT + lift + raise, z),
        yaw: 0.06 * x.signum(),
        pitch,
        toe,
    }
}

/// Walk, 1.2 s, loops (with root motion forward): planted feet, hip sway and bob, arms
/// swinging against the legs, the sword swinging less than the free arm.
pub fn walk(t: f64) -> Controls {
    const P: f64 = WALK_PERIOD;
    let speed = 2.0 * STEP / P;
    let mut c = stance();
    let ph = TAU * t / P;
    c.root = DVec3::new(0.0, 0.0, speed * t);
    c.hips = DVec3::new(
        wave(t, P, &[(0.028, 1.0, 0.0), (0.004, 3.0, 0.5)]),
        0.885 - 0.013 * (2.0 * ph).cos() + wave(t, P, &[(0.003, 4.0, 0.3)]),
        0.0,
    );
    c.hips_rot = DVec3::new(
        0.06 + 0.02 * (2.0 * ph + 0.6).sin(),
        wave(t, P, &[(0.12, 1.0, PI / 2.0), (0.015, 3.0, 0.2)]),
        wave(t, P, &[(0.05, 1.0, 0.0), (0.015, 2.0, 1.0)]),
    );
    for k in 0..3 {
        let w = [0.3, 0.35, 0.45][k];
        c.spine[k] = DVec3::new(
            -0.02 + 0.012 * (2.0 * ph + 0.9 + 0.3 * k as f64).sin(),
            -c.hips_rot.y * w,
            -c.hips_rot.z * w + 0.01 * (ph + k as f64).sin(),
        );
    }
    c.neck = DVec3::new(-0.02, -c.hips_rot.y * 0.1, 0.0);
    c.head = DVec3::new(
        -0.03 + 0.025 * (2.0 * ph + 1.6).sin(),
        wave(t, P, &[(0.03, 1.0, 0.7)]),
        -c.hips_rot.z * 0.4,
    );
    c.feet = [
        walk_foot(t, 0.0, 0.1, speed),
        walk_foot(t, 0.5, -0.1, speed),
    ];
    for side in Side::BOTH {
        let (s, i) = (side.sign(), side.index());
        // The left arm swings back as the left foot lands (phase 0).
        let amount = if side == Side::Right { 0.16 } else { 0.38 };
        let swing = -s * amount * ph.cos() + 0.05 * (2.0 * ph + 0.4 + i as f64).sin();
        let lag = -s * amount * (ph - 0.5).cos();
        let a = &mut c.arms[i];
        a.swing += swing;
        a.down += 0.03 * (2.0 * ph + 0.2).sin();
        a.elbow += 0.12 * (1.0 + (ph - 0.3 + if s > 0.0 { 0.0 } else { PI }).sin());
        a.hand += DVec3::new(0.1 * lag, 0.04 * (2.0 * ph).sin(), 0.03 * lag);
        if side == Side::Left {
            for f in 0..5 {
                a.curl[f] += 0.1 * (ph - 0.4 - 0.25 * f as f64).sin();
            }
        }
    }
    c.clavicle = [
        DVec3::new(0.0, 0.03 * ph.cos(), 0.02 * (2.0 * ph).sin()),
        DVec3::new(0.0, -0.03 * ph.cos(), 0.02 * (2.0 * ph + PI).sin()),
    ];
    c.sword = DVec3::new(0.05 * (ph - 0.8).sin(), 0.0, 0.04 * (2.0 * ph).sin());
    c
}

/// Jump attack, 2 s: crouch and wind up, leap forward with the sword overhead, strike the
/// ground on landing (impact at 1.1 s with a shudder), recover to the stance.
pub fn jump_attack(t: f64) -> Controls {
    let mut c = stance();
    let shake = ring(t, 1.1, 7.0, 6.0);
    let advance = 0.7 * smoothstep(0.5, 1.05, t);
    c.root = DVec3::new(0.0, 0.0, advance);
    c.hips.y = keyed(
        t,
        &[
            (0.0, 0.925),
            (0.2, 0.9),
            (0.45, 0.74),
            (0.6, 1.02),
            (0.8, 1.3),
            (1.0, 1.0),
            (1.12, 0.66),
            (1.35, 0.72),
            (1.7, 0.89),
            (2.0, 0.925),
        ],
    ) - 0.02 * shake;
    c.hips.z = keyed(
        t,
        &[
            (0.0, 0.0),
            (0.45, -0.08),
            (0.8, 0.0),
            (1.12, 0.12),
            (2.0, 0.0),
        ],
    );
    c.hips_rot = DVec3::new(
        keyed(
            t,
            &[
                (0.0, 0.0),
                (0.45, 0.3),
                (0.65, -0.12),
                (0.85, -0.2),
                (1.1, 0.5),
                (1.5, 0.25),
                (2.0, 0.0),
            ],
        ) + 0.04 * shake,
        keyed(
            t,
            &[
                (0.0, 0.0),
                (0.45, -0.3),
                (0.85, -0.2),
                (1.1, 0.08),
                (2.0, 0.0),
            ],
        ),
        0.05 * shake + 0.02 * (TAU * t / 2.0).sin(),
    );
    let twist = keyed(
        t,
        &[
            (0.0, 0.0),
            (0.45, -0.35),
            (0.85, -0.3),
            (1.08, 0.1),
            (1.4, 0.05),
            (2.0, 0.0),
        ],
    );
    for k in 0..3 {
        let w = [0.3, 0.35, 0.35][k];
        c.spine[k] = DVec3::new(
            keyed(
                t,
                &[
                    (0.0, 0.0),
                    (0.45, 0.05),
                    (0.85, -0.15),
                    (1.1, 0.25),
                    (2.0, 0.0),
                ],
            ) * w
                + 0.05 * shake * w,
            twist * w,
            0.03 * shake,
        );
    }
    c.head = DVec3::new(
        -0.6 * c.hips_rot.x * 0.5 - 0.06 * shake,
        -twist * 0.6,
        0.02 * shake,
    );
    c.jaw = keyed(
        t,
        &[
            (0.0, 0.02),
            (0.9, 0.02),
            (1.1, 0.25),
            (1.4, 0.05),
            (2.0, 0.02),
        ],
    );
    // Sword arm: behind the head, overhead, then a fast downward strike.
    let r = &mut c.arms[Side::Right.index()];
    r.swing = keyed(
        t,
        &[
            (0.0, 0.15),
            (0.45, 2.2),
            (0.8, 2.9),
            (0.95, 2.6),
            (1.1, 0.8),
            (1.14, 0.92),
            (1.2, 0.98),
            (1.35, 0.9),
            (2.0, 0.15),
        ],
    ) + 0.05 * shake;
    r.down = keyed(
        t,
        &[(0.0, 1.3), (0.45, 1.0), (0.9, 1.3), (1.1, 1.45), (2.0, 1.3)],
    );
    r.elbow = keyed(
        t,
        &[
            (0.0, 0.35),
            (0.45, 1.9),
            (0.85, 1.7),
            (0.97, 1.2),
            (1.1, 0.15),
            (1.5, 0.3),
            (2.0, 0.35),
        ],
    );
    r.hand.y = keyed(
        t,
        &[
            (0.0, 1.0),
            (0.45, 0.2),
            (0.9, 0.3),
            (1.1, 0.55),
            (1.2, 0.4),
            (1.4, 0.5),
            (2.0, 1.0),
        ],
    );
    r.hand.x = keyed(t, &[(0.0, 0.0), (0.45, -0.3), (1.1, 0.25), (2.0, 0.0)]) + 0.05 * shake;
    // Free arm: back in the wind-up, out for balance in the air, braced on landing.
    let l = &mut c.arms[Side::Left.index()];
    l.swing = keyed(
        t,
        &[
            (0.0, 0.05),
            (0.45, -0.6),
            (0.8, 1.1),
            (1.1, 0.5),
            (1.5, 0.2),
            (2.0, 0.05),
        ],
    );
    l.down = keyed(
        t,
        &[(0.0, 1.3), (0.45, 1.2), (0.8, 0.5), (1.1, 0.9), (2.0, 1.3)],
    );
    l.elbow = keyed(
        t,
        &[
            (0.0, 0.25),
            (0.45, 0.4),
            (0.8, 0.9),
            (1.1, 0.5),
            (2.0, 0.25),
        ],
    );
    let spread = keyed(
        t,
        &[
            (0.0, 0.05),
            (0.6, 0.4),
            (0.9, 0.3),
            (1.2, 0.15),
            (2.0, 0.05),
        ],
    );
    l.spread = spread;
    for f in 0..5 {
        l.curl[f] = keyed(
            t,
            &[(0.0, 0.3), (0.6, 0.05), (0.9, 0.15), (1.2, 0.6), (2.0, 0.3)],
        ) + 0.04 * f as f64
            + 0.05 * shake;
    }
    // Feet: planted, then tucked under the hips in the air, landing further forward.
    let air = smoothstep(0.58, 0.7, t) * (1.0 - smoothstep(0.92, 1.02, t));
    for side in Side::BOTH {
        let (s, i) = (side.sign(), side.index());
        let start = DVec3::new(0.11 * s, ANKLE_HEIGHT, 0.05 * s);
        let land = DVec3::new(0.14 * s, ANKLE_HEIGHT, 0.7 + 0.12 * s);
        let ground = start.lerp(land, smoothstep(0.6, 1.0, t));
        let hips = c.root + c.hips;
        let tucked = DVec3::new(0.12 * s, hips.y - 0.55 + 0.03 * s, hips.z + 0.05 + 0.1 * s);
        let ankle = ground.lerp(tucked, air);
        c.feet[i] = Foot {
            ankle,
            yaw: 0.15 * s,
            pitch: 0.5 * air
                + keyed(t, &[(0.0, 0.0), (0.5, 0.15), (0.62, 0.4), (0.66, 0.3)])
                    * (1.0 - smoothstep(0.66, 0.8, t)),
            toe: 0.3 * smoothstep(0.45, 0.6, t) * (1.0 - smoothstep(0.6, 0.75, t)),
        };
    }
    c.sword = DVec3::new(0.08 * shake, 0.0, 0.0);
    c
}
