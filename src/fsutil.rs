//! Output files a pipeline can trust: written to a temporary file beside the target
//! (`.NAME.PID.tmp`), synced, then renamed over it, so a reader never sees half a file and an
//! interrupted write leaves the old file as it was.
//!
//! Temporary files never outlive their write: they are removed when the write fails, at
//! Ctrl-C / SIGTERM once [`remove_temps_on_signal`] is installed, and — for a process killed
//! outright — by the next write of the same file, which removes `.NAME.PID.tmp` files of
//! processes that no longer run. An output path that exists and is not a regular file (a
//! directory, FIFO, device or symbolic link) is refused rather than replaced.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// Temporary files being written right now (removed by the signal handler).
static LIVE: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// Writes `bytes` to `path` atomically (see the module documentation).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_atomic_with(path, |w| w.write_all(bytes))
}

/// Like [`write_atomic`], with the content produced by `fill`; when `fill` fails, the
/// temporary file is removed and `path` is left untouched.
pub fn write_atomic_with(
    path: &Path,
    fill: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    check_output(path)?;
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "out".into());
    remove_stale_temps(dir, &name);
    let tmp = dir.join(temp_name(&name, std::process::id()));
    // A leftover of an earlier process with our id is ours to replace; `create_new` never
    // follows a link planted at the temporary name.
    let _ = std::fs::remove_file(&tmp);
    let mut f = create_registered(&tmp)?;
    let result = (|| {
        let mut w = std::io::BufWriter::new(&mut f);
        fill(&mut w)?;
        w.flush()?;
        drop(w);
        f.sync_all()?;
        drop(f);
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    unregister(&tmp);
    result
}

/// Refuses an output path that exists and is not a regular file.
pub fn check_output(path: &Path) -> std::io::Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(path) else {
        return Ok(());
    };
    let t = meta.file_type();
    if t.is_file() {
        return Ok(());
    }
    let kind = if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else {
        special_kind(&t)
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::InvalidInput,
        format!("the output exists and is {kind}, not a regular file; refusing to replace it"),
    ))
}

#[cfg(unix)]
fn special_kind(t: &std::fs::FileType) -> &'static str {
    use std::os::unix::fs::FileTypeExt;
    if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else {
        "a special file"
    }
}

#[cfg(not(unix))]
fn special_kind(_: &std::fs::FileType) -> &'static str {
    "a special file"
}

/// `.NAME.PID.tmp`.
fn temp_name(name: &str, pid: u32) -> String {
    format!(".{name}.{pid}.tmp")
}

/// Removes `.NAME.PID.tmp` regular files in `dir` whose process no longer runs.
pub fn remove_stale_temps(dir: &Path, name: &str) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let prefix = format!(".{name}.");
    for e in entries.flatten() {
        let file = e.file_name();
        let Some(pid) = file
            .to_str()
            .and_then(|f| f.strip_prefix(&prefix))
            .and_then(|r| r.strip_suffix(".tmp"))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        let regular = e.file_type().is_ok_and(|t| t.is_file());
        if regular && pid != std::process::id() && !process_alive(pid) {
            let _ = std::fs::remove_file(e.path());
        }
    }
}

/// Whether a process with this id runs (when unsure: yes, so nothing is removed).
#[cfg(unix)]
fn process_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    if pid <= 0 {
        return true;
    }
    // SAFETY: kill with signal 0 only checks whether the process exists.
    let r = unsafe { libc::kill(pid, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn process_alive(_: u32) -> bool {
    true
}

/// Creates the temporary file and records it, under the lock the signal handler takes, so
/// a signal never falls between the two.
fn create_registered(tmp: &Path) -> std::io::Result<std::fs::File> {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    let f = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(tmp)?;
    live.push(tmp.to_path_buf());
    Ok(f)
}

fn unregister(tmp: &Path) {
    let mut live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
    live.retain(|p| p != tmp);
}

/// Installs a Ctrl-C / SIGTERM handler that removes the temporary files being written and
/// exits with code 130. For the command line; call once.
pub fn remove_temps_on_signal() {
    let _ = ctrlc::set_handler(|| {
        // Exits holding the lock: no write starts a new temporary file after this.
        let live = LIVE.lock().unwrap_or_else(|e| e.into_inner());
        for p in live.iter() {
            let _ = std::fs::remove_file(p);
        }
        std::process::exit(130);
    });
}

/// Whether `a` and `b` name the same file (both resolved when they exist; else compared as
/// written).
pub fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}
