//! Where an export's key intervals need check points the verifier's regular grid misses.
//!
//! The verifier checks every frame and the points `f + k / (inner + 1)` between frames.
//! Keys between frames (nlerp-safe splits down to an eighth of a frame, keys where a cubic
//! source bulges, at sixteenths) make key intervals shorter than that grid's step, and the
//! grid then visits only their ends, where nothing differs (RobotExpressive's Punch: keys at
//! frames 4.75 and 5, 1.15 mm under nlerp at 4.797 while the quarter points saw 0.07 mm).
//! Every key interval shorter than a frame gets check points at its ends (keys: kinks of the
//! played curve, jumps under `Rule::Raw`), its midpoint (where a chord leaves a curve most)
//! and at [`NLERP_WORST`] (where nlerp leaves slerp most).

use glam::DAffine3;

use super::channels::{Channel, NLERP_WORST, Played, Player, TICKS};
use crate::metric::{JointLimits, PoseSource, joint_error};
use crate::model::{Clip, Skeleton, Transform, local_to_object_f64};

/// Frame positions of the check points of every key interval of `channels` shorter than a
/// frame, and of the longer LINEAR rotation intervals where nlerp leaves slerp by more than
/// [`NLERP_SHARE`] of the joint's chord in `chords` (their [`NLERP_WORST`] points: the
/// quarter points miss nlerp's peak, by 2.6 % of it for small arcs and more for large ones;
/// RobotExpressive's Jump was 0.1010 mm at `--oversample 64` against 0.0963 at quarters),
/// that are not a frame or one of the `inner` regular points between frames (sorted,
/// without repeats).
pub fn unchecked_points(channels: &[Channel], inner: usize, chords: &[f32]) -> Vec<f32> {
    let step = 1.0 / (inner as f32 + 1.0);
    let on_grid = |x: f32| ((x / step).round() * step - x).abs() < 1e-6;
    let mut out: Vec<f32> = Vec::new();
    for c in channels {
        let chord = chords.get(c.joint).copied().unwrap_or(0.0) * NLERP_SHARE;
        for (i, w) in c.ticks.windows(2).enumerate() {
            let (a, b) = (w[0] as f32 / TICKS as f32, w[1] as f32 / TICKS as f32);
            let us: &[f32] = if w[1] - w[0] < TICKS {
                // Its ends too: a key is a kink of the played curve, and under `Raw` a jump.
                &[0.0, NLERP_WORST[0], 0.5, NLERP_WORST[1], 1.0]
            } else if c.nlerp_divergence_of(i) > chord {
                &NLERP_WORST
            } else {
                &[]
            };
            for u in us {
                let x = a + u * (b - a);
                if !on_grid(x) {
                    out.push(x);
                }
            }
        }
    }
    out.sort_by(f32::total_cmp);
    out.dedup();
    out
}

/// The share of a joint's chord (`verify::initial_chords`) above which nlerp's peak inside a
/// key interval a frame or longer is checked.
pub const NLERP_SHARE: f32 = 0.125;

/// Whether some evaluated joint is over its tolerance in `limits` at one of the frame
/// positions `points`, under some rule of `player`, with `channels` against `raw` (the
/// points a fit's own splits made, measured alone before fitting again with them).
#[allow(clippy::too_many_arguments)]
pub fn over_at(
    channels: &[Channel],
    skeleton: &Skeleton,
    raw: &Clip,
    rate: f32,
    frames: usize,
    limits: &JointLimits,
    player: Player,
    points: &[f32],
) -> bool {
    let n = skeleton.len();
    let rest = skeleton.rest_pose();
    let played: Vec<Played> = player
        .rules()
        .iter()
        .map(|&rule| Played::with_rule(&rest, channels, rate, frames, rule))
        .collect();
    let mut local = vec![Transform::IDENTITY; n];
    let (mut want, mut got) = (vec![DAffine3::IDENTITY; n], vec![DAffine3::IDENTITY; n]);
    for &x in points {
        raw.sample_local(x, &mut local);
        local_to_object_f64(skeleton, &local, &mut want);
        for p in &played {
            p.sample_local(x, &mut local);
            local_to_object_f64(skeleton, &local, &mut got);
            let over = (0..n).any(|j| {
                limits.evaluated[j]
                    && joint_error(&want[j], &got[j], limits.local_marker(j)) > limits.tolerance[j]
            });
            if over {
                return true;
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::channels::{Interp, Storage};
    use glam::Vec4;

    #[test]
    fn points_inside_short_key_intervals_off_the_quarter_grid_are_listed() {
        let c = Channel {
            joint: 0,
            kind: 1,
            interp: Interp::Linear,
            // Frames 0, 1, 1.5, 2 and 2.0625.
            ticks: vec![0, 16, 24, 32, 33],
            values: vec![Vec4::W; 5],
            tangents: vec![],
            storage: Storage::Float,
            held_end: false,
        };
        // A whole-frame interval is left to the grid; of the half frames, the ends and the
        // midpoints 1.25 and 1.75 are quarter points and the nlerp points are not;
        // everything inside 2 - 2.0625 is new, and its end 2.0625.
        let p = unchecked_points(&[c], 3, &[f32::INFINITY]);
        assert_eq!(p.len(), 2 + 2 + 3 + 1, "{p:?}");
        assert!(p.contains(&2.0625) && !p.contains(&2.0));
        assert!(!p.contains(&1.25) && !p.contains(&1.75) && p.contains(&2.03125));
        let first = 1.0 + 0.5 * NLERP_WORST[0];
        assert!((p[0] - first).abs() < 1e-6, "{p:?}");
    }
}
