//! The dashboard's background work: the file's other clips compressed one at a time (on
//! their own [`Jobs`], so the open clip's job is never cancelled by them), and the "fit in
//! N KiB" search on a worker thread. Their results go to the app's [`ResultCache`], the one
//! place results are kept, so settings seen before (undo, redo) find every clip's result
//! there instead of compressing it again.

use std::collections::HashMap;
use std::sync::mpsc::Receiver;
use std::sync::{Arc, mpsc};

use super::super::compressor::{Compressed, Control};
use super::super::jobs::{JobKey, Jobs};
use super::super::panels::dashboard::{DashboardView, FitOutcome};
use super::super::result_cache::{CacheKey, ResultCache};
use super::super::state::Document;
use crate::codec::size_budget::{self, Fit};
use crate::settings::Resolved;

/// A running size search.
pub(super) struct FitJob {
    pub(super) clip: Option<usize>,
    pub(super) settings_rev: u64,
    pub(super) control: Arc<Control>,
    pub(super) result: Receiver<Result<Fit, String>>,
}

/// Results and jobs for every clip of the open document.
#[derive(Default)]
pub(super) struct ClipWork {
    /// The dashboard window is open.
    pub(super) open: bool,
    pub(super) view: DashboardView,
    pub(super) jobs: Jobs,
    /// The job running, and the settings it compresses with.
    started: Option<(JobKey, Resolved)>,
    /// Per clip: settings whose compression failed, and why (not retried until they change).
    failed: HashMap<usize, (Resolved, String)>,
    /// Each clip's resolved settings, for (document, settings revision).
    resolved: Vec<Resolved>,
    /// Each clip's tolerance for joints without overrides (mm), for the same key.
    base_mm: Vec<f32>,
    resolved_for: Option<(u64, u64)>,
    pub(super) fit: Option<FitJob>,
    pub(super) fit_outcome: Option<FitOutcome>,
}

impl ClipWork {
    /// Forgets everything of the previous document.
    pub(super) fn reset(&mut self) {
        self.jobs.cancel();
        self.started = None;
        self.failed.clear();
        self.resolved.clear();
        self.resolved_for = None;
        self.cancel_fit();
        self.fit_outcome = None;
    }

    pub(super) fn cancel_fit(&mut self) {
        if let Some(f) = self.fit.take() {
            f.control.cancel();
        }
    }

    /// Each clip's resolved settings (re-resolved when the document or settings changed).
    pub(super) fn resolved(&mut self, doc: &Document) -> &[Resolved] {
        self.refresh(doc);
        &self.resolved
    }

    /// Each clip's tolerance for joints without their own value, in mm.
    pub(super) fn base_tolerance_mm(&mut self, doc: &Document) -> &[f32] {
        self.refresh(doc);
        &self.base_mm
    }

    fn refresh(&mut self, doc: &Document) {
        let key = (doc.id, doc.settings_rev);
        if self.resolved_for == Some(key) {
            return;
        }
        let effective = super::super::pieces::effective(&doc.settings);
        let (s, asset) = (&*effective, &doc.asset);
        self.resolved = asset
            .clips
            .iter()
            .map(|c| s.resolve(asset, &c.name))
            .collect();
        let first = asset.skeleton.deforming_joints().next().unwrap_or(0);
        self.base_mm = asset
            .clips
            .iter()
            .map(|c| {
                let mut plain = s.clone();
                plain.joints.clear();
                plain.markers_from_mesh = false;
                if let Some(cs) = plain.clips.get_mut(&c.name) {
                    cs.joints.clear();
                }
                let r = plain.resolve(asset, &c.name);
                let per_mm = r.unit.per_metre() / 1000.0;
                r.limits.tolerance.get(first).map_or(0.1, |t| t / per_mm)
            })
            .collect();
        self.resolved_for = Some(key);
    }

    /// The result for `clip` at its current settings, if one is kept in `cache`.
    pub(super) fn result(
        &mut self,
        doc: &Document,
        clip: usize,
        cache: &mut ResultCache,
    ) -> Option<Arc<Compressed>> {
        if clip == doc.clip {
            return doc.result.clone();
        }
        let settings = self.resolved(doc).get(clip)?.clone();
        cache.get(&CacheKey {
            document: doc.id,
            clip,
            settings,
        })
    }

    /// Why `clip` could not be compressed at its current settings, if it could not.
    pub(super) fn failure(&mut self, doc: &Document, clip: usize) -> Option<String> {
        if clip == doc.clip {
            return doc.failure.clone();
        }
        let resolved = self.resolved(doc).get(clip)?.clone();
        self.failed
            .get(&clip)
            .filter(|(r, _)| *r == resolved)
            .map(|(_, e)| e.clone())
    }

    /// Progress of `clip`'s job, if it runs.
    pub(super) fn progress(&self, clip: usize) -> Option<f32> {
        self.jobs
            .running()
            .filter(|(k, _)| k.clip == clip)
            .map(|(_, p)| p)
    }

    /// Starts the next clip without a result for its current settings in `cache` (the open
    /// clip is the main job's), unless one runs.
    pub(super) fn start_next(&mut self, doc: &Document, cache: &mut ResultCache) {
        if self.jobs.running().is_some() {
            return;
        }
        let n = doc.asset.clips.len();
        let next = (0..n).find(|&c| {
            c != doc.clip && self.result(doc, c, cache).is_none() && self.failure(doc, c).is_none()
        });
        let Some(clip) = next else { return };
        let key = JobKey {
            document: doc.id,
            clip,
            settings_rev: doc.settings_rev,
        };
        let resolved = self.resolved(doc)[clip].clone();
        self.jobs
            .start_final_only(key, doc.asset.clone(), resolved.clone());
        self.started = Some((key, resolved));
    }

    /// Takes finished clip jobs of `document` into `cache` (failures are remembered here).
    pub(super) fn poll(&mut self, document: u64, cache: &mut ResultCache) {
        for r in self.jobs.poll() {
            let Some((key, resolved)) = self.started.take_if(|(k, _)| *k == r.key) else {
                continue;
            };
            if key.document != document {
                continue;
            }
            match r.outcome {
                Ok(c) => {
                    let key = CacheKey {
                        document,
                        clip: key.clip,
                        settings: resolved,
                    };
                    cache.insert(key, Arc::new(c));
                }
                Err(e) => {
                    let why = match e {
                        super::super::compressor::Failure::Cancelled => "cancelled".to_owned(),
                        super::super::compressor::Failure::Error(e) => e,
                    };
                    self.failed.insert(key.clip, (resolved, why));
                }
            }
        }
    }

    /// Starts a size search for `clip` (None: every clip together) in `bytes`.
    pub(super) fn start_fit(&mut self, doc: &Document, clip: Option<usize>, bytes: u64) {
        self.cancel_fit();
        self.fit_outcome = None;
        let clips: Vec<usize> = match clip {
            Some(c) => vec![c],
            None => (0..doc.asset.clips.len()).collect(),
        };
        let resolved: Vec<Resolved> = clips
            .iter()
            .map(|&c| self.resolved(doc)[c].clone())
            .collect();
        let asset = doc.asset.clone();
        let control = Arc::new(Control::new());
        let c2 = control.clone();
        let (tx, rx) = mpsc::channel();
        let spawned = std::thread::Builder::new()
            .name("fit in size".into())
            .spawn(move || {
                let pairs: Vec<_> = clips
                    .iter()
                    .map(|&c| &asset.clips[c])
                    .zip(resolved)
                    .collect();
                let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                    size_budget::fit_clips(&asset.skeleton, &pairs, bytes, &c2)
                        .map(|(fit, _)| fit)
                        .map_err(|e| e.to_string())
                }))
                .unwrap_or_else(|_| Err("the search panicked".into()));
                let _ = tx.send(r);
            });
        if let Err(e) = spawned {
            self.fit_outcome = Some(FitOutcome {
                clip,
                fit: Err(format!("cannot start a worker: {e}")),
                settings_rev: doc.settings_rev,
            });
            return;
        }
        self.fit = Some(FitJob {
            clip,
            settings_rev: doc.settings_rev,
            control,
            result: rx,
        });
    }

    /// Takes the search's outcome when it is in; true when it arrived.
    pub(super) fn poll_fit(&mut self) -> bool {
        let Some(job) = &self.fit else { return false };
        let fit = match job.result.try_recv() {
            Ok(r) => r,
            Err(mpsc::TryRecvError::Empty) => return false,
            Err(mpsc::TryRecvError::Disconnected) => Err("the search stopped".into()),
        };
        self.fit_outcome = Some(FitOutcome {
            clip: job.clip,
            fit,
            settings_rev: job.settings_rev,
        });
        self.fit = None;
        true
    }

    /// Blocks until the search is in (tests).
    pub(super) fn wait_fit(&mut self, timeout: std::time::Duration) -> bool {
        let end = std::time::Instant::now() + timeout;
        while self.fit.is_some() {
            if self.poll_fit() {
                return true;
            }
            if std::time::Instant::now() > end {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        self.fit_outcome.is_some()
    }

    /// Blocks until every clip has a result for its settings in `cache` (tests); false if
    /// they did not all arrive in time.
    pub(super) fn wait_all(
        &mut self,
        doc: &Document,
        cache: &mut ResultCache,
        timeout: std::time::Duration,
    ) -> bool {
        let end = std::time::Instant::now() + timeout;
        loop {
            self.poll(doc.id, cache);
            self.start_next(doc, cache);
            if self.jobs.running().is_none() {
                return true;
            }
            if std::time::Instant::now() > end {
                return false;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
}
