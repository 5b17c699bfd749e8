//! What every imported clip must hold to be compressed, stored and played: values within
//! the magnitude a `.skp` stores and a player composes ([`MAX_MAGNITUDE`], ±10^15, also
//! for each joint's place in the scene after composition), and no joint so far from the
//! scene root that 32-bit floats there are farther apart than the whole character.
//!
//! A joint beyond it cannot be represented or measured, and before this check it took the
//! other joints with it (budgets and verification of its ancestors were computed against
//! it). So where a joint's own translation or scale puts it out at some frames, that
//! component is held at storable values there ([`hold_unreachable`]) and named (the clip,
//! the joint, the value, the frames) by every command and the app alike; a joint out only
//! through its parents' transforms is refused at import (docs/ROBUSTNESS.md, item 5).

use glam::DAffine3;

use crate::model::{Clip, Skeleton, Transform};

/// The largest magnitude of a translation or scale component, and of a joint's position
/// or axis length in the scene: the `.skp` format's limit (`skelpack_runtime`).
pub const MAX_MAGNITUDE: f64 = skelpack_runtime::read::MAX_MAGNITUDE as f64;

/// What went out of range at a joint.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Translation,
    Scale,
    /// Local values in range, but composed with its parents' it lands out of range.
    Composed,
}

/// The first joint (parents first) out of range: which, how, and at which frames.
struct Culprit {
    joint: usize,
    kind: Kind,
    worst: f64,
    first: usize,
    last: usize,
    frames: usize,
}

/// The first joint (parents first) out of range in `clip`, with every frame where it is.
fn find_culprit(
    skeleton: &Skeleton,
    clip: &Clip,
    place_limit: f64,
) -> Option<(Culprit, Vec<usize>)> {
    let n = skeleton.len();
    let mut obj = vec![DAffine3::IDENTITY; n];
    let mut culprit: Option<Culprit> = None;
    let mut at = Vec::new();
    for f in 0..clip.frame_count {
        for (j, joint) in skeleton.joints.iter().enumerate() {
            if culprit.as_ref().is_some_and(|c| c.joint < j) {
                break; // an ancestor-first joint is already out: it is the one to name
            }
            let local = clip.tracks[j].at(f);
            obj[j] = match joint.parent {
                Some(p) => obj[p] * local.to_daffine(),
                None => local.to_daffine(),
            };
            let Some((kind, worst)) = out_of_range(&local, &obj[j], place_limit) else {
                continue;
            };
            match &mut culprit {
                Some(c) if c.joint == j => {
                    c.last = f;
                    c.frames += 1;
                    c.worst = c.worst.max(worst);
                    at.push(f);
                }
                _ => {
                    culprit = Some(Culprit {
                        joint: j,
                        kind,
                        worst,
                        first: f,
                        last: f,
                        frames: 1,
                    });
                    at = vec![f];
                }
            }
            break;
        }
    }
    culprit.map(|c| (c, at))
}

/// One line on culprit `c`: clip, joint, the value, the frames.
fn describe(skeleton: &Skeleton, clip: &Clip, c: &Culprit, size: f64) -> String {
    let what = match c.kind {
        Kind::Translation => format!("a translation of {:.1e}", c.worst),
        Kind::Scale => format!("a scale of {:.1e}", c.worst),
        Kind::Composed => format!(
            "a place {:.1e} from the scene root (its parents' transforms composed), where \
             32-bit floats are {:.1e} apart (the character is {size:.3} across)",
            c.worst,
            c.worst * f64::powi(2.0, -23)
        ),
    };
    let frames = if c.first == c.last {
        format!("frame {}", c.first)
    } else {
        format!("frames {}–{}", c.first, c.last)
    };
    format!(
        "clip '{}' joint '{}': {what} at {frames} ({} of {} frames)",
        crate::quote::clipped(&clip.name),
        crate::quote::clipped(&skeleton.joints[c.joint].name),
        c.frames,
        clip.frame_count
    )
}

/// Refuses a clip whose values or composed poses leave ±[`MAX_MAGNITUDE`], with one line:
/// clip, joint, the value, the frames.
pub(super) fn check_clip(skeleton: &Skeleton, clip: &Clip) -> Result<(), String> {
    let (size, place_limit) = place_limit(skeleton);
    match find_culprit(skeleton, clip, place_limit) {
        None => Ok(()),
        Some((c, _)) => Err(format!(
            "{}; skelpack stores and verifies values within ±{MAX_MAGNITUDE:.0e}, so this \
             joint cannot be compressed (fix or remove its motion)",
            describe(skeleton, clip, &c, size)
        )),
    }
}

/// At most this many joints of one clip are held at storable values.
const MAX_HELD_JOINTS: usize = 64;

/// Where a joint's own translation or scale puts it out of range at some frames (item 5:
/// one unreachable joint must not take the others with it), holds that component at those
/// frames at its nearest storable frame's value (the rest value if none is), so every other
/// joint, and this one at every other frame, can be compressed within its tolerance.
/// Returns one line per joint held (clip, joint, value, frames; what was done). A joint out
/// of range through its parents' transforms alone is left for [`check_clip`] to refuse.
pub(super) fn hold_unreachable(skeleton: &Skeleton, clip: &mut Clip) -> Vec<String> {
    let (size, place_limit) = place_limit(skeleton);
    let mut lines = Vec::new();
    let mut seen: Vec<(usize, Vec<usize>)> = Vec::new();
    while lines.len() < MAX_HELD_JOINTS {
        let Some((c, at)) = find_culprit(skeleton, clip, place_limit) else {
            break;
        };
        if let Some(i) = seen.iter().position(|(j, f)| *j == c.joint && *f == at) {
            // Holding did not bring it back (out through its parents): `check_clip`
            // refuses the clip.
            lines.remove(i);
            break;
        }
        let j = c.joint;
        let t = &mut clip.tracks[j];
        let rest = skeleton.joints[j].rest;
        let bad = |v: glam::Vec3| !v.is_finite() || v.abs().max_element() as f64 > MAX_MAGNITUDE;
        let mut is_bad = vec![false; clip.frame_count];
        for &f in &at {
            is_bad[f] = true;
        }
        // The component to hold: the one out of range, else (a place out through the
        // joint's own translation) the translation.
        let scale = c.kind == Kind::Scale;
        let values: &mut Vec<glam::Vec3> = if scale {
            &mut t.scales
        } else {
            &mut t.translations
        };
        let good = |f: usize, v: &[glam::Vec3]| !is_bad[f] && !bad(v[f]);
        for &f in &at {
            let near = (1..clip.frame_count).find_map(|d| {
                [f.checked_sub(d), Some(f + d)]
                    .into_iter()
                    .flatten()
                    .find(|&g| g < clip.frame_count && good(g, values))
            });
            values[f] = match near {
                Some(g) => values[g],
                None if scale => rest.scale,
                None => rest.translation,
            };
        }
        lines.push(format!(
            "{}: cannot be stored or played (values within ±{MAX_MAGNITUDE:.0e}, places \
             within 2^23 times the character's size); its {} is held at its nearest \
             storable frame's value there, so it misses its tolerance at those frames and \
             every other joint is compressed within its own",
            describe(skeleton, clip, &c, size),
            if scale { "scale" } else { "translation" }
        ));
        seen.push((j, at));
    }
    lines
}

/// Refuses a clip whose frame times `start + i / rate` do not stay finite and distinct in
/// 32-bit floats (what a `.skp` and glTF key times hold): consecutive frames at least two
/// units in the last place apart at the clip's end.
pub(super) fn check_timing(clip: &Clip) -> Result<(), String> {
    let frames = clip.frame_count.max(1);
    let step = 1.0 / clip.sample_rate as f64;
    let end = clip.start_time as f64 + (frames - 1) as f64 * step;
    let end32 = clip.start_time + (frames - 1) as f32 / clip.sample_rate;
    let reach = (clip.start_time as f64).abs().max(end.abs());
    let rate_ok = clip.sample_rate.is_normal();
    if rate_ok
        && end32.is_finite()
        && end.abs() <= f32::MAX as f64
        && step >= reach * f64::powi(2.0, -22)
    {
        return Ok(());
    }
    Err(format!(
        "clip '{}': {frames} frames {:.3e} s apart ({:.3e} fps) from {} s end at {:.3e} s; \
         key times are 32-bit floats, so the frame rate must keep every frame's time finite \
         and distinct",
        crate::quote::clipped(&clip.name),
        step,
        clip.sample_rate,
        clip.start_time,
        end
    ))
}

/// The most joints a skeleton may have: what a `.skp` stores (16 bits), refused at import
/// so that no command works minutes on a skeleton it cannot write.
pub const MAX_JOINTS: usize = skelpack_runtime::read::MAX_JOINTS;

/// Refuses a skeleton of more than [`MAX_JOINTS`] joints, naming its size and depth.
pub(super) fn check_joint_count(skeleton: &Skeleton) -> Result<(), String> {
    let n = skeleton.len();
    if n <= MAX_JOINTS {
        return Ok(());
    }
    let mut depth = vec![0usize; n];
    for (j, joint) in skeleton.joints.iter().enumerate() {
        depth[j] = joint.parent.map_or(1, |p| depth[p] + 1);
    }
    let deepest = depth.iter().max().copied().unwrap_or(0);
    Err(format!(
        "{n} joints in a hierarchy {deepest} deep; skelpack compresses at most {MAX_JOINTS} \
         joints per skeleton (a .skp stores the count in 16 bits)"
    ))
}

/// The rest pose's values and composed poses, under the same limit.
pub(super) fn check_rest(skeleton: &Skeleton) -> Result<(), String> {
    let mut obj = vec![DAffine3::IDENTITY; skeleton.len()];
    for (j, joint) in skeleton.joints.iter().enumerate() {
        obj[j] = match joint.parent {
            Some(p) => obj[p] * joint.rest.to_daffine(),
            None => joint.rest.to_daffine(),
        };
        if let Some((_, worst)) = out_of_range(&joint.rest, &obj[j], MAX_MAGNITUDE) {
            return Err(format!(
                "joint '{}': its rest pose reaches {worst:.1e}; skelpack stores values \
                 within ±{MAX_MAGNITUDE:.0e}",
                crate::quote::clipped(&joint.name)
            ));
        }
    }
    Ok(())
}

/// The character's size (the diagonal of its rest joints' bounding box in the scene) and
/// the farthest a joint may be from the scene root: ±[`MAX_MAGNITUDE`], and no more than
/// 2^23 times that size, beyond which 32-bit floats are farther apart than the whole
/// character (a joint there cannot be held to any tolerance smaller than the character).
fn place_limit(skeleton: &Skeleton) -> (f64, f64) {
    let mut obj = vec![DAffine3::IDENTITY; skeleton.len()];
    crate::model::local_to_object_f64(skeleton, &skeleton.rest_pose(), &mut obj);
    let mut lo = glam::DVec3::splat(f64::INFINITY);
    let mut hi = -lo;
    for m in &obj {
        lo = lo.min(m.translation);
        hi = hi.max(m.translation);
    }
    let size = (hi - lo).length();
    if size.is_finite() && size > 0.0 {
        (size, MAX_MAGNITUDE.min(size * f64::powi(2.0, 23)))
    } else {
        (0.0, MAX_MAGNITUDE)
    }
}

/// How `local` (and `object`, its composition with the parents) leaves the limits, if it
/// does: local values beyond [`MAX_MAGNITUDE`], a place in the scene beyond `place_limit`.
fn out_of_range(local: &Transform, object: &DAffine3, place_limit: f64) -> Option<(Kind, f64)> {
    let big = |v: f64| v.is_nan() || v.abs() > MAX_MAGNITUDE;
    let t = local.translation.abs().max_element() as f64;
    if big(t) {
        return Some((Kind::Translation, t));
    }
    let s = local.scale.abs().max_element() as f64;
    if big(s) {
        return Some((Kind::Scale, s));
    }
    let m = &object.matrix3;
    let place = object.translation.abs().max_element();
    if place.is_nan() || place > place_limit {
        return Some((Kind::Composed, place));
    }
    let reach = place
        .max(m.x_axis.length())
        .max(m.y_axis.length())
        .max(m.z_axis.length());
    big(reach).then_some((Kind::Composed, reach))
}
