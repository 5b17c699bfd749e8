//! Cheaper drawing on software adapters (llvmpipe / lavapipe, WARP, SwiftShader).
//!
//! egui anti-aliases every shape by "feathering": a one-pixel ring of extra triangles that
//! fade to transparent around each line, curve and rounded rectangle. A GPU does not notice
//! them; a software rasterizer pays for each thin triangle's setup and for the partly covered
//! pixel blocks they touch, about 15% of a frame's CPU time with the curves plot showing
//! (docs/APP.md, "CPU per frame"). On a software adapter feathering is off, as multisampling
//! already is in the viewport (`viewport::gpu`); text keeps its anti-aliasing (it comes from
//! the font atlas). `SKELPACK_FEATHERING=1` turns it back on, `=0` off on any adapter.

use egui_wgpu::wgpu;

/// Whether an adapter of this type is a software (CPU) rasterizer.
pub fn is_software(device_type: wgpu::DeviceType) -> bool {
    device_type == wgpu::DeviceType::Cpu
}

/// Whether shapes are feathered: on hardware, off on software, `SKELPACK_FEATHERING` (0 / 1)
/// when set.
pub fn feathering(software: bool, env: Option<&str>) -> bool {
    match env.map(str::trim) {
        Some("0") => false,
        Some("1") => true,
        _ => !software,
    }
}

/// Applies the drawing options for an adapter (`software`: [`is_software`]) to `ctx`.
pub fn configure(ctx: &egui::Context, software: bool) {
    let env = std::env::var("SKELPACK_FEATHERING").ok();
    let on = feathering(software, env.as_deref());
    ctx.tessellation_options_mut(|o| o.feathering = on);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feathering_is_off_on_software_adapters_unless_asked_for() {
        assert!(feathering(false, None));
        assert!(!feathering(true, None));
        assert!(feathering(true, Some("1")));
        assert!(!feathering(false, Some("0")));
        assert!(!feathering(true, Some("yes")));
    }

    #[test]
    fn software_adapters_are_told_apart_by_device_type() {
        assert!(is_software(wgpu::DeviceType::Cpu));
        for t in [
            wgpu::DeviceType::DiscreteGpu,
            wgpu::DeviceType::IntegratedGpu,
            wgpu::DeviceType::VirtualGpu,
            wgpu::DeviceType::Other,
        ] {
            assert!(!is_software(t));
        }
    }

    #[test]
    fn configure_sets_the_context_feathering() {
        // Whatever the environment says, the context ends up with what `feathering` decides.
        let ctx = egui::Context::default();
        let env = std::env::var("SKELPACK_FEATHERING").ok();
        for software in [true, false] {
            configure(&ctx, software);
            let want = feathering(software, env.as_deref());
            assert_eq!(ctx.tessellation_options(|o| o.feathering), want);
        }
    }
}
