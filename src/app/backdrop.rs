//! The window's background, painted once by the frame's clear instead of by every panel.
//!
//! egui fills each panel's rectangle with `Visuals::panel_fill`, so together the panels cover
//! the whole window with one more layer of fragments on top of the clear. On a software
//! renderer (llvmpipe) egui's fragment shader costs far more per pixel than the clear: one
//! full-window layer of it is about 100 ms of CPU at 1600 x 1000 (docs/APP.md, "CPU per
//! frame"). The panels are made transparent and the clear paints their colour instead.

/// The colour the panels would have been filled with under `visuals`' theme.
pub fn panel_colour(visuals: &egui::Visuals) -> egui::Color32 {
    if visuals.dark_mode {
        egui::Visuals::dark().panel_fill
    } else {
        egui::Visuals::light().panel_fill
    }
}

/// The clear colour for a frame drawn under `visuals` (eframe's `App::clear_color`).
pub fn clear_color(visuals: &egui::Visuals) -> [f32; 4] {
    panel_colour(visuals).to_normalized_gamma_f32()
}

/// Makes the panels transparent in both themes: nothing else in egui uses `panel_fill`.
pub fn install(ctx: &egui::Context) {
    ctx.all_styles_mut(|style| style.visuals.panel_fill = egui::Color32::TRANSPARENT);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn panels_are_transparent_and_the_clear_has_their_colour() {
        let ctx = egui::Context::default();
        install(&ctx);
        for theme in [egui::Theme::Dark, egui::Theme::Light] {
            ctx.set_theme(theme);
            let visuals = ctx.global_style().visuals.clone();
            assert_eq!(visuals.panel_fill, egui::Color32::TRANSPARENT);
            let want = theme.default_visuals().panel_fill;
            assert_eq!(clear_color(&visuals), want.to_normalized_gamma_f32());
        }
    }

    #[test]
    fn a_transparent_panel_paints_no_triangles() {
        let ctx = egui::Context::default();
        let count = |ctx: &egui::Context| {
            let out = ctx.run_ui(egui::RawInput::default(), |ui| {
                egui::CentralPanel::default().show(ui, |_| {});
            });
            ctx.tessellate(out.shapes, out.pixels_per_point)
                .iter()
                .map(|p| match &p.primitive {
                    egui::epaint::Primitive::Mesh(m) => m.indices.len(),
                    egui::epaint::Primitive::Callback(_) => 0,
                })
                .sum::<usize>()
        };
        assert!(count(&ctx) > 0, "an opaque panel fills its rectangle");
        install(&ctx);
        assert_eq!(count(&ctx), 0);
    }
}
