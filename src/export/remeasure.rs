//! Re-measuring a clip after one channel changed: the poses and errors of the last accepted
//! channels are kept per rule and per point (samples, then the inner points between them),
//! and a change to one channel recomputes only its joint's subtree, the other joints' errors
//! being those of the last measurement. The arithmetic is the same as
//! [`crate::metric::measure`] on a [`Played`] clip, so verdicts and reports are identical.

use std::sync::atomic::{AtomicUsize, Ordering};

use glam::{DAffine3, Quat, Vec4};

use super::channels::{Channel, Interp, Rule, tick_frame};
use crate::metric::{ErrorReport, JointLimits, Reference, marker_error};
use crate::model::{Skeleton, SlerpArc, Transform};

/// The accepted state under one rule: per point (frame-major, `points * joints`), local
/// poses, object poses and errors.
struct RuleState {
    rule: Rule,
    local: Vec<Transform>,
    obj: Vec<DAffine3>,
    errors: Vec<f32>,
}

impl RuleState {
    /// The rest pose (`n` joints) at each of `points` points (object poses and errors to be computed),
    /// in the buffers of a state an earlier [`Remeasure`] of this thread left (a fit
    /// measures several layouts one after the other: their buffers, tens of MB on a long
    /// clip, are then filled again instead of mapped afresh).
    fn start(rule: Rule, rest: &[Transform], n: usize, points: usize) -> Self {
        let mut state = SPARE
            .with(|spare| spare.borrow_mut().pop())
            .unwrap_or(RuleState {
                rule,
                local: Vec::new(),
                obj: Vec::new(),
                errors: Vec::new(),
            });
        state.rule = rule;
        state.local.clear();
        // At once: a state built afresh (no spare left) would grow by reallocations.
        state.local.reserve(points * n);
        for _ in 0..points {
            state.local.extend_from_slice(rest);
        }
        state.obj.clear();
        state.obj.resize(points * n, DAffine3::IDENTITY);
        state.errors.clear();
        state.errors.resize(points * n, 0.0);
        state
    }

    /// Bytes its buffers hold.
    fn capacity_bytes(&self) -> usize {
        self.local.capacity() * std::mem::size_of::<Transform>()
            + self.obj.capacity() * std::mem::size_of::<DAffine3>()
            + self.errors.capacity() * std::mem::size_of::<f32>()
    }
}

/// States kept per thread for the next [`Remeasure`] (at most [`SPARE_STATES`] of them,
/// [`SPARE_BYTES`] in all).
const SPARE_STATES: usize = 5;
const SPARE_BYTES: usize = 256 << 20;

thread_local! {
    static SPARE: std::cell::RefCell<Vec<RuleState>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Frees the states every thread keeps for its next [`Remeasure`]: an export reuses them from
/// fit to fit, and lets them go when it ends ([`SpareRelease`]), so an app or a `watch` that
/// exported a long clip once does not keep up to [`SPARE_BYTES`] per thread afterwards.
fn release_spares() {
    let clear = || SPARE.with(|spare| spare.borrow_mut().clear());
    clear();
    rayon::broadcast(|_| clear());
}

/// Frees the threads' spare states ([`release_spares`]) when dropped: held for the length
/// of an export.
pub(super) struct SpareRelease;

impl Drop for SpareRelease {
    fn drop(&mut self) {
        release_spares();
    }
}

/// Returns states to the thread's spares (as a dropped [`Remeasure`] does), within
/// [`SPARE_STATES`] and [`SPARE_BYTES`].
fn keep_spare(states: Vec<RuleState>) {
    SPARE.with(|spare| {
        let mut spare = spare.borrow_mut();
        for state in states {
            let held: usize = spare.iter().map(RuleState::capacity_bytes).sum();
            if spare.len() < SPARE_STATES && held + state.capacity_bytes() <= SPARE_BYTES {
                spare.push(state);
            }
        }
    });
}

/// A fit's last measurement, kept for the next fit of the same clip
/// ([`Remeasure::into_measured`], [`Remeasure::resume`]): the accepted channels and, per
/// rule, every point's local poses, object poses and errors.
pub(super) struct Measured {
    /// Frame position of each point (the samples, the inner points, the extra points).
    points: Vec<f32>,
    /// How many of `points` are samples and inner points (the rest are the reference's
    /// extra points, which differ from fit to fit).
    common: usize,
    states: Vec<RuleState>,
    accepted: Vec<Channel>,
    /// The bytes [`Measured::if_room`] counted against [`MEASURED_KEPT_MAX`] (0 if none).
    counted: usize,
}

/// The most memory the kept [`Measured`]s of a process may hold at once: the export keeps
/// one per clip from its layout search to its last fit, for every clip of a scene, and one
/// measurement holds every rule's poses at every point (tens of MB for the 8 s, 120 fps
/// CMU capture; gigabytes for a long clip of a rig of hundreds of joints). A measurement
/// that does not fit is not kept: its clip's next fit measures afresh (the same errors).
const MEASURED_KEPT_MAX: usize = 512 << 20;

/// Bytes held by the kept [`Measured`]s.
static MEASURED_KEPT: AtomicUsize = AtomicUsize::new(0);

impl Measured {
    /// `self`, counted against [`MEASURED_KEPT_MAX`], where it fits there; else `None`
    /// (its buffers go back to the thread's spares).
    pub(super) fn if_room(mut self) -> Option<Self> {
        let bytes: usize = self.states.iter().map(RuleState::capacity_bytes).sum();
        let reserved = MEASURED_KEPT.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
            (held + bytes <= MEASURED_KEPT_MAX).then_some(held + bytes)
        });
        reserved.is_ok().then(|| {
            self.counted = bytes;
            self
        })
    }
}

impl Drop for Measured {
    /// Leaves the states' buffers to the thread's next measurement.
    fn drop(&mut self) {
        MEASURED_KEPT.fetch_sub(self.counted, Ordering::Relaxed);
        keep_spare(std::mem::take(&mut self.states));
    }
}

/// Errors of a clip's channels under every rule of a player, updated a channel at a time.
pub(super) struct Remeasure<'a> {
    skeleton: &'a Skeleton,
    reference: &'a Reference,
    limits: &'a JointLimits,
    rate: f32,
    frames: usize,
    /// Frame position of each point: the samples, then the inner points by interval.
    points: Vec<f32>,
    /// Per joint, itself and every joint below it, in index order (parents first).
    subtrees: Vec<Vec<usize>>,
    states: Vec<RuleState>,
    /// The channels the accepted state measures.
    accepted: Vec<Channel>,
    /// Object poses and errors of the subtree being measured, per rule, point and subtree
    /// joint.
    pending_obj: Vec<DAffine3>,
    pending_errors: Vec<f32>,
}

impl Drop for Remeasure<'_> {
    /// Leaves the states' buffers to the thread's next measurement.
    fn drop(&mut self) {
        keep_spare(std::mem::take(&mut self.states));
    }
}

impl<'a> Remeasure<'a> {
    /// Measures `channels` under each of `rules` as [`crate::metric::measure`] does, at
    /// the reference's samples and inner points.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        channels: &[Channel],
        skeleton: &'a Skeleton,
        reference: &'a Reference,
        rest: &[Transform],
        rate: f32,
        frames: usize,
        limits: &'a JointLimits,
        rules: &[Rule],
    ) -> Self {
        let n = skeleton.len();
        let points = reference.point_positions();
        // The rest pose, then every channel applied as if it had changed.
        let states = rules
            .iter()
            .map(|&rule| RuleState::start(rule, rest, n, points.len()))
            .collect();
        let at = (skeleton, reference, limits, rate, frames);
        Self::measured_from(at, points, states, channels.to_vec(), 0)
    }

    /// A measurement of `accepted` at `points` whose `states` hold the rest pose from
    /// point `from` on (and, before it, the accepted channels' poses and errors): the
    /// channels applied to those points as if they had changed.
    fn measured_from(
        (skeleton, reference, limits, rate, frames): (
            &'a Skeleton,
            &'a Reference,
            &'a JointLimits,
            f32,
            usize,
        ),
        points: Vec<f32>,
        states: Vec<RuleState>,
        accepted: Vec<Channel>,
        from: usize,
    ) -> Self {
        let n = skeleton.len();
        let mut me = Self {
            skeleton,
            reference,
            limits,
            rate,
            frames,
            points,
            subtrees: (0..n).map(|j| skeleton.subtree(j)).collect(),
            states,
            accepted,
            pending_obj: Vec::new(),
            pending_errors: Vec::new(),
        };
        let stored: Vec<Channel> = me.accepted.iter().map(|c| c.as_stored(rate)).collect();
        me.remeasure(&stored, &vec![true; n], true, from);
        me
    }

    /// `last`, an earlier fit's measurement of the same clip (same skeleton, rules,
    /// limits, rate, samples and inner points), at `reference`'s points: its state at the
    /// samples and inner points is kept, and the reference's extra points are measured
    /// afresh for its accepted channels. The same arithmetic on the same inputs as
    /// [`Self::new`] of those channels, so the same poses and errors bit for bit; then
    /// [`Self::update`] to the fit's channels. `None` where `last` does not fit (other
    /// rules, channels, joints or points).
    #[allow(clippy::too_many_arguments)]
    pub fn resume(
        mut last: Measured,
        skeleton: &'a Skeleton,
        reference: &'a Reference,
        rest: &[Transform],
        rate: f32,
        frames: usize,
        limits: &'a JointLimits,
        rules: &[Rule],
    ) -> Option<Self> {
        let n = skeleton.len();
        let points = reference.point_positions();
        let common = grid_points(reference);
        let fits = last.common == common
            && last.points.get(..common) == points.get(..common)
            && last.states.len() == rules.len()
            && last.states.iter().zip(rules).all(|(s, &r)| s.rule == r)
            && last
                .states
                .iter()
                .all(|s| s.errors.len() == last.points.len() * n);
        if !fits {
            return None;
        }
        // The samples and inner points as they were; the extra points from the rest pose.
        let mut states = std::mem::take(&mut last.states);
        for state in states.iter_mut() {
            state.local.truncate(common * n);
            for _ in common..points.len() {
                state.local.extend_from_slice(rest);
            }
            state.obj.truncate(common * n);
            state.obj.resize(points.len() * n, DAffine3::IDENTITY);
            state.errors.truncate(common * n);
            state.errors.resize(points.len() * n, 0.0);
        }
        let at = (skeleton, reference, limits, rate, frames);
        let accepted = std::mem::take(&mut last.accepted);
        Some(Self::measured_from(at, points, states, accepted, common))
    }

    /// The channels the accepted state measures.
    pub fn accepted(&self) -> &[Channel] {
        &self.accepted
    }

    /// Each joint's largest error under `rule` over every point of the accepted state
    /// (`None` when `rule` is not measured): [`crate::metric::measure`]'s `joint_max` of a
    /// [`super::channels::Played`] clip of the accepted channels under `rule`, to the bit
    /// (both from 0 by `f32::max`).
    pub fn joint_max_under(&self, rule: Rule) -> Option<Vec<f32>> {
        let state = self.states.iter().find(|s| s.rule == rule)?;
        Some(state_max(state, self.skeleton.len()))
    }

    /// Whether `channels` drive the same components, one channel each, as the accepted
    /// ones ([`Self::update`] then measures them).
    pub fn drives_as(&self, channels: &[Channel]) -> bool {
        self.accepted.len() == channels.len()
            && self
                .accepted
                .iter()
                .zip(channels)
                .all(|(a, c)| (a.joint, a.kind) == (c.joint, c.kind))
    }

    /// The accepted state, for a later fit of the same clip to [`Self::resume`] from.
    pub fn into_measured(mut self) -> Measured {
        Measured {
            points: std::mem::take(&mut self.points),
            common: grid_points(self.reference),
            states: std::mem::take(&mut self.states),
            accepted: std::mem::take(&mut self.accepted),
            counted: 0,
        }
    }

    /// Joint `j`'s error at point `p` for its object pose `obj` (0 where not evaluated).
    fn error(&self, p: usize, j: usize, obj: &DAffine3) -> f32 {
        if !self.limits.evaluated[j] {
            return 0.0;
        }
        let n = self.reference.joints;
        let f = self.reference.frames;
        let inner_end = f + f.saturating_sub(1) * self.reference.inner;
        let refs = if p < f {
            &self.reference.at_samples[p * n..(p + 1) * n]
        } else if p < inner_end {
            &self.reference.at_midpoints[(p - f) * n..(p - f + 1) * n]
        } else {
            &self.reference.at_extra[(p - inner_end) * n..(p - inner_end + 1) * n]
        };
        marker_error(self.limits, j, &refs[j], obj)
    }

    /// Measures `channels` (the accepted ones with every channel that differs changed),
    /// recomputing only the subtrees of the changed channels' joints, and makes that the
    /// accepted state.
    pub fn update(&mut self, channels: &[Channel]) {
        assert_eq!(
            channels.len(),
            self.accepted.len(),
            "channels added or removed"
        );
        let n = self.skeleton.len();
        let changed: Vec<usize> = (0..channels.len())
            .filter(|&i| channels[i] != self.accepted[i])
            .collect();
        if changed.is_empty() {
            return;
        }
        let mut dirty = vec![false; n];
        for &i in &changed {
            for &k in &self.subtrees[channels[i].joint] {
                dirty[k] = true;
            }
        }
        let stored: Vec<Channel> = changed
            .iter()
            .map(|&i| channels[i].as_stored(self.rate))
            .collect();
        self.remeasure(&stored, &dirty, false, 0);
        for &i in &changed {
            self.accepted[i] = channels[i].clone();
        }
    }

    /// Under every rule at every point: the components `stored` (channels as stored)
    /// drive, then the object poses and errors of the `dirty` joints (parents first).
    /// Only the points from `from` on. Unless `fresh` (measured from the rest pose), a
    /// joint whose local transform and parent pose are bit for bit those of the accepted
    /// state keeps its pose and error, and so does one whose recomposed pose comes out bit
    /// for bit the same (the same arithmetic on the same inputs: a key dropped or inserted
    /// moves the points of its segments only).
    fn remeasure(&mut self, stored: &[Channel], dirty: &[bool], fresh: bool, from: usize) {
        let n = self.skeleton.len();
        let rules: Vec<Rule> = self.states.iter().map(|s| s.rule).collect();
        let mut values = vec![Vec4::ZERO; rules.len()];
        let arcs: Vec<Vec<SlerpArc>> = stored.iter().map(Channel::segment_arcs).collect();
        // Per rule, the joints whose local transform moved at the current point.
        let mut moved = vec![vec![fresh; n]; rules.len()];
        let mut obj_moved = vec![false; n];
        for p in from..self.points.len() {
            let f = self.clamped(p);
            if !fresh {
                for m in moved.iter_mut() {
                    m.fill(false);
                }
            }
            for (c, arcs) in stored.iter().zip(&arcs) {
                sample_rules(c, arcs, f, &rules, &mut values);
                for ((state, &v), m) in self.states.iter_mut().zip(&values).zip(moved.iter_mut()) {
                    m[c.joint] |= set_component(&mut state.local[p * n + c.joint], c.kind, v);
                }
            }
            for (s, moved) in moved.iter().enumerate() {
                self.compose(s, p, dirty, moved, &mut obj_moved, fresh);
            }
        }
    }

    /// Under rule `s` at point `p`: the object poses and errors of the `dirty` joints whose
    /// local transform `moved` or whose parent's pose moved (every dirty joint when
    /// `fresh`); `obj_moved` (scratch, per joint) says whose pose changed.
    fn compose(
        &mut self,
        s: usize,
        p: usize,
        dirty: &[bool],
        moved: &[bool],
        obj_moved: &mut [bool],
        fresh: bool,
    ) {
        let n = self.skeleton.len();
        // `RawLimit` is `Raw` except at keys, and `Raw` is `Slerp` except at keys: joints
        // whose local transform and parent pose agree with that rule's take its pose and
        // error instead of composing them again (the same arithmetic on the same inputs).
        let partner = match self.states[s].rule {
            Rule::RawLimit => Some(Rule::Raw),
            Rule::Raw => Some(Rule::Slerp),
            _ => None,
        };
        let mirror = partner.and_then(|rule| self.states[..s].iter().position(|x| x.rule == rule));
        let mut states = std::mem::take(&mut self.states);
        let (before, after) = states.split_at_mut(s);
        let state = &mut after[0];
        let like = mirror.map(|r| &before[r]);
        for k in (0..n).filter(|&k| dirty[k]) {
            let at = p * n + k;
            let parent = self.skeleton.joints[k].parent;
            let parent_moved = parent.is_some_and(|q| obj_moved[q]);
            if !fresh && !moved[k] && !parent_moved {
                obj_moved[k] = false;
                continue;
            }
            let same = like.is_some_and(|like| {
                state.local[at] == like.local[at]
                    && parent.is_none_or(|q| state.obj[p * n + q] == like.obj[p * n + q])
            });
            let (obj, error) = match like {
                Some(like) if same => (like.obj[at], Some(like.errors[at])),
                _ => {
                    let m = state.local[at].to_daffine();
                    let obj = match parent {
                        Some(q) => state.obj[p * n + q] * m,
                        None => m,
                    };
                    (obj, None)
                }
            };
            if !fresh && same_bits(&obj, &state.obj[at]) {
                obj_moved[k] = false;
                continue;
            }
            obj_moved[k] = true;
            state.obj[at] = obj;
            state.errors[at] = error.unwrap_or_else(|| self.error(p, k, &obj));
        }
        self.states = states;
    }

    /// Measures the accepted channels with channel `i` replaced by `channels[i]`,
    /// recomputing only its joint's subtree, and makes that the accepted state when it
    /// holds. It does not hold as soon as a joint of the subtree with `counts[joint]` goes
    /// over `allowed[joint]` under some rule (the joints outside it keep their accepted
    /// errors, within their limits); then nothing changes.
    pub fn apply_if_holds(
        &mut self,
        i: usize,
        channels: &[Channel],
        allowed: &[f32],
        counts: &[bool],
    ) -> bool {
        let channel = &channels[i];
        let stored = channel.as_stored(self.rate);
        let sub = std::mem::take(&mut self.subtrees[channel.joint]);
        let holds = self.measure_subtree(&stored, &sub, allowed, counts);
        if holds {
            self.commit(&stored, &sub);
            self.accepted[i] = channel.clone();
        }
        self.subtrees[channel.joint] = sub;
        holds
    }

    /// Object poses and errors of subtree `sub` (of `stored`'s joint) into the pending
    /// buffers, per rule and point; false at the first joint over its limit.
    fn measure_subtree(
        &mut self,
        stored: &Channel,
        sub: &[usize],
        allowed: &[f32],
        counts: &[bool],
    ) -> bool {
        let n = self.skeleton.len();
        let joint = stored.joint;
        // Each joint's parent by its position in `sub` (the root of `sub` excepted).
        let parent_at: Vec<usize> = sub
            .iter()
            .map(|&k| match self.skeleton.joints[k].parent {
                Some(q) if k != joint => sub.binary_search(&q).expect("parent in subtree"),
                _ => usize::MAX,
            })
            .collect();
        let size = self.points.len() * sub.len();
        self.pending_obj
            .resize(size * self.states.len(), DAffine3::IDENTITY);
        self.pending_errors.resize(size * self.states.len(), 0.0);
        let mut worst = vec![0.0f32; sub.len()];
        let arcs = stored.segment_arcs();
        for s in 0..self.states.len() {
            for p in 0..self.points.len() {
                let state = &self.states[s];
                let mut local = state.local[p * n + joint];
                let v = stored.sample_with(self.clamped(p), state.rule, &arcs);
                set_component(&mut local, stored.kind, v);
                let base = s * size + p * sub.len();
                for (i, &k) in sub.iter().enumerate() {
                    let obj = if i == 0 {
                        let m = local.to_daffine();
                        match self.skeleton.joints[k].parent {
                            Some(q) => state.obj[p * n + q] * m,
                            None => m,
                        }
                    } else {
                        self.pending_obj[base + parent_at[i]] * state.local[p * n + k].to_daffine()
                    };
                    let e = self.error(p, k, &obj);
                    self.pending_obj[base + i] = obj;
                    self.pending_errors[base + i] = e;
                    worst[i] = worst[i].max(e);
                    if counts[k] && worst[i] > allowed[k] {
                        return false;
                    }
                }
            }
        }
        true
    }

    /// Point `p`'s frame as [`Played`] clamps it.
    fn clamped(&self, p: usize) -> f32 {
        self.points[p].clamp(0.0, self.frames.saturating_sub(1) as f32)
    }

    /// Makes the pending poses and errors of subtree `sub` (of `stored`'s joint) the
    /// accepted state.
    fn commit(&mut self, stored: &Channel, sub: &[usize]) {
        let n = self.skeleton.len();
        let size = self.points.len() * sub.len();
        let arcs = stored.segment_arcs();
        for s in 0..self.states.len() {
            for p in 0..self.points.len() {
                let f = self.clamped(p);
                let state = &mut self.states[s];
                let v = stored.sample_with(f, state.rule, &arcs);
                set_component(&mut state.local[p * n + stored.joint], stored.kind, v);
                let base = s * size + p * sub.len();
                for (i, &k) in sub.iter().enumerate() {
                    state.obj[p * n + k] = self.pending_obj[base + i];
                    state.errors[p * n + k] = self.pending_errors[base + i];
                }
            }
        }
    }

    /// Per rule, each joint's largest error over every point of the accepted state (the
    /// reports' `joint_max`, without building them).
    pub fn joint_max(&self) -> Vec<Vec<f32>> {
        let n = self.skeleton.len();
        self.states
            .iter()
            .map(|state| state_max(state, n))
            .collect()
    }

    /// Frame positions of the points where joint `j`'s error under `rule` is over `allowed`
    /// in the accepted state (none when `rule` is not measured).
    pub fn over_points(&self, rule: Rule, j: usize, allowed: f32) -> Vec<f32> {
        let n = self.skeleton.len();
        let Some(state) = self.states.iter().find(|s| s.rule == rule) else {
            return Vec::new();
        };
        (0..self.points.len())
            .filter(|&p| state.errors[p * n + j] > allowed)
            .map(|p| self.points[p])
            .collect()
    }

    /// The accepted state's reports, one per rule, as [`crate::metric::measure`] builds
    /// them.
    pub fn reports(&self) -> Vec<ErrorReport> {
        let n = self.skeleton.len();
        let frames = self.reference.frames;
        let inner = self.reference.inner;
        self.states
            .iter()
            .map(|state| {
                let samples = state.errors[..frames * n].to_vec();
                let m = frames.saturating_sub(1);
                let mut mids = vec![0.0f32; m * n];
                for f in 0..m {
                    for k in 0..inner {
                        let at = (frames + f * inner + k) * n;
                        let point = &state.errors[at..at + n];
                        for (dst, &v) in mids[f * n..(f + 1) * n].iter_mut().zip(point) {
                            *dst = dst.max(v);
                        }
                    }
                }
                let inner_end = (frames + m * inner) * n;
                for e in 0..self.reference.extra.len() {
                    let f = self.reference.extra_interval(e);
                    let point = &state.errors[inner_end + e * n..inner_end + (e + 1) * n];
                    for (dst, &v) in mids[f * n..(f + 1) * n].iter_mut().zip(point) {
                        *dst = dst.max(v);
                    }
                }
                ErrorReport::new(n, frames, samples, Some(mids), self.limits)
            })
            .collect()
    }
}

/// How many of `reference`'s points are its samples and inner points (the extra points,
/// which differ from fit to fit, come after them).
fn grid_points(reference: &Reference) -> usize {
    reference.frames + reference.frames.saturating_sub(1) * reference.inner
}

/// Each of `n` joints' largest error over every point of `state` (from 0, by `f32::max`).
fn state_max(state: &RuleState, n: usize) -> Vec<f32> {
    let mut max = vec![0.0f32; n];
    for row in state.errors.chunks_exact(n.max(1)) {
        for (m, &e) in max.iter_mut().zip(row) {
            *m = m.max(e);
        }
    }
    max
}

/// Sets the component of `local` a channel of `kind` drives to its sampled value `v`, as
/// [`super::channels::Played`] does.
/// Returns whether the component's bits changed.
fn set_component(local: &mut Transform, kind: usize, v: Vec4) -> bool {
    let was = *local;
    match kind {
        0 => local.translation = v.truncate(),
        1 => local.rotation = Quat::from_vec4(v),
        _ => local.scale = v.truncate(),
    }
    !transform_bits_equal(&was, local)
}

/// Whether two transforms are the same bit for bit (`-0.0` and `0.0` differ, a NaN equals
/// itself).
fn transform_bits_equal(a: &Transform, b: &Transform) -> bool {
    let bits = |t: &Transform| -> [u32; 10] {
        let (tr, r, s) = (t.translation, t.rotation, t.scale);
        [tr.x, tr.y, tr.z, r.x, r.y, r.z, r.w, s.x, s.y, s.z].map(f32::to_bits)
    };
    bits(a) == bits(b)
}

/// Whether two object poses are the same bit for bit.
fn same_bits(a: &DAffine3, b: &DAffine3) -> bool {
    a.to_cols_array()
        .iter()
        .zip(b.to_cols_array().iter())
        .all(|(x, y)| x.to_bits() == y.to_bits())
}

/// `stored`'s value at frame `f` under each of `rules` (as [`Channel::sample_as`]), into
/// `out`. Translation and scale do not depend on the rule; slerp and raw keys differ only
/// at keys and outside them, so between keys the slerp is computed once for both.
fn sample_rules(stored: &Channel, arcs: &[SlerpArc], f: f32, rules: &[Rule], out: &mut [Vec4]) {
    if !stored.is_rotation() {
        out.fill(stored.sample(f));
        return;
    }
    let shared = slerp_is_raw(stored, f);
    let in_range = shared || slerp_is_raw_limit(stored, f);
    let mut slerp = None;
    for (o, &rule) in out.iter_mut().zip(rules) {
        *o = match rule {
            Rule::Slerp | Rule::Raw | Rule::RawLimit if shared => {
                *slerp.get_or_insert_with(|| stored.sample_with(f, Rule::Slerp, arcs))
            }
            Rule::Slerp | Rule::RawLimit if in_range => {
                *slerp.get_or_insert_with(|| stored.sample_with(f, Rule::Slerp, arcs))
            }
            _ => stored.sample_with(f, rule, arcs),
        };
    }
}

/// Whether a LINEAR rotation channel's slerp and [`Rule::RawLimit`] values at `f` are the
/// same computation: at or between its first and last keys.
fn slerp_is_raw_limit(c: &Channel, f: f32) -> bool {
    let (Some(&first), Some(&last)) = (c.ticks.first(), c.ticks.last()) else {
        return false;
    };
    c.interp == Interp::Linear
        && c.ticks.len() > 1
        && f >= tick_frame(first)
        && f <= tick_frame(last)
}

/// Whether a LINEAR rotation channel's slerp and raw-key values at `f` are the same
/// computation: strictly between its first and last keys and at no key (where
/// [`Channel::sample_as`] slerps rather than returning a key).
fn slerp_is_raw(c: &Channel, f: f32) -> bool {
    let (Some(&first), Some(&last)) = (c.ticks.first(), c.ticks.last()) else {
        return false;
    };
    c.interp == Interp::Linear
        && c.ticks.len() > 1
        && f > tick_frame(first)
        && f < tick_frame(last)
        && c.ticks
            .binary_search_by(|&k| tick_frame(k).total_cmp(&f))
            .is_err()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::export::channels::{Played, Storage, TICKS};
    use crate::metric::measure;
    use crate::model::{Clip, Joint};
    use glam::Vec3;

    fn chain() -> Skeleton {
        let at = |x: f32| Transform::new(Vec3::new(x, 0.0, 0.0), Quat::IDENTITY, Vec3::ONE);
        Skeleton::new(vec![
            Joint::new("a", None, at(0.0)),
            Joint::new("b", Some(0), at(1.0)),
            Joint::new("c", Some(1), at(1.0)),
            Joint::new("d", Some(0), at(0.5)),
        ])
        .unwrap()
    }

    fn rotation(joint: usize, angle: f32) -> Channel {
        let values = (0..3)
            .map(|i| Vec4::from(Quat::from_rotation_z(angle * i as f32)))
            .collect();
        Channel {
            joint,
            kind: 1,
            interp: Interp::Linear,
            ticks: vec![0, 4 * TICKS, 8 * TICKS],
            values,
            tangents: vec![],
            storage: Storage::Quat(12),
            held_end: false,
        }
    }

    /// The tests' limits (3 cm markers, 0.1 mm) and the chain's rest pose.
    fn limits_and_rest(s: &Skeleton) -> (JointLimits, Vec<Transform>) {
        (JointLimits::uniform(s, 0.03, 1e-4), s.rest_pose())
    }

    /// The chain, the reference of [`two_turning_joints`] (three inner points a frame),
    /// the tests' limits and the rest pose.
    fn two_turning_joints_measured() -> (Skeleton, Reference, JointLimits, Vec<Transform>) {
        let s = chain();
        let r = Reference::with_inner_points(&s, &two_turning_joints(&s), 9, 3);
        let (l, rest) = limits_and_rest(&s);
        (s, r, l, rest)
    }

    /// Every rule's full measurement, as the verifier made it before.
    fn measured(s: &Skeleton, r: &Reference, cs: &[Channel], l: &JointLimits) -> Vec<Vec<f32>> {
        let rest = s.rest_pose();
        [Rule::Slerp, Rule::Nlerp, Rule::Raw]
            .iter()
            .map(|&rule| {
                let played = Played::with_rule(&rest, cs, 30.0, 9, rule);
                let e = measure(s, r, &played, l, true);
                assert!(e.midpoints.is_some());
                e.joint_max
            })
            .collect()
    }

    /// A 9-frame clip of `s` in which joints 1 and 3 turn.
    fn two_turning_joints(s: &Skeleton) -> Clip {
        let mut clip = Clip::rest("c", s, 30.0, 9);
        for f in 0..9 {
            clip.tracks[1].rotations[f] = Quat::from_rotation_z(f as f32 * 0.05);
            clip.tracks[3].rotations[f] = Quat::from_rotation_y(f as f32 * 0.02);
        }
        clip
    }

    #[test]
    fn partial_measurements_equal_whole_ones() {
        let (s, r, l, rest) = two_turning_joints_measured();
        let rules = [Rule::Slerp, Rule::Nlerp, Rule::Raw];
        let mut cs = vec![rotation(1, 0.2), rotation(3, 0.08)];
        let mut m = Remeasure::new(&cs, &s, &r, &rest, 30.0, 9, &l, &rules);
        assert_eq!(m.joint_max(), measured(&s, &r, &cs, &l));
        cs[0].storage = Storage::Quat(7);
        m.update(&cs);
        assert_eq!(m.joint_max(), measured(&s, &r, &cs, &l));
        // A key inserted off the segment's path moves the points of that segment only (the
        // others keep their accepted poses and errors): still the whole measurement.
        cs[1].ticks.insert(1, 2 * TICKS);
        cs[1]
            .values
            .insert(1, Vec4::from(Quat::from_rotation_z(0.3)));
        m.update(&cs);
        assert_eq!(m.joint_max(), measured(&s, &r, &cs, &l));
        // And a key on the curve where the source is: the error falls on its segment.
        let before = m.joint_max();
        cs[1].values[1] = Vec4::from(Quat::from_rotation_y(0.04));
        m.update(&cs);
        assert_eq!(m.joint_max(), measured(&s, &r, &cs, &l));
        assert_ne!(m.joint_max(), before);
        let joint_max = |m: &Remeasure| -> Vec<Vec<f32>> {
            m.reports().into_iter().map(|e| e.joint_max).collect()
        };
        assert_eq!(joint_max(&m), measured(&s, &r, &cs, &l));
        // A change that holds is applied; one over a limit leaves everything as it was.
        cs[1].storage = Storage::Quat(9);
        assert!(m.apply_if_holds(1, &cs, &[f32::INFINITY; 4], &[true; 4]));
        assert_eq!(m.joint_max(), measured(&s, &r, &cs, &l));
        let before = m.joint_max();
        cs[0].storage = Storage::Quat(4);
        assert!(!m.apply_if_holds(0, &cs, &[0.0; 4], &[true; 4]));
        assert_eq!(m.joint_max(), before);
    }

    #[test]
    fn a_measurement_is_kept_only_within_the_budget_and_gives_it_back() {
        let (s, r, l, rest) = two_turning_joints_measured();
        let cs = vec![rotation(1, 0.2), rotation(3, 0.08)];
        let measured =
            || Remeasure::new(&cs, &s, &r, &rest, 30.0, 9, &l, &[Rule::Slerp]).into_measured();
        let kept = measured().if_room().expect("a small measurement is kept");
        assert!(kept.counted > 0);
        // One over the whole budget by itself (its capacity reserved, never touched).
        let mut huge = measured();
        huge.states[0]
            .errors
            .reserve(MEASURED_KEPT_MAX / std::mem::size_of::<f32>());
        assert!(huge.if_room().is_none());
        // What a kept one counted is given back when it is dropped: a quarter of the
        // budget at a time, eight times over.
        for _ in 0..8 {
            let mut quarter = measured();
            quarter.states[0]
                .errors
                .reserve(MEASURED_KEPT_MAX / 4 / std::mem::size_of::<f32>());
            drop(quarter.if_room().expect("room again once dropped"));
        }
    }

    /// Every rule's poses and errors at every point, bit for bit.
    fn state_bits(m: &Remeasure) -> Vec<(Vec<u32>, Vec<[u64; 12]>)> {
        m.states
            .iter()
            .map(|st| {
                let errors = st.errors.iter().map(|e| e.to_bits()).collect();
                let obj = st
                    .obj
                    .iter()
                    .map(|o| o.to_cols_array().map(f64::to_bits))
                    .collect();
                (errors, obj)
            })
            .collect()
    }

    #[test]
    fn a_resumed_measurement_is_a_fresh_one() {
        let s = chain();
        let clip = two_turning_joints(&s);
        let with_extra = |extra: &[f32]| {
            let mut r = Reference::with_inner_points(&s, &clip, 9, 3);
            r.add_extra_points(&s, &clip, extra);
            r
        };
        // The last fit checked other extra points than the next one does.
        let (r1, r2) = (with_extra(&[1.1, 5.6]), with_extra(&[2.3, 2.6, 7.9]));
        let (l, rest) = limits_and_rest(&s);
        let rules = [
            Rule::Slerp,
            Rule::Nlerp,
            Rule::Raw,
            Rule::RawLimit,
            Rule::Three,
        ];
        let first = vec![rotation(1, 0.2), rotation(3, 0.08)];
        let mut next = first.clone();
        next[0].storage = Storage::Short;
        next[1].ticks.insert(1, 2 * TICKS);
        next[1]
            .values
            .insert(1, Vec4::from(Quat::from_rotation_z(0.3)));
        let last = Remeasure::new(&first, &s, &r1, &rest, 30.0, 9, &l, &rules).into_measured();
        let resume = |last: Measured, cs: &[Channel], r, rules: &[Rule]| {
            let mut m = Remeasure::resume(last, &s, r, &rest, 30.0, 9, &l, rules)?;
            m.update(cs);
            Some(m)
        };
        let resumed = resume(last, &next, &r2, &rules).unwrap();
        let fresh = Remeasure::new(&next, &s, &r2, &rest, 30.0, 9, &l, &rules);
        assert_eq!(state_bits(&resumed), state_bits(&fresh));
        assert_eq!(resumed.joint_max(), fresh.joint_max());
        assert_eq!(resumed.accepted, next);
        // Unchanged channels: the extra points alone are measured, still the same; and the
        // slerp state is the spec's measurement of them.
        let last = Remeasure::new(&next, &s, &r1, &rest, 30.0, 9, &l, &rules).into_measured();
        let resumed = resume(last, &next, &r2, &rules).unwrap();
        assert_eq!(state_bits(&resumed), state_bits(&fresh));
        let spec = measure(&s, &r2, &Played::new(&rest, &next, 30.0, 9), &l, true);
        assert_eq!(resumed.joint_max_under(Rule::Slerp), Some(spec.joint_max));
        // Another grid of inner points, or other rules: not resumed.
        let coarse = Reference::with_inner_points(&s, &clip, 9, 1);
        let last = Remeasure::new(&first, &s, &coarse, &rest, 30.0, 9, &l, &rules).into_measured();
        assert!(resume(last, &next, &r2, &rules).is_none());
        let last = Remeasure::new(&first, &s, &r1, &rest, 30.0, 9, &l, &rules[..3]).into_measured();
        assert!(resume(last, &next, &r2, &rules).is_none());
        // Channels driving other components are not measured from it.
        let last = Remeasure::new(&first, &s, &r1, &rest, 30.0, 9, &l, &rules).into_measured();
        let m = Remeasure::resume(last, &s, &r2, &rest, 30.0, 9, &l, &rules).unwrap();
        assert!(m.drives_as(&next) && !m.drives_as(&[rotation(2, 0.2), rotation(3, 0.08)]));
    }
}
