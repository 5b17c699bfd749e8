//! The prepared layout of a clip's animated tracks ([`crate::ClipLayout::Prepared`], the
//! default, made for speed): every key decoded at open and every segment stored with what
//! its evaluation reads, in one record (where it starts and its length in frames, and a
//! linear rotation's slerp arc, a linear vector's two keys, or a Catmull-Rom segment's
//! Hermite ends), the tracks grouped by how they are evaluated, and a segment table that
//! gives the segment of any frame with one read ([`crate::table`]; a sparse track on a long
//! clip steps over the few keys of a larger block). Sampling a
//! track is a table read and one evaluation, with no search and no branch on the track's
//! shape. It costs several times the file's size in memory; [`crate::keys`] is the compact
//! alternative.

use glam::{Quat, Vec4};

use crate::clip::JointPose;
use crate::curve::{
    Interpolation, SlerpArc, eval_hermite, hermite, hermite_ends, segment_u, slerp, slerp_mix,
};
use crate::lanes::lanes_fit;
use crate::payload::{AnimatedRecord, MAX_FRAMES};
use crate::table::{DENSE_SHIFT, entries, table_shift};

// A dense table entry keeps a segment index in its upper 24 bits (keys <= frames) and
// its offsets in the low 8 (6 used).
const _: () = assert!(MAX_FRAMES < 1 << 24 && crate::table::OFFSET_BITS <= 8);

/// An animated track of one group: where its table entries and segments start.
#[derive(Clone, Copy, Debug)]
struct Track {
    joint: u32,
    /// 0 translation, 1 rotation, 2 scale.
    kind: u8,
    /// `log2` of the frames per entry of its table ([`crate::table`]).
    table_shift: u8,
    /// First entry in `table`.
    first_entry: u32,
    /// First segment (slerp, Hermite) or key (lerp) in its group's records.
    first: u32,
    /// Its last segment in its group's records (for lerp, the segment's first key).
    last: u32,
}

/// A linear rotation's segment: its slerp arc and its frames, as three vectors: the arc's
/// ends `a` and `b`, then `(theta, sin_theta, f0, dt)`: its angle and the angle's sine, its
/// first frame and its length in frames (both as the reference decoder computes them). The
/// lane kernel ([`crate::lanes`]) loads four segments' vectors and transposes them.
#[derive(Clone, Copy, Debug)]
struct SlerpSegment([Vec4; 3]);

impl SlerpSegment {
    fn a(&self) -> Quat {
        Quat::from_vec4(self.0[0])
    }
    fn b(&self) -> Quat {
        Quat::from_vec4(self.0[1])
    }
    fn theta(&self) -> f32 {
        self.0[2].x
    }
    fn sin_theta(&self) -> f32 {
        self.0[2].y
    }
    fn f0(&self) -> f32 {
        self.0[2].z
    }
    fn dt(&self) -> f32 {
        self.0[2].w
    }
}

/// A Catmull-Rom segment: its Hermite ends ([`hermite_ends`]) and its frames.
#[derive(Clone, Copy, Debug)]
struct HermiteSegment {
    ends: [Vec4; 4],
    f0: f32,
    dt: f32,
}

/// A clip's animated tracks in the prepared layout (see the module documentation).
#[derive(Clone, Debug, Default)]
pub(crate) struct Prepared {
    frame_count: u32,
    slerp_tracks: Vec<Track>,
    slerps: Vec<SlerpSegment>,
    /// Linear vector tracks: their keys, `x, y, z` and the key's frame in `w` (exact: the
    /// frame is below 2^24), one after the other per track.
    lerp_tracks: Vec<Track>,
    lerp_keys: Vec<Vec4>,
    hermite_tracks: Vec<Track>,
    hermites: Vec<HermiteSegment>,
    /// How many of `hermite_tracks` are rotations.
    hermite_rotations: usize,
    /// Whether some track's table is sparse (sampling then checks each track's).
    any_sparse: bool,
    /// Whether every slerp segment fits the lane kernel ([`crate::lanes`]; when one does
    /// not, sampling evaluates one track at a time).
    slerps_fit_lanes: bool,
    /// Per track, per block of its table's frames: the segment holding the block's first
    /// frame (relative to the track's first); in a dense table shifted left by 8, with
    /// frame `k`'s offset ([`crate::table::entries`]) in bits `2k..2k + 2`.
    table: Vec<u32>,
}

impl Prepared {
    /// An empty layout for a clip of `frame_count` frames.
    pub fn new(frame_count: u32) -> Self {
        Self {
            frame_count,
            slerps_fit_lanes: true,
            ..Self::default()
        }
    }

    /// Appends an animated track: its segments in its group and its segment table.
    pub fn push_track(&mut self, joint: usize, kind: usize, a: &AnimatedRecord) {
        let rotation = kind == 1;
        let frames = &a.frames;
        let span = |s: usize| {
            let f0 = frames[s] as f32;
            (f0, frames[s + 1] as f32 - f0)
        };
        let segments = 0..frames.len() - 1;
        let (group, first) = match a.interpolation {
            Interpolation::Linear if rotation => {
                let first = self.slerps.len();
                self.slerps.extend(segments.map(|s| {
                    let arc = SlerpArc::new(
                        Quat::from_vec4(a.values[s]),
                        Quat::from_vec4(a.values[s + 1]),
                    );
                    let (a, b, theta, sin_theta) = arc.parts();
                    let (f0, dt) = span(s);
                    self.slerps_fit_lanes &= lanes_fit(theta);
                    SlerpSegment([a.into(), b.into(), Vec4::new(theta, sin_theta, f0, dt)])
                }));
                (&mut self.slerp_tracks, first)
            }
            Interpolation::Linear => {
                let first = self.lerp_keys.len();
                let keys = a.values.iter().zip(frames);
                self.lerp_keys
                    .extend(keys.map(|(v, &f)| v.truncate().extend(f as f32)));
                (&mut self.lerp_tracks, first)
            }
            Interpolation::CatmullRom => {
                let first = self.hermites.len();
                let last = frames.len() - 1;
                let key = |i: usize| (frames[i] as f32, a.values[i]);
                self.hermites.extend(segments.map(|s| {
                    let window = [
                        key(s.saturating_sub(1)),
                        key(s),
                        key(s + 1),
                        key((s + 2).min(last)),
                    ];
                    let (f0, dt) = span(s);
                    HermiteSegment {
                        ends: hermite_ends(rotation, &window),
                        f0,
                        dt,
                    }
                }));
                self.hermite_rotations += usize::from(rotation);
                (&mut self.hermite_tracks, first)
            }
        };
        let shift = table_shift(self.frame_count, frames.len());
        group.push(Track {
            joint: joint as u32,
            kind: kind as u8,
            table_shift: shift as u8,
            first_entry: self.table.len() as u32,
            first: first as u32,
            last: (first + frames.len() - 2) as u32,
        });
        let dense = shift == DENSE_SHIFT;
        self.any_sparse |= !dense;
        self.table.extend(
            entries(frames, self.frame_count, shift).map(|(start, offsets)| {
                if dense {
                    start << 8 | offsets << 2
                } else {
                    start
                }
            }),
        );
    }

    /// Number of animated tracks.
    pub fn len(&self) -> usize {
        self.slerp_tracks.len() + self.lerp_tracks.len() + self.hermite_tracks.len()
    }

    /// Bytes held (track descriptions, segments and keys, tables).
    pub fn memory_bytes(&self) -> usize {
        use std::mem::size_of;
        self.len() * size_of::<Track>()
            + self.slerps.len() * size_of::<SlerpSegment>()
            + self.lerp_keys.len() * size_of::<Vec4>()
            + self.hermites.len() * size_of::<HermiteSegment>()
            + self.table.len() * 4
    }

    /// The index in its group's records of track `t`'s segment at frame `fi`; `starts(s)`
    /// is the first frame of the segment at index `s`. `SPARSE`: whether the clip has
    /// sparse tables (else every table is dense, and the check is compiled out).
    #[inline(always)]
    fn segment<const SPARSE: bool>(
        &self,
        t: &Track,
        fi: u32,
        starts: impl Fn(usize) -> f32,
    ) -> usize {
        if !SPARSE || t.table_shift as u32 == DENSE_SHIFT {
            let entry = self.table[t.first_entry as usize + (fi / 4) as usize];
            // Frame k of the block lies `(entry >> 2k) & 3` segments past its first.
            return (t.first + (entry >> 8) + ((entry >> (2 * (fi % 4))) & 3)) as usize;
        }
        // A sparse table: step over the keys in the block.
        let entry = self.table[t.first_entry as usize + (fi >> t.table_shift) as usize];
        let mut s = (t.first + entry) as usize;
        while s < t.last as usize && starts(s + 1) <= fi as f32 {
            s += 1;
        }
        s
    }

    /// Random access at frame `f` (clamped; `fi` its integer part): writes each animated
    /// track into `out` (which holds the fixed pose). Forward playback is the same. Linear
    /// rotation tracks go eight at a time through the lane kernel ([`crate::lanes`]) where
    /// the CPU has FMA; the values are those of [`Prepared::sample_one_by_one`].
    pub fn sample(&self, f: f32, fi: u32, out: &mut [JointPose]) {
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::has_fma() {
            // SAFETY: the CPU has FMA.
            return unsafe { self.sample_fma::<true>(f, fi, out) };
        }
        self.sample_with::<false>(f, fi, out)
    }

    /// [`Prepared::sample`] into a buffer that does not hold the fixed pose yet: writes
    /// `fixed` (the clip's fixed pose) over `out` and then the animated tracks. Where
    /// nothing is written into `out` before the rotations are mixed (the paired
    /// normalizations' clips, [`Prepared::copies_late`]), the copy comes after the mixes, so
    /// the copy's loads and stores fill the time the mixes' divisions and sines wait; the
    /// values are the same as copying first.
    pub fn sample_over(&self, f: f32, fi: u32, out: &mut [JointPose], fixed: &[JointPose]) {
        #[cfg(target_arch = "x86_64")]
        if self.copies_late() && crate::cpu::has_fma() {
            // SAFETY: the CPU has FMA.
            return unsafe { self.sample_late_fma(f, fi, out, fixed) };
        }
        crate::fixed::copy_first(out, fixed);
        self.sample(f, fi, out)
    }

    /// Whether [`Prepared::sample_over`] copies the fixed pose after the rotations' mixes:
    /// in a clip sampled with paired normalizations whose Catmull-Rom tracks are all
    /// rotations, fewer than eight (so no track writes into the pose before the copy).
    #[inline(always)]
    fn copies_late(&self) -> bool {
        self.pairs_normalizations()
            && self.hermite_tracks.len() == self.hermite_rotations
            && self.hermite_rotations < 8
    }

    /// [`Prepared::sample_over`] for a clip that [`Prepared::copies_late`].
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    fn sample_late_fma(&self, f: f32, fi: u32, out: &mut [JointPose], fixed: &[JointPose]) {
        // SAFETY (both): the CPU has FMA; `copies_late` holds.
        if self.any_sparse {
            unsafe { self.sample_paired::<true>(&self.slerp_tracks, f, fi, out, Some(fixed)) };
            self.sample_lerps::<true>(f, fi, out);
        } else {
            unsafe { self.sample_paired::<false>(&self.slerp_tracks, f, fi, out, Some(fixed)) };
            self.sample_lerps::<false>(f, fi, out);
        }
    }

    /// [`Prepared::sample`] evaluating one track at a time (no lanes): the reference the
    /// lane kernel is tested against, bit for bit.
    pub fn sample_one_by_one(&self, f: f32, fi: u32, out: &mut [JointPose]) {
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::has_fma() {
            // SAFETY: the CPU has FMA.
            return unsafe { self.sample_fma::<false>(f, fi, out) };
        }
        self.sample_with::<false>(f, fi, out)
    }

    /// [`Prepared::sample`] compiled with FMA instructions (the slerp's sines); `LANES`:
    /// whether linear rotations go through the lane kernel.
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "fma")]
    fn sample_fma<const LANES: bool>(&self, f: f32, fi: u32, out: &mut [JointPose]) {
        self.sample_with::<LANES>(f, fi, out)
    }

    /// [`Prepared::sample`]'s loops, for a clip with or without sparse tables.
    #[inline(always)]
    fn sample_with<const LANES: bool>(&self, f: f32, fi: u32, out: &mut [JointPose]) {
        if self.any_sparse {
            self.sample_loops::<true, LANES>(f, fi, out)
        } else {
            self.sample_loops::<false, LANES>(f, fi, out)
        }
    }

    /// The loops of [`Prepared::sample_with`].
    #[inline(always)]
    fn sample_loops<const SPARSE: bool, const LANES: bool>(
        &self,
        f: f32,
        fi: u32,
        out: &mut [JointPose],
    ) {
        #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
        let mut slerps = &self.slerp_tracks[..];
        #[cfg(target_arch = "x86_64")]
        if LANES && self.slerps_fit_lanes && slerps.len() >= 8 {
            // Tracks are in joint order: those whose joint is in `out`.
            let fits = |t: &Track| (t.joint as usize) < out.len();
            let n = if slerps.last().is_none_or(fits) {
                slerps.len()
            } else {
                slerps.partition_point(fits)
            };
            let n = crate::lanes::lane_count(n);
            let lane_tracks = &slerps[..n];
            let segment = |i: usize| {
                let t = &lane_tracks[i];
                &self.slerps[self.segment::<SPARSE>(t, fi, |s| self.slerps[s].f0())].0
            };
            let write =
                |i: usize, q: Vec4| out[lane_tracks[i].joint as usize].rotation = q.to_array();
            // SAFETY: LANES is only set where the CPU has FMA (`sample`); the segments fit.
            unsafe { crate::lanes::slerp_tracks(n, segment, write, f) };
            slerps = &slerps[n..];
        }
        #[cfg(target_arch = "x86_64")]
        if LANES && self.pairs_normalizations() {
            // SAFETY: LANES is only set where the CPU has FMA (`sample`).
            unsafe { self.sample_paired::<SPARSE>(slerps, f, fi, out, None) };
            self.sample_lerps::<SPARSE>(f, fi, out);
            return;
        }
        for t in slerps {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let g = &self.slerps[self.segment::<SPARSE>(t, fi, |s| self.slerps[s].f0())];
            let u = segment_u(g.f0(), g.dt(), f);
            let q = slerp(g.a(), g.b(), g.theta(), g.sin_theta(), u);
            pose.rotation = q.normalize().to_array();
        }
        self.sample_lerps::<SPARSE>(f, fi, out);
        for t in &self.hermite_tracks {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let g = &self.hermites[self.segment::<SPARSE>(t, fi, |s| self.hermites[s].f0)];
            let rotation = t.kind == 1;
            let v = eval_hermite(&g.ends, rotation, segment_u(g.f0, g.dt, f));
            match t.kind {
                0 => pose.translation = v.truncate().to_array(),
                1 => pose.rotation = Quat::from_vec4(v).normalize().to_array(),
                _ => pose.scale = v.truncate().to_array(),
            }
        }
    }

    /// Whether sampling normalizes the rotations two per register ([`Pending`]): in a clip
    /// with no group of eight linear rotations and at least [`PAIRED_FROM`] rotations.
    #[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
    #[inline(always)]
    fn pairs_normalizations(&self) -> bool {
        self.slerp_tracks.len() < 8
            && self.slerp_tracks.len() + self.hermite_rotations >= PAIRED_FROM
    }

    /// The linear vector tracks of [`Prepared::sample_loops`].
    #[inline(always)]
    fn sample_lerps<const SPARSE: bool>(&self, f: f32, fi: u32, out: &mut [JointPose]) {
        for t in &self.lerp_tracks {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let k = self.segment::<SPARSE>(t, fi, |k| self.lerp_keys[k].w);
            let (p0, p1) = (self.lerp_keys[k], self.lerp_keys[k + 1]);
            let u = segment_u(p0.w, p1.w - p0.w, f);
            let v = p0.lerp(p1, u).truncate().to_array();
            if t.kind == 0 {
                pose.translation = v;
            } else {
                pose.scale = v;
            }
        }
    }

    /// The linear rotation tracks `slerps` and every Catmull-Rom track of
    /// [`Prepared::sample_loops`], each rotation mixed one track at a time and normalized
    /// two per register ([`Pending`]): the same values. With `fixed`, the fixed pose is
    /// copied into `out` after the mixes, before the rotations are written.
    ///
    /// # Safety
    /// The CPU must have FMA; with `fixed`, [`Prepared::copies_late`] must hold (no track
    /// writes into `out` before the copy).
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn sample_paired<const SPARSE: bool>(
        &self,
        slerps: &[Track],
        f: f32,
        fi: u32,
        out: &mut [JointPose],
        fixed: Option<&[JointPose]>,
    ) {
        let mut pending = Pending::<false>::default();
        let mut pending_hermite = Pending::<true>::default();
        for t in slerps {
            if t.joint as usize >= out.len() {
                break;
            }
            let g = &self.slerps[self.segment::<SPARSE>(t, fi, |s| self.slerps[s].f0())];
            let u = segment_u(g.f0(), g.dt(), f);
            let mix = slerp_mix(g.a(), g.b(), g.theta(), g.sin_theta(), u);
            // SAFETY: the caller's.
            unsafe { pending.push(t.joint, mix.into(), out) };
        }
        for t in &self.hermite_tracks {
            let Some(pose) = out.get_mut(t.joint as usize) else {
                break;
            };
            let g = &self.hermites[self.segment::<SPARSE>(t, fi, |s| self.hermites[s].f0)];
            let u = segment_u(g.f0, g.dt, f);
            let [p0, m0, p1, m1] = g.ends;
            let v = hermite(p0, m0, p1, m1, u);
            match t.kind {
                0 => pose.translation = v.truncate().to_array(),
                // SAFETY: the caller's.
                1 => unsafe { pending_hermite.push(t.joint, v, out) },
                _ => pose.scale = v.truncate().to_array(),
            }
        }
        if let Some(fixed) = fixed {
            crate::fixed::copy_late(out, fixed);
        }
        // SAFETY: the caller's.
        unsafe {
            pending.flush(out);
            pending_hermite.flush(out);
        }
    }
}

/// How many rotations make their normalizations paired ([`Pending`]) pay, in a clip with
/// no group of eight linear rotations: with fewer, the one-track-at-a-time chains overlap
/// well enough that gathering them costs more than it saves. Clips with groups of eight
/// keep their other rotations one at a time: there the groups' divisions keep the divider
/// busy, and pairing the rest was slower (CesiumMan 157 -> 170 ns a pose). On
/// RobotExpressive Idle (five rotations) pairing takes about 10 % off one of the two
/// patterns, forward or random, which one varying from run to run (docs/RUNTIME.md).
const PAIRED_FROM: usize = 3;

/// Up to eight rotations mixed one track at a time, waiting to be normalized together by
/// [`crate::lanes::normalize_rotations`]: Catmull-Rom values with `HERMITE`, else slerp
/// mixes (each kind waits apart, so no pair of lanes mixes the two normalizations).
#[cfg(target_arch = "x86_64")]
#[derive(Default)]
struct Pending<const HERMITE: bool> {
    raw: [Vec4; 8],
    joints: [u32; 8],
    len: usize,
}

#[cfg(target_arch = "x86_64")]
impl<const HERMITE: bool> Pending<HERMITE> {
    /// Adds `joint`'s rotation before its normalization; with eight waiting, writes them.
    ///
    /// # Safety
    /// The CPU must have FMA.
    #[inline(always)]
    unsafe fn push(&mut self, joint: u32, raw: Vec4, out: &mut [JointPose]) {
        self.raw[self.len] = raw;
        self.joints[self.len] = joint;
        self.len += 1;
        if self.len == 8 {
            // SAFETY: the caller's.
            unsafe { self.flush(out) };
        }
    }

    /// Normalizes the waiting rotations and writes them into their joints of `out`.
    ///
    /// # Safety
    /// The CPU must have FMA.
    #[inline(always)]
    unsafe fn flush(&mut self, out: &mut [JointPose]) {
        if self.len == 0 {
            return;
        }
        // SAFETY: the caller's.
        unsafe { crate::lanes::normalize_rotations::<HERMITE>(&mut self.raw, self.len) };
        for (&j, q) in self.joints[..self.len].iter().zip(self.raw) {
            out[j as usize].rotation = q.to_array();
        }
        self.len = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::quant::{KeyFormat, KeyRange};

    /// A track of `keys` keys over `frames` frames: rotations wandering on smooth arcs
    /// (`seed` varies them), vectors on a wave.
    fn record(
        interpolation: Interpolation,
        rotation: bool,
        frames: u32,
        keys: u32,
        seed: f32,
    ) -> AnimatedRecord {
        let at: Vec<u32> = (0..keys).map(|k| k * (frames - 1) / (keys - 1)).collect();
        let values = at
            .iter()
            .map(|&f| {
                let t = f as f32 * 0.37 + seed;
                if rotation {
                    let axis = glam::Vec3::new(t.sin(), 0.6, (t * 0.7).cos()).normalize();
                    Quat::from_axis_angle(axis, 0.3 + 0.9 * (t * 0.5).sin()).into()
                } else {
                    Vec4::new(t.sin(), t.cos(), 0.5 * t, 0.0)
                }
            })
            .collect();
        AnimatedRecord {
            format: KeyFormat::SmallestThree48,
            range: KeyRange {
                min: [0.0; 3],
                extent: [0.0; 3],
                reference: Quat::IDENTITY,
                reference_code: [0; 3],
            },
            interpolation,
            order: 1,
            codes: vec![[0; 3]; at.len()],
            frames: at,
            values,
        }
    }

    /// Every mix of linear and Catmull-Rom rotations (from none to past a group of eight,
    /// with vectors beside them): sampled with the lanes and one track at a time, the same
    /// bits; and [`Prepared::sample_over`] (the fixed pose copied after the mixes where it
    /// can be) the same bits as the fixed pose copied first. The Catmull-Rom rotations'
    /// normalizations are glam's `normalize_or`, which a slerp's `normalize` would miss by
    /// an ulp here and there.
    #[test]
    fn paired_normalizations_keep_the_scalar_bits() {
        let frames = 40;
        let (mut paired, mut late) = (0, 0);
        for slerps in [0, 1, 3, 5, 9] {
            for hermites in [0, 1, 2, 4, 7] {
                let mut p = Prepared::new(frames);
                let mut joint = 0;
                for s in 0..slerps {
                    p.push_track(
                        joint,
                        1,
                        &record(Interpolation::Linear, true, frames, 9 + s, s as f32),
                    );
                    joint += 1;
                }
                p.push_track(
                    joint,
                    0,
                    &record(Interpolation::Linear, false, frames, 7, 0.5),
                );
                for h in 0..hermites {
                    p.push_track(
                        joint,
                        1,
                        &record(
                            Interpolation::CatmullRom,
                            true,
                            frames,
                            6 + h,
                            2.0 + h as f32,
                        ),
                    );
                    joint += 1;
                }
                if hermites == 4 {
                    // A Catmull-Rom translation: the fixed pose is copied first.
                    p.push_track(
                        joint,
                        0,
                        &record(Interpolation::CatmullRom, false, frames, 8, 1.5),
                    );
                }
                paired += usize::from(p.pairs_normalizations());
                late += usize::from(p.copies_late());
                // A fixed pose that differs from joint to joint (and from the default).
                let fixed: Vec<JointPose> = (0..=joint)
                    .map(|j| JointPose {
                        translation: [j as f32, 2.0, 3.0],
                        rotation: [0.0, 0.6, 0.0, 0.8],
                        scale: [1.0, 1.0, 0.5 + j as f32],
                    })
                    .collect();
                for i in 0..(frames - 1) * 8 {
                    let f = i as f32 / 8.0;
                    let mut want = fixed.clone();
                    let mut got = fixed.clone();
                    let mut over = vec![JointPose::default(); joint + 1];
                    p.sample_one_by_one(f, f as u32, &mut want);
                    p.sample(f, f as u32, &mut got);
                    p.sample_over(f, f as u32, &mut over, &fixed);
                    let bits = |pose: &[JointPose]| -> Vec<u32> {
                        pose.iter()
                            .flat_map(|j| j.translation.iter().chain(&j.rotation).chain(&j.scale))
                            .map(|v| v.to_bits())
                            .collect()
                    };
                    assert_eq!(
                        bits(&want),
                        bits(&got),
                        "{slerps} slerps, {hermites} Catmull-Rom, frame {f}"
                    );
                    assert_eq!(
                        bits(&want),
                        bits(&over),
                        "sample_over: {slerps} slerps, {hermites} Catmull-Rom, frame {f}"
                    );
                }
            }
        }
        assert!(paired >= 10);
        assert!(
            late >= 5 && late < paired,
            "{late} clips copy late of {paired} paired"
        );
    }
}
