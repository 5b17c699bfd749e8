//! The autopilot of `skelpack view`: once the result is shown, it measures frame times
//! and / or edit latencies, saves a screenshot, and closes the window.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::super::cpu_time::process_cpu;

use super::super::actions::Action;
use super::super::panels;
use super::App;

/// What an automated run (`skelpack view`) reports when it ends.
#[derive(Clone, Debug, Default)]
pub struct AutoOutcome {
    pub error: Option<String>,
    pub screenshot: Option<PathBuf>,
    pub frame_times_ms: Vec<f64>,
    /// Per measured frame: the process's CPU time (all threads) since the previous frame.
    pub frame_cpu_ms: Vec<f64>,
    /// `--measure-idle`: frames painted and CPU used while nothing changed.
    pub idle: Option<IdleFigures>,
    pub build_times_ms: Vec<f64>,
    /// Per measured edit: from the edit to its first result shown (a first pass, or the
    /// final result when none came first), to its final result shown, and the compression
    /// alone (to the final result, measured on the worker).
    pub edit_latency_ms: Vec<f64>,
    pub edit_final_ms: Vec<f64>,
    pub edit_compress_ms: Vec<f64>,
    /// Per measured undo: from the undo to its (kept) result shown.
    pub undo_latency_ms: Vec<f64>,
    /// From the file being read to its first result shown, and to its final result.
    pub open_first_ms: Option<f64>,
    pub open_final_ms: Option<f64>,
}

/// What an idle window cost.
#[derive(Clone, Debug, Default)]
pub struct IdleFigures {
    pub seconds: f64,
    pub frames: usize,
    pub cpu_ms: f64,
}

pub(super) struct Autopilot {
    pub(super) screenshot: Option<PathBuf>,
    pub(super) measure: usize,
    pub(super) ready_frames: usize,
    pub(super) requested: bool,
    pub(super) measured: Vec<f64>,
    pub(super) builds: Vec<f64>,
    /// Edits still to make, and the settings revision of the one in flight.
    pub(super) edits: usize,
    pub(super) edit_in_flight: Option<u64>,
    /// Whether the action in flight is an undo.
    pub(super) undo_in_flight: bool,
    pub(super) outcome: Arc<Mutex<AutoOutcome>>,
    pub(super) done: Arc<Mutex<bool>>,
    /// CPU time at the previous measured frame, and per-frame CPU so far.
    pub(super) last_cpu: Option<Duration>,
    pub(super) cpu: Vec<f64>,
    /// `--measure-idle`: how long to sit idle, and when / at what CPU the idle time began
    /// and how many frames were painted since.
    pub(super) idle: Duration,
    pub(super) idle_start: Option<(Instant, Duration)>,
    pub(super) idle_frames: usize,
}

impl App {
    pub(super) fn autopilot(&mut self, ctx: &egui::Context) {
        let ready = self.session.doc.as_ref().is_some_and(|d| {
            d.result.as_ref().is_some_and(|r| !r.refining)
                    || d.failure.is_some()
                    // a file with no clip (an FBX bind pose) has nothing to wait for
                    || d.asset.clips.is_empty()
        }) || self.session.doc.is_none();
        // With the dashboard open, every clip's row is in first.
        let ready = ready
            && (!self.work.clips.open || {
                let rows = self.dashboard_rows();
                rows.iter()
                    .all(|r| r.result.is_some() || r.failure.is_some())
            });
        let frame_ms = self.measure.frame_ms;
        let build = self.view.viewport.last_build.as_secs_f64() * 1e3;
        let Some(ap) = &mut self.measure.autopilot else {
            return;
        };
        if *ap.done.lock().expect("autopilot lock") {
            ctx.send_viewport_cmd(egui::ViewportCommand::Close);
            return;
        }
        if !ready {
            // Waiting for a result: the worker's waker repaints when it lands; meanwhile
            // the window redraws only as a user's would (progress), leaving the CPU to the
            // compressor.
            ctx.request_repaint_after(Duration::from_millis(250));
            return;
        }
        if ap.idle_start.is_some() {
            ap.idle_frames += 1;
            let (t0, c0) = ap.idle_start.expect("checked");
            let left = ap.idle.saturating_sub(t0.elapsed());
            if !left.is_zero() {
                // Wakes once at the end; any other frame is the app's own doing.
                ctx.request_repaint_after(left);
                return;
            }
            let cpu = process_cpu().unwrap_or_default().saturating_sub(c0);
            ap.outcome.lock().expect("autopilot lock").idle = Some(IdleFigures {
                seconds: t0.elapsed().as_secs_f64(),
                frames: ap.idle_frames - 1,
                cpu_ms: cpu.as_secs_f64() * 1e3,
            });
            ap.idle = Duration::ZERO;
            ap.idle_start = None;
        }
        ctx.request_repaint();
        ap.ready_frames += 1;
        if ap.ready_frames == 1 {
            {
                let mut o = ap.outcome.lock().expect("autopilot lock");
                let ms = |d: Option<Duration>| d.map(|d| d.as_secs_f64() * 1e3);
                o.open_first_ms = ms(self.measure.open_first);
                o.open_final_ms = ms(self.measure.open_final);
            }
            if let Some(doc) = &self.session.doc
                && let Some(f) = &doc.failure
            {
                ap.outcome.lock().expect("autopilot lock").error = Some(f.clone());
            }
            if let Some(b) = &self.chrome.banner {
                ap.outcome.lock().expect("autopilot lock").error =
                    Some(format!("{}: {}", b.title, b.message));
            }
            if ap.measure > 0 {
                self.view.playback.playing = true;
                self.view.playback.looping = true;
            }
        }
        // Skip the first frames after the result lands (layout settles, pipelines warm up).
        let warm = 5;
        if ap.ready_frames > warm && (ap.edits > 0 || ap.edit_in_flight.is_some()) {
            self.autopilot_edit();
            return;
        }
        if ap.ready_frames > warm && ap.measured.len() < ap.measure {
            let cpu = process_cpu();
            if let (Some(now), Some(before)) = (cpu, ap.last_cpu) {
                ap.measured.push(frame_ms);
                ap.builds.push(build);
                ap.cpu.push(now.saturating_sub(before).as_secs_f64() * 1e3);
            }
            ap.last_cpu = cpu;
            return;
        }
        if ap.ready_frames > warm && !ap.idle.is_zero() {
            self.view.playback.playing = false;
            ap.idle_start = Some((Instant::now(), process_cpu().unwrap_or_default()));
            ap.idle_frames = 0;
            ctx.request_repaint_after(ap.idle);
            return;
        }
        if ap.ready_frames <= warm || ap.requested {
            return;
        }
        ap.requested = true;
        self.view.playback.playing = false;
        {
            let mut o = ap.outcome.lock().expect("autopilot lock");
            o.frame_times_ms = std::mem::take(&mut ap.measured);
            o.build_times_ms = std::mem::take(&mut ap.builds);
            o.frame_cpu_ms = std::mem::take(&mut ap.cpu);
        }
        let done = ap.done.clone();
        let outcome = ap.outcome.clone();
        match ap.screenshot.clone() {
            Some(path) => {
                let ctx2 = ctx.clone();
                ctx.request_screenshot(move |image| {
                    let mut o = outcome.lock().expect("autopilot lock");
                    match super::super::png::save(&image, &path) {
                        Ok(()) => o.screenshot = Some(path),
                        Err(e) => o.error = Some(format!("{}: {e}", path.display())),
                    }
                    *done.lock().expect("autopilot lock") = true;
                    ctx2.request_repaint();
                });
            }
            None => *done.lock().expect("autopilot lock") = true,
        }
    }

    /// The `--measure-edits` step: records the edit in flight once its result is shown,
    /// then makes the next one (halving the focused joint's tolerance, or undoing that).
    fn autopilot_edit(&mut self) {
        let (Some(ap), Some(doc)) = (&mut self.measure.autopilot, &self.session.doc) else {
            return;
        };
        if let Some(rev) = ap.edit_in_flight {
            // Shown at the first pass (the latency), done at the refined result.
            let done = |r: &&std::sync::Arc<crate::app::compressor::Compressed>| {
                doc.settings_rev > rev && !r.refining
            };
            let Some(r) = doc.result.as_ref().filter(done) else {
                return;
            };
            let mut o = ap.outcome.lock().expect("autopilot lock");
            let ms = |l: Option<std::time::Duration>| l.map(|l| l.as_secs_f64() * 1e3);
            if let (Some(first), Some(last)) = (
                ms(self.measure.last_latency),
                ms(self.measure.last_final_latency),
            ) {
                if ap.undo_in_flight {
                    o.undo_latency_ms.push(last);
                } else {
                    o.edit_latency_ms.push(first);
                    o.edit_final_ms.push(last);
                    o.edit_compress_ms.push(r.elapsed.as_secs_f64() * 1e3);
                }
            }
            ap.edit_in_flight = None;
            return;
        }
        let Some(j) = self.view.selected else {
            ap.edits = 0;
            return;
        };
        ap.edit_in_flight = Some(doc.settings_rev);
        let undo = ap.edits % 2 == 1;
        ap.undo_in_flight = undo;
        ap.edits -= 1;
        // A slightly different tolerance each round, so no edit finds a kept result.
        let factor = 0.5 * (1.0 - 0.01 * (ap.edits / 2) as f32);
        if undo {
            self.pending.push(Action::Undo);
        } else {
            let tol_mm =
                doc.resolved.limits.tolerance[j] / (doc.resolved.unit.per_metre() / 1000.0);
            let (label, s) = panels::joints::edited(
                doc,
                crate::settings::EditScope::File,
                &[j],
                crate::settings::JointEdit::ToleranceMm(tol_mm * factor),
                "tolerance",
            );
            self.pending.push(Action::EditSettings(label, s));
        }
    }
}
