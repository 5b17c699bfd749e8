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

use glam::Vec4;

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
    let mut outputs = std::collections::HashSet::new();
    let mut total = 0;
    for c in channels {
        if times.insert(&c.ticks) {
            total += 4 * c.ticks.len();
        }
        // Identical outputs are stored once (`share.rs`).
        let stored: Vec<u32> = match (c.storage, c.interp) {
            (Storage::Float, _) | (_, Interp::CubicSpline) => {
                let n = if c.is_rotation() { 4 } else { 3 };
                let mut v: Vec<u32> = c
                    .values
                    .iter()
                    .flat_map(|v| v.to_array()[..n].to_vec())
                    .map(f32::to_bits)
                    .collect();
                v.extend(
                    c.tangents
                        .iter()
                        .flat_map(|t| t.to_array())
                        .map(f32::to_bits),
                );
                v.push(n as u32 + 100 * u32::from(c.interp == Interp::CubicSpline));
                v
            }
            _ => c
                .short_output(1.0)
                .iter()
                .map(|&x| x as u16 as u32)
                .collect(),
        };
        if !outputs.insert(stored) {
            continue;
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

/// Bytes the channels would take meshopt-compressed (`--meshopt`), as
/// [`super::meshopt::compress_animation_data`] stores them: key times (each distinct set
/// once), QUATERNION-filtered rotations, SHORT rotations and float values, each kind in one
/// stream encoded by meshoptimizer's vertex codec (or raw where that is smaller). The codec
/// delta-codes consecutive elements, so a dense smooth stream costs far less than its raw
/// size and the layout that is smallest raw is often not the smallest stored.
pub fn stored_bytes(channels: &[Channel], rate: f32) -> usize {
    use super::channels::Storage;
    let mut times = std::collections::HashSet::new();
    // (stride, filtered) -> stream bytes; EXPONENTIAL-filtered floats also kept unfiltered
    // (`exp_plain`) to price them in the plain view, as the meshopt pass decides.
    let mut streams: std::collections::BTreeMap<(usize, bool), Vec<u8>> = Default::default();
    let mut exp_plain: std::collections::BTreeMap<usize, Vec<u8>> = Default::default();
    for c in channels {
        if times.insert(&c.ticks) {
            let s = streams.entry((4, false)).or_default();
            for &t in &c.ticks {
                s.extend_from_slice(&(t as f32 / TICKS as f32 / rate).to_le_bytes());
            }
        }
        let out = c.output(rate);
        match c.storage {
            Storage::Quat(bits) if c.interp == Interp::Linear => {
                let s = streams.entry((8, true)).or_default();
                for (i, v) in out.iter().enumerate() {
                    let b = c.quat_bits(i, bits);
                    let q = v.normalize_or(glam::Vec4::W).to_array();
                    let e = meshopt::encoding::encode_filter_quat(&[q], i32::from(b))[0];
                    s.extend(e.iter().flat_map(|x| x.to_le_bytes()));
                }
            }
            Storage::Short | Storage::Quat(_) => {
                let s = streams.entry((8, false)).or_default();
                s.extend(c.short_output(rate).iter().flat_map(|x| x.to_le_bytes()));
            }
            Storage::Float => {
                let n = if c.is_rotation() { 4 } else { 3 };
                let bytes: Vec<u8> = out
                    .iter()
                    .flat_map(|v| v.to_array()[..n].to_vec())
                    .flat_map(f32::to_le_bytes)
                    .collect();
                match super::meshopt::exp_filtered(&bytes, n) {
                    Some(f) if !c.is_rotation() => {
                        streams.entry((4 * n, true)).or_default().extend(f);
                        exp_plain.entry(4 * n).or_default().extend(bytes);
                    }
                    _ => streams.entry((4 * n, false)).or_default().extend(bytes),
                }
            }
        }
    }
    let view = super::meshopt::view_bytes;
    let mut total = 0;
    for (&(stride, filtered), bytes) in &streams {
        match exp_plain.get(&stride) {
            // Quaternion-filtered rotations (stride 8) have no plain floats beside them.
            Some(plain) if filtered => {
                let other = streams.get(&(stride, false)).map_or(&[][..], Vec::as_slice);
                let merged: Vec<u8> = other.iter().chain(plain).copied().collect();
                total += (view(bytes, stride) + view(other, stride)).min(view(&merged, stride));
            }
            Some(_) => {} // counted with its filtered stream
            None => total += view(bytes, stride),
        }
    }
    total
}

/// Translation values rounded to a power-of-two step (per joint, `step[joint]`): the floats
/// then end in zero mantissa bits, which meshopt's byte-wise delta coding stores in far
/// fewer bytes. The exporter verifies the rounded values like any other.
pub fn round_translations(channels: &mut [Channel], step: &[f32]) {
    for c in channels.iter_mut().filter(|c| c.kind == 0) {
        let Some(&s) = step.get(c.joint).filter(|s| s.is_finite() && **s > 0.0) else {
            continue;
        };
        let s = 2f32.powi(s.log2().floor() as i32);
        for v in c.values.iter_mut() {
            // `+ 0.0` turns -0.0 into 0.0, the zero the EXPONENTIAL filter decodes to.
            *v = (*v / s).round() * s + Vec4::ZERO;
        }
    }
}

/// Every multi-key LINEAR channel keyed on frames, written at every frame of the clip
/// (one shared time accessor): the layout meshopt's delta coding compresses best.
pub fn densify_all(channels: &mut [Channel], frames: usize) -> bool {
    let grid: Vec<u32> = (0..frames as u32).map(|f| f * TICKS).collect();
    let mut changed = false;
    for c in channels.iter_mut() {
        if frames >= 2
            && c.interp == Interp::Linear
            && c.ticks.len() >= 2
            && c.ticks != grid
            && c.ticks.iter().all(|t| t % TICKS == 0)
        {
            c.values = grid.iter().map(|&t| c.sample((t / TICKS) as f32)).collect();
            c.ticks = grid.clone();
            changed = true;
        }
    }
    changed
}

/// Multi-key LINEAR channels replaced by the source's own values at every frame (`raw`, the
/// clip the codec compressed): every such channel, or with `only_dense` those already keyed
/// at every frame. No reduction error is left there, so what the verifier allows goes to
/// storage rounding (SHORT, fewer QUATERNION filter bits) and to nlerp between frames.
/// Returns whether any channel changed.
pub fn source_frames(channels: &mut [Channel], raw: &crate::model::Clip, only_dense: bool) -> bool {
    let frames = raw.frame_count;
    let grid: Vec<u32> = (0..frames as u32).map(|f| f * TICKS).collect();
    let mut changed = false;
    for c in channels.iter_mut() {
        let Some(track) = raw.tracks.get(c.joint) else {
            continue;
        };
        if frames < 2
            || c.interp != Interp::Linear
            || c.ticks.len() < 2
            || (only_dense && c.ticks != grid)
        {
            continue;
        }
        let mut values: Vec<glam::Vec4> = Vec::with_capacity(frames);
        for f in 0..frames {
            let t = track.at(f);
            let v = match c.kind {
                0 => t.translation.extend(0.0),
                1 => {
                    let q = glam::Vec4::from(t.rotation);
                    match values.last() {
                        Some(p) if p.dot(q) < 0.0 => -q,
                        _ => q,
                    }
                }
                _ => t.scale.extend(0.0),
            };
            values.push(v);
        }
        c.ticks = grid.clone();
        c.values = values;
        changed = true;
    }
    changed
}

#[cfg(test)]
pub(super) mod tests {
    use super::super::channels::Storage;
    use super::*;
    use glam::Vec4;

    /// A linear translation channel keyed at `ticks` (in frames), each value the frame.
    pub(in crate::export) fn line(ticks: &[u32]) -> Channel {
        Channel {
            joint: 0,
            kind: 0,
            interp: Interp::Linear,
            ticks: ticks.iter().map(|t| t * TICKS).collect(),
            values: ticks.iter().map(|&t| Vec4::splat(t as f32)).collect(),
            tangents: Vec::new(),
            storage: Storage::Float,
            held_end: true,
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
    fn a_smooth_dense_stream_stores_below_its_raw_size_and_noise_does_not() {
        let smooth = Channel {
            ticks: (0..200).map(|f| f * TICKS).collect(),
            values: (0..200)
                .map(|f| Vec4::new(f as f32 * 0.01, 1.0, 2.0, 0.0))
                .collect(),
            ..line(&[0])
        };
        assert!(
            stored_bytes(std::slice::from_ref(&smooth), 30.0)
                < bytes(std::slice::from_ref(&smooth))
        );
        let mut noisy = smooth.clone();
        let mut x = 12345u32;
        for v in noisy.values.iter_mut() {
            x = x.wrapping_mul(1_103_515_245).wrapping_add(12345);
            *v = Vec4::new(f32::from_bits(0x3f80_0000 | (x >> 9)), 0.0, 0.0, 0.0);
        }
        assert!(stored_bytes(&[noisy.clone()], 30.0) > stored_bytes(&[smooth], 30.0));
        assert!(stored_bytes(&[noisy.clone()], 30.0) <= bytes(&[noisy]));
    }

    #[test]
    fn densify_all_keys_every_channel_at_every_frame_on_the_same_path() {
        let orig = vec![line(&[0, 9]), line(&[0, 3, 9]), line(&[4])];
        let mut cs = orig.clone();
        assert!(densify_all(&mut cs, 10));
        let grid: Vec<u32> = (0..10).map(|f| f * TICKS).collect();
        assert_eq!((&cs[0].ticks, &cs[1].ticks), (&grid, &grid));
        assert_eq!(cs[2], orig[2], "a one-key channel stays one key");
        for (a, b) in orig.iter().zip(&cs) {
            for q in 0..=36 {
                let f = q as f32 / 4.0;
                assert!((a.sample(f) - b.sample(f)).abs().max_element() < 1e-6);
            }
        }
        assert!(!densify_all(&mut cs, 10));
    }

    #[test]
    fn source_frames_hold_the_source_values_at_every_frame() {
        use crate::model::{Clip, Joint, Skeleton, Transform};
        let skeleton = Skeleton::new(vec![Joint::new("a", None, Transform::IDENTITY)]).unwrap();
        let mut raw = Clip::rest("c", &skeleton, 30.0, 8);
        for f in 0..8 {
            raw.tracks[0].translations[f] = glam::Vec3::new(f as f32 * f as f32, 0.0, 0.0);
            // A sign flip in the source: written on the same hemisphere as the key before.
            let q = glam::Quat::from_rotation_z(f as f32 * 0.1);
            raw.tracks[0].rotations[f] = if f == 5 { -q } else { q };
        }
        let mut t = line(&[0, 7]);
        let mut r = Channel {
            kind: 1,
            ..line(&[0, 7])
        };
        r.values = vec![Vec4::W, Vec4::W];
        let mut cs = vec![
            t.clone(),
            r,
            Channel {
                kind: 2,
                ..line(&[3])
            },
        ];
        assert!(source_frames(&mut cs, &raw, false));
        t.ticks = (0..8).map(|f| f * TICKS).collect();
        assert_eq!(cs[0].ticks, t.ticks);
        for f in 0..8 {
            assert_eq!(cs[0].values[f].x, (f * f) as f32);
            let q = Vec4::from(glam::Quat::from_rotation_z(f as f32 * 0.1));
            assert!(
                (cs[1].values[f] - q).abs().max_element() < 1e-6,
                "frame {f}"
            );
        }
        assert_eq!(cs[2].ticks.len(), 1, "constants stay constant");
    }

    #[test]
    fn rounded_translations_store_smaller_within_half_a_step() {
        let c = Channel {
            ticks: (0..100).map(|f| f * TICKS).collect(),
            values: (0..100)
                .map(|f| Vec4::new((f as f32 * 0.37).sin(), 0.3 * f as f32, 1.7, 0.0))
                .collect(),
            ..line(&[0])
        };
        let mut r = vec![c.clone()];
        round_translations(&mut r, &[1e-4]);
        let step = 2f32.powi(-14); // the power of two at or below 1e-4
        for (a, b) in c.values.iter().zip(&r[0].values) {
            assert!((*a - *b).abs().max_element() <= step / 2.0);
            assert_eq!(b.x / step, (b.x / step).round());
        }
        assert!(stored_bytes(&r, 30.0) < stored_bytes(&[c], 30.0));
    }

    #[test]
    fn few_keys_on_a_long_clip_stay_sparse() {
        let mut cs = vec![line(&[0, 50, 99])];
        assert!(!densify(&mut cs, 100));
        assert_eq!(cs[0].ticks.len(), 3);
    }
}
