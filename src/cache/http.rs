//! The HTTP backend: Bazel's remote-cache HTTP protocol, `GET` and `PUT` of
//! `BASE/ac/KEY` and `BASE/cas/HASH` (bazel-remote, Buildbarn, BuildBuddy, nginx with WebDAV
//! `PUT`). A 404 is a miss; any other failure (refused, timed out, 5xx) is an error the cache
//! counts and survives. Plain HTTP only.

use std::io::Read;
use std::time::Duration;

use super::{Area, Store};

/// Time to connect before a request counts as failed.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
/// Time for a whole request (a slow cache must not hold a run up for long).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// The largest entry read back (a result is the size of its `.skp` payload and report).
pub const MAX_ENTRY_BYTES: u64 = 1 << 30;

/// A remote cache at `http://HOST:PORT/PREFIX`.
pub struct HttpStore {
    base: String,
    agent: ureq::Agent,
}

impl HttpStore {
    /// A store at `url` (`http://` only; a trailing `/` is ignored).
    pub fn new(url: &str) -> Result<Self, String> {
        let base = url.trim_end_matches('/').to_owned();
        let host = base.strip_prefix("http://").unwrap_or("");
        if host.is_empty() || host.starts_with('/') {
            return Err(format!("cache {url}: no host"));
        }
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .build();
        Ok(Self { base, agent })
    }

    fn url(&self, area: Area, hex: &str) -> Result<String, String> {
        let hex = super::object_name(hex)?;
        Ok(format!("{}/{}/{hex}", self.base, area.dir()))
    }
}

impl Store for HttpStore {
    fn get(&self, area: Area, hex: &str) -> Result<Option<Vec<u8>>, String> {
        let url = self.url(area, hex)?;
        match self.agent.get(&url).call() {
            Ok(response) => {
                let mut bytes = Vec::new();
                response
                    .into_reader()
                    .take(MAX_ENTRY_BYTES + 1)
                    .read_to_end(&mut bytes)
                    .map_err(|e| format!("GET {url}: {e}"))?;
                if bytes.len() as u64 > MAX_ENTRY_BYTES {
                    return Err(format!("GET {url}: larger than {MAX_ENTRY_BYTES} bytes"));
                }
                Ok(Some(bytes))
            }
            Err(ureq::Error::Status(404, _)) => Ok(None),
            Err(ureq::Error::Status(code, _)) => Err(format!("GET {url}: HTTP {code}")),
            Err(e) => Err(format!("GET {url}: {e}")),
        }
    }

    fn put(&self, area: Area, hex: &str, bytes: &[u8]) -> Result<(), String> {
        let url = self.url(area, hex)?;
        match self.agent.put(&url).send_bytes(bytes) {
            Ok(_) => Ok(()),
            Err(ureq::Error::Status(code, _)) => Err(format!("PUT {url}: HTTP {code}")),
            Err(e) => Err(format!("PUT {url}: {e}")),
        }
    }

    fn describe(&self) -> String {
        self.base.clone()
    }
}
