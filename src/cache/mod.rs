//! A content-addressed cache of compressed clips, shared by processes and machines.
//!
//! A clip's result (its compressed payload, local tolerances and report) is stored under a key
//! that hashes what determines it: the skeleton, the clip's dense data, its resolved settings
//! and the codec's source fingerprint ([`key`]). Re-exporting the same motion from a DCC hits
//! the cache; any change to the motion, the settings or the codec misses it.
//!
//! Storage follows Bazel's remote-cache layout so a studio can point skelpack at the cache its
//! build farm already runs: the value is a blob in `cas/` named by its own SHA-256, and
//! `ac/<key>` holds a small `ActionResult` naming that blob ([`action`]). Backends: a local
//! folder ([`folder`], size-bounded, least recently used evicted, safe for several processes)
//! and HTTP ([`http`]: `GET` / `PUT` on `/ac/` and `/cas/`, as bazel-remote, Buildbarn,
//! BuildBuddy and an nginx WebDAV server speak it).
//!
//! Nothing read from a cache is trusted: the blob must hash to the digest the action names,
//! carry the key it was asked for, and parse as a valid payload ([`entry`]). Anything else is
//! counted as rejected and recomputed. A backend that errors (down, slow, refusing) never
//! fails a run: after [`MAX_CONSECUTIVE_ERRORS`] errors in a row it is switched off for the
//! rest of the run.

pub mod action;
pub mod entry;
pub mod file_report;
pub mod folder;
pub mod gltf_export;
pub mod http;
pub mod key;
pub mod whole_file;

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::codec::{self, CodecError, CompressedClip, Control};
use crate::model::{Clip, Skeleton};
use crate::settings::Resolved;

pub use key::Key;

/// Which half of the Bazel layout an object lives in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Area {
    /// Action cache: the key of a clip's result, holding an `ActionResult`.
    Ac,
    /// Content-addressed storage: blobs named by their own SHA-256.
    Cas,
}

impl Area {
    /// The path segment of this area (`ac` or `cas`).
    pub fn dir(self) -> &'static str {
        match self {
            Area::Ac => "ac",
            Area::Cas => "cas",
        }
    }
}

/// A place blobs are kept. `get` returns `Ok(None)` for a miss and `Err` for a failure of the
/// backend itself (which the cache counts and survives).
pub trait Store: Send + Sync {
    /// Reads the object `hex` of `area`.
    fn get(&self, area: Area, hex: &str) -> Result<Option<Vec<u8>>, String>;
    /// Writes the object `hex` of `area`.
    fn put(&self, area: Area, hex: &str, bytes: &[u8]) -> Result<(), String>;
    /// Work at the end of a run (the folder evicts down to its bound).
    fn finish(&self) -> Result<(), String> {
        Ok(())
    }
    /// Where the store is, for messages.
    fn describe(&self) -> String;
}

/// A backend that failed this many times in a row is not asked again during the run.
pub const MAX_CONSECUTIVE_ERRORS: usize = 3;

/// What the cache did during a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize)]
pub struct CacheStats {
    /// Results taken from the cache.
    pub hits: u64,
    /// Results computed (not in the cache, or the cache was off or down).
    pub misses: u64,
    /// Results written to the cache.
    pub stored: u64,
    /// Entries found but refused: corrupt, truncated, or another key's.
    pub rejected: u64,
    /// Failed requests to the backend (a timeout, a refused connection, an I/O error).
    pub errors: u64,
}

/// The result cache of one run.
pub struct ResultCache {
    store: Box<dyn Store>,
    hits: AtomicU64,
    misses: AtomicU64,
    stored: AtomicU64,
    rejected: AtomicU64,
    errors: AtomicU64,
    consecutive_errors: AtomicUsize,
    off: AtomicBool,
}

impl ResultCache {
    /// A cache over `store`.
    pub fn new(store: Box<dyn Store>) -> Self {
        Self {
            store,
            hits: AtomicU64::new(0),
            misses: AtomicU64::new(0),
            stored: AtomicU64::new(0),
            rejected: AtomicU64::new(0),
            errors: AtomicU64::new(0),
            consecutive_errors: AtomicUsize::new(0),
            off: AtomicBool::new(false),
        }
    }

    /// Opens `spec`: `http://HOST:PORT/PREFIX` for an HTTP cache, anything else a folder
    /// (created if missing) bounded at `max_bytes`.
    pub fn open(spec: &str, max_bytes: u64) -> Result<Self, String> {
        if spec.starts_with("http://") {
            Ok(Self::new(Box::new(http::HttpStore::new(spec)?)))
        } else if spec.starts_with("https://") {
            Err(format!(
                "cache {spec}: https is not supported (plain http only; put a TLS proxy in front)"
            ))
        } else {
            Ok(Self::new(Box::new(folder::FolderStore::open(
                std::path::Path::new(spec),
                max_bytes,
            )?)))
        }
    }

    /// Where the cache is.
    pub fn describe(&self) -> String {
        self.store.describe()
    }

    /// Compresses `clip`, or takes its result from the cache; the flag says which.
    pub fn compress(
        &self,
        skeleton: &Skeleton,
        clip: &Clip,
        settings: &Resolved,
        control: &Control,
    ) -> Result<(CompressedClip, bool), CodecError> {
        let key = key::clip_key(skeleton, clip, settings);
        if let Some(hit) = self.fetch(&key, skeleton) {
            return Ok((hit, true));
        }
        let out = codec::compress(skeleton, clip, settings, control)?;
        self.put(&key, &out);
        Ok((out, false))
    }

    /// The cached result of `key`, checked; `None` on a miss, a refused entry or a failure.
    pub fn fetch(&self, key: &Key, skeleton: &Skeleton) -> Option<CompressedClip> {
        let found = self.lookup(key, skeleton);
        let counter = if found.is_some() {
            &self.hits
        } else {
            &self.misses
        };
        counter.fetch_add(1, Ordering::Relaxed);
        found
    }

    fn lookup(&self, key: &Key, skeleton: &Skeleton) -> Option<CompressedClip> {
        let blob = self.lookup_blob(key)?;
        self.accept(entry::decode(key, &blob, skeleton))
    }

    /// The blob the action of `key` names, checked against its digest.
    fn lookup_blob(&self, key: &Key) -> Option<Vec<u8>> {
        let action = self.call(|s| s.get(Area::Ac, &key::hex(key)))??;
        let Some(digest) = action::parse(&action) else {
            return self.accept(Err("the action record is malformed".into()));
        };
        let blob = self.call(|s| s.get(Area::Cas, &digest.hash))??;
        if blob.len() as u64 != digest.size || sha256_hex(&blob) != digest.hash {
            return self.accept(Err("the blob does not match its digest".into()));
        }
        Some(blob)
    }

    /// `Some` for a decoded entry; a refused one is counted (and the first one said).
    fn accept<T>(&self, decoded: Result<T, String>) -> Option<T> {
        match decoded {
            Ok(v) => Some(v),
            Err(why) => {
                if self.rejected.fetch_add(1, Ordering::Relaxed) == 0 {
                    eprintln!(
                        "warning: cache {}: an entry was refused ({why}); refused entries are computed again",
                        self.store.describe()
                    );
                }
                None
            }
        }
    }

    /// The cached report of a whole file (see [`file_report`]), checked against its digest
    /// and key; the caller parses it, and counts its clips with [`Self::record_hits`] or
    /// refuses it with [`Self::refuse`].
    pub fn fetch_file_report(&self, key: &Key) -> Option<Vec<u8>> {
        let blob = self.lookup_blob(key)?;
        let json = self.accept(file_report::decode(key, &blob))?;
        Some(json.to_vec())
    }

    /// Counts `n` results taken from the cache without [`Self::fetch`].
    pub fn record_hits(&self, n: u64) {
        self.hits.fetch_add(n, Ordering::Relaxed);
    }

    /// Counts an entry refused by its reader.
    pub fn refuse(&self, why: String) {
        let _: Option<()> = self.accept(Err(why));
    }

    /// Stores the report of a whole file.
    pub fn put_file_report(&self, key: &Key, json: &[u8]) {
        self.put_blob(key, &file_report::encode(key, json));
    }

    /// The cached glTF export of `key` to a file of extension `output_ext` (see
    /// [`gltf_export`]), checked; counted as that many results taken from the cache (one per
    /// animation). An export computed instead is counted with [`Self::record_computed`].
    pub fn fetch_export(&self, key: &Key, output_ext: &str) -> Option<gltf_export::CachedExport> {
        let found = self
            .lookup_blob(key)
            .and_then(|blob| self.accept(gltf_export::decode(key, &blob, output_ext)))?;
        let animations = serde_json::from_str::<Vec<serde_json::Value>>(&found.report_json)
            .map_or(1, |a| a.len());
        self.record_hits(animations as u64);
        Some(found)
    }

    /// Counts `n` results computed without [`Self::fetch`].
    pub fn record_computed(&self, n: u64) {
        self.misses.fetch_add(n, Ordering::Relaxed);
    }

    /// Stores a glTF export under `key`.
    pub fn put_export(&self, key: &Key, export: &gltf_export::CachedExport) {
        if self.put_blob(key, &gltf_export::encode(key, export)) {
            self.stored.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// Stores `clip` as the result of `key` (the blob first, then the action naming it).
    pub fn put(&self, key: &Key, clip: &CompressedClip) {
        if self.put_blob(key, &entry::encode(key, clip)) {
            self.stored.fetch_add(1, Ordering::Relaxed);
        }
    }

    fn put_blob(&self, key: &Key, blob: &[u8]) -> bool {
        let hash = sha256_hex(blob);
        self.call(|s| s.put(Area::Cas, &hash, blob)).is_some()
            && self
                .call(|s| {
                    s.put(
                        Area::Ac,
                        &key::hex(key),
                        &action::encode(&hash, blob.len() as u64),
                    )
                })
                .is_some()
    }

    /// Runs one backend request unless the backend is off; counts failures and switches the
    /// backend off after too many in a row. `None` when it failed or was not asked.
    fn call<T>(&self, request: impl FnOnce(&dyn Store) -> Result<T, String>) -> Option<T> {
        if self.off.load(Ordering::Relaxed) {
            return None;
        }
        match request(self.store.as_ref()) {
            Ok(v) => {
                self.consecutive_errors.store(0, Ordering::Relaxed);
                Some(v)
            }
            Err(e) => {
                self.errors.fetch_add(1, Ordering::Relaxed);
                let n = self.consecutive_errors.fetch_add(1, Ordering::Relaxed) + 1;
                if n >= MAX_CONSECUTIVE_ERRORS && !self.off.swap(true, Ordering::Relaxed) {
                    eprintln!(
                        "warning: cache {}: {e}; not used for the rest of this run",
                        self.store.describe()
                    );
                }
                None
            }
        }
    }

    /// What the cache did so far.
    pub fn stats(&self) -> CacheStats {
        CacheStats {
            hits: self.hits.load(Ordering::Relaxed),
            misses: self.misses.load(Ordering::Relaxed),
            stored: self.stored.load(Ordering::Relaxed),
            rejected: self.rejected.load(Ordering::Relaxed),
            errors: self.errors.load(Ordering::Relaxed),
        }
    }

    /// Ends the run: the folder backend evicts down to its size bound.
    pub fn finish(&self) {
        if let Err(e) = self.store.finish() {
            eprintln!("warning: cache {}: {e}", self.store.describe());
        }
    }
}

/// `hex` when it can name an object (hex digits only), so it is safe in a path or a URL.
pub fn object_name(hex: &str) -> Result<&str, String> {
    if hex.len() >= 3 && hex.bytes().all(|c| c.is_ascii_hexdigit()) {
        Ok(hex)
    } else {
        Err(format!("not a digest: {}", crate::quote::clipped(hex)))
    }
}

/// Lower-case hex SHA-256 of `bytes`, the digest form Bazel's cache uses.
pub fn sha256_hex(bytes: &[u8]) -> String {
    key::hex(&Sha256::digest(bytes).into())
}
