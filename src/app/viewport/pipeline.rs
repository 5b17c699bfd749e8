//! What every scene renderer builds its pipelines from, below both the renderers and
//! [`super::gpu`] which owns them: the depth format, growable buffers, the shared globals and
//! pipeline settings ([`Shared`], [`PipelineSpec`]) and the WGSL shader loaders.

use egui_wgpu::wgpu;

/// The depth target's format, shared by every scene pipeline.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;

/// A vertex / storage buffer that grows to fit what is written into it.
pub struct DynBuffer {
    pub buffer: wgpu::Buffer,
    capacity: u64,
    usage: wgpu::BufferUsages,
    label: &'static str,
    /// Bumped when the buffer is recreated (bind groups referring to it must be rebuilt).
    pub version: u64,
}

impl DynBuffer {
    pub fn new(device: &wgpu::Device, label: &'static str, usage: wgpu::BufferUsages) -> Self {
        let usage = usage | wgpu::BufferUsages::COPY_DST;
        let capacity = 1024;
        Self {
            buffer: device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: capacity,
                usage,
                mapped_at_creation: false,
            }),
            capacity,
            usage,
            label,
            version: 0,
        }
    }

    /// Writes `bytes` at offset 0, growing the buffer if needed.
    pub fn write(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, bytes: &[u8]) {
        let need = (bytes.len() as u64).max(4).next_multiple_of(4);
        if need > self.capacity {
            self.capacity = need.next_power_of_two();
            self.buffer = device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(self.label),
                size: self.capacity,
                usage: self.usage,
                mapped_at_creation: false,
            });
            self.version += 1;
        }
        if !bytes.is_empty() {
            queue.write_buffer(&self.buffer, 0, bytes);
        }
    }
}

/// The things every scene pipeline shares.
pub struct Shared {
    pub globals: wgpu::Buffer,
    pub globals_layout: wgpu::BindGroupLayout,
    pub globals_group: wgpu::BindGroup,
    pub color_format: wgpu::TextureFormat,
    pub samples: u32,
}

/// What differs between the scene renderers' pipelines; everything else (alpha blending
/// into the offscreen target, multisampling, no culling) is shared.
pub struct PipelineSpec<'a> {
    pub label: &'a str,
    pub module: &'a wgpu::ShaderModule,
    pub layout: &'a wgpu::PipelineLayout,
    pub vs: &'a str,
    pub fs: &'a str,
    pub buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    pub topology: wgpu::PrimitiveTopology,
    pub depth: wgpu::DepthStencilState,
}

impl Shared {
    /// A render pipeline drawing into the offscreen scene target.
    pub fn pipeline(&self, device: &wgpu::Device, spec: &PipelineSpec<'_>) -> wgpu::RenderPipeline {
        device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
            label: Some(spec.label),
            layout: Some(spec.layout),
            vertex: wgpu::VertexState {
                module: spec.module,
                entry_point: Some(spec.vs),
                compilation_options: Default::default(),
                buffers: spec.buffers,
            },
            primitive: wgpu::PrimitiveState {
                topology: spec.topology,
                ..Default::default()
            },
            depth_stencil: Some(spec.depth.clone()),
            multisample: self.multisample(),
            fragment: Some(wgpu::FragmentState {
                module: spec.module,
                entry_point: Some(spec.fs),
                compilation_options: Default::default(),
                targets: &self.color_target(),
            }),
            multiview_mask: None,
            cache: None,
        })
    }

    /// Standard alpha blending into the offscreen colour target.
    pub fn color_target(&self) -> [Option<wgpu::ColorTargetState>; 1] {
        [Some(wgpu::ColorTargetState {
            format: self.color_format,
            blend: Some(wgpu::BlendState::ALPHA_BLENDING),
            write_mask: wgpu::ColorWrites::ALL,
        })]
    }

    pub fn depth(&self, write: bool, compare: wgpu::CompareFunction) -> wgpu::DepthStencilState {
        wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(write),
            depth_compare: Some(compare),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        }
    }

    pub fn multisample(&self) -> wgpu::MultisampleState {
        wgpu::MultisampleState {
            count: self.samples,
            mask: !0,
            alpha_to_coverage_enabled: false,
        }
    }

    pub fn layout(
        &self,
        device: &wgpu::Device,
        extra: Option<&wgpu::BindGroupLayout>,
    ) -> wgpu::PipelineLayout {
        let mut groups = vec![Some(&self.globals_layout)];
        if let Some(e) = extra {
            groups.push(Some(e));
        }
        device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("viewport layout"),
            bind_group_layouts: &groups,
            immediate_size: 0,
        })
    }
}

/// A scene shader: `shaders/globals.wgsl` (the camera uniforms) followed by `source`.
pub fn scene_shader(
    device: &wgpu::Device,
    label: &str,
    source: &'static str,
) -> wgpu::ShaderModule {
    let full = format!(
        "{}\n{source}",
        include_str!("../../../shaders/globals.wgsl")
    );
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(full.into()),
    })
}

/// A shader module from WGSL source alone (no scene globals).
pub fn shader(device: &wgpu::Device, label: &str, source: &'static str) -> wgpu::ShaderModule {
    device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    })
}
