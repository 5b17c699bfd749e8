//! egui's fragment shader, as patched in `vendor/egui-wgpu` (its PATCH.md): the window draws
//! with the hardware-sampling entry point, the test harness with the "predictable" one (the
//! filtering done in the shader). Both must draw the same text on the software adapter; the
//! patch only moved the choice between them from a uniform branch to pipeline creation.

mod app_harness;

use egui_kittest::Harness;
use egui_wgpu::RendererOptions;

/// Text on the panel background, rendered with `options`: (width, RGBA bytes).
fn render(options: RendererOptions) -> (u32, Vec<u8>) {
    app_harness::pin_backend();
    let mut h = Harness::builder()
        .with_size([420.0, 90.0])
        .with_render_options(options)
        .wgpu()
        .build_ui(|ui| {
            ui.heading("skelpack LeftHandIndex2");
            ui.label("0.100 mm  3.00 cm  31 keys  74 B  27.34 : 1");
        });
    let image = h.render().expect("render");
    (image.width(), image.into_raw())
}

/// Pixels (of `rgba`) that differ from the first one, the background.
fn ink(rgba: &[u8]) -> usize {
    let bg = &rgba[..4];
    rgba.chunks_exact(4).filter(|p| p != &bg).count()
}

#[test]
fn hardware_and_predictable_filtering_draw_the_same_text() {
    let hardware = RendererOptions {
        predictable_texture_filtering: false,
        ..RendererOptions::PREDICTABLE
    };
    let (w_hw, hw) = render(hardware);
    let (w_pr, pr) = render(RendererOptions::PREDICTABLE);
    assert_eq!((w_hw, hw.len()), (w_pr, pr.len()));

    // Both drew the text (a blank or solid image would have no ink or all of it).
    let pixels = hw.len() / 4;
    for (name, image) in [("hardware", &hw), ("predictable", &pr)] {
        let n = ink(image);
        assert!(
            n > 500 && n < pixels / 2,
            "{name}: {n} of {pixels} pixels inked"
        );
    }

    // The same image up to the rounding of the filter weights.
    let worst = hw.iter().zip(&pr).map(|(a, b)| a.abs_diff(*b)).max();
    let differing = hw
        .chunks_exact(4)
        .zip(pr.chunks_exact(4))
        .filter(|(a, b)| a != b)
        .count();
    assert!(
        worst <= Some(MAX_CHANNEL_DIFF),
        "largest channel difference {worst:?}"
    );
    assert!(
        differing <= pixels / 100,
        "{differing} of {pixels} pixels differ"
    );
}

/// Largest difference of one 8-bit channel allowed between the two ways of filtering.
const MAX_CHANNEL_DIFF: u8 = 8;
