//! Reading a settings file: strict TOML or JSON, bounded in size, and every error one line
//! naming the field path and the line it is on (`line 7: joints.RightHand.tolerance_mm: ...`).
//!
//! Values are checked while deserializing ([`positive`]), so a bad value is reported where
//! the parser stands — its own line — not found again by searching the text.

use std::io::Read;
use std::path::Path;

use serde::{Deserialize, Deserializer};

use super::{Settings, SettingsError};

/// Largest settings file read: far beyond any real sidecar (overrides for every joint of a
/// 10,000-joint rig in a few clips), and small enough that parsing stays bounded (TOML
/// parsing needs about 35 bytes of memory per byte of joint tables; JSON about 3).
pub const MAX_SETTINGS_BYTES: u64 = 4 << 20;

/// Deserializes an optional length that must be positive and finite.
pub fn positive<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    let v = Option::<f32>::deserialize(d)?;
    match v {
        Some(x) if !(x.is_finite() && x > 0.0) => Err(serde::de::Error::custom(format!(
            "{x} must be a positive number"
        ))),
        _ => Ok(v),
    }
}

/// A finite number of at least 0 (a tolerance that may ask for exactness).
pub fn non_negative<'de, D: Deserializer<'de>>(d: D) -> Result<Option<f32>, D::Error> {
    let v = Option::<f32>::deserialize(d)?;
    match v {
        Some(x) if !(x.is_finite() && x >= 0.0) => Err(serde::de::Error::custom(format!(
            "{x} must be a number of at least 0"
        ))),
        _ => Ok(v),
    }
}

/// Reads a settings file: a regular file of at most [`MAX_SETTINGS_BYTES`].
pub fn read(path: &Path) -> Result<String, SettingsError> {
    let err = |m: String| SettingsError {
        path: path.to_path_buf(),
        message: crate::quote::clip_quoted(&m),
    };
    let meta = std::fs::metadata(path).map_err(|e| err(format!("cannot read: {e}")))?;
    if !meta.is_file() {
        return Err(err("cannot read: not a regular file".into()));
    }
    let mut text = String::new();
    std::fs::File::open(path)
        .and_then(|f| f.take(MAX_SETTINGS_BYTES + 1).read_to_string(&mut text))
        .map_err(|e| err(format!("cannot read: {e}")))?;
    if text.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(err(too_big()));
    }
    Ok(text)
}

fn too_big() -> String {
    format!(
        "larger than {} MiB; a settings file that big is not a sidecar",
        MAX_SETTINGS_BYTES >> 20
    )
}

/// Parses TOML (or JSON when the text starts with `{`).
pub fn parse(text: &str, path: &Path) -> Result<Settings, SettingsError> {
    let err = |m: String| SettingsError {
        path: path.to_path_buf(),
        message: crate::quote::clip_quoted(&m),
    };
    if text.len() as u64 > MAX_SETTINGS_BYTES {
        return Err(err(too_big()));
    }
    let s: Settings = if text.trim_start().starts_with('{') {
        let mut de = serde_json::Deserializer::from_str(text);
        let s = serde_path_to_error::deserialize(&mut de).map_err(|e| {
            let keys = key_path(e.path());
            let field = field(e.path());
            let inner = e.into_inner();
            // serde_json appends " at line L column C"; the line goes first instead.
            let msg = inner.to_string();
            let msg = msg.split(" at line ").next().unwrap_or(&msg).to_owned();
            // A rejected value is reported by serde_json where its table ends: the line of
            // its key is the one to show (an unknown key's own position is exact).
            let keyed = inner.is_data()
                && !["unknown field", "missing field", "duplicate field"]
                    .iter()
                    .any(|p| msg.starts_with(p));
            let line = keyed
                .then(|| json_key_line(text, &keys))
                .flatten()
                .unwrap_or(inner.line());
            err(format!("line {line}: {field}{msg}"))
        })?;
        de.end()
            .map_err(|e| err(format!("line {}: trailing characters", e.line())))?;
        s
    } else {
        let de = toml::de::Deserializer::parse(text).map_err(|e| err(toml_message(&e, text)))?;
        serde_path_to_error::deserialize(de).map_err(|e| {
            let field = field(e.path());
            let msg = toml_message(e.inner(), text);
            err(match msg.split_once(": ") {
                Some((line, rest)) if line.starts_with("line ") => {
                    format!("{line}: {field}{rest}")
                }
                _ => format!("{field}{msg}"),
            })
        })?
    };
    // Anything `validate` still catches (none from a file today) is reported by path.
    s.validate().map_err(err)?;
    Ok(s)
}

/// `joints.RightHand.tolerance_mm: ` — the path to the field in error (for an unknown key,
/// the table holding it: the message names the key), or nothing at the top level.
fn field(path: &serde_path_to_error::Path) -> String {
    use serde_path_to_error::Segment;
    let parts: Vec<String> = path
        .iter()
        .map(|s| match s {
            Segment::Seq { index } => index.to_string(),
            Segment::Map { key } => bare_or_quoted(key),
            Segment::Enum { variant } => bare_or_quoted(variant),
            Segment::Unknown => "?".into(),
        })
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!("{}: ", parts.join("."))
    }
}

/// The keys of an error path (object keys and struct fields).
fn key_path(path: &serde_path_to_error::Path) -> Vec<String> {
    use serde_path_to_error::Segment;
    path.iter()
        .filter_map(|s| match s {
            Segment::Map { key } => Some(key.clone()),
            _ => None,
        })
        .collect()
}

/// The line of the key at `path` (objects only) in valid JSON text.
fn json_key_line(text: &str, path: &[String]) -> Option<usize> {
    let b = text.as_bytes();
    let mut stack: Vec<Option<String>> = Vec::new();
    let mut line = 1;
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'\n' => line += 1,
            b'{' | b'[' => stack.push(None),
            b'}' | b']' => {
                stack.pop();
            }
            b'"' => {
                let start = i;
                i += 1;
                while i < b.len() && b[i] != b'"' {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
                let raw = text.get(start..=i.min(b.len() - 1))?;
                let mut j = i + 1;
                while j < b.len() && b[j].is_ascii_whitespace() {
                    j += 1;
                }
                if b.get(j) == Some(&b':') {
                    let key: String = serde_json::from_str(raw).ok()?;
                    if let Some(top) = stack.last_mut() {
                        *top = Some(key);
                    }
                    let here = stack.iter().map(|k| k.as_deref());
                    if here.len() == path.len() && here.eq(path.iter().map(|k| Some(k.as_str()))) {
                        return Some(line);
                    }
                }
            }
            _ => {}
        }
        i += 1;
    }
    None
}

/// A key as TOML writes it: bare when it can be, else quoted.
fn bare_or_quoted(key: &str) -> String {
    let bare = !key.is_empty()
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if bare {
        crate::quote::clipped(key)
    } else {
        format!("\"{}\"", key.escape_default())
    }
}

/// `line L: message` from a TOML error's span (the key for an unknown key, else the value).
fn toml_message(e: &toml::de::Error, text: &str) -> String {
    let msg = e.message().trim_end().to_owned();
    match e.span() {
        Some(s) => format!("line {}: {msg}", line_of(text, s.start)),
        None => msg,
    }
}

/// 1-based line of a byte offset.
fn line_of(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}
