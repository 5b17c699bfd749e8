//! The ground grid renderer (`shaders/grid.wgsl`).

use egui_wgpu::wgpu;

use super::pipeline::{DynBuffer, PipelineSpec, Shared, scene_shader};
use super::scene::{LineVertex, SceneFrame};

pub struct GridRenderer {
    pipeline: wgpu::RenderPipeline,
    vertices: DynBuffer,
    count: u32,
}

pub const LINE_ATTRS: [wgpu::VertexAttribute; 2] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x4];

impl GridRenderer {
    pub fn new(device: &wgpu::Device, shared: &Shared) -> Self {
        let module = scene_shader(device, "grid", include_str!("../../../shaders/grid.wgsl"));
        let layout = shared.layout(device, None);
        let pipeline = shared.pipeline(
            device,
            &PipelineSpec {
                label: "grid",
                module: &module,
                layout: &layout,
                vs: "vs_main",
                fs: "fs_main",
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<LineVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &LINE_ATTRS,
                })],
                topology: wgpu::PrimitiveTopology::LineList,
                depth: shared.depth(false, wgpu::CompareFunction::LessEqual),
            },
        );
        Self {
            pipeline,
            vertices: DynBuffer::new(device, "grid vertices", wgpu::BufferUsages::VERTEX),
            count: 0,
        }
    }

    pub fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, frame: &SceneFrame) {
        self.vertices
            .write(device, queue, bytemuck::cast_slice(&frame.grid));
        self.count = frame.grid.len() as u32;
    }

    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.count == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_vertex_buffer(0, self.vertices.buffer.slice(..));
        pass.draw(0..self.count, 0..1);
    }
}
