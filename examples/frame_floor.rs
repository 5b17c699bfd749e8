//! The floor of the window's CPU per frame: a bare eframe window with skelpack's own window
//! options (`skelpack::app::native_options`), repainting continuously, that prints the
//! process CPU time per frame (`getrusage`, every thread) after a warm-up.
//!
//!     XDG_RUNTIME_DIR=$(mktemp -d) xvfb-run -a -s "-screen 0 1600x1000x24" \
//!       ./target/release/examples/frame_floor 1600x1000 [empty|text|rects]
//!
//! `empty` paints nothing but the panel background; `text` fills the window with labels;
//! `rects` fills it with small filled rectangles (a heatmap drawn one rectangle per cell).

use std::time::Duration;

use skelpack::app::cpu_time::process_cpu;

const WARMUP: usize = 10;
const FRAMES: usize = 60;

struct Floor {
    content: String,
    frame: usize,
    start_cpu: Option<Duration>,
    per_frame: Vec<Duration>,
    last_cpu: Option<Duration>,
}

impl eframe::App for Floor {
    fn ui(&mut self, ui: &mut egui::Ui, _frame: &mut eframe::Frame) {
        let mut panel = egui::CentralPanel::default();
        if self.content == "none" {
            panel = panel.frame(egui::Frame::NONE);
        }
        panel.show(ui, |ui| match self.content.as_str() {
            "text" => {
                for row in 0..60 {
                    ui.label(format!(
                        "row {row} {}",
                        "LeftHandIndex2 0.100 3.00 31 74 B ".repeat(6)
                    ));
                }
            }
            "rects" => {
                let r = ui.max_rect();
                let (cols, rows) = (200, 80);
                let (w, h) = (r.width() / cols as f32, r.height() / rows as f32);
                let p = ui.painter();
                for y in 0..rows {
                    for x in 0..cols {
                        let c = egui::Color32::from_rgb((x * 7 % 255) as u8, (y * 3) as u8, 80);
                        let min = r.min + egui::vec2(x as f32 * w, y as f32 * h);
                        p.rect_filled(egui::Rect::from_min_size(min, egui::vec2(w, h)), 0.0, c);
                    }
                }
            }
            _ => {}
        });
        let now = process_cpu();
        self.frame += 1;
        if self.frame == WARMUP {
            self.start_cpu = now;
        }
        if self.frame > WARMUP
            && let (Some(a), Some(b)) = (self.last_cpu, now)
        {
            self.per_frame.push(b.saturating_sub(a));
        }
        self.last_cpu = now;
        if self.per_frame.len() == FRAMES {
            let mut v = self.per_frame.clone();
            v.sort();
            let total: Duration = v.iter().sum();
            println!(
                "floor '{}': CPU per frame median {:.1} ms, mean {:.1} ms over {FRAMES} frames",
                self.content,
                v[FRAMES / 2].as_secs_f64() * 1e3,
                total.as_secs_f64() * 1e3 / FRAMES as f64
            );
            ui.ctx().send_viewport_cmd(egui::ViewportCommand::Close);
        }
        ui.ctx().request_repaint();
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let size = args.get(1).map(String::as_str).unwrap_or("1600x1000");
    let (w, h) = size.split_once('x').expect("WxH");
    let size = [w.parse::<f32>().expect("W"), h.parse::<f32>().expect("H")];
    let content = args.get(2).cloned().unwrap_or_else(|| "empty".into());
    let mut native = skelpack::app::native_options(false, false);
    native.viewport = native.viewport.with_inner_size(size);
    if std::env::var("FLOOR_DITHER").as_deref() == Ok("0") {
        native.dithering = false;
    }
    eframe::run_native(
        "frame_floor",
        native,
        Box::new(move |_cc| {
            Ok(Box::new(Floor {
                content,
                frame: 0,
                start_cpu: None,
                per_frame: Vec::new(),
                last_cpu: None,
            }))
        }),
    )
    .expect("window");
}
