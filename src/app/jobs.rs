//! Background compression: one worker thread per request, the previous one cancelled. Every
//! result carries the [`JobKey`] it was computed for, so a stale result is never shown.
//! Successive jobs on the same clip share one [`Recompressor`], so a job after an edit
//! re-encodes only what the edit changed, and one after a reload of the source only the
//! tracks the save changed (the state starts afresh on any other clip).

use std::sync::mpsc::{Receiver, Sender, channel};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::compressor::{self, Compressed, Control, Failure};

use crate::cache::ResultCache;
use crate::codec::Recompressor;
use crate::import::Asset;
use crate::settings::Resolved;

/// What a result was computed for: the document, the clip, and the settings revision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct JobKey {
    pub document: u64,
    pub clip: usize,
    pub settings_rev: u64,
}

/// A job's result: the final one, or a first pass (`Compressed::refining`) before it.
pub struct JobResult {
    pub key: JobKey,
    pub outcome: Result<Compressed, Failure>,
}

struct Running {
    key: JobKey,
    control: Arc<Control>,
}

/// Starts, cancels and collects compression jobs.
pub struct Jobs {
    tx: Sender<JobResult>,
    rx: Receiver<JobResult>,
    running: Option<Running>,
    /// Called by workers when they finish (wakes the UI).
    waker: Option<Arc<dyn Fn() + Send + Sync>>,
    /// What the last jobs on one clip computed, for the next job on it.
    memo: Option<Memo>,
    /// The shared result cache final results are taken from and written to.
    cache: Option<Arc<ResultCache>>,
}

/// The incremental state of one clip (by index; the state itself checks that the clip is
/// the one it was made for).
struct Memo {
    clip: usize,
    state: Arc<Mutex<Recompressor>>,
}

impl Default for Jobs {
    fn default() -> Self {
        let (tx, rx) = channel();
        Self {
            tx,
            rx,
            running: None,
            waker: None,
            memo: None,
            cache: None,
        }
    }
}

impl Jobs {
    pub fn set_waker(&mut self, waker: Arc<dyn Fn() + Send + Sync>) {
        self.waker = Some(waker);
    }

    /// Takes final results from `cache` when it holds them, and stores those computed.
    pub fn set_cache(&mut self, cache: Arc<ResultCache>) {
        self.cache = Some(cache);
    }

    /// Cancels any running job and starts one for `key` at once, which sends its first pass
    /// (`Compressed::refining`) before the final result. A cancelled job stops at its next
    /// check (between two track encodings), releasing the clip's incremental state to this
    /// one, so edits in a row never queue work behind each other.
    pub fn start(&mut self, key: JobKey, asset: Arc<Asset>, settings: Resolved) {
        self.spawn(key, asset, settings, true);
    }

    /// [`Jobs::start`] for work nobody watches as it runs (the other clips of a file): only
    /// the final result is sent, and no first pass is measured.
    pub fn start_final_only(&mut self, key: JobKey, asset: Arc<Asset>, settings: Resolved) {
        self.spawn(key, asset, settings, false);
    }

    fn spawn(&mut self, key: JobKey, asset: Arc<Asset>, settings: Resolved, first_passes: bool) {
        self.cancel();
        let control = Arc::new(Control::new());
        let tx = self.tx.clone();
        let waker = self.waker.clone();
        let c = control.clone();
        let memo = self.memo_for(key);
        let cache = self.cache.clone();
        let spawned = std::thread::Builder::new()
            .name(format!("compress clip {}", key.clip))
            .spawn(move || {
                let clip = &asset.clips[key.clip];
                let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    // A cancelled job on this clip still holding the state stops at its next
                    // check; a poisoned state (a panic mid-way) is dropped for a fresh one.
                    let mut memo = memo.lock().unwrap_or_else(|e| {
                        let mut m = e.into_inner();
                        *m = Recompressor::new();
                        m
                    });
                    if c.is_cancelled() {
                        // A newer edit came while this job waited for the state.
                        return Err(Failure::Cancelled);
                    }
                    let mut first_pass = |first| {
                        let _ = tx.send(JobResult {
                            key,
                            outcome: Ok(first),
                        });
                        if let Some(w) = &waker {
                            w();
                        }
                    };
                    compressor::recompress(
                        &mut memo,
                        &asset.skeleton,
                        clip,
                        &settings,
                        &c,
                        first_passes.then_some(&mut first_pass),
                        cache.as_deref(),
                    )
                }))
                .unwrap_or_else(|_| Err(Failure::Error("the compressor panicked".into())));
                let _ = tx.send(JobResult { key, outcome });
                if let Some(w) = waker {
                    w();
                }
            });
        match spawned {
            Ok(_) => self.running = Some(Running { key, control }),
            Err(e) => {
                let _ = self.tx.send(JobResult {
                    key,
                    outcome: Err(Failure::Error(format!("cannot start a worker: {e}"))),
                });
            }
        }
    }

    /// The incremental state for `key`'s clip (a new one for another clip index: the state
    /// of one clip at a time is kept).
    fn memo_for(&mut self, key: JobKey) -> Arc<Mutex<Recompressor>> {
        match &self.memo {
            // A reloaded document (the source saved again) keeps the clip's state: the
            // state keeps the encodings of the tracks the save did not change, and starts
            // afresh on anything else.
            Some(m) if m.clip == key.clip => m.state.clone(),
            _ => {
                let state = Arc::new(Mutex::new(Recompressor::new()));
                self.memo = Some(Memo {
                    clip: key.clip,
                    state: state.clone(),
                });
                state
            }
        }
    }

    /// Cancels the running job (its result, if any, is discarded as stale).
    pub fn cancel(&mut self) {
        if let Some(r) = self.running.take() {
            r.control.cancel();
        }
    }

    /// The running job's key and progress.
    pub fn running(&self) -> Option<(JobKey, f32)> {
        self.running.as_ref().map(|r| (r.key, r.control.progress()))
    }

    /// Finished results, oldest first; clears `running` when its result arrives.
    pub fn poll(&mut self) -> Vec<JobResult> {
        let results: Vec<JobResult> = self.rx.try_iter().collect();
        self.forget_finished(&results);
        results
    }

    /// Waits up to `timeout` for the next result (tests and the `view` command).
    pub fn wait(&mut self, timeout: Duration) -> Option<JobResult> {
        let r = self.rx.recv_timeout(timeout).ok()?;
        self.forget_finished(std::slice::from_ref(&r));
        Some(r)
    }

    fn forget_finished(&mut self, results: &[JobResult]) {
        let last = |r: &JobResult| !matches!(&r.outcome, Ok(c) if c.refining);
        if let Some(run) = &self.running
            && results.iter().any(|r| r.key == run.key && last(r))
        {
            self.running = None;
        }
    }
}
