//! Incremental object-space verification for relaxation: a changed track moves only its
//! joint's subtree, so only that subtree is re-measured, and only at the positions where a
//! proven bound on the change ([`bound`]) does not already keep every joint of the subtree
//! within tolerance. Every transform that is composed is computed exactly as
//! [`measure`](crate::metric::measure) computes it, and a position is accepted without
//! composing it only where the composition would pass, so a change is accepted exactly when
//! a full measurement would pass.

mod bound;

use glam::{DAffine3, Quat, Vec4};

use self::bound::LocalBounds;
use super::compressed::CompressedClip;
use super::playback::Layer;
use super::track::TrackData;
use crate::metric::{
    JointLimits, PoseSource, Reference, SquareTest, exceeds, joint_error_squared, marker_error,
};
use crate::model::{Skeleton, Transform, local_to_object_f64};

/// The decoded pose of a compressed clip at every sample and midpoint, in local and object
/// space, to test one track change at a time against the reference.
pub struct Verifier<'a> {
    skeleton: &'a Skeleton,
    reference: &'a Reference,
    limits: &'a JointLimits,
    /// Per joint, once a change to it is first tested: itself, then its descendants
    /// parents-first, each with the slot of its parent in this list (unused for the first),
    /// and whether every joint of it is tested by its square (so the bound applies).
    /// Built on demand: all of them would be quadratic on a deep chain.
    subtrees: Vec<Option<Subtree>>,
    /// An additive clip's base: the matrices are of the composed transforms.
    layer: Option<&'a Layer>,
    /// Per joint: how its error is tested.
    tests: Vec<JointTest>,
    /// `positions * joints`: decoded local transforms (of the additive layer for an
    /// additive clip), and the matrices of what players show (composed on the base).
    local: Vec<Transform>,
    local_matrix: Vec<DAffine3>,
    /// `positions * joints`: object transforms, current where `stale` is false.
    object: Vec<DAffine3>,
    /// `positions * joints`: the object transform predates a change above it that the bound
    /// accepted; [`Verifier::refresh`] composes it when it is needed.
    stale: Vec<bool>,
    /// `positions * joints`: an upper bound on each joint's marker error (its error where
    /// its object transform was last composed, plus the bounds of changes since).
    error: Vec<f64>,
    /// Per joint: bounds on its decoded local transforms over every position.
    bounds: Vec<LocalBounds>,
    /// The rounding margin of the bound ([`bound`]).
    margin: f64,
    /// A change being tested: the joint's new local transform per position, what was done
    /// at each position, and the subtree's object transforms and errors where composed.
    changed_local: Vec<Transform>,
    changed_at: Vec<Tested>,
    changed_object: Vec<DAffine3>,
    changed_error: Vec<f64>,
    /// The changed track's value at every position, or one value for all of them
    /// ([`TrackData::sample_positions`]; kept for its allocation).
    values: Vec<Vec4>,
    /// Per slot of the changed subtree: its markers' lever ([`bound::levers`]).
    levers: Vec<f64>,
    /// A stale chain being composed ([`Verifier::refresh`]; kept for its allocation).
    chain: Vec<usize>,
    /// Positions of tested changes the bound decided, and positions composed.
    #[cfg(test)]
    bounded: usize,
    #[cfg(test)]
    composed: usize,
}

/// A joint's subtree, parents-first ([`Verifier::subtrees`]).
#[derive(Clone, Default)]
struct Subtree {
    members: Vec<(usize, usize)>,
    by_square: bool,
}

/// How a joint's error is tested.
#[derive(Clone, Copy)]
enum JointTest {
    /// Not evaluated: always within.
    Skipped,
    /// By the square of its error ([`SquareTest`]), its markers `marker` from it; `limit`
    /// is its tolerance less the bound's margin.
    Square {
        marker: f32,
        test: SquareTest,
        limit: f64,
    },
    /// By its error (a joint with sockets, or a tolerance that is not positive and finite).
    General { tolerance: f32 },
}

/// What a tested change did at one position.
#[derive(Clone, Copy)]
enum Tested {
    /// Accepted by the bound: every joint of the subtree moves by at most `delta` times its
    /// lever.
    Bounded { delta: f64 },
    /// Composed: the subtree's transforms and errors from this index of `changed_object`.
    Composed { start: usize },
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
        let positions = reference.positions();
        let mut local = vec![Transform::IDENTITY; positions * n];
        let mut shown = vec![Transform::IDENTITY; n];
        let mut local_matrix = vec![DAffine3::IDENTITY; positions * n];
        let mut object = vec![DAffine3::IDENTITY; positions * n];
        for p in 0..positions {
            let at = p * n..(p + 1) * n;
            clip.sample_local(reference.position_frame(p), &mut local[at.clone()]);
            let frame = reference.position_frame(p);
            for (j, s) in shown.iter_mut().enumerate() {
                *s = Layer::shown(layer, j, frame, &local[p * n + j]);
                local_matrix[p * n + j] = s.to_daffine();
            }
            local_to_object_f64(skeleton, &shown, &mut object[at]);
        }
        let poses = Poses {
            local,
            local_matrix,
            object,
        };
        Self::from_poses(skeleton, reference, limits, layer, poses)
    }

    /// [`Verifier::new`] of a clip already decoded and composed: `poses` are its local
    /// transforms, their matrices as shown and its object transforms at every sample and
    /// midpoint, made with the same arithmetic as `new` makes them (so the verifier is
    /// `new`'s, bit for bit).
    pub fn from_poses(
        skeleton: &'a Skeleton,
        reference: &'a Reference,
        limits: &'a JointLimits,
        layer: Option<&'a Layer>,
        poses: Poses,
    ) -> Self {
        assert_eq!(reference.inner, 1, "verification expects midpoints only");
        let n = skeleton.len();
        let positions = reference.positions();
        let Poses {
            local,
            local_matrix,
            object,
        } = poses;
        assert!(
            local.len() == positions * n
                && local_matrix.len() == local.len()
                && object.len() == local.len(),
            "a pose per joint at every sample and midpoint"
        );
        // The pose's extent: its largest coordinate, and every marker's distance.
        let extent = object
            .iter()
            .map(|o| o.translation.abs().max_element())
            .chain((0..n).map(|j| limits.local_marker(j).abs() as f64))
            .fold(0.0, f64::max);
        let margin = 1e-9 * (1.0 + 2.0 * extent);
        let tests: Vec<JointTest> = (0..n).map(|j| JointTest::of(limits, j, margin)).collect();
        let bounds = (0..n)
            .map(|j| LocalBounds::over((0..positions).map(|p| &local[p * n + j])))
            .collect();
        let mut verifier = Self {
            skeleton,
            reference,
            limits,
            layer,
            subtrees: vec![None; n],
            tests,
            local_matrix,
            local,
            stale: vec![false; object.len()],
            error: vec![0.0; object.len()],
            object,
            bounds,
            margin,
            changed_local: Vec::new(),
            changed_at: Vec::new(),
            changed_object: Vec::new(),
            changed_error: Vec::new(),
            values: Vec::new(),
            levers: Vec::new(),
            chain: Vec::new(),
            #[cfg(test)]
            bounded: 0,
            #[cfg(test)]
            composed: 0,
        };
        for p in 0..positions {
            let refs = reference.at_position(p);
            for j in 0..n {
                let (_, error) = verifier.check(refs, j, &verifier.object[p * n + j]);
                verifier.error[p * n + j] = error;
            }
        }
        verifier
    }

    /// Everything the verifier holds that decides its verdicts, as bits: every position's
    /// local transform, matrix, object transform, error bound and staleness, each joint's
    /// bounds and test, and the margin (two verifiers with the same bits decide alike).
    #[cfg(test)]
    pub(crate) fn state_bits(&self) -> Vec<u64> {
        let f32s = |v: &[f32]| v.iter().map(|x| u64::from(x.to_bits())).collect::<Vec<_>>();
        let f64s = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        let mut bits = Vec::new();
        for t in &self.local {
            bits.extend(f32s(&t.translation.to_array()));
            bits.extend(f32s(&t.rotation.to_array()));
            bits.extend(f32s(&t.scale.to_array()));
        }
        for m in self.local_matrix.iter().chain(&self.object) {
            bits.extend(f64s(&m.to_cols_array()));
        }
        bits.extend(f64s(&self.error));
        bits.extend(self.stale.iter().map(|&s| u64::from(s)));
        for b in &self.bounds {
            bits.extend(f64s(&[b.reach, b.gain]));
        }
        for t in &self.tests {
            bits.extend(match *t {
                JointTest::Skipped => vec![0],
                JointTest::Square { marker, limit, .. } => {
                    vec![1, u64::from(marker.to_bits()), limit.to_bits()]
                }
                JointTest::General { tolerance } => vec![2, u64::from(tolerance.to_bits())],
            });
        }
        bits.push(self.margin.to_bits());
        bits
    }

    /// Every joint's marker error at every sample, and at every midpoint (at least 0), for
    /// the clip as the accepted changes left it: what [`measure`](crate::metric::measure)
    /// gives for it, read from the poses kept here (the stale ones composed first, as
    /// [`Verifier::refresh`] composes them) instead of decoding and composing every pose.
    pub fn cells(&mut self) -> (Vec<f32>, Vec<f32>) {
        let n = self.skeleton.len();
        let frames = self.reference.frames;
        let mut errors = vec![0.0f32; self.reference.positions() * n];
        for (p, at) in errors.chunks_exact_mut(n).enumerate() {
            let refs = self.reference.at_position(p);
            for (j, e) in at.iter_mut().enumerate() {
                // Parents come first: a stale joint's parent is current by now.
                self.refresh(j, p);
                *e = marker_error(self.limits, j, &refs[j], &self.object[p * n + j]);
            }
        }
        let midpoints = errors.split_off(frames * n);
        (
            errors,
            midpoints.into_iter().map(|e| 0.0f32.max(e)).collect(),
        )
    }

    /// Decodes `clip` afresh, after changes made without [`Verifier::accept`].
    pub fn reset(&mut self, clip: &CompressedClip) {
        *self = Self::new(self.skeleton, self.reference, self.limits, clip, self.layer);
    }

    /// True when replacing track `kind` of `joint` by `track` keeps every evaluated joint
    /// within tolerance at every sample and midpoint; the change is then kept, and later
    /// calls test against it. `rest` is the value a rest track decodes to.
    ///
    /// At each position, the bound ([`bound`]) on how far the change moves each joint's
    /// markers, added to the joint's current error, decides first; only where it does not
    /// hold everywhere in the subtree is the subtree composed and measured.
    pub fn accept(&mut self, joint: usize, kind: usize, track: &TrackData, rest: Vec4) -> bool {
        let n = self.skeleton.len();
        let parent = self.skeleton.joints[joint].parent;
        let subtree = self.subtrees[joint]
            .take()
            .unwrap_or_else(|| subtree_of(self.skeleton, &self.tests, joint));
        // Rotations and translations of a clip that is not additive, where every joint
        // below is tested by its square.
        let bounded = subtree.by_square && self.layer.is_none() && kind < 2;
        let gain = if bounded { self.gain_above(joint) } else { 0.0 };
        if bounded {
            self.set_levers(kind, &subtree.members);
        }
        self.changed_local.clear();
        self.changed_at.clear();
        self.changed_object.clear();
        self.changed_error.clear();
        let mut values = std::mem::take(&mut self.values);
        track.sample_positions(self.reference.frames, rest, &mut values);
        let mut within = true;
        for p in 0..self.reference.positions() {
            let v = values[if values.len() == 1 { 0 } else { p }];
            let old = self.local[p * n + joint];
            let local = with_value(old, kind, v);
            self.changed_local.push(local);
            if bounded {
                let delta = gain
                    * match kind {
                        0 => bound::translation_change(old.translation, local.translation),
                        _ => bound::rotation_change(old.rotation, local.rotation, old.scale),
                    };
                if self.bound_holds(&subtree.members, p, delta) {
                    self.changed_at.push(Tested::Bounded { delta });
                    self.count(true);
                    continue;
                }
            }
            self.count(false);
            let start = self.changed_object.len();
            self.changed_at.push(Tested::Composed { start });
            if !self.compose(&subtree.members, parent, p, &local) {
                within = false;
                break;
            }
        }
        self.values = values;
        if within {
            self.keep(joint, &subtree.members);
        }
        self.subtrees[joint] = Some(subtree);
        within
    }

    /// Each subtree member's lever for a change of track `kind`: its markers' reach about
    /// the changed joint for a rotation ([`bound::levers`]), 1 for a translation (it moves
    /// every point below alike).
    fn set_levers(&mut self, kind: usize, members: &[(usize, usize)]) {
        let mut levers = std::mem::take(&mut self.levers);
        if kind == 1 {
            let limits = self.limits;
            let marker = |j: usize| limits.local_marker(j) as f64;
            bound::levers(members, &self.bounds, marker, &mut levers);
        } else {
            levers.clear();
            levers.resize(members.len(), 1.0);
        }
        self.levers = levers;
    }

    /// True when at position `p` every joint of the subtree, moved by `delta` times its
    /// lever, stays within its tolerance.
    fn bound_holds(&self, members: &[(usize, usize)], p: usize, delta: f64) -> bool {
        let n = self.skeleton.len();
        let error = &self.error[p * n..(p + 1) * n];
        members.iter().zip(&self.levers).all(|(&(j, _), &lever)| {
            let JointTest::Square { limit, .. } = self.tests[j] else {
                return true;
            };
            error[j] + delta * lever <= limit
        })
    }

    /// Composes the subtree (`members`, of `joint` whose parent is `parent`) at position `p`
    /// with `joint`'s local transform `local`, into `changed_object` and `changed_error`;
    /// false at the first joint out of tolerance.
    fn compose(
        &mut self,
        members: &[(usize, usize)],
        parent: Option<usize>,
        p: usize,
        local: &Transform,
    ) -> bool {
        let n = self.skeleton.len();
        if let Some(a) = parent {
            self.refresh(a, p);
        }
        let start = self.changed_object.len();
        let refs = self.reference.at_position(p);
        for (i, &(j, parent_slot)) in members.iter().enumerate() {
            let object = if i == 0 {
                let frame = self.reference.position_frame(p);
                let m = Layer::shown(self.layer, j, frame, local).to_daffine();
                match parent {
                    Some(a) => self.object[p * n + a] * m,
                    None => m,
                }
            } else {
                self.changed_object[start + parent_slot] * self.local_matrix[p * n + j]
            };
            let (within, error) = self.check(refs, j, &object);
            if !within {
                return false;
            }
            self.changed_object.push(object);
            self.changed_error.push(error);
        }
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
        self.changed_error.clear();
        let mut matrices = Vec::with_capacity(own.len());
        for p in 0..self.reference.positions() {
            let frame = self.reference.position_frame(p);
            matrices.clear();
            for &j in &own {
                let mut local = self.local[p * n + j];
                for c in changes.iter().filter(|c| c.joint == j) {
                    local = with_value(local, c.kind, c.track.sample(frame, c.rest));
                }
                self.changed_local.push(local);
                matrices.push(Layer::shown(self.layer, j, frame, &local).to_daffine());
            }
            for &(j, parent_slot) in &moved {
                if let (None, Some(a)) = (parent_slot, self.skeleton.joints[j].parent) {
                    self.refresh(a, p);
                }
            }
            let start = self.changed_object.len();
            let refs = self.reference.at_position(p);
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
                let (within, error) = self.check(refs, j, &object);
                if !within {
                    return false;
                }
                self.changed_object.push(object);
                self.changed_error.push(error);
            }
        }
        for p in 0..self.reference.positions() {
            let frame = self.reference.position_frame(p);
            for (i, &j) in own.iter().enumerate() {
                let local = self.changed_local[p * own.len() + i];
                self.local[p * n + j] = local;
                self.local_matrix[p * n + j] =
                    Layer::shown(self.layer, j, frame, &local).to_daffine();
            }
            let at = p * moved.len()..(p + 1) * moved.len();
            for (i, &(j, _)) in moved.iter().enumerate() {
                self.object[p * n + j] = self.changed_object[at.start + i];
                self.error[p * n + j] = self.changed_error[at.start + i];
                self.stale[p * n + j] = false;
            }
        }
        for &j in &own {
            self.update_bounds(j);
        }
        true
    }

    /// Stores the change just tested as the current pose: composed positions as composed,
    /// bounded ones as stale with their errors raised by the bound.
    fn keep(&mut self, joint: usize, members: &[(usize, usize)]) {
        let n = self.skeleton.len();
        for (p, local) in self.changed_local.iter().enumerate() {
            self.local[p * n + joint] = *local;
            let frame = self.reference.position_frame(p);
            self.local_matrix[p * n + joint] =
                Layer::shown(self.layer, joint, frame, local).to_daffine();
            match self.changed_at[p] {
                Tested::Bounded { delta } => {
                    for (&(j, _), lever) in members.iter().zip(&self.levers) {
                        self.error[p * n + j] += delta * lever + self.margin;
                        self.stale[p * n + j] = true;
                    }
                }
                Tested::Composed { start } => {
                    for (i, &(j, _)) in members.iter().enumerate() {
                        self.object[p * n + j] = self.changed_object[start + i];
                        self.error[p * n + j] = self.changed_error[start + i];
                        self.stale[p * n + j] = false;
                    }
                }
            }
        }
        self.update_bounds(joint);
    }

    /// Counts a tested position, `bounded` or composed (for the tests only).
    #[inline(always)]
    fn count(&mut self, bounded: bool) {
        #[cfg(test)]
        if bounded {
            self.bounded += 1;
        } else {
            self.composed += 1;
        }
        #[cfg(not(test))]
        let _ = bounded;
    }

    /// Recomputes joint `j`'s [`LocalBounds`] after its local transforms changed.
    fn update_bounds(&mut self, j: usize) {
        let n = self.skeleton.len();
        let locals = (0..self.reference.positions()).map(|p| &self.local[p * n + j]);
        self.bounds[j] = LocalBounds::over(locals);
    }

    /// A bound on the spectral norm of the linear part of `joint`'s parent's object
    /// transform: the product of its ancestors' gains.
    fn gain_above(&self, joint: usize) -> f64 {
        let mut gain = 1.0;
        let mut a = self.skeleton.joints[joint].parent;
        while let Some(j) = a {
            gain *= self.bounds[j].gain;
            a = self.skeleton.joints[j].parent;
        }
        gain * (1.0 + 1e-12)
    }

    /// Makes joint `j`'s object transform at position `p` current: composes the stale
    /// chain above it, from its topmost stale ancestor down, as the full composition would.
    fn refresh(&mut self, j: usize, p: usize) {
        let n = self.skeleton.len();
        if !self.stale[p * n + j] {
            return;
        }
        let mut chain = std::mem::take(&mut self.chain);
        chain.clear();
        let mut a = Some(j);
        while let Some(x) = a.filter(|&x| self.stale[p * n + x]) {
            chain.push(x);
            a = self.skeleton.joints[x].parent;
        }
        for &x in chain.iter().rev() {
            let m = self.local_matrix[p * n + x];
            self.object[p * n + x] = match self.skeleton.joints[x].parent {
                Some(parent) => self.object[p * n + parent] * m,
                None => m,
            };
            self.stale[p * n + x] = false;
        }
        self.chain = chain;
    }

    /// Whether joint `j` posed at `object` is within its tolerance of its reference pose
    /// among `refs` (one position's), exactly as [`crate::metric::marker_within`] decides,
    /// and an upper bound on its error (its error by its square, else infinite).
    #[inline(always)]
    fn check(&self, refs: &[DAffine3], j: usize, object: &DAffine3) -> (bool, f64) {
        match self.tests[j] {
            JointTest::Skipped => (true, 0.0),
            JointTest::Square { marker, test, .. } => {
                let s = joint_error_squared(&refs[j], object, marker);
                (test.within(s), s.sqrt())
            }
            JointTest::General { tolerance } => {
                let error = marker_error(self.limits, j, &refs[j], object);
                (!exceeds(error, tolerance), f64::INFINITY)
            }
        }
    }
}

impl JointTest {
    /// Joint `j`'s test under `limits`, with the bound's `margin`.
    fn of(limits: &JointLimits, j: usize, margin: f64) -> Self {
        let tolerance = limits.tolerance[j];
        if !limits.evaluated[j] {
            return Self::Skipped;
        }
        match SquareTest::new(limits, j, tolerance) {
            Some(test) => Self::Square {
                marker: limits.local_marker(j),
                test,
                limit: tolerance as f64 - margin,
            },
            None => Self::General { tolerance },
        }
    }
}

/// A clip's poses at every sample and midpoint (`positions * joints`, samples first), as
/// [`Verifier::new`] decodes and composes them: what [`Verifier::from_poses`] starts from.
pub struct Poses {
    /// Decoded local transforms (of the additive layer for an additive clip).
    pub local: Vec<Transform>,
    /// The matrices of what players show (composed on the additive layer's base).
    pub local_matrix: Vec<DAffine3>,
    /// Object transforms.
    pub object: Vec<DAffine3>,
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

/// `local` with track `kind` (0 translation, 1 rotation, 2 scale) at value `v`, as the
/// clip decodes it.
fn with_value(mut local: Transform, kind: usize, v: Vec4) -> Transform {
    match kind {
        0 => local.translation = v.truncate(),
        1 => local.rotation = Quat::from_vec4(v).normalize(),
        _ => local.scale = v.truncate(),
    }
    local
}

/// `root`'s subtree, parents-first, with the slot of each member's parent, and whether
/// every joint of it is tested by its square.
fn subtree_of(skeleton: &Skeleton, tests: &[JointTest], root: usize) -> Subtree {
    let n = skeleton.len();
    let mut slot = vec![usize::MAX; n];
    slot[root] = 0;
    let mut members = vec![(root, 0)];
    for j in root + 1..n {
        if let Some(p) = skeleton.joints[j].parent
            && slot[p] != usize::MAX
        {
            slot[j] = members.len();
            members.push((j, slot[p]));
        }
    }
    let by_square = members
        .iter()
        .all(|&(j, _)| !matches!(tests[j], JointTest::General { .. }));
    Subtree { members, by_square }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::{Control, compress};
    use crate::metric::marker_within;
    use crate::settings::Settings;

    /// Whether every evaluated joint of `clip` is within tolerance at every sample and
    /// midpoint of `reference`: composed and tested from scratch, without the verifier.
    fn within_everywhere(
        skeleton: &Skeleton,
        reference: &Reference,
        limits: &JointLimits,
        clip: &CompressedClip,
    ) -> bool {
        let n = skeleton.len();
        let (mut local, mut object) = (vec![Transform::IDENTITY; n], vec![DAffine3::IDENTITY; n]);
        (0..reference.positions()).all(|p| {
            clip.sample_local(reference.position_frame(p), &mut local);
            local_to_object_f64(skeleton, &local, &mut object);
            let refs = reference.at_position(p);
            (0..n).all(|j| marker_within(limits, j, &refs[j], &object[j], limits.tolerance[j]))
        })
    }

    /// The default character's Walk, compressed at several tolerances: every track of each
    /// is a candidate change, tested against the clip at the asked tolerance as it changes.
    /// The reference is the clip compressed at a quarter of the tolerance (so every clip
    /// samples the same frames), and the changes are tested at 1.3 times the tolerance.
    #[test]
    fn a_change_is_accepted_exactly_when_the_whole_clip_is_within() {
        let asset = crate::character::committed_asset();
        let skeleton = &asset.skeleton;
        let clip = asset.clips.iter().find(|c| c.name == "Walk").unwrap();
        let settings = Settings::default().resolve(&asset, &clip.name);
        let at = |factor: f32| {
            let mut s = settings.clone();
            s.limits.tolerance.iter_mut().for_each(|t| *t *= factor);
            compress(skeleton, clip, &s, &Control::new()).unwrap()
        };
        let tight = at(0.25);
        let reference = Reference::new(skeleton, &tight, tight.frame_count);
        let candidates: Vec<CompressedClip> = [0.5, 1.5, 2.0, 3.0, 6.0].map(at).into();
        let mut current = at(1.0);
        // Within 1.25 times the tolerance of the reference, so tested at 1.3 times it.
        let mut limits = settings.limits.clone();
        limits.tolerance.iter_mut().for_each(|t| *t *= 1.3);
        let limits = &limits;
        assert!(within_everywhere(skeleton, &reference, limits, &current));
        let mut verifier = Verifier::new(skeleton, &reference, limits, &current, None);
        let (mut kept, mut refused) = (0, 0);
        // Joints with a moving track, deep and shallow, in a fixed pseudo-random order.
        let moving: Vec<(usize, usize)> = (0..skeleton.len())
            .flat_map(|j| (0..3).map(move |k| (j, k)))
            .filter(|&(j, k)| {
                candidates
                    .iter()
                    .any(|c| c.tracks[j][k] != current.tracks[j][k])
            })
            .collect();
        assert!(moving.len() > 20, "{}", moving.len());
        for step in 0..400usize {
            let (j, k) = moving[(step * 7919) % moving.len()];
            let candidate = &candidates[(step * 31 + step / 7) % candidates.len()];
            let track = candidate.tracks[j][k].clone();
            let mut trial = current.clone();
            trial.tracks[j][k] = track.clone();
            let exact = within_everywhere(skeleton, &reference, limits, &trial);
            let got = verifier.accept(j, k, &track, current.rest_value(j, k));
            assert_eq!(got, exact, "step {step}: joint {j} track {k}");
            if got {
                current = trial;
                kept += 1;
            } else {
                refused += 1;
            }
        }
        assert!(kept > 40 && refused > 40, "{kept} kept, {refused} refused");
        // The errors read from the verifier's poses (stale ones among them) are a whole
        // measurement's, bit for bit.
        let stale = verifier.stale.iter().filter(|&&s| s).count();
        assert!(stale > 0, "no stale pose to compose");
        let whole = crate::metric::measure(skeleton, &reference, &current, limits, true);
        let (at_samples, at_midpoints) = verifier.cells();
        let bits = |v: &[f32]| v.iter().map(|e| e.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&at_samples), bits(&whole.at_samples));
        assert_eq!(
            bits(&at_midpoints),
            bits(whole.at_midpoints.as_deref().unwrap())
        );
        // The bound decided most positions of the changes it saw.
        assert!(
            verifier.bounded * 2 > verifier.composed,
            "{} bounded, {} composed",
            verifier.bounded,
            verifier.composed
        );
    }
}
