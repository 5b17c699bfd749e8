//! The viewport's GPU state: the renderers, the offscreen colour (multisampled) and depth
//! targets, and the `egui_wgpu` paint callback that renders the scene in `prepare` and
//! composites it into egui's pass in `paint`. What the renderers share to build their
//! pipelines lives below them in [`super::pipeline`].

use std::sync::Arc;

use egui_wgpu::wgpu;
use wgpu::util::DeviceExt as _;

use super::bones::BonesRenderer;
use super::composite::CompositeRenderer;
use super::grid::GridRenderer;
use super::markers::MarkersRenderer;
use super::mesh::MeshRenderer;
use super::pipeline::{DEPTH_FORMAT, Shared};
use super::scene::{Globals, SceneFrame};

/// Offscreen targets at the viewport's pixel size.
struct Targets {
    size: [u32; 2],
    msaa: Option<wgpu::TextureView>,
    resolved: wgpu::TextureView,
    depth: wgpu::TextureView,
}

/// All viewport GPU state, stored in egui-wgpu's callback resources.
pub struct ViewportGpu {
    shared: Shared,
    targets: Option<Targets>,
    grid: GridRenderer,
    bones: BonesRenderer,
    markers: MarkersRenderer,
    mesh: MeshRenderer,
    composite: CompositeRenderer,
}

impl ViewportGpu {
    /// Creates the pipelines; `target_format` is egui's framebuffer format.
    pub fn new(
        device: &wgpu::Device,
        adapter: &wgpu::Adapter,
        target_format: wgpu::TextureFormat,
    ) -> Self {
        let color_format = target_format;
        let flags = adapter.get_texture_format_features(color_format).flags;
        let depth_flags = adapter.get_texture_format_features(DEPTH_FORMAT).flags;
        // Multisampling costs most on software renderers: off there unless SKELPACK_MSAA=4
        // asks for it (SKELPACK_MSAA=1 turns it off anywhere).
        let software = adapter.get_info().device_type == wgpu::DeviceType::Cpu;
        let wanted: u32 = std::env::var("SKELPACK_MSAA")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(if software { 1 } else { 4 });
        let samples = if wanted >= 4
            && flags.sample_count_supported(4)
            && depth_flags.sample_count_supported(4)
        {
            4
        } else {
            1
        };
        let globals = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("viewport globals"),
            contents: bytemuck::bytes_of(&Globals::default()),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        let globals_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("viewport globals"),
            entries: &[wgpu::BindGroupLayoutEntry {
                binding: 0,
                visibility: wgpu::ShaderStages::VERTEX_FRAGMENT,
                ty: wgpu::BindingType::Buffer {
                    ty: wgpu::BufferBindingType::Uniform,
                    has_dynamic_offset: false,
                    min_binding_size: None,
                },
                count: None,
            }],
        });
        let globals_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("viewport globals"),
            layout: &globals_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: globals.as_entire_binding(),
            }],
        });
        let shared = Shared {
            globals,
            globals_layout,
            globals_group,
            color_format,
            samples,
        };
        Self {
            grid: GridRenderer::new(device, &shared),
            bones: BonesRenderer::new(device, &shared),
            markers: MarkersRenderer::new(device, &shared),
            mesh: MeshRenderer::new(device, &shared),
            composite: CompositeRenderer::new(device, target_format),
            shared,
            targets: None,
        }
    }

    pub fn samples(&self) -> u32 {
        self.shared.samples
    }

    fn ensure_targets(&mut self, device: &wgpu::Device, size: [u32; 2]) {
        if self.targets.as_ref().is_some_and(|t| t.size == size) {
            return;
        }
        let extent = wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        };
        let make = |label, format, samples, usage| {
            device
                .create_texture(&wgpu::TextureDescriptor {
                    label: Some(label),
                    size: extent,
                    mip_level_count: 1,
                    sample_count: samples,
                    dimension: wgpu::TextureDimension::D2,
                    format,
                    usage,
                    view_formats: &[],
                })
                .create_view(&wgpu::TextureViewDescriptor::default())
        };
        let samples = self.shared.samples;
        let color = self.shared.color_format;
        let resolved = make(
            "viewport colour",
            color,
            1,
            wgpu::TextureUsages::RENDER_ATTACHMENT | wgpu::TextureUsages::TEXTURE_BINDING,
        );
        let msaa = (samples > 1).then(|| {
            make(
                "viewport colour msaa",
                color,
                samples,
                wgpu::TextureUsages::RENDER_ATTACHMENT,
            )
        });
        let depth = make(
            "viewport depth",
            DEPTH_FORMAT,
            samples,
            wgpu::TextureUsages::RENDER_ATTACHMENT,
        );
        self.composite.bind(device, &resolved);
        self.targets = Some(Targets {
            size,
            msaa,
            resolved,
            depth,
        });
    }

    /// Uploads the frame and renders it offscreen.
    pub fn render(
        &mut self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        frame: &SceneFrame,
    ) {
        let size = [frame.size_px[0].max(1), frame.size_px[1].max(1)];
        self.ensure_targets(device, size);
        queue.write_buffer(&self.shared.globals, 0, bytemuck::bytes_of(&frame.globals));
        self.grid.upload(device, queue, frame);
        self.bones.upload(device, queue, frame);
        self.markers.upload(device, queue, frame);
        self.mesh.upload(device, queue, frame);
        let Some(t) = &self.targets else { return };
        let [r, g, b, a] = frame.clear.map(f64::from);
        let (view, resolve) = match &t.msaa {
            Some(m) => (m, Some(&t.resolved)),
            None => (&t.resolved, None),
        };
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("viewport scene"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view,
                depth_slice: None,
                resolve_target: resolve,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Clear(wgpu::Color { r, g, b, a }),
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                view: &t.depth,
                depth_ops: Some(wgpu::Operations {
                    load: wgpu::LoadOp::Clear(1.0),
                    store: wgpu::StoreOp::Discard,
                }),
                stencil_ops: None,
            }),
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_bind_group(0, &self.shared.globals_group, &[]);
        self.grid.draw(&mut pass);
        self.bones.draw(&mut pass);
        self.mesh.draw(&mut pass, &self.shared);
        self.markers.draw(&mut pass);
    }

    /// Draws the rendered image into egui's pass (viewport already set to the rect).
    pub fn paint(&self, pass: &mut wgpu::RenderPass<'static>) {
        if self.targets.is_some() {
            self.composite.draw(pass);
        }
    }
}

/// The paint callback: one frame's data.
pub struct ViewportCallback {
    pub frame: Arc<SceneFrame>,
}

impl egui_wgpu::CallbackTrait for ViewportCallback {
    fn prepare(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        _screen: &egui_wgpu::ScreenDescriptor,
        encoder: &mut wgpu::CommandEncoder,
        resources: &mut egui_wgpu::CallbackResources,
    ) -> Vec<wgpu::CommandBuffer> {
        if let Some(gpu) = resources.get_mut::<ViewportGpu>() {
            gpu.render(device, queue, encoder, &self.frame);
        }
        Vec::new()
    }

    fn paint(
        &self,
        _info: egui::PaintCallbackInfo,
        pass: &mut wgpu::RenderPass<'static>,
        resources: &egui_wgpu::CallbackResources,
    ) {
        if let Some(gpu) = resources.get::<ViewportGpu>() {
            gpu.paint(pass);
        }
    }
}
