//! The clip dashboard in the app: its rows from the document and the clip results, the
//! background work it drives, and its actions (fit, apply the fit).

use std::sync::Arc;
use std::time::Duration;

use super::super::actions::Action;
use super::super::compressor::Compressed;
use super::super::panels::dashboard::{self, ClipRow, Dashboard, FitOutcome, FitState};
use super::App;

impl App {
    /// Per frame: takes finished clip jobs and searches, starts the next clip while the
    /// dashboard is open, and asks for a repaint while work runs.
    pub(super) fn poll_dashboard(&mut self, ctx: &egui::Context) {
        let Some(doc) = &self.session.doc else { return };
        let clips = &mut self.work.clips;
        clips.poll(doc.id, &mut self.work.results);
        if clips.poll_fit() {
            self.chrome.status = "Fit search finished".into();
        }
        if clips.open {
            clips.start_next(doc, &mut self.work.results);
        }
        if clips.jobs.running().is_some() || clips.fit.is_some() {
            ctx.request_repaint_after(Duration::from_millis(250));
        }
    }

    /// The dashboard's rows: every clip of the open document.
    pub(super) fn dashboard_rows(&mut self) -> Vec<ClipRow> {
        let Some(doc) = &self.session.doc else {
            return Vec::new();
        };
        let clips = &mut self.work.clips;
        let base = clips.base_tolerance_mm(doc).to_vec();
        doc.asset
            .clips
            .iter()
            .enumerate()
            .map(|(i, c)| ClipRow {
                index: i,
                name: c.name.clone(),
                frames: c.frame_count,
                rate: c.sample_rate,
                result: clips.result(doc, i, &mut self.work.results),
                progress: if i == doc.clip {
                    self.work
                        .jobs
                        .running()
                        .filter(|(k, _)| *k == doc.key())
                        .map(|(_, p)| p)
                } else {
                    clips.progress(i)
                },
                tolerance_mm: base[i],
                failure: clips.failure(doc, i),
                events: doc.settings.events_for(&doc.asset, &c.name).0,
            })
            .collect()
    }

    /// The dashboard window, while open.
    pub(super) fn dashboard_window(&mut self, ctx: &egui::Context, out: &mut Vec<Action>) {
        if !self.work.clips.open {
            return;
        }
        let rows = self.dashboard_rows();
        let Some(doc) = &self.session.doc else { return };
        let clips = &mut self.work.clips;
        let d = Dashboard {
            rows: &rows,
            open_clip: doc.clip,
            settings: &doc.settings,
            unit: doc.resolved.unit,
            fit: FitState {
                running: clips.fit.is_some(),
                outcome: clips.fit_outcome.as_ref(),
                current: clips
                    .fit_outcome
                    .as_ref()
                    .is_some_and(|o| o.settings_rev == doc.settings_rev),
            },
        };
        let mut open = true;
        let mut view = clips.view.clone();
        dashboard::show(ctx, &mut open, &d, &mut view, out);
        clips.view = view;
        clips.open = open;
    }

    /// Applies a dashboard action; false when `action` is not one.
    pub(super) fn apply_dashboard(&mut self, action: &Action) -> bool {
        match action {
            Action::ToggleDashboard => self.work.clips.open = !self.work.clips.open,
            Action::FitBudget { clip, bytes } => {
                let Some(doc) = &self.session.doc else {
                    return true;
                };
                if doc.asset.clips.is_empty() || clip.is_some_and(|c| c >= doc.asset.clips.len()) {
                    self.chrome.status = "Fit: no clip to fit".into();
                    return true;
                }
                self.work.clips.start_fit(doc, *clip, *bytes);
                self.chrome.status = format!(
                    "Searching the tolerances that fit {}…",
                    super::super::panels::fmt_bytes(*bytes as usize)
                );
            }
            Action::CancelFit => {
                self.work.clips.cancel_fit();
                self.chrome.status = "Fit search cancelled".into();
            }
            Action::ApplyFit => self.apply_fit(),
            _ => return false,
        }
        true
    }

    /// Writes the last fit's scale into the settings of the clip(s) it was searched for.
    fn apply_fit(&mut self) {
        let Some(doc) = &self.session.doc else { return };
        let Some(o) = &self.work.clips.fit_outcome else {
            return;
        };
        let Ok(fit) = &o.fit else { return };
        let Some(best) = &fit.best else {
            self.chrome.status = "Fit: nothing to apply (the budget was not reached)".into();
            return;
        };
        if o.settings_rev != doc.settings_rev {
            self.chrome.status = "Fit: the settings changed since the search; search again".into();
            return;
        }
        let names: Vec<String> = match o.clip {
            Some(c) => vec![doc.asset.clips[c].name.clone()],
            None => doc.asset.clips.iter().map(|c| c.name.clone()).collect(),
        };
        let mut s = doc.settings.clone();
        for n in &names {
            s = s.with_scaled_tolerances(&doc.asset, n, best.scale);
        }
        let label = format!(
            "fit in {} (tolerances ×{:.3})",
            super::super::panels::fmt_bytes(fit.budget_bytes as usize),
            best.scale
        );
        self.pending.push(Action::EditSettings(label, Box::new(s)));
    }

    // ----- test hooks -----

    /// Whether the clip dashboard is open.
    pub fn dashboard_open(&self) -> bool {
        self.work.clips.open
    }

    /// Every clip's result at its current settings (None: not compressed yet).
    pub fn clip_results(&mut self) -> Vec<Option<Arc<Compressed>>> {
        self.dashboard_rows()
            .into_iter()
            .map(|r| r.result)
            .collect()
    }

    /// Blocks until every clip of the document has a result (tests).
    pub fn wait_for_clips(&mut self, timeout: Duration) -> bool {
        if !self.wait_for_result(timeout) {
            return false;
        }
        let Some(doc) = &self.session.doc else {
            return false;
        };
        self.work
            .clips
            .wait_all(doc, &mut self.work.results, timeout)
    }

    /// True while one of the other clips compresses on the dashboard's worker.
    pub fn clips_compressing(&self) -> bool {
        self.work.clips.jobs.running().is_some()
    }

    /// The last size search's outcome.
    pub fn fit_outcome(&self) -> Option<&FitOutcome> {
        self.work.clips.fit_outcome.as_ref()
    }

    /// Blocks until the running size search is in (tests).
    pub fn wait_for_fit(&mut self, timeout: Duration) -> bool {
        self.work.clips.wait_fit(timeout)
    }
}
