//! Reference values of every track at frames and midpoints, in codec form, and joint
//! pinning's re-derived targets.

use glam::{DAffine3, Quat, Vec4};

use crate::codec::compressed::CompressedClip;
use crate::codec::curve::align_hemispheres;
use crate::codec::track::{TrackData, TrackInput};
use crate::metric::{PoseSource, Reference};
use crate::model::{Clip, Skeleton, Transform, local_to_object_f64, slerp_shortest};

/// Per joint and kind (T, R, S): values at samples, at midpoints, and at rest.
pub(crate) struct Inputs {
    pub raw: Vec<[Vec<Vec4>; 3]>,
    pub mids: Vec<[Vec<Vec4>; 3]>,
    pub rest: Vec<[Vec4; 3]>,
}

impl Inputs {
    /// The tracks of `clip`; `rest_pose` is what a rest track decodes to per joint (the
    /// skeleton's rest pose, or an additive clip's identity).
    pub fn new(skeleton: &Skeleton, clip: &Clip, rest_pose: &[Transform]) -> Self {
        let mut raw = Vec::with_capacity(skeleton.len());
        let mut mids = Vec::with_capacity(skeleton.len());
        let mut rest = Vec::with_capacity(skeleton.len());
        for (t, r) in clip.tracks.iter().zip(rest_pose).take(skeleton.len()) {
            let tv: Vec<Vec4> = t.translations.iter().map(|v| v.extend(0.0)).collect();
            let mut rv: Vec<Vec4> = t
                .rotations
                .iter()
                .map(|q| Vec4::from(q.normalize()))
                .collect();
            align_hemispheres(&mut rv);
            let sv: Vec<Vec4> = t.scales.iter().map(|v| v.extend(0.0)).collect();
            let lerp_mid = |v: &[Vec4]| {
                v.windows(2)
                    .map(|w| (w[0] + w[1]) * 0.5)
                    .collect::<Vec<_>>()
            };
            let rot_mid: Vec<Vec4> = rv
                .windows(2)
                .map(|w| {
                    Vec4::from(slerp_shortest(
                        Quat::from_vec4(w[0]),
                        Quat::from_vec4(w[1]),
                        0.5,
                    ))
                })
                .collect();
            mids.push([lerp_mid(&tv), rot_mid, lerp_mid(&sv)]);
            raw.push([tv, rv, sv]);
            rest.push([
                r.translation.extend(0.0),
                Vec4::from(r.rotation),
                r.scale.extend(0.0),
            ]);
        }
        Self { raw, mids, rest }
    }

    /// Joint pinning: re-derives pinned joints' local tracks against the *decoded* parent
    /// chain of `out`, so that the ancestors' error cancels at the pinned joint. Pinned
    /// joints are processed parents-first; `reencode` is called for each right after its
    /// target changes, so pinned descendants see it.
    pub fn repin(
        &mut self,
        skeleton: &Skeleton,
        reference: &Reference,
        out: &mut CompressedClip,
        pinned: &[bool],
        mut reencode: impl FnMut(&Inputs, usize) -> [TrackData; 3],
    ) {
        for (j, &is_pinned) in pinned.iter().enumerate().take(skeleton.len()) {
            if !is_pinned || skeleton.joints[j].parent.is_none() {
                continue;
            }
            (self.raw[j], self.mids[j]) = pinned_target(skeleton, reference, out, j);
            out.tracks[j] = reencode(self, j);
        }
    }

    /// Track `k` (T, R, S) of joint `j` as the encoders read it.
    pub fn input(&self, j: usize, k: usize) -> TrackInput<'_> {
        TrackInput {
            raw: &self.raw[j][k],
            mids: Some(&self.mids[j][k]),
            rest: self.rest[j][k],
            is_rotation: k == 1,
        }
    }
}

/// The local track of pinned joint `j` (which has a parent) that reproduces the reference
/// in object space on top of the decoded parent chain of `out`: values at samples and at
/// midpoints, hemisphere-aligned.
pub(crate) fn pinned_target(
    skeleton: &Skeleton,
    reference: &Reference,
    out: &CompressedClip,
    j: usize,
) -> ([Vec<Vec4>; 3], [Vec<Vec4>; 3]) {
    let n = skeleton.len();
    let frames = reference.frames;
    let parent = skeleton.joints[j]
        .parent
        .expect("a pinned joint with a parent");
    let mut local = vec![Transform::IDENTITY; n];
    let mut obj = vec![DAffine3::IDENTITY; n];
    let mut target = |frame: f32, raw_obj: &DAffine3| -> [Vec4; 3] {
        out.sample_local(frame, &mut local);
        local_to_object_f64(skeleton, &local, &mut obj);
        let l = obj[parent].inverse() * *raw_obj;
        let (s, r, t) = l.to_scale_rotation_translation();
        [
            t.as_vec3().extend(0.0),
            Vec4::from(r.as_quat().normalize()),
            s.as_vec3().extend(0.0),
        ]
    };
    let mut raw: [Vec<Vec4>; 3] = Default::default();
    for f in 0..frames {
        let v = target(f as f32, &reference.at_samples[f * n + j]);
        for k in 0..3 {
            raw[k].push(v[k]);
        }
    }
    let mut mids: [Vec<Vec4>; 3] = Default::default();
    for f in 0..frames.saturating_sub(1) {
        let v = target(f as f32 + 0.5, &reference.at_midpoints[f * n + j]);
        for k in 0..3 {
            mids[k].push(v[k]);
        }
    }
    align_hemispheres(&mut raw[1]);
    (raw, mids)
}
