//! Virtual markers (discs) and overlay lines: marker sticks, error vectors, the ghost
//! skeleton (`shaders/markers.wgsl`). Drawn last, on top of the solids.

use egui_wgpu::wgpu;

use super::grid::LINE_ATTRS;
use super::pipeline::{DynBuffer, PipelineSpec, Shared, scene_shader};
use super::scene::{LineVertex, Point, SceneFrame};

pub struct MarkersRenderer {
    points_pipeline: wgpu::RenderPipeline,
    lines_pipeline: wgpu::RenderPipeline,
    points: DynBuffer,
    point_count: u32,
    lines: DynBuffer,
    line_count: u32,
}

impl MarkersRenderer {
    pub fn new(device: &wgpu::Device, shared: &Shared) -> Self {
        let module = scene_shader(
            device,
            "markers",
            include_str!("../../../shaders/markers.wgsl"),
        );
        let layout = shared.layout(device, None);
        let point_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32, 2 => Float32x4];
        let make = |label, vs, fs, layout_v: wgpu::VertexBufferLayout<'_>, topology| {
            shared.pipeline(
                device,
                &PipelineSpec {
                    label,
                    module: &module,
                    layout: &layout,
                    vs,
                    fs,
                    buffers: &[Some(layout_v)],
                    topology,
                    depth: shared.depth(false, wgpu::CompareFunction::Always),
                },
            )
        };
        let points_pipeline = make(
            "marker points",
            "vs_point",
            "fs_point",
            wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<Point>() as u64,
                step_mode: wgpu::VertexStepMode::Instance,
                attributes: &point_attrs,
            },
            wgpu::PrimitiveTopology::TriangleList,
        );
        let lines_pipeline = make(
            "overlay lines",
            "vs_line",
            "fs_line",
            wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<LineVertex>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &LINE_ATTRS,
            },
            wgpu::PrimitiveTopology::LineList,
        );
        Self {
            points_pipeline,
            lines_pipeline,
            points: DynBuffer::new(device, "marker points", wgpu::BufferUsages::VERTEX),
            point_count: 0,
            lines: DynBuffer::new(device, "overlay lines", wgpu::BufferUsages::VERTEX),
            line_count: 0,
        }
    }

    pub fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, frame: &SceneFrame) {
        self.points
            .write(device, queue, bytemuck::cast_slice(&frame.points));
        self.point_count = frame.points.len() as u32;
        self.lines
            .write(device, queue, bytemuck::cast_slice(&frame.lines));
        self.line_count = frame.lines.len() as u32;
    }

    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        if self.line_count > 0 {
            pass.set_pipeline(&self.lines_pipeline);
            pass.set_vertex_buffer(0, self.lines.buffer.slice(..));
            pass.draw(0..self.line_count, 0..1);
        }
        if self.point_count > 0 {
            pass.set_pipeline(&self.points_pipeline);
            pass.set_vertex_buffer(0, self.points.buffer.slice(..));
            pass.draw(0..6, 0..self.point_count);
        }
    }
}
