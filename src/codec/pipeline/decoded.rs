//! A compressed clip's tracks decoded once at every sample and midpoint, re-decoded track by
//! track as they change: what the settle pass measures the clip through, so that a trial of
//! a few changed tracks does not decode the other tracks again. The values are the ones
//! [`CompressedClip::joint_at`] gives (the same `TrackData::sample` calls), so a measurement
//! through it is the measurement of the clip.

use glam::{DAffine3, Quat, Vec4};

use super::state::State;
use crate::codec::compressed::CompressedClip;
use crate::codec::playback::Layer;
use crate::codec::verify::{Poses, Verifier};
use crate::metric::{ErrorReport, JointMarkers, PoseSource};
use crate::model::Transform;

/// The most memory the local transforms kept between measurements may take (13_07 takes
/// 2.5 MB, the 120 fps CMU_131_01 6 MB; an 841-joint rig of 994 frames would take 160 MB).
const LOCAL_KEPT_MAX: usize = 64 << 20;

/// Every track's values at the samples, then the midpoints; and once measured, every
/// joint's object transform and error there, recomputed for the joints whose path changed.
pub(crate) struct Decoded {
    frames: usize,
    /// Per track (`3 * joint + kind`): its value at each position (one value for a track
    /// that does not move).
    values: Vec<Vec<Vec4>>,
    /// Joints whose tracks changed since the last [`Decoded::measure_joint_max`].
    dirty: Vec<bool>,
    /// `positions * joints`: each joint's local transform as shown (on the additive layer's
    /// base, if any), kept until its tracks change (empty where that would take more than
    /// [`LOCAL_KEPT_MAX`]: made again at each measurement), and its object transform and
    /// error, as last measured (empty before).
    local: Vec<DAffine3>,
    object: Vec<DAffine3>,
    errors: Vec<f32>,
    /// Per joint: its largest error over every position, as last measured.
    joint_max: Vec<f32>,
    /// The last measurement, where it is not made incrementally (see [`Decoded::measure`]).
    whole: Option<ErrorReport>,
}

impl Decoded {
    /// Decodes every track of `clip`.
    pub fn new(clip: &CompressedClip) -> Self {
        let mut me = Self {
            frames: clip.frame_count,
            values: vec![Vec::new(); 3 * clip.tracks.len()],
            dirty: vec![true; clip.tracks.len()],
            local: Vec::new(),
            object: Vec::new(),
            errors: Vec::new(),
            joint_max: Vec::new(),
            whole: None,
        };
        for j in 0..clip.tracks.len() {
            for k in 0..3 {
                me.update(clip, j, k);
            }
        }
        me
    }

    /// Decodes track `k` of joint `j` of `clip` again (after it changed).
    pub fn update(&mut self, clip: &CompressedClip, j: usize, k: usize) {
        let track = &clip.tracks[j][k];
        let rest = clip.rest_value(j, k);
        self.dirty[j] = true;
        track.sample_positions(self.frames, rest, &mut self.values[3 * j + k]);
    }

    /// The clip as a pose source reading these values (`clip` for any other frame).
    pub fn source<'a>(&'a self, clip: &'a CompressedClip) -> DecodedSource<'a> {
        DecodedSource {
            decoded: self,
            clip,
        }
    }

    /// Measures `clip` (whose tracks these values decode) as [`State::measure`] measures
    /// it, the same arithmetic in the same order, composing and measuring again only the
    /// joints at or below a changed one; returns each joint's largest error over the
    /// samples and midpoints ([`ErrorReport::joint_max`]): all a trial needs to decide
    /// (`passes_at_max`, `violating_at_max`), without the report's statistics over every
    /// cell. [`Decoded::report`] gives the whole report of the last measurement.
    pub fn measure_joint_max(&mut self, st: &State, clip: &CompressedClip) -> &[f32] {
        let reference = &st.reference;
        if reference.inner != 1 || !reference.extra.is_empty() {
            let whole = st.measure(&self.source(clip), &st.held);
            self.joint_max = whole.joint_max.clone();
            self.whole = Some(whole);
            return &self.joint_max;
        }
        let n = clip.tracks.len();
        let frames = self.frames;
        let positions = frames + frames.saturating_sub(1);
        if self.object.is_empty() {
            if positions * n * std::mem::size_of::<DAffine3>() <= LOCAL_KEPT_MAX {
                self.local = vec![DAffine3::IDENTITY; positions * n];
            }
            self.object = vec![DAffine3::IDENTITY; positions * n];
            self.errors = vec![0.0; positions * n];
            self.joint_max = vec![0.0; n];
            self.dirty.iter_mut().for_each(|d| *d = true);
        }
        // Joints whose own tracks changed (their local transforms are made again), and
        // joints whose path changed (composed and measured again), parents first.
        let mut own = std::mem::take(&mut self.dirty);
        let mut moved = own.clone();
        if self.local.is_empty() {
            own.iter_mut().for_each(|o| *o = true);
        }
        for (j, joint) in st.skeleton.joints.iter().enumerate() {
            if let Some(p) = joint.parent {
                moved[j] |= moved[p];
            }
        }
        let recomposed: Vec<Recomposed> = (0..n)
            .filter(|&j| moved[j])
            .map(|j| Recomposed {
                j,
                parent: st.skeleton.joints[j].parent,
                fresh: own[j],
                markers: JointMarkers::of(&st.held, j),
            })
            .collect();
        for r in &recomposed {
            self.joint_max[r.j] = 0.0;
        }
        for p in 0..positions {
            let (frame, refs) = (reference.position_frame(p), reference.at_position(p));
            for &Recomposed {
                j,
                parent,
                fresh,
                markers,
            } in &recomposed
            {
                let m = if fresh {
                    Layer::shown(st.layer, j, frame, &self.local_at(j, p)).to_daffine()
                } else {
                    self.local[p * n + j]
                };
                if fresh && let Some(kept) = self.local.get_mut(p * n + j) {
                    *kept = m;
                }
                let object = match parent {
                    Some(a) => self.object[p * n + a] * m,
                    None => m,
                };
                self.object[p * n + j] = object;
                let e = markers.error(&st.held, &refs[j], &object);
                self.errors[p * n + j] = e;
                // As `ErrorReport::new` folds it: from 0, `f32::max` (a NaN is passed over;
                // the report clamps midpoints at 0, which this fold does already).
                self.joint_max[j] = self.joint_max[j].max(e);
            }
        }
        moved.iter_mut().for_each(|d| *d = false);
        self.dirty = moved;
        self.whole = None;
        &self.joint_max
    }

    /// Each joint's largest error in the last measurement.
    pub fn joint_max(&self) -> &[f32] {
        &self.joint_max
    }

    /// The whole report of the last measurement ([`Decoded::measure_joint_max`]).
    pub fn report(&self, st: &State) -> ErrorReport {
        if let Some(whole) = &self.whole {
            return whole.clone();
        }
        let n = self.joint_max.len();
        let frames = self.frames;
        let at_samples = self.errors[..frames * n].to_vec();
        let at_midpoints = self.errors[frames * n..]
            .iter()
            .map(|&e| 0.0f32.max(e))
            .collect();
        ErrorReport::new(n, frames, at_samples, Some(at_midpoints), &st.held)
    }

    /// The verifier of `clip` (whose tracks these values decode) against the held
    /// tolerances, made from the poses of the last measurement when they are current: the
    /// same local transforms, matrices and object transforms [`Verifier::new`] would decode
    /// and compose again (the same values and products), so the same verifier. Made afresh
    /// where this does not hold them (a track changed since, a reference with extra points,
    /// or no measurement yet).
    pub fn into_verifier<'v>(self, st: &'v State, clip: &CompressedClip) -> Verifier<'v> {
        let (skeleton, reference, layer) = (st.skeleton, &*st.reference, st.layer);
        let current = self.whole.is_none()
            && !self.object.is_empty()
            && !self.dirty.iter().any(|&d| d)
            && reference.inner == 1;
        if !current {
            return Verifier::new(skeleton, reference, &st.held, clip, layer);
        }
        let n = self.joint_max.len();
        let positions = reference.positions();
        let mut local = Vec::with_capacity(positions * n);
        for p in 0..positions {
            local.extend((0..n).map(|j| self.local_at(j, p)));
        }
        let local_matrix = if self.local.is_empty() {
            (0..positions * n)
                .map(|i| {
                    let (p, j) = (i / n, i % n);
                    let frame = reference.position_frame(p);
                    Layer::shown(layer, j, frame, &local[i]).to_daffine()
                })
                .collect()
        } else {
            self.local
        };
        let poses = Poses {
            local,
            local_matrix,
            object: self.object,
        };
        Verifier::from_poses(skeleton, reference, &st.held, layer, poses)
    }

    /// Joint `j`'s local transform at position `p`, as the clip decodes it.
    fn local_at(&self, j: usize, p: usize) -> Transform {
        Transform::new(
            self.at(3 * j, p).truncate(),
            Quat::from_vec4(self.at(3 * j + 1, p)).normalize(),
            self.at(3 * j + 2, p).truncate(),
        )
    }

    fn at(&self, track: usize, p: usize) -> Vec4 {
        let v = &self.values[track];
        if v.len() == 1 { v[0] } else { v[p] }
    }
}

/// A joint [`Decoded::measure_joint_max`] composes and measures again, with what it reads
/// at every position looked up once.
struct Recomposed {
    j: usize,
    parent: Option<usize>,
    /// Whether its own tracks changed (its local transforms are made again).
    fresh: bool,
    markers: JointMarkers,
}

/// [`Decoded`] values of a clip, read as a pose source.
pub(crate) struct DecodedSource<'a> {
    decoded: &'a Decoded,
    clip: &'a CompressedClip,
}

impl PoseSource for DecodedSource<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        let d = self.decoded;
        let f = frame.clamp(0.0, d.frames.saturating_sub(1) as f32);
        let whole = f.floor();
        let p = if f == whole {
            Some(whole as usize)
        } else if f - whole == 0.5 {
            Some(d.frames + whole as usize)
        } else {
            None
        };
        let Some(p) = p else {
            return self.clip.sample_local(frame, out);
        };
        for (j, o) in out.iter_mut().enumerate() {
            *o = d.local_at(j, p);
        }
    }
}

#[cfg(test)]
mod tests {
    use glam::{Quat, Vec3, Vec4};

    use super::*;
    use crate::codec::report::ClipReport;
    use crate::codec::track::{TrackData, TrackInput, encode_track};
    use crate::settings::{Bits, Method};

    /// A two-joint clip: a moving translation and rotation on the root, a rest track, a
    /// constant one, and a moving rotation on the child; `tolerance` its encodings'.
    fn clip(frames: usize, tolerance: f32) -> CompressedClip {
        let t: Vec<Vec4> = (0..frames)
            .map(|f| Vec4::new((f as f32 * 0.3).sin(), 0.5 * f as f32, 0.0, 0.0))
            .collect();
        let r = |speed: f32| -> Vec<Vec4> {
            (0..frames)
                .map(|f| Vec4::from(Quat::from_rotation_y(speed * f as f32)))
                .collect()
        };
        let encode = |raw: &[Vec4], is_rotation: bool, rest: Vec4| {
            let input = TrackInput {
                raw,
                mids: None,
                rest,
                is_rotation,
            };
            encode_track(&input, tolerance, Method::Auto, Bits::Auto)
        };
        let (r0, r1) = (r(0.2), r(-0.45));
        let id = Vec4::from(Quat::IDENTITY);
        CompressedClip {
            name: "decoded".into(),
            sample_rate: 30.0,
            frame_count: frames,
            start_time: 0.0,
            rest: vec![crate::model::Transform::IDENTITY; 2],
            tracks: vec![
                [
                    encode(&t, false, Vec4::ZERO),
                    encode(&r0, true, id),
                    TrackData::Rest,
                ],
                [
                    TrackData::Constant {
                        value: Vec3::new(0.0, 1.0, 0.0).extend(0.0),
                        quantized: false,
                    },
                    encode(&r1, true, id),
                    TrackData::Rest,
                ],
            ],
            local_tolerance: vec![[tolerance; 3]; 2],
            report: ClipReport::default(),
            playback: Default::default(),
        }
    }

    fn same_poses(decoded: &Decoded, clip: &CompressedClip) {
        let source = decoded.source(clip);
        let mut a = vec![Transform::IDENTITY; 2];
        let mut b = vec![Transform::IDENTITY; 2];
        let last = clip.frame_count as f32 - 1.0;
        // Samples, midpoints, a quarter point (read from the clip) and past either end.
        let frames = (0..clip.frame_count)
            .map(|f| f as f32)
            .chain((0..clip.frame_count - 1).map(|f| f as f32 + 0.5))
            .chain([1.25, -1.0, last + 2.0]);
        for frame in frames {
            source.sample_local(frame, &mut a);
            clip.sample_local(frame, &mut b);
            assert_eq!(a, b, "frame {frame}");
        }
    }

    #[test]
    fn reads_what_the_clip_decodes_before_and_after_a_track_changes() {
        let mut clip = clip(40, 1e-3);
        assert!(clip.tracks[0][1].keys() > 1 && clip.tracks[0][0].keys() > 1);
        let mut decoded = Decoded::new(&clip);
        same_poses(&decoded, &clip);
        // The root turns the other way: the cache answers the old turn until updated.
        clip.tracks[0][1] = clip.tracks[1][1].clone();
        let (mut stale, mut now) = (vec![Transform::IDENTITY; 2], vec![Transform::IDENTITY; 2]);
        decoded.source(&clip).sample_local(3.5, &mut stale);
        clip.sample_local(3.5, &mut now);
        assert_ne!(stale[0].rotation, now[0].rotation);
        decoded.update(&clip, 0, 1);
        same_poses(&decoded, &clip);
    }
}
