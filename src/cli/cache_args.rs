//! The result-cache flags shared by `compress` and `report` (`src/cache/`).

use crate::cache::ResultCache;

#[derive(clap::Args, Debug, Clone, Default)]
pub struct CacheArgs {
    /// Result cache: a folder, or `http://HOST:PORT/PREFIX` (Bazel's remote-cache HTTP
    /// protocol: bazel-remote, Buildbarn, nginx WebDAV). Clips whose motion, settings and
    /// codec are unchanged are taken from it instead of compressed again.
    #[arg(long, env = "SKELPACK_CACHE", value_name = "DIR|URL")]
    pub cache: Option<String>,
    /// A cache folder's size bound in MiB; least recently used results are evicted past it
    /// at the end of a run.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    pub cache_max_mb: u64,
    /// Use no cache, even when SKELPACK_CACHE names one.
    #[arg(long)]
    pub no_cache: bool,
}

impl CacheArgs {
    /// The cache these flags name, or else the one the run's `--settings` file names
    /// (`cache = "..."`): opened, when there is one.
    pub fn open_with(
        &self,
        settings_file: Option<&std::path::Path>,
    ) -> anyhow::Result<Option<ResultCache>> {
        if self.cache.is_some() || self.no_cache {
            return self.open();
        }
        let Some(path) = settings_file else {
            return Ok(None);
        };
        let named = crate::settings::Settings::load(path)?.cache;
        Self {
            cache: named,
            ..self.clone()
        }
        .open()
    }

    /// The cache these flags name and a folder's bound in bytes, unopened.
    pub fn spec(&self) -> Option<(String, u64)> {
        match self.cache.as_deref().map(str::trim) {
            Some(spec) if !spec.is_empty() && !self.no_cache => {
                Some((spec.to_string(), self.cache_max_mb.saturating_mul(1 << 20)))
            }
            _ => None,
        }
    }

    /// The cache these flags name, if any.
    pub fn open(&self) -> anyhow::Result<Option<ResultCache>> {
        self.spec()
            .map(|(spec, bytes)| ResultCache::open(&spec, bytes).map_err(anyhow::Error::msg))
            .transpose()
    }
}

/// The line printed to standard error after a run that used a cache.
pub fn summary_line(cache: &ResultCache) -> String {
    let s = cache.stats();
    format!(
        "cache {}: {} from the cache, {} computed, {} stored, {} rejected, {} errors",
        cache.describe(),
        s.hits,
        s.misses,
        s.stored,
        s.rejected,
        s.errors
    )
}
