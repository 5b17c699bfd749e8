//! Output files a pipeline can trust: written to a temporary file beside the target
//! (`.NAME.PID.tmp`), synced, then renamed over it, so a reader never sees half a file and an
//! interrupted write leaves the old file as it was.
//!
//! Temporary files never outlive their write: they are removed when the write fails, at
//! Ctrl-C / SIGTERM once [`remove_temps_on_signal`] is installed, and — for a process killed
//! outright — by the next process's write of the same file, which removes `.NAME.PID.tmp`
//! files of processes that no longer run ([`remove_stale_temps`]). An output path that
//! exists and is not a regular file (a directory, FIFO, device or symbolic link) is refused
//! rather than replaced.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

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

/// A folder's stale temporary files, by the name of the file each was being written as.
type StaleTemps = HashMap<String, Vec<PathBuf>>;

/// Per folder this process has written into: the stale temporary files its first look
/// found there.
static STALE: LazyLock<Mutex<HashMap<PathBuf, StaleTemps>>> = LazyLock::new(Default::default);

/// Removes the `.NAME.PID.tmp` regular files in `dir` whose process no longer runs. The
/// folder is listed once per process (at its first write there), not at every write: a
/// batch writing thousands of outputs into one folder would otherwise list it once per
/// output (20,000 files made each write 9 ms slower). A process killed after that listing
/// leaves its temporary file to the next process that writes the same file.
pub fn remove_stale_temps(dir: &Path, name: &str) {
    let mut stale = STALE.lock().unwrap_or_else(|e| e.into_inner());
    let found = stale
        .entry(dir.to_path_buf())
        .or_insert_with(|| stale_temps_in(dir));
    for path in found.remove(name).unwrap_or_default() {
        let _ = std::fs::remove_file(path);
    }
}

/// The `.NAME.PID.tmp` regular files in `dir` of processes that no longer run, by `NAME`.
fn stale_temps_in(dir: &Path) -> StaleTemps {
    let mut found = StaleTemps::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    for e in entries.flatten() {
        let file = e.file_name();
        let Some((name, pid)) = file
            .to_str()
            .and_then(|f| f.strip_prefix('.'))
            .and_then(|r| r.strip_suffix(".tmp"))
            .and_then(|r| r.rsplit_once('.'))
            .and_then(|(name, pid)| Some((name, pid.parse::<u32>().ok()?)))
        else {
            continue;
        };
        let regular = e.file_type().is_ok_and(|t| t.is_file());
        if regular && pid != std::process::id() && !process_alive(pid) {
            found.entry(name.to_string()).or_default().push(e.path());
        }
    }
    found
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The id of a process that has exited.
    fn dead_pid() -> u32 {
        let mut dead = std::process::Command::new("true").spawn().unwrap();
        let pid = dead.id();
        dead.wait().unwrap();
        pid
    }

    #[test]
    fn a_folder_listed_at_its_first_write_still_loses_the_stale_files_of_later_names() {
        let d = tempfile::tempdir().unwrap();
        let pid = dead_pid();
        let stale_b = d.path().join(format!(".b.skp.{pid}.tmp"));
        std::fs::write(&stale_b, b"half of b").unwrap();
        let other = d.path().join(format!(".c.skp.{pid}.tmp"));
        std::fs::write(&other, b"half of c").unwrap();
        // Another process's file, alive: ours under another id is not one, so use pid 1.
        let alive = d.path().join(".b.skp.1.tmp");
        std::fs::write(&alive, b"init's").unwrap();
        write_atomic(&d.path().join("a.skp"), b"a").unwrap();
        // The folder was listed at a's write; b's stale file goes at b's write.
        assert!(stale_b.exists());
        write_atomic(&d.path().join("b.skp"), b"b").unwrap();
        assert!(!stale_b.exists());
        assert!(other.exists() && alive.exists());
        assert_eq!(std::fs::read(d.path().join("b.skp")).unwrap(), b"b");
        // A name with dots and digits of its own parses as NAME.PID.tmp.
        let e = tempfile::tempdir().unwrap();
        let dotted_e = e.path().join(format!(".take.2.fbx.{pid}.tmp"));
        std::fs::write(&dotted_e, b"x").unwrap();
        write_atomic(&e.path().join("take.2.fbx"), b"y").unwrap();
        assert!(!dotted_e.exists());
    }
}
