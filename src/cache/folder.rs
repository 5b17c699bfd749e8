//! The folder backend: `DIR/ac/xx/KEY` and `DIR/cas/xx/HASH`, written atomically (a temporary
//! file renamed into place, so processes sharing the folder never see half an entry), touched
//! on read, and evicted least recently used first down to a size bound at the end of a run.

use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::{Area, Store};

/// A local cache folder.
pub struct FolderStore {
    root: PathBuf,
    max_bytes: u64,
}

impl FolderStore {
    /// Opens (creating it if needed) the cache folder `root`, bounded at `max_bytes`.
    pub fn open(root: &Path, max_bytes: u64) -> Result<Self, String> {
        for area in [Area::Ac, Area::Cas] {
            std::fs::create_dir_all(root.join(area.dir()))
                .map_err(|e| format!("cache {}: {e}", root.display()))?;
        }
        Ok(Self {
            root: root.to_path_buf(),
            max_bytes,
        })
    }

    fn path(&self, area: Area, hex: &str) -> Result<PathBuf, String> {
        let hex = super::object_name(hex)?;
        Ok(self.root.join(area.dir()).join(&hex[..2]).join(hex))
    }

    /// Every entry file with its size and last use.
    fn entries(&self) -> Vec<(PathBuf, u64, SystemTime)> {
        let mut out = Vec::new();
        for area in [Area::Ac, Area::Cas] {
            let Ok(shards) = std::fs::read_dir(self.root.join(area.dir())) else {
                continue;
            };
            for shard in shards.flatten() {
                let Ok(files) = std::fs::read_dir(shard.path()) else {
                    continue;
                };
                for f in files.flatten() {
                    if let Ok(m) = f.metadata()
                        && m.is_file()
                    {
                        let used = m.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                        out.push((f.path(), m.len(), used));
                    }
                }
            }
        }
        out
    }
}

impl Store for FolderStore {
    fn get(&self, area: Area, hex: &str) -> Result<Option<Vec<u8>>, String> {
        let path = self.path(area, hex)?;
        match std::fs::read(&path) {
            Ok(bytes) => {
                // Last use for eviction; a failure only makes the entry look older.
                if let Ok(f) = std::fs::File::options().write(true).open(&path) {
                    let _ = f.set_modified(SystemTime::now());
                }
                Ok(Some(bytes))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(format!("{}: {e}", path.display())),
        }
    }

    fn put(&self, area: Area, hex: &str, bytes: &[u8]) -> Result<(), String> {
        let path = self.path(area, hex)?;
        let dir = path.parent().expect("entry paths have a folder");
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
        crate::fsutil::write_atomic(&path, bytes).map_err(|e| format!("{}: {e}", path.display()))
    }

    fn finish(&self) -> Result<(), String> {
        let mut entries = self.entries();
        let mut total: u64 = entries.iter().map(|e| e.1).sum();
        if total <= self.max_bytes {
            return Ok(());
        }
        // Oldest use first; down to 90 % of the bound so the next run does not evict again.
        entries.sort_by_key(|e| e.2);
        let target = self.max_bytes / 10 * 9;
        for (path, size, _) in entries {
            if total <= target {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                total -= size;
            }
        }
        Ok(())
    }

    fn describe(&self) -> String {
        self.root.display().to_string()
    }
}
