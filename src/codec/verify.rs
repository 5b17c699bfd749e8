//! Incremental object-space verification for relaxation: a changed track moves only its
//! joint's subtree, so only that subtree is re-composed and re-measured. Every transform
//! is computed exactly as [`measure`](crate::metric::measure) computes it, so a change is
//! accepted exactly when a full measurement would pass.

use glam::{DAffine3, Quat, Vec4};

use super::compressed::CompressedClip;
use super::playback::Layer;
use super::track::TrackData;
use crate::metric::{JointLimits, PoseSource, Reference, marker_within};
use crate::model::{Skeleton, Transform, local_to_object_f64};

/// The decoded pose of a compressed clip at every sample and midpoint, in local and object
/// space, to test one track change at a time against the reference.
pub struct Verifier<'a> {
    skeleton: &'a Skeleton,
    reference: &'a Reference,
    limits: &'a JointLimits,
    /// Per joint, once a change to it is first tested: itself, then its descendants
    /// parents-first, each with the slot of its parent in this list (unused for the first).
    /// Built on demand: all of them would be quadratic on a deep chain.
    subtrees: Vec<Option<Vec<(usize, usize)>>>,
    /// An additive clip's base: the matrices are of the composed transforms.
    layer: Option<&'a Layer>,
    /// `positions * joints`: decoded local transforms (of the additive layer for an
    /// additive clip), and the matrices of what players show (composed on the base).
    local: Vec<Transform>,
    local_matrix: Vec<DAffine3>,
    /// `positions * joints`: object transforms.
    object: Vec<DAffine3>,
    /// A change being tested: the joint's new local transform per position, and its
    /// subtree's object transforms (`positions * subtree`).
    changed_local: Vec<Transform>,
    changed_object: Vec<DAffine3>,
    /// The changed track's value at every position, or one value for all of them
    /// ([`TrackData::sample_positions`]; kept for its allocation).
    values: Vec<Vec4>,
}

impl<'a> Verifier<'a> {
    /// Decodes `clip` at the reference's samples and midpoints.
    pub fn new(
        skeleton: &'a Skeleton,
        reference: &'a Reference,
        limits: &'a JointLimits,
        clip: &CompressedClip,
        layer: Option<&'a Layer>,
    ) -> Self {
        assert_eq!(reference.inner, 1, "verification expects midpoints only");
        let n = skeleton.len();
        let positions = positions(reference);
        let mut local = vec![Transform::IDENTITY; positions * n];
        let mut shown = vec![Transform::IDENTITY; n];
        let mut local_matrix = vec![DAffine3::IDENTITY; positions * n];
        let mut object = vec![DAffine3::IDENTITY; positions * n];
        for p in 0..positions {
            let at = p * n..(p + 1) * n;
            clip.sample_local(position_frame(reference, p), &mut local[at.clone()]);
            let frame = position_frame(reference, p);
            for (j, s) in shown.iter_mut().enumerate() {
                *s = shown_local(layer, j, frame, &local[p * n + j]);
                local_matrix[p * n + j] = s.to_daffine();
            }
            local_to_object_f64(skeleton, &shown, &mut object[at]);
        }
        Self {
            skeleton,
            reference,
            limits,
            layer,
            subtrees: vec![None; n],
            local_matrix,
            local,
            object,
            changed_local: Vec::new(),
            changed_object: Vec::new(),
            values: Vec::new(),
        }
    }

    /// Decodes `clip` afresh, after changes made without [`Verifier::accept`].
    pub fn reset(&mut self, clip: &CompressedClip) {
        *self = Self::new(self.skeleton, self.reference, self.limits, clip, self.layer);
    }

    /// True when replacing track `kind` of `joint` by `track` keeps every evaluated joint
    /// within tolerance at every sample and midpoint; the change is then kept, and later
    /// calls test against it. `rest` is the value a rest track decodes to.
    pub fn accept(&mut self, joint: usize, kind: usize, track: &TrackData, rest: Vec4) -> bool {
        let n = self.skeleton.len();
        let parent = self.skeleton.joints[joint].parent;
        let skeleton = self.skeleton;
        let subtree = self.subtrees[joint].get_or_insert_with(|| subtree_of(skeleton, joint));
        self.changed_local.clear();
        self.changed_object.clear();
        let mut values = std::mem::take(&mut self.values);
        track.sample_positions(self.reference.frames, rest, &mut values);
        for p in 0..positions(self.reference) {
            let v = values[if values.len() == 1 { 0 } else { p }];
            let mut local = self.local[p * n + joint];
            match kind {
                0 => local.translation = v.truncate(),
                1 => local.rotation = Quat::from_vec4(v).normalize(),
                _ => local.scale = v.truncate(),
            }
            self.changed_local.push(local);
            let start = self.changed_object.len();
            let refs = reference_at(self.reference, p);
            for (i, &(j, parent_slot)) in subtree.iter().enumerate() {
                let object = if i == 0 {
                    let frame = position_frame(self.reference, p);
                    let m = shown_local(self.layer, joint, frame, &local).to_daffine();
                    match parent {
                        Some(a) => self.object[p * n + a] * m,
                        None => m,
                    }
                } else {
                    self.changed_object[start + parent_slot] * self.local_matrix[p * n + j]
                };
                self.changed_object.push(object);
                if !holds(self.limits, refs, j, &object) {
                    self.values = values;
                    return false;
                }
            }
        }
        self.values = values;
        self.keep(joint);
        true
    }

    /// True when replacing every track of `changes` at once (joint, kind, track, the value a
    /// rest track decodes to) keeps every evaluated joint within tolerance at every sample
    /// and midpoint; the changes are then kept together. One composition of the changed
    /// joints and everything below them, where [`Verifier::accept`] composes a subtree per
    /// change: a sweep whose changes mostly pass tests them in groups.
    pub fn accept_all(&mut self, changes: &[Change]) -> bool {
        let n = self.skeleton.len();
        // The changed joints, then every joint below one, parents first, each with the slot
        // of its parent when the parent moves too.
        let mut slot = vec![usize::MAX; n];
        let mut moved: Vec<(usize, Option<usize>)> = Vec::new();
        let mut own: Vec<usize> = changes.iter().map(|c| c.joint).collect();
        own.sort_unstable();
        own.dedup();
        for j in 0..n {
            let parent = self.skeleton.joints[j].parent;
            let parent_slot = parent.map(|a| slot[a]).filter(|&s| s != usize::MAX);
            if parent_slot.is_some() || own.binary_search(&j).is_ok() {
                slot[j] = moved.len();
                moved.push((j, parent_slot));
            }
        }
        self.changed_local.clear();
        self.changed_object.clear();
        let mut matrices = Vec::with_capacity(own.len());
        for p in 0..positions(self.reference) {
            let frame = position_frame(self.reference, p);
            matrices.clear();
            for &j in &own {
                let mut local = self.local[p * n + j];
                for c in changes.iter().filter(|c| c.joint == j) {
                    let v = c.track.sample(frame, c.rest);
                    match c.kind {
                        0 => local.translation = v.truncate(),
                        1 => local.rotation = Quat::from_vec4(v).normalize(),
                        _ => local.scale = v.truncate(),
                    }
                }
                self.changed_local.push(local);
                matrices.push(shown_local(self.layer, j, frame, &local).to_daffine());
            }
            let start = self.changed_object.len();
            let refs = reference_at(self.reference, p);
            for &(j, parent_slot) in &moved {
                let m = match own.binary_search(&j) {
                    Ok(i) => matrices[i],
                    Err(_) => self.local_matrix[p * n + j],
                };
                let object = match (parent_slot, self.skeleton.joints[j].parent) {
                    (Some(s), _) => self.changed_object[start + s] * m,
                    (None, Some(a)) => self.object[p * n + a] * m,
                    (None, None) => m,
                };
                self.changed_object.push(object);
                if !holds(self.limits, refs, j, &object) {
                    return false;
                }
            }
        }
        for p in 0..positions(self.reference) {
            let frame = position_frame(self.reference, p);
            for (i, &j) in own.iter().enumerate() {
                let local = self.changed_local[p * own.len() + i];
                self.local[p * n + j] = local;
                self.local_matrix[p * n + j] =
                    shown_local(self.layer, j, frame, &local).to_daffine();
            }
            let changed = &self.changed_object[p * moved.len()..(p + 1) * moved.len()];
            for (&(j, _), object) in moved.iter().zip(changed) {
                self.object[p * n + j] = *object;
            }
        }
        true
    }

    /// Stores the change just tested as the current pose.
    fn keep(&mut self, joint: usize) {
        let n = self.skeleton.len();
        let skeleton = self.skeleton;
        let subtree = self.subtrees[joint].get_or_insert_with(|| subtree_of(skeleton, joint));
        for (p, local) in self.changed_local.iter().enumerate() {
            self.local[p * n + joint] = *local;
            let frame = position_frame(self.reference, p);
            self.local_matrix[p * n + joint] =
                shown_local(self.layer, joint, frame, local).to_daffine();
            let changed = &self.changed_object[p * subtree.len()..(p + 1) * subtree.len()];
            for (&(j, _), object) in subtree.iter().zip(changed) {
                self.object[p * n + j] = *object;
            }
        }
    }
}

/// One track change for [`Verifier::accept_all`].
pub struct Change<'t> {
    /// The joint whose track changes.
    pub joint: usize,
    /// Which track: 0 translation, 1 rotation, 2 scale.
    pub kind: usize,
    /// The new track.
    pub track: &'t TrackData,
    /// The value a rest track decodes to.
    pub rest: Vec4,
}

/// Joint `j`'s local transform as players show it: on the additive layer's base.
fn shown_local(layer: Option<&Layer>, j: usize, frame: f32, local: &Transform) -> Transform {
    match layer {
        Some(l) => l.compose(j, frame, local),
        None => *local,
    }
}

/// Samples, then midpoints.
fn positions(reference: &Reference) -> usize {
    reference.frames + reference.frames.saturating_sub(1)
}

/// The frame of position `p`: a sample, or the midpoint after sample `p - frames`.
fn position_frame(reference: &Reference, p: usize) -> f32 {
    if p < reference.frames {
        p as f32
    } else {
        (p - reference.frames) as f32 + 0.5
    }
}

/// The reference object pose at position `p`.
fn reference_at(reference: &Reference, p: usize) -> &[DAffine3] {
    let n = reference.joints;
    if p < reference.frames {
        reference.sample(p)
    } else {
        let m = p - reference.frames;
        &reference.at_midpoints[m * n..(m + 1) * n]
    }
}

/// `root`'s subtree, parents-first, with the slot of each member's parent.
fn subtree_of(skeleton: &Skeleton, root: usize) -> Vec<(usize, usize)> {
    let n = skeleton.len();
    let mut slot = vec![usize::MAX; n];
    slot[root] = 0;
    let mut list = vec![(root, 0)];
    for j in root + 1..n {
        if let Some(p) = skeleton.joints[j].parent
            && slot[p] != usize::MAX
        {
            slot[j] = list.len();
            list.push((j, slot[p]));
        }
    }
    list
}

/// Whether joint `j` posed at `object` is within its tolerance of its reference pose among
/// `refs` (one position's; a joint not evaluated always is).
#[inline(always)]
fn holds(limits: &JointLimits, refs: &[DAffine3], j: usize, object: &DAffine3) -> bool {
    marker_within(limits, j, &refs[j], object, limits.tolerance[j])
}
