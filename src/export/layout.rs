//! Key layout by real size: a channel keeps its own key times (a time accessor of its own,
//! `k` keys) or is written at every frame on the clip's shared frame grid (no time bytes of
//! its own, `frames` values). A sparse curve on a short clip often costs more in key times
//! than the values it saves (CesiumMan: 2,172 bytes of times for 648 bytes of values).
//!
//! Densifying is exact on the curve's own path: a LINEAR channel whose keys sit on frames
//! is sampled at every frame, and its segments (lines, or slerp arcs at constant speed) are
//! cut into pieces of the same path. The exporter verifies the result under every player
//! rule like any other layout and keeps the smaller of the two.

use std::collections::HashMap;

use super::channels::{Channel, Interp, TICKS};

/// Bytes of one stored value: rotations are assumed normalized SHORT (as most become).
fn value_bytes(c: &Channel) -> usize {
    if c.is_rotation() { 8 } else { 12 }
}

/// Rewrites, at every frame of the clip, the LINEAR channels whose keys all sit on frames
/// and whose own layout (values plus their share of a time accessor) costs more than the
/// frame grid. Returns whether any channel changed.
pub fn densify(channels: &mut [Channel], frames: usize) -> bool {
    if frames < 2 {
        return false;
    }
    let grid: Vec<u32> = (0..frames as u32).map(|f| f * TICKS).collect();
    let mut sharing: HashMap<&[u32], usize> = HashMap::new();
    for c in channels.iter() {
        *sharing.entry(&c.ticks).or_default() += 1;
    }
    let grid_paid = sharing.contains_key(grid.as_slice());
    let benefit: Vec<isize> = channels
        .iter()
        .map(|c| {
            let eligible = c.interp == Interp::Linear
                && c.ticks.len() >= 2
                && c.ticks.len() < frames
                && c.ticks.iter().all(|t| t % TICKS == 0);
            if !eligible {
                return 0;
            }
            let k = c.ticks.len();
            let own = k * value_bytes(c) + 4 * k / sharing[c.ticks.as_slice()];
            own as isize - (frames * value_bytes(c)) as isize
        })
        .collect();
    let gain: isize = benefit.iter().filter(|&&b| b > 0).sum();
    let grid_cost = if grid_paid { 0 } else { 4 * frames as isize };
    if gain <= grid_cost {
        return false;
    }
    for (c, b) in channels.iter_mut().zip(benefit) {
        if b > 0 {
            c.values = grid.iter().map(|&t| c.sample((t / TICKS) as f32)).collect();
            c.ticks = grid.clone();
        }
    }
    true
}

/// Bytes the channels' accessors take (shared time accessors counted once).
pub fn bytes(channels: &[Channel]) -> usize {
    use super::channels::Storage;
    let mut times = std::collections::HashSet::new();
    let mut total = 0;
    for c in channels {
        if times.insert(&c.ticks) {
            total += 4 * c.ticks.len();
        }
        let per = match (c.storage, c.is_rotation()) {
            (Storage::Short | Storage::Quat(_), _) => 8,
            (Storage::Float, true) => 16,
            (Storage::Float, false) => 12,
        };
        let n = if c.interp == Interp::CubicSpline {
            3
        } else {
            1
        };
        total += per * n * c.ticks.len();
    }
    total
}

#[cfg(test)]
mod tests {
    use super::super::channels::Storage;
    use super::*;
    use glam::Vec4;

    fn line(ticks: &[u32]) -> Channel {
        Channel {
            joint: 0,
            kind: 0,
            interp: Interp::Linear,
            ticks: ticks.iter().map(|t| t * TICKS).collect(),
            values: ticks.iter().map(|&t| Vec4::splat(t as f32)).collect(),
            tangents: Vec::new(),
            storage: Storage::Float,
        }
    }

    #[test]
    fn sparse_keys_on_a_short_clip_go_to_the_frame_grid_on_the_same_path() {
        // 6 frames: a 5-key translation costs 5 x 12 + 20 = 80 bytes, 72 on the grid; the six
        // different ones gain 48 bytes, more than the grid's own 24 bytes of times.
        let mut cs: Vec<Channel> = (0..6u32)
            .map(|skip| line(&(0..6).filter(|&f| f != skip).collect::<Vec<u32>>()))
            .collect();
        let before = bytes(&cs);
        let orig = cs.clone();
        assert!(densify(&mut cs, 6));
        assert!(bytes(&cs) < before);
        for (a, b) in orig.iter().zip(&cs) {
            for q in 0..=20 {
                let f = q as f32 / 4.0;
                assert!((a.sample(f) - b.sample(f)).abs().max_element() < 1e-6);
            }
        }
    }

    #[test]
    fn few_keys_on_a_long_clip_stay_sparse() {
        let mut cs = vec![line(&[0, 50, 99])];
        assert!(!densify(&mut cs, 100));
        assert_eq!(cs[0].ticks.len(), 3);
    }
}
