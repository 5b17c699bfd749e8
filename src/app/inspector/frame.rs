//! One frame of the window: input, panels around the viewport, dialogs, title.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use egui::{Key, Modifiers};

use super::super::actions::Action;
use super::super::panels;
use super::super::state::{Layout, Selection};
use super::{App, RECENT_KEY, VIEW_KEY};

impl App {
    fn keyboard(&mut self, ctx: &egui::Context) {
        let typing = ctx.egui_wants_keyboard_input();
        let mut out = Vec::new();
        let mut in_place = false;
        ctx.input_mut(|i| {
            let cmd = Modifiers::COMMAND;
            if i.consume_key(cmd, Key::O) {
                out.push(Action::OpenDialog);
            }
            if i.consume_key(cmd, Key::S) {
                out.push(Action::SaveSettings(None));
            }
            if i.consume_key(cmd, Key::Q) {
                out.push(Action::Quit);
            }
            if i.consume_key(cmd | Modifiers::SHIFT, Key::Z) || i.consume_key(cmd, Key::Y) {
                out.push(Action::Redo);
            }
            if i.consume_key(cmd, Key::Z) {
                out.push(Action::Undo);
            }
            if typing {
                return;
            }
            if i.consume_key(Modifiers::NONE, Key::Space) {
                out.push(Action::TogglePlay);
            }
            // Previous / next key of the selected joint.
            for (forward, keys) in [
                (
                    false,
                    [
                        (Modifiers::NONE, Key::Comma),
                        (Modifiers::ALT, Key::ArrowLeft),
                    ],
                ),
                (
                    true,
                    [
                        (Modifiers::NONE, Key::Period),
                        (Modifiers::ALT, Key::ArrowRight),
                    ],
                ),
            ] {
                if keys.iter().any(|&(m, k)| i.consume_key(m, k))
                    && let (Some(doc), Some(j)) = (&self.session.doc, self.view.selected)
                    && let Some(f) = panels::dope_sheet::adjacent_key(
                        &panels::dope_sheet::key_frames(doc, j),
                        self.view.playback.frame,
                        forward,
                    )
                {
                    out.push(Action::Seek(f as f32));
                }
            }
            if i.consume_key(Modifiers::NONE, Key::ArrowLeft) {
                out.push(Action::Step(-1));
            }
            if i.consume_key(Modifiers::NONE, Key::ArrowRight) {
                out.push(Action::Step(1));
            }
            if i.consume_key(Modifiers::NONE, Key::Home) {
                out.push(Action::Seek(0.0));
            }
            if i.consume_key(Modifiers::NONE, Key::End) {
                out.push(Action::Seek(f32::MAX));
            }
            if i.consume_key(Modifiers::NONE, Key::B) {
                out.push(Action::FlipAb);
            }
            if i.consume_key(Modifiers::NONE, Key::Escape) {
                out.push(Action::ExitAb);
            }
            if i.consume_key(Modifiers::NONE, Key::I) {
                in_place = true;
            }
            if i.consume_key(Modifiers::NONE, Key::C) {
                out.push(Action::ToggleDashboard);
            }
            if i.consume_key(Modifiers::NONE, Key::F) {
                out.push(Action::FrameCamera);
            }
            if i.consume_key(Modifiers::NONE, Key::O) {
                out.push(Action::SetLayout(match self.view.options.layout {
                    Layout::SideBySide => Layout::Overlay,
                    Layout::Overlay => Layout::SideBySide,
                }));
            }
        });
        self.pending.extend(out);
        if in_place {
            self.view.options.in_place = !self.view.options.in_place;
        }
    }

    fn update_title(&mut self, ctx: &egui::Context) {
        let t = match &self.session.doc {
            Some(d) => format!(
                "skelpack — {}{}{}",
                d.title(),
                if d.has_clip() {
                    format!(" [{}]", d.clip_name())
                } else {
                    String::new()
                },
                if d.is_dirty() { " •" } else { "" }
            ),
            None => "skelpack".into(),
        };
        if t != self.chrome.title {
            ctx.send_viewport_cmd(egui::ViewportCommand::Title(t.clone()));
            self.chrome.title = t;
        }
    }
}

impl eframe::App for App {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let ctx = ui.ctx().clone();
        let now = Instant::now();
        let dt = self
            .measure
            .last_frame
            .map_or(0.0, |t| now.duration_since(t).as_secs_f64());
        self.measure.last_frame = Some(now);
        self.measure.frame_ms = dt * 1e3;

        if ctx.input(|i| i.viewport().close_requested()) {
            self.close_requested(&ctx);
        }
        for r in self.work.jobs.poll() {
            self.accept(r);
        }
        self.poll_export();
        self.poll_live(&ctx);
        self.poll_dashboard(&ctx);
        if self.work.export_job.is_some() {
            ctx.request_repaint_after(Duration::from_millis(100));
        }
        self.ensure_job();
        if self.work.jobs.running().is_some() {
            // Progress 4 times a second; on a software renderer a frame costs a core.
            ctx.request_repaint_after(Duration::from_millis(250));
        }

        // Files dropped on the window.
        let dropped: Vec<PathBuf> = ctx.input(|i| {
            i.raw
                .dropped_files
                .iter()
                .map(|f| f.path().to_path_buf())
                .collect()
        });
        // While a dialog is open the keys are its own, and a drop is ignored.
        if !self.dialog_open() {
            if let Some(p) = dropped.into_iter().next() {
                self.pending.push(Action::Open(p));
            }
            self.keyboard(&ctx);
        }

        // Playback.
        if self.view.playback.playing {
            let (rate, n) = self
                .session
                .doc
                .as_ref()
                .map_or((30.0, 1), |d| (d.sample_rate(), d.frame_count()));
            self.view.playback.tick(now, rate, n);
            ctx.request_repaint();
        } else {
            self.view.playback.clock = None;
        }

        let mut out = std::mem::take(&mut self.pending);
        egui::Panel::top("menu").show(ui, |ui| {
            let ms = panels::menu::MenuState {
                recent: &self.session.recent,
                has_document: self.session.doc.is_some(),
                undo: self.session.history.undo_label(),
                redo: self.session.history.redo_label(),
            };
            let before = self.view.options.layout;
            panels::menu::show(ui, &ms, &mut self.view.options, &mut out);
            if self.view.options.layout != before {
                self.view.viewport.request_frame();
            }
        });
        if let Some(b) = &self.chrome.banner {
            egui::Panel::top("banner").show(ui, |ui| panels::banner::show_banner(ui, b, &mut out));
        }
        egui::Panel::bottom("status").show(ui, |ui| {
            let right = format!(
                "{} · MSAA {}× · frame {:.1} ms (scene {:.2} ms)",
                self.measure.adapter,
                self.view.viewport.samples,
                self.measure.frame_ms,
                self.view.viewport.last_build.as_secs_f64() * 1e3
            );
            panels::banner::show_status(ui, &self.chrome.status, &right);
        });
        if let Some(doc) = &self.session.doc {
            let attr = panels::attribution::shown(doc);
            let timeline = egui::Panel::bottom("timeline")
                .resizable(false)
                .show(ui, |ui| {
                    ui.add_space(4.0);
                    panels::timeline::show(
                        ui,
                        doc,
                        &mut self.view.playback,
                        self.view.selected,
                        &mut self.view.timeline_edit,
                        &mut self.view.options.in_place,
                        &mut out,
                    );
                    ui.add_space(2.0);
                })
                .response
                .rect;
            let frame = self.view.playback.frame;
            // Two fifths of the height the timeline leaves (at most 340 points): the joint
            // table and the viewport keep the larger part on a 720-point-high window.
            let left = timeline.top() - ctx.content_rect().top();
            let tuning_height = (left * 0.4).clamp(160.0, 340.0);
            let shown = egui::Panel::bottom(self.view.tuning_fit.id_salt())
                .resizable(true)
                .default_size(tuning_height)
                .min_size(160.0)
                .show(ui, |ui| {
                    (self.view.curve_geom, self.view.error_geoms) = panels::tuning::show(
                        ui,
                        doc,
                        attr.as_deref(),
                        self.view.selected,
                        frame,
                        &mut self.view.tuning,
                        &mut out,
                    );
                })
                .response
                .rect
                .height();
            self.view.tuning_fit.after(tuning_height, shown);
            // The joint table's columns need about 540 points; a small window gets a third.
            let joints_width = (ctx.content_rect().width() * 0.34).clamp(300.0, 540.0);
            egui::Panel::left("joints")
                .resizable(true)
                .default_size(joints_width)
                .show(ui, |ui| {
                    // The clip's morph-weight tracks, under the table (none: nothing).
                    let mut table_rect = ui.available_rect_before_wrap();
                    if !panels::scalar_curves::tracks(doc).is_empty() {
                        let curves = egui::Panel::bottom("scalar_curves").show(ui, |ui| {
                            panels::scalar_curves::list(
                                ui,
                                doc,
                                self.view.selected,
                                &mut self.view.tuning.scalar,
                            )
                        });
                        table_rect.max.y = table_rect.max.y.min(curves.response.rect.top());
                    }
                    let sel = Selection {
                        focus: self.view.selected,
                        set: &self.view.selection,
                    };
                    // The table stops at the curves: its scroll area would otherwise take
                    // its minimum height and draw rows under them.
                    ui.scope_builder(egui::UiBuilder::new().max_rect(table_rect), |ui| {
                        ui.shrink_clip_rect(table_rect);
                        panels::joints::show(
                            ui,
                            doc,
                            sel,
                            &mut self.view.joints_view,
                            attr.as_deref(),
                            &mut out,
                        );
                    });
                });
            let progress = self
                .work
                .jobs
                .running()
                .filter(|(k, _)| *k == doc.key())
                .map(|(_, p)| p);
            egui::Panel::right("stats")
                .resizable(true)
                .default_size(290.0)
                .show(ui, |ui| {
                    panels::stats::show(ui, doc, progress, self.view.selected, &mut out)
                });
        }
        egui::CentralPanel::default().show(ui, |ui| {
            // Wraps on a narrow window rather than pushing the viewport under the panels.
            ui.horizontal_wrapped(|ui| {
                let mut layout = self.view.options.layout;
                ui.selectable_value(&mut layout, Layout::SideBySide, "Side by side");
                ui.selectable_value(&mut layout, Layout::Overlay, "Overlay");
                if layout != self.view.options.layout {
                    out.push(Action::SetLayout(layout));
                }
                ui.separator();
                ui.checkbox(&mut self.view.options.markers, "Markers");
                ui.checkbox(&mut self.view.options.markers_selected_only, "on selection")
                    .on_hover_text("Markers and error vectors only on the selected joints");
                ui.checkbox(&mut self.view.options.error_vectors, "Error vectors");
                ui.add_enabled(
                    self.view.options.error_vectors,
                    egui::DragValue::new(&mut self.view.options.error_scale)
                        .range(1.0..=10000.0)
                        .prefix("×")
                        .speed(1.0),
                )
                .on_hover_text("Error vectors are drawn this many times longer");
                ui.checkbox(&mut self.view.options.mesh, "Mesh");
                ui.checkbox(&mut self.view.options.in_place, "In place")
                    .on_hover_text("Follow the root horizontally: a walk stays in view (I)");
                let ab = self.view.options.ab.is_some();
                if ui
                    .selectable_label(ab, "A/B")
                    .on_hover_text(
                        "One copy in one place; B flips original / compressed, Esc leaves",
                    )
                    .clicked()
                {
                    out.push(if ab { Action::ExitAb } else { Action::FlipAb });
                }
                ui.separator();
                if ui
                    .selectable_label(self.work.clips.open, "Clips")
                    .on_hover_text("Every clip of the file: size, error, pass / fail, budgets (C)")
                    .clicked()
                {
                    out.push(Action::ToggleDashboard);
                }
                if ui
                    .button("Frame")
                    .on_hover_text("Frame the character (F)")
                    .clicked()
                {
                    out.push(Action::FrameCamera);
                }
            });
            let rect = ui.available_rect_before_wrap();
            self.view.viewport_rect = Some(rect);
            let o = self.view.viewport.show(
                ui,
                rect,
                self.session.doc.as_ref(),
                self.view.playback.frame,
                &self.view.options,
                Selection {
                    focus: self.view.selected,
                    set: &self.view.selection,
                },
            );
            if let Some(j) = o.picked {
                out.push(Action::Select(Some(j)));
            }
        });
        panels::help::show(
            &ctx,
            &mut self.chrome.show_about,
            &mut self.chrome.show_shortcuts,
        );
        self.dialog(&ctx);
        self.dashboard_window(&ctx, &mut out);

        if ctx.input(|i| !i.raw.hovered_files.is_empty()) {
            let painter = ctx.layer_painter(egui::LayerId::new(
                egui::Order::Foreground,
                egui::Id::unique("drop"),
            ));
            let r = ctx.content_rect();
            painter.rect_filled(r, 0.0, egui::Color32::from_black_alpha(160));
            painter.text(
                r.center(),
                egui::Align2::CENTER_CENTER,
                "Drop to open",
                egui::FontId::proportional(28.0),
                egui::Color32::WHITE,
            );
        }

        if !out.is_empty() {
            // The next frame shows what the actions changed.
            ctx.request_repaint();
        }
        for a in out {
            self.apply(a, Some(&ctx));
        }
        if self.wait_for_edit_result() {
            // Lay the frame out again with the edit's result: this frame paints it, not
            // the result from before the edit (egui reruns the pass before painting).
            ctx.request_discard("the result of a settings edit landed");
        }
        self.update_title(&ctx);
        self.autopilot(&ctx);
    }

    fn clear_color(&self, visuals: &egui::Visuals) -> [f32; 4] {
        crate::app::backdrop::clear_color(visuals)
    }

    fn save(&mut self, storage: &mut dyn eframe::Storage) {
        eframe::set_value(storage, RECENT_KEY, &self.session.recent);
        eframe::set_value(storage, VIEW_KEY, &self.view.options);
    }
}
