//! BVH motion capture: hierarchy with offsets, End Sites, any Euler channel order per joint,
//! position channels on any joint, LF or CRLF, frame time to rate.
//!
//! A joint's local transform is `T(offset + position channels) * R(channels in listed order)`;
//! End Sites become non-deforming leaf joints named `<parent>_End` so bones can be drawn and
//! exported to their tips.

use std::path::Path;

use glam::{Quat, Vec3};

use super::{ImportError, Imported};
use crate::model::{Clip, Joint, Skeleton, Transform};

#[derive(Clone, Copy, Debug, PartialEq)]
enum Channel {
    Pos(usize),
    Rot(usize),
}

struct Parser<'a> {
    tokens: Vec<(usize, &'a str)>,
    pos: usize,
}

impl<'a> Parser<'a> {
    fn next(&mut self) -> Result<(usize, &'a str), String> {
        let t = self
            .tokens
            .get(self.pos)
            .copied()
            .ok_or("unexpected end of file in HIERARCHY")?;
        self.pos += 1;
        Ok(t)
    }

    fn expect(&mut self, word: &str) -> Result<(), String> {
        let (line, t) = self.next()?;
        if t == word {
            Ok(())
        } else {
            Err(format!("line {line}: expected '{word}', found '{t}'"))
        }
    }

    fn number(&mut self) -> Result<f32, String> {
        let (line, t) = self.next()?;
        let v: f32 = t
            .parse()
            .map_err(|_| format!("line {line}: expected a number, found '{t}'"))?;
        if v.is_finite() {
            Ok(v)
        } else {
            Err(format!("line {line}: value '{t}' is not finite"))
        }
    }
}

pub(super) fn import(path: &Path, bytes: &[u8]) -> Result<Imported, ImportError> {
    let err = |m: String| ImportError::new(path, m);
    let text =
        std::str::from_utf8(bytes).map_err(|_| err("not a text file (invalid UTF-8)".into()))?;
    let motion_at = text
        .find("MOTION")
        .ok_or_else(|| err("no MOTION section".into()))?;
    let (head, motion) = text.split_at(motion_at);
    let tokens = head
        .lines()
        .enumerate()
        .flat_map(|(i, l)| l.split_whitespace().map(move |t| (i + 1, t)))
        .collect();
    let mut p = Parser { tokens, pos: 0 };
    p.expect("HIERARCHY").map_err(err)?;
    let mut joints: Vec<Joint> = Vec::new();
    let mut channels: Vec<(usize, Vec<Channel>)> = Vec::new();
    let mut stack: Vec<usize> = Vec::new();
    while p.pos < p.tokens.len() {
        let (line, t) = p.next().map_err(err)?;
        match t {
            "ROOT" | "JOINT" => {
                let (_, name) = p.next().map_err(err)?;
                if t == "ROOT" && !stack.is_empty() {
                    return Err(err(format!("line {line}: ROOT inside a joint")));
                }
                if t == "JOINT" && stack.is_empty() {
                    return Err(err(format!("line {line}: JOINT outside any ROOT")));
                }
                p.expect("{").map_err(err)?;
                let idx = joints.len();
                joints.push(Joint::new(name, stack.last().copied(), Transform::IDENTITY));
                stack.push(idx);
            }
            "End" => {
                p.expect("Site").map_err(err)?;
                p.expect("{").map_err(err)?;
                let parent = *stack
                    .last()
                    .ok_or_else(|| err(format!("line {line}: End Site outside a joint")))?;
                let mut j = Joint::new(
                    format!("{}_End", joints[parent].name),
                    Some(parent),
                    Transform::IDENTITY,
                );
                j.deforming = false;
                let idx = joints.len();
                joints.push(j);
                stack.push(idx);
            }
            "OFFSET" => {
                let j = *stack
                    .last()
                    .ok_or_else(|| err(format!("line {line}: OFFSET outside a joint")))?;
                let v = Vec3::new(
                    p.number().map_err(err)?,
                    p.number().map_err(err)?,
                    p.number().map_err(err)?,
                );
                joints[j].rest.translation = v;
            }
            "CHANNELS" => {
                let j = *stack
                    .last()
                    .ok_or_else(|| err(format!("line {line}: CHANNELS outside a joint")))?;
                let (_, n) = p.next().map_err(err)?;
                let n: usize = n
                    .parse()
                    .map_err(|_| err(format!("line {line}: bad channel count '{n}'")))?;
                if n > 9 {
                    return Err(err(format!("line {line}: {n} channels on one joint")));
                }
                let mut list = Vec::with_capacity(n);
                for _ in 0..n {
                    let (l, c) = p.next().map_err(err)?;
                    list.push(match c.to_ascii_lowercase().as_str() {
                        "xposition" => Channel::Pos(0),
                        "yposition" => Channel::Pos(1),
                        "zposition" => Channel::Pos(2),
                        "xrotation" => Channel::Rot(0),
                        "yrotation" => Channel::Rot(1),
                        "zrotation" => Channel::Rot(2),
                        _ => return Err(err(format!("line {l}: unknown channel '{c}'"))),
                    });
                }
                channels.push((j, list));
            }
            "}" => {
                stack
                    .pop()
                    .ok_or_else(|| err(format!("line {line}: unbalanced '}}'")))?;
            }
            other => {
                return Err(err(format!(
                    "line {line}: unexpected '{other}' in HIERARCHY"
                )));
            }
        }
    }
    if !stack.is_empty() {
        return Err(err("HIERARCHY ends inside a joint (missing '}')".into()));
    }
    if joints.is_empty() {
        return Err(err("HIERARCHY has no joints".into()));
    }

    // MOTION
    let first_line = head.lines().count() + 1;
    let mut lines = motion
        .lines()
        .enumerate()
        .map(|(i, l)| (first_line + i, l.trim()))
        .filter(|(_, l)| !l.is_empty());
    lines.next(); // MOTION
    let (fl, frames_line) = lines
        .next()
        .ok_or_else(|| err("MOTION has no 'Frames:' line".into()))?;
    let frames: usize = frames_line
        .strip_prefix("Frames:")
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| {
            err(format!(
                "line {fl}: expected 'Frames: N', found '{frames_line}'"
            ))
        })?;
    let (tl, time_line) = lines
        .next()
        .ok_or_else(|| err("MOTION has no 'Frame Time:' line".into()))?;
    let frame_time: f64 = time_line
        .strip_prefix("Frame Time:")
        .and_then(|s| s.trim().parse().ok())
        .filter(|t: &f64| t.is_finite() && *t > 0.0)
        .ok_or_else(|| {
            err(format!(
                "line {tl}: expected a positive 'Frame Time: SECONDS', found '{time_line}'"
            ))
        })?;
    let width: usize = channels.iter().map(|(_, c)| c.len()).sum();
    // The frame lines present bound the clip before anything is allocated for it.
    let rows: Vec<(usize, &str)> = lines.collect();
    if frames == 0 {
        return Err(err("the clip has no frames".into()));
    }
    if rows.len() != frames {
        let at = rows
            .get(frames)
            .map_or(String::new(), |(l, _)| format!("line {l}: "));
        return Err(err(format!(
            "{at}'Frames: {frames}' but {} frame lines follow",
            rows.len()
        )));
    }
    let skeleton = Skeleton::new(joints).map_err(err)?;
    super::limits::check_joint_count(&skeleton).map_err(err)?;
    super::check_dense_size(skeleton.len(), frames, bytes.len()).map_err(err)?;
    let mut clip = Clip::rest(
        path.file_stem()
            .and_then(|s| s.to_str())
            .unwrap_or("bvh")
            .to_owned(),
        &skeleton,
        rate_from_frame_time(frame_time),
        frames,
    );
    let mut values = Vec::with_capacity(width);
    for (row, (line, text)) in rows.into_iter().enumerate() {
        values.clear();
        for v in text.split_whitespace() {
            let x: f32 = v
                .parse()
                .map_err(|_| err(format!("line {line}: '{v}' is not a number")))?;
            if !x.is_finite() {
                return Err(err(format!("line {line}: value '{v}' is not finite")));
            }
            values.push(x);
        }
        if values.len() != width {
            return Err(err(format!(
                "line {line}: frame {} has {} values, but the hierarchy declares {width} channels",
                row + 1,
                values.len()
            )));
        }
        let mut k = 0;
        for (j, list) in &channels {
            let offset = skeleton.joints[*j].rest.translation;
            let mut pos = Vec3::ZERO;
            let mut has_pos = false;
            let mut rot = Quat::IDENTITY;
            for c in list {
                match *c {
                    Channel::Pos(a) => {
                        pos[a] = values[k];
                        has_pos = true;
                    }
                    Channel::Rot(a) => {
                        let angle = values[k].to_radians();
                        rot *= match a {
                            0 => Quat::from_rotation_x(angle),
                            1 => Quat::from_rotation_y(angle),
                            _ => Quat::from_rotation_z(angle),
                        };
                    }
                }
                k += 1;
            }
            let tracks = &mut clip.tracks[*j];
            if has_pos {
                tracks.translations[row] = offset + pos;
                tracks.source_channels[0] = true;
            }
            if list.iter().any(|c| matches!(c, Channel::Rot(_))) {
                tracks.rotations[row] = rot.normalize();
                tracks.source_channels[1] = true;
            }
        }
    }
    Ok((skeleton, vec![clip], Vec::new(), None, Vec::new()))
}

/// `1 / frame_time`, snapped to a whole rate when within 0.1% (0.0083333 s -> 120 fps).
fn rate_from_frame_time(frame_time: f64) -> f32 {
    let r = 1.0 / frame_time;
    if (r - r.round()).abs() <= r * 1e-3 {
        r.round() as f32
    } else {
        r as f32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = "HIERARCHY\r\nROOT a\r\n{\r\n OFFSET 0 0 0\r\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\r\n JOINT b\r\n {\r\n  OFFSET 0 1 0\r\n  CHANNELS 3 Xrotation Yrotation Zrotation\r\n  End Site\r\n  {\r\n   OFFSET 0 1 0\r\n  }\r\n }\r\n}\r\nMOTION\r\nFrames: 2\r\nFrame Time: 0.0333333\r\n1 2 3 0 0 0 0 0 0\r\n1 2 3 90 0 0 0 90 0\r\n";

    #[test]
    fn parses_crlf_and_orders() {
        let (s, clips, ..) = import(Path::new("t.bvh"), TINY.as_bytes()).unwrap();
        assert_eq!(s.len(), 3);
        assert_eq!(s.joints[2].name, "b_End");
        assert!(!s.joints[2].deforming);
        let c = &clips[0];
        assert_eq!(c.sample_rate, 30.0);
        assert_eq!(c.tracks[0].translations[1], Vec3::new(1.0, 2.0, 3.0));
        let q = c.tracks[0].rotations[1];
        assert!(q.angle_between(Quat::from_rotation_z(90f32.to_radians())) < 1e-5);
        let q = c.tracks[1].rotations[1];
        assert!(q.angle_between(Quat::from_rotation_y(90f32.to_radians())) < 1e-5);
    }

    #[test]
    fn euler_order_is_respected() {
        // Z then X: R = Rz * Rx, which differs from Rx * Rz.
        let text = TINY.replace("1 2 3 90 0 0 0 90 0", "0 0 0 30 40 0 0 0 0");
        let (_, clips, ..) = import(Path::new("t.bvh"), text.as_bytes()).unwrap();
        let expect =
            Quat::from_rotation_z(30f32.to_radians()) * Quat::from_rotation_x(40f32.to_radians());
        assert!(clips[0].tracks[0].rotations[1].angle_between(expect) < 1e-5);
    }

    #[test]
    fn wrong_value_count_is_an_error() {
        let text = TINY.replace("1 2 3 90 0 0 0 90 0", "1 2 3 90 0 0 0 90");
        let e = import(Path::new("t.bvh"), text.as_bytes()).unwrap_err();
        assert!(e.message.contains("has 8 values"), "{}", e.message);
    }
}
