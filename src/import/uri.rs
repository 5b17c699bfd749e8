//! What a glTF buffer or image URI may read: the one policy both import and export follow.
//!
//! By default a URI resolves only to a regular file inside the asset's folder (after
//! percent-decoding: no absolute path, no scheme such as `file:`, no `..` or symlink leaving
//! the folder), and reads at most the bytes the buffer declares, never more than
//! [`MAX_EXTERNAL_BYTES`]. `data:` URIs (base64) are always allowed: their bytes are in the
//! file itself. [`set_allow_any_uri`] (the CLI's `--allow-any-uri`) lifts the folder
//! restriction only; devices, FIFOs and the size cap stay refused.

use std::io::Read;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};

use base64::Engine;

/// The most bytes one external buffer may hold (1 GiB).
pub const MAX_EXTERNAL_BYTES: u64 = 1 << 30;

static ALLOW_ANY: AtomicBool = AtomicBool::new(false);

/// Lets URIs name files outside the asset's folder (absolute paths, `..`, `file:`).
pub fn set_allow_any_uri(allow: bool) {
    ALLOW_ANY.store(allow, Ordering::Relaxed);
}

/// True when [`set_allow_any_uri`] has lifted the folder restriction.
pub fn allow_any_uri() -> bool {
    ALLOW_ANY.load(Ordering::Relaxed)
}

/// Reads the first `declared` bytes a buffer URI names, resolved against `base` (the folder
/// of the asset) under the current policy. The result has exactly `declared` bytes.
pub fn read_buffer_uri(base: &Path, uri: &str, declared: u64) -> Result<Vec<u8>, String> {
    if declared > MAX_EXTERNAL_BYTES {
        return Err(format!(
            "declares {declared} bytes, more than the {MAX_EXTERNAL_BYTES}-byte limit"
        ));
    }
    let data = if let Some(rest) = uri.strip_prefix("data:") {
        decode_data_uri(rest)?
    } else {
        let file = resolve(base, uri, allow_any_uri())?;
        read_regular(&file, declared)?
    };
    if (data.len() as u64) < declared {
        return Err(format!(
            "has {} bytes but declares {declared} (truncated?)",
            data.len()
        ));
    }
    let mut data = data;
    data.truncate(declared as usize);
    Ok(data)
}

fn decode_data_uri(rest: &str) -> Result<Vec<u8>, String> {
    let (_, payload) = rest
        .split_once(";base64,")
        .ok_or("data URI is not base64")?;
    base64::engine::general_purpose::STANDARD
        .decode(payload)
        .map_err(|e| format!("bad base64 data URI ({e})"))
}

/// The file a relative URI names under `base`; refuses anything leaving `base` unless
/// `allow_any`.
pub fn resolve(base: &Path, uri: &str, allow_any: bool) -> Result<PathBuf, String> {
    let decoded = percent_decode(uri)?;
    if decoded.contains('\0') {
        return Err(format!("URI '{uri}' contains a NUL byte"));
    }
    if let Some(path) = decoded.strip_prefix("file://") {
        return if allow_any {
            Ok(PathBuf::from(path))
        } else {
            Err(refusal(uri, "is a file: URI"))
        };
    }
    if has_scheme(&decoded) {
        return Err(format!("URI '{uri}' has a scheme skelpack does not read"));
    }
    let rel = Path::new(&decoded);
    if allow_any {
        return Ok(base.join(rel));
    }
    if rel.has_root() || decoded.starts_with('\\') || decoded.starts_with('/') {
        return Err(refusal(uri, "is an absolute path"));
    }
    // Lexically: `a/../b` stays inside, `../b` leaves.
    let mut depth = 0usize;
    for part in decoded.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| refusal(uri, "leaves the asset's folder"))?;
            }
            _ => depth += 1,
        }
    }
    let file = base.join(rel);
    // Symlinks: the real file must lie under the real folder.
    let real_base = base
        .canonicalize()
        .map_err(|e| format!("cannot resolve folder {}: {e}", base.display()))?;
    let real = file
        .canonicalize()
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    if !real.starts_with(&real_base) || rel.components().any(|c| matches!(c, Component::Prefix(_)))
    {
        return Err(refusal(
            uri,
            "leaves the asset's folder (through a symlink)",
        ));
    }
    Ok(real)
}

fn refusal(uri: &str, why: &str) -> String {
    format!(
        "URI '{uri}' {why}; skelpack reads only files in the asset's folder (--allow-any-uri lifts this)"
    )
}

/// `scheme:` per RFC 3986 (a letter, then letters, digits, `+ - .`); a Windows drive
/// letter (`C:`) counts as one, so it is refused too.
fn has_scheme(s: &str) -> bool {
    let Some((scheme, _)) = s.split_once(':') else {
        return false;
    };
    scheme.starts_with(|c: char| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
}

/// Reads at most `limit` bytes of a regular file; devices, FIFOs and folders are refused
/// before they are opened (opening a FIFO would block).
fn read_regular(file: &Path, limit: u64) -> Result<Vec<u8>, String> {
    let shown = file.display();
    let meta = std::fs::metadata(file).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    let f = std::fs::File::open(file).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let meta = f
        .metadata()
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("{shown} is not a regular file"));
    }
    let mut out = Vec::with_capacity(meta.len().min(limit) as usize);
    f.take(limit)
        .read_to_end(&mut out)
        .map_err(|e| format!("cannot read {shown}: {e}"))?;
    Ok(out)
}

/// Decodes `%XX` escapes; the result must be UTF-8.
pub fn percent_decode(s: &str) -> Result<String, String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%'
            && i + 2 < b.len()
            && let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2]))
        {
            out.push((h * 16 + l) as u8);
            i += 3;
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8(out).map_err(|_| format!("URI '{s}' does not decode to UTF-8"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refuses_leaving_the_folder() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("a.bin"), [1, 2, 3, 4]).unwrap();
        std::fs::create_dir(d.path().join("sub")).unwrap();
        for uri in [
            "/etc/passwd",
            "../x.bin",
            "a/../../x.bin",
            "%2Fetc%2Fpasswd",
            "..%2Fx.bin",
            "file:///etc/passwd",
            "http://example.com/a.bin",
            "C:/x.bin",
            "\\x.bin",
        ] {
            let e = resolve(d.path(), uri, false).unwrap_err();
            assert!(e.contains(uri), "{uri}: {e}");
        }
        assert_eq!(
            read_buffer_uri(d.path(), "sub/../a.bin", 4).unwrap(),
            [1, 2, 3, 4]
        );
        assert_eq!(read_buffer_uri(d.path(), "a.bin", 2).unwrap(), [1, 2]);
        assert!(
            read_buffer_uri(d.path(), "a.bin", 5)
                .unwrap_err()
                .contains("truncated")
        );
    }

    #[cfg(unix)]
    #[test]
    fn refuses_symlinks_out_and_devices() {
        let d = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink("/etc/hostname", d.path().join("out.bin")).unwrap();
        let e = read_buffer_uri(d.path(), "out.bin", 1).unwrap_err();
        assert!(e.contains("symlink"), "{e}");
        std::os::unix::fs::symlink("/dev/zero", d.path().join("zero.bin")).unwrap();
        assert!(read_buffer_uri(d.path(), "zero.bin", 1).is_err());
        let e = read_regular(Path::new("/dev/zero"), 16).unwrap_err();
        assert!(e.contains("not a regular file"), "{e}");
    }
}
