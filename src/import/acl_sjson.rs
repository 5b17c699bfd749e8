//! The ACL raw clip format (`*.acl.sjson`, "simplified JSON"): bones with bind transforms and
//! parents, per-bone `vertex_distance` (the marker offset), `error_threshold` (the
//! tolerance), per-bone rotation / translation / scale tracks, sample rate; an additive
//! clip's `additive_format` and its base clip (`base_tracks`, `additive_base_*`).

use std::collections::HashMap;
use std::path::Path;

use glam::{Quat, Vec3};
use serde_json::{Map, Value};

use super::{ImportError, Imported};
use crate::model::playback::{Additive, AdditiveBase, AdditiveMode};
use crate::model::{Clip, Joint, Skeleton, Transform};

/// A clip's additive space and base, as an ACL file declares them (`additive_format`,
/// `base_tracks`): the clip's name and its mode and base.
pub type SourceAdditive = Option<(String, Additive)>;

pub(super) fn import(path: &Path, bytes: &[u8]) -> Result<(Imported, SourceAdditive), ImportError> {
    let err = |m: String| ImportError::new(path, m);
    let text =
        std::str::from_utf8(bytes).map_err(|_| err("not a text file (invalid UTF-8)".into()))?;
    let root = parse(text).map_err(err)?;
    if root.contains_key("track_list") {
        return Err(err(
            "this is an ACL scalar track list, not a skeletal clip".into()
        ));
    }
    let clip_info = root
        .get("clip")
        .and_then(Value::as_object)
        .ok_or_else(|| err("no 'clip' block".into()))?;
    let frames = clip_info
        .get("num_samples")
        .and_then(Value::as_u64)
        .ok_or_else(|| err("clip.num_samples is missing or not a whole number".into()))?
        as usize;
    if frames == 0 {
        return Err(err("clip.num_samples = 0: the clip has no samples".into()));
    }
    let rate = clip_info
        .get("sample_rate")
        .and_then(Value::as_f64)
        .filter(|r| r.is_finite() && *r > 0.0)
        .ok_or_else(|| err("clip.sample_rate is missing or not positive".into()))?
        as f32;
    let name = clip_info
        .get("name")
        .and_then(Value::as_str)
        .map(str::to_owned)
        .unwrap_or_else(|| {
            path.file_name()
                .and_then(|s| s.to_str())
                .unwrap_or("clip")
                .trim_end_matches(".acl.sjson")
                .to_owned()
        });
    let tolerance = clip_info
        .get("error_threshold")
        .or_else(|| root.get("settings").and_then(|s| s.get("error_threshold")))
        .and_then(Value::as_f64)
        .map(|t| t as f32);
    if let Some(t) = tolerance
        && !(t.is_finite() && t > 0.0)
    {
        return Err(err(format!("error_threshold = {t} must be positive")));
    }

    let bones = root
        .get("bones")
        .and_then(Value::as_array)
        .ok_or_else(|| err("no 'bones' list".into()))?;
    let mut joints = Vec::with_capacity(bones.len());
    let mut index: HashMap<String, usize> = HashMap::new();
    let mut parents: Vec<String> = Vec::new();
    for (i, b) in bones.iter().enumerate() {
        let b = b
            .as_object()
            .ok_or_else(|| err(format!("bone {i} is not an object")))?;
        let name = b
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| err(format!("bone {i} has no name")))?;
        let shown = crate::quote::clipped(name);
        if index.insert(name.to_owned(), i).is_some() {
            return Err(err(format!("bone name '{shown}' is used twice")));
        }
        let rest = Transform::new(
            vec3(b.get("bind_translation"), Vec3::ZERO)
                .map_err(|m| err(format!("bone '{shown}' bind_translation: {m}")))?,
            quat(b.get("bind_rotation"))
                .map_err(|m| err(format!("bone '{shown}' bind_rotation: {m}")))?,
            vec3(b.get("bind_scale"), Vec3::ONE)
                .map_err(|m| err(format!("bone '{shown}' bind_scale: {m}")))?,
        );
        let mut j = Joint::new(name, None, rest);
        if let Some(d) = b.get("vertex_distance").and_then(Value::as_f64) {
            if !(d.is_finite() && d >= 0.0) {
                return Err(err(format!(
                    "bone '{shown}': vertex_distance {d} is not a distance"
                )));
            }
            j.source_marker_offset = Some(d as f32);
        }
        parents.push(
            b.get("parent")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned(),
        );
        joints.push(j);
    }
    // Resolve parents, then order parents-first.
    let mut parent_idx = vec![None; joints.len()];
    for (i, p) in parents.iter().enumerate() {
        if !p.is_empty() {
            let pi = *index.get(p).ok_or_else(|| {
                err(format!(
                    "bone '{}' has unknown parent '{}'",
                    crate::quote::clipped(&joints[i].name),
                    crate::quote::clipped(p)
                ))
            })?;
            parent_idx[i] = Some(pi);
        }
    }
    let order = topological(&parent_idx).ok_or_else(|| err("bone parents form a cycle".into()))?;
    let mut new_index = vec![0; joints.len()];
    for (n, &o) in order.iter().enumerate() {
        new_index[o] = n;
    }
    let mut ordered: Vec<Joint> = order.iter().map(|&o| joints[o].clone()).collect();
    for (n, &o) in order.iter().enumerate() {
        ordered[n].parent = parent_idx[o].map(|p| new_index[p]);
    }
    let skeleton = Skeleton::new(ordered).map_err(err)?;
    super::limits::check_joint_count(&skeleton).map_err(err)?;

    let clip =
        read_tracks(&root, "tracks", &name, &skeleton, frames, rate, bytes.len()).map_err(err)?;
    let mut clips = vec![clip];
    // An additive clip (`additive_format`) carries its base clip in `base_tracks`.
    let format = clip_info.get("additive_format").and_then(Value::as_str);
    let mode = match format {
        None | Some("none") | Some("None") => None,
        Some(f) => Some(additive_mode(f).ok_or_else(|| {
            err(format!(
                "clip.additive_format '{}' is not relative, additive0 or additive1",
                crate::quote::clipped(f)
            ))
        })?),
    };
    let mut additive = None;
    if let Some(mode) = mode {
        let base_name = clip_info
            .get("additive_base_name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty() && *n != name)
            .map_or_else(|| format!("{name} base"), str::to_owned);
        let base_frames = clip_info
            .get("additive_base_num_samples")
            .and_then(Value::as_u64)
            .map_or(frames, |n| n as usize);
        let base_rate = clip_info
            .get("additive_base_sample_rate")
            .and_then(Value::as_f64)
            .filter(|r| r.is_finite() && *r > 0.0)
            .map_or(rate, |r| r as f32);
        if base_frames == 0 {
            return Err(err("clip.additive_base_num_samples = 0".into()));
        }
        let base = if root.contains_key("base_tracks") {
            read_tracks(
                &root,
                "base_tracks",
                &base_name,
                &skeleton,
                base_frames,
                base_rate,
                bytes.len(),
            )
            .map_err(err)?
        } else {
            // No base tracks: the base is the bind pose.
            Clip::rest(&base_name, &skeleton, base_rate, 1)
        };
        let base_is_rest = !root.contains_key("base_tracks");
        additive = Some((
            name.clone(),
            Additive {
                mode,
                base: if base_is_rest {
                    AdditiveBase::Rest
                } else {
                    AdditiveBase::Clip {
                        clip: base_name.clone(),
                    }
                },
            },
        ));
        if !base_is_rest {
            clips.push(base);
        }
    }
    Ok((
        (skeleton, clips, Vec::new(), tolerance, Vec::new()),
        additive,
    ))
}

/// ACL's name of an additive space.
fn additive_mode(name: &str) -> Option<AdditiveMode> {
    match name {
        "relative" | "Relative" => Some(AdditiveMode::Relative),
        "additive0" | "Additive0" => Some(AdditiveMode::Additive0),
        "additive1" | "Additive1" => Some(AdditiveMode::Additive1),
        _ => None,
    }
}

/// The per-bone tracks listed under `key` (`tracks`, or an additive clip's `base_tracks`)
/// as a clip of `frames` samples at `rate`; every track's length is checked before the
/// dense clip is allocated.
fn read_tracks(
    root: &Map<String, Value>,
    key: &str,
    name: &str,
    skeleton: &Skeleton,
    frames: usize,
    rate: f32,
    file_bytes: usize,
) -> Result<Clip, String> {
    let joint_of: HashMap<&str, usize> = skeleton
        .joints
        .iter()
        .enumerate()
        .map(|(i, j)| (j.name.as_str(), i))
        .collect();
    let tracks = root
        .get(key)
        .and_then(Value::as_array)
        .ok_or_else(|| format!("no '{key}' list"))?;
    // Messages about the base clip's tracks name their list and count.
    let (at, declared) = if key == "tracks" {
        (String::new(), "clip.num_samples")
    } else {
        (format!("{key}: "), "clip.additive_base_num_samples")
    };
    // Every track's length is checked before the dense clip is allocated.
    let mut resolved = Vec::with_capacity(tracks.len());
    for (i, t) in tracks.iter().enumerate() {
        let t = t
            .as_object()
            .ok_or_else(|| format!("{at}track {i} is not an object"))?;
        let bone = t
            .get("name")
            .and_then(Value::as_str)
            .ok_or_else(|| format!("{at}track {i} has no name"))?;
        let shown = crate::quote::clipped(bone);
        let j = *joint_of
            .get(bone)
            .ok_or_else(|| format!("{at}track {i} names unknown bone '{shown}'"))?;
        for channel in ["rotations", "translations", "scales"] {
            if let Some(v) = t.get(channel) {
                let n = v.as_array().map_or(0, Vec::len);
                if n != frames {
                    return Err(format!(
                        "{at}bone '{shown}' {channel}: {n} samples, but {declared} is {frames}"
                    ));
                }
            }
        }
        resolved.push((t, shown, j));
    }
    super::check_dense_size(skeleton.len(), frames, file_bytes)?;
    let mut clip = Clip::rest(name, skeleton, rate, frames);
    for (t, shown, j) in resolved {
        let jt = &mut clip.tracks[j];
        if let Some(v) = t.get("rotations") {
            jt.rotations = samples(v, frames, |s| quat(Some(s)))
                .map_err(|m| format!("{at}bone '{shown}' rotations: {m}"))?;
            jt.source_channels[1] = true;
        }
        if let Some(v) = t.get("translations") {
            jt.translations = samples(v, frames, |s| vec3(Some(s), Vec3::ZERO))
                .map_err(|m| format!("{at}bone '{shown}' translations: {m}"))?;
            jt.source_channels[0] = true;
        }
        if let Some(v) = t.get("scales") {
            jt.scales = samples(v, frames, |s| vec3(Some(s), Vec3::ONE))
                .map_err(|m| format!("{at}bone '{shown}' scales: {m}"))?;
            jt.source_channels[2] = true;
        }
    }
    Ok(clip)
}

/// Parents-first order of a forest given as parent indices; `None` on a cycle.
fn topological(parent: &[Option<usize>]) -> Option<Vec<usize>> {
    let n = parent.len();
    let mut children = vec![Vec::new(); n];
    let mut roots = Vec::new();
    for (i, p) in parent.iter().enumerate() {
        match p {
            Some(p) => children[*p].push(i),
            None => roots.push(i),
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut stack: Vec<usize> = roots.into_iter().rev().collect();
    while let Some(i) = stack.pop() {
        order.push(i);
        stack.extend(children[i].iter().rev());
    }
    (order.len() == n).then_some(order)
}

fn samples<T>(
    v: &Value,
    frames: usize,
    f: impl Fn(&Value) -> Result<T, String>,
) -> Result<Vec<T>, String> {
    let a = v.as_array().ok_or("not a list")?;
    if a.len() != frames {
        return Err(format!(
            "{} samples, but clip.num_samples is {frames}",
            a.len()
        ));
    }
    a.iter()
        .enumerate()
        .map(|(i, s)| f(s).map_err(|m| format!("sample {i}: {m}")))
        .collect()
}

fn numbers<const N: usize>(v: &Value) -> Result<[f32; N], String> {
    let a = v.as_array().ok_or("not a list")?;
    if a.len() != N {
        return Err(format!("has {} values, expected {N}", a.len()));
    }
    let mut out = [0.0; N];
    for (o, x) in out.iter_mut().zip(a) {
        let f = x.as_f64().ok_or_else(|| {
            format!(
                "'{}' is not a number",
                crate::quote::clipped(&x.to_string())
            )
        })?;
        if !(f as f32).is_finite() {
            return Err(format!("value {f} is not finite in 32 bits"));
        }
        *o = f as f32;
    }
    Ok(out)
}

fn vec3(v: Option<&Value>, default: Vec3) -> Result<Vec3, String> {
    v.map_or(Ok(default), |v| numbers::<3>(v).map(Vec3::from))
}

/// Lengths a rotation quaternion may have; it is normalized. Far from 1 means the value
/// is not a rotation (a zero, or `[1e30, 1e30, 0, 0]`) and is an error, not a guess.
const UNIT_LENGTH: std::ops::RangeInclusive<f64> = 0.5..=2.0;

fn quat(v: Option<&Value>) -> Result<Quat, String> {
    let Some(v) = v else {
        return Ok(Quat::IDENTITY);
    };
    let q = numbers::<4>(v)?.map(f64::from);
    let len = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    if !(UNIT_LENGTH.contains(&len)) {
        return Err(format!(
            "quaternion [{}, {}, {}, {}] has length {len:.3e}; a rotation must be a unit quaternion",
            q[0], q[1], q[2], q[3]
        ));
    }
    Ok(Quat::from_array(q.map(|x| (x / len) as f32)))
}

/// Parses SJSON: `key = value` pairs without commas, `//` and `/* */` comments, bare words.
pub fn parse(text: &str) -> Result<Map<String, Value>, String> {
    let mut p = Sjson {
        s: text.as_bytes(),
        i: 0,
        line: 1,
    };
    let mut root = Map::new();
    loop {
        p.skip();
        if p.i >= p.s.len() {
            return Ok(root);
        }
        let (k, v) = p.pair()?;
        root.insert(k, v);
    }
}

struct Sjson<'a> {
    s: &'a [u8],
    i: usize,
    line: usize,
}

impl Sjson<'_> {
    fn skip(&mut self) {
        while self.i < self.s.len() {
            match self.s[self.i] {
                b'\n' => {
                    self.line += 1;
                    self.i += 1;
                }
                b' ' | b'\t' | b'\r' | b',' => self.i += 1,
                b'/' if self.s.get(self.i + 1) == Some(&b'/') => {
                    while self.i < self.s.len() && self.s[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b'/' if self.s.get(self.i + 1) == Some(&b'*') => {
                    self.i += 2;
                    while self.i + 1 < self.s.len()
                        && !(self.s[self.i] == b'*' && self.s[self.i + 1] == b'/')
                    {
                        if self.s[self.i] == b'\n' {
                            self.line += 1;
                        }
                        self.i += 1;
                    }
                    self.i = (self.i + 2).min(self.s.len());
                }
                _ => break,
            }
        }
    }

    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("line {}: {what}", self.line))
    }

    fn pair(&mut self) -> Result<(String, Value), String> {
        let key = self.word()?;
        self.skip();
        if self.s.get(self.i) != Some(&b'=') && self.s.get(self.i) != Some(&b':') {
            return self.fail(&format!("expected '=' after '{key}'"));
        }
        self.i += 1;
        Ok((key, self.value(0)?))
    }

    fn word(&mut self) -> Result<String, String> {
        self.skip();
        if self.s.get(self.i) == Some(&b'"') {
            return self.string();
        }
        Ok(self.bare()?.to_owned())
    }

    /// A bare word (letters, digits, `_-+.`), borrowed from the text: a number is parsed
    /// from it without an allocation.
    fn bare(&mut self) -> Result<&str, String> {
        let start = self.i;
        while self.i < self.s.len()
            && (self.s[self.i].is_ascii_alphanumeric() || b"_-+.".contains(&self.s[self.i]))
        {
            self.i += 1;
        }
        if start == self.i {
            return self.fail("expected a name");
        }
        // ASCII only: always UTF-8.
        std::str::from_utf8(&self.s[start..self.i]).map_err(|e| e.to_string())
    }

    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let start = self.i;
        while self.i < self.s.len() && self.s[self.i] != b'"' {
            if self.s[self.i] == b'\n' {
                return self.fail("unterminated string");
            }
            self.i += 1;
        }
        if self.i >= self.s.len() {
            return self.fail("unterminated string");
        }
        let out = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.i += 1;
        Ok(out)
    }

    fn value(&mut self, depth: usize) -> Result<Value, String> {
        if depth > 64 {
            return self.fail("nesting too deep");
        }
        self.skip();
        match self.s.get(self.i) {
            None => self.fail("unexpected end of file"),
            Some(b'{') => {
                self.i += 1;
                let mut m = Map::new();
                loop {
                    self.skip();
                    match self.s.get(self.i) {
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(Value::Object(m));
                        }
                        None => return self.fail("unterminated '{'"),
                        _ => {
                            let key = self.word()?;
                            self.skip();
                            if !matches!(self.s.get(self.i), Some(b'=') | Some(b':')) {
                                return self.fail(&format!("expected '=' after '{key}'"));
                            }
                            self.i += 1;
                            let v = self.value(depth + 1)?;
                            m.insert(key, v);
                        }
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                loop {
                    self.skip();
                    match self.s.get(self.i) {
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Value::Array(a));
                        }
                        None => return self.fail("unterminated '['"),
                        _ => a.push(self.value(depth + 1)?),
                    }
                }
            }
            Some(b'"') => {
                let s = self.string()?;
                Ok(hex_float(&s).map_or(Value::String(s), Value::from))
            }
            _ => {
                let w = self.bare()?;
                Ok(match w {
                    "true" => Value::Bool(true),
                    "false" => Value::Bool(false),
                    "null" => Value::Null,
                    _ => {
                        if let Ok(i) = w.parse::<u64>() {
                            Value::from(i)
                        } else if let Some(f) = w.parse::<f64>().ok().or_else(|| hex_float(w)) {
                            if f.is_finite() {
                                Value::from(f)
                            } else {
                                let w = w.to_owned();
                                return self.fail(&format!("value '{w}' is not finite"));
                            }
                        } else {
                            Value::String(w.to_owned())
                        }
                    }
                })
            }
        }
    }
}

/// Binary-exact floats are written as hexadecimal bit patterns (8 digits f32, 16 digits f64).
fn hex_float(s: &str) -> Option<f64> {
    let h = s.strip_prefix("0x").or_else(|| s.strip_prefix("0X"))?;
    match h.len() {
        8 => u32::from_str_radix(h, 16)
            .ok()
            .map(|b| f32::from_bits(b) as f64),
        16 => u64::from_str_radix(h, 16).ok().map(f64::from_bits),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_simplified_json() {
        let m = parse("// c\nversion = 5\nclip = { name = \"x\" num_samples = 2 }\nl = [ [1 2] [3.5, -4e-1] ]\n").unwrap();
        assert_eq!(m["version"], 5);
        assert_eq!(m["clip"]["name"], "x");
        assert_eq!(m["l"][1][1].as_f64(), Some(-0.4));
    }

    #[test]
    fn unknown_parent_is_an_error() {
        let text = "clip = { num_samples = 1 sample_rate = 30 }\nbones = [ { name = \"a\" parent = \"zz\" } ]\ntracks = [ ]\n";
        let e = import(Path::new("x.acl.sjson"), text.as_bytes()).unwrap_err();
        assert!(e.message.contains("unknown parent 'zz'"), "{}", e.message);
    }

    #[test]
    fn children_listed_first_are_reordered() {
        let text = "clip = { num_samples = 1 sample_rate = 30 }\nbones = [ { name = \"b\" parent = \"a\" } { name = \"a\" parent = \"\" } ]\ntracks = [ ]\n";
        let ((s, ..), additive) = import(Path::new("x.acl.sjson"), text.as_bytes()).unwrap();
        assert!(additive.is_none());
        assert_eq!(s.joints[0].name, "a");
        assert_eq!(s.joints[1].parent, Some(0));
    }
}
