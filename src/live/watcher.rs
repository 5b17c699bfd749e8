//! Notices saves of a set of files: watches their folders (a file renamed over the source
//! replaces the watched inode, so a folder watch is what sees it) and hands out the
//! paths that changed.

use std::path::{Path, PathBuf};
use std::sync::mpsc;

use anyhow::Context;
use notify::{RecursiveMode, Watcher};

/// A folder watch over some files; [`FileWatch::changed`] drains what happened.
pub struct FileWatch {
    _watcher: notify::RecommendedWatcher,
    rx: mpsc::Receiver<Vec<PathBuf>>,
}

/// `p` with its folder resolved (what the watcher reports paths under).
pub fn resolve(p: &Path) -> anyhow::Result<PathBuf> {
    let parent = p.parent().filter(|d| !d.as_os_str().is_empty());
    let parent = parent.unwrap_or(Path::new("."));
    let name = p
        .file_name()
        .with_context(|| format!("{}: not a file", p.display()))?;
    Ok(parent
        .canonicalize()
        .with_context(|| format!("{}: its folder cannot be read", p.display()))?
        .join(name))
}

impl FileWatch {
    /// Watches the folders of `files` (resolved with [`resolve`]); `wake` is called on
    /// every change (the app asks for a frame).
    pub fn new(files: &[PathBuf], wake: impl Fn() + Send + Sync + 'static) -> anyhow::Result<Self> {
        let (tx, rx) = mpsc::channel();
        let mut watcher = notify::recommended_watcher(move |e: notify::Result<notify::Event>| {
            // Writes, renames, creations and removals; not reads (our own import opens the
            // file) nor metadata alone.
            use notify::EventKind::{Create, Modify, Remove};
            use notify::event::ModifyKind;
            if let Ok(e) = e
                && matches!(
                    e.kind,
                    Create(_)
                        | Remove(_)
                        | Modify(ModifyKind::Data(_) | ModifyKind::Name(_) | ModifyKind::Any)
                )
            {
                let _ = tx.send(e.paths);
                wake();
            }
        })
        .context("cannot start watching files")?;
        let mut folders: Vec<&Path> = files.iter().filter_map(|f| f.parent()).collect();
        folders.sort();
        folders.dedup();
        for d in folders {
            watcher
                .watch(d, RecursiveMode::NonRecursive)
                .with_context(|| format!("{}: cannot watch", d.display()))?;
        }
        Ok(Self {
            _watcher: watcher,
            rx,
        })
    }

    /// Waits up to `timeout` for the next batch of changed paths (None: nothing came).
    pub fn wait(&self, timeout: std::time::Duration) -> anyhow::Result<Option<Vec<PathBuf>>> {
        match self.rx.recv_timeout(timeout) {
            Ok(p) => Ok(Some(p)),
            Err(mpsc::RecvTimeoutError::Timeout) => Ok(None),
            Err(mpsc::RecvTimeoutError::Disconnected) => anyhow::bail!("the file watcher stopped"),
        }
    }

    /// Every path changed since the last call, without waiting.
    pub fn changed(&self) -> Vec<PathBuf> {
        self.rx.try_iter().flatten().collect()
    }
}
