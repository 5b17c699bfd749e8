//! Floors: the tightest tolerance each joint can reach, and limits held to them, so that
//! one impossible tolerance is reported instead of dragging every other joint down with it.
//!
//! A joint's floor is its error when every moving track of the clip is stored with every
//! sample as a key in the most precise format there is ([`super::track::finest_track`]):
//! no encoding the codec can choose does better. A tolerance below the floor cannot be held;
//! the codec holds such a joint to a little above its floor instead, compresses everything
//! else to its own tolerance, and reports the joint with its floor.

use crate::metric::{ErrorReport, JointLimits};

/// How far above its floor a joint whose tolerance is below the floor is held: reaching the
/// floor itself would need every ancestor at the finest encoding.
pub const FLOOR_MARGIN: f32 = 1.25;

/// `requested` with every tolerance below its joint's floor raised to
/// `FLOOR_MARGIN * floor`.
pub fn hold_to_floors(requested: &JointLimits, floors: &[f32]) -> JointLimits {
    let mut held = requested.clone();
    for (j, t) in held.tolerance.iter_mut().enumerate() {
        let floor = floors.get(j).copied().unwrap_or(0.0);
        if requested.evaluated[j] && *t < floor {
            *t = floor * FLOOR_MARGIN;
        }
    }
    held
}

/// Raises the tolerance of every joint `errors` finds over it to the error it reached: after
/// repair has done what it can, the rest of the pipeline keeps those joints where they are
/// and holds every other joint to its own tolerance.
pub fn hold_to_reached(held: &mut JointLimits, errors: &ErrorReport) {
    for (j, t) in held.tolerance.iter_mut().enumerate() {
        let reached = errors.joint_max.get(j).copied().unwrap_or(0.0);
        if reached > *t {
            *t = reached;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Skeleton, Transform};

    fn limits(tolerances: &[f32]) -> JointLimits {
        let joints = (0..tolerances.len())
            .map(|i| Joint::new(format!("j{i}"), i.checked_sub(1), Transform::IDENTITY))
            .collect();
        let s = Skeleton::new(joints).unwrap();
        let mut l = JointLimits::uniform(&s, 0.03, 1.0);
        l.tolerance = tolerances.to_vec();
        l
    }

    #[test]
    fn only_tolerances_below_the_floor_are_raised() {
        let requested = limits(&[1e-4, 1e-9, 1e-4]);
        let held = hold_to_floors(&requested, &[2e-8, 4e-8, 5e-4]);
        assert_eq!(held.tolerance[0], 1e-4);
        assert_eq!(held.tolerance[1], 4e-8 * FLOOR_MARGIN);
        assert_eq!(held.tolerance[2], 5e-4 * FLOOR_MARGIN);
    }
}
