//! The skinned mesh (`shaders/mesh.wgsl`): GPU linear blend skinning from a matrix palette,
//! drawn as a translucent shell so the skeleton stays readable inside it.

use std::sync::Arc;

use egui_wgpu::wgpu;
use wgpu::util::DeviceExt as _;

use super::pipeline::{DynBuffer, PipelineSpec, Shared, scene_shader};
use super::scene::{MeshData, MeshVertex, SceneFrame};

#[repr(C)]
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
struct Params {
    offset: [[f32; 4]; 2],
    tint: [[f32; 4]; 2],
    counts: [u32; 4],
}

struct Geometry {
    id: u64,
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: u32,
}

pub struct MeshRenderer {
    pipeline: wgpu::RenderPipeline,
    layout: wgpu::BindGroupLayout,
    params: wgpu::Buffer,
    palette: DynBuffer,
    group: Option<(u64, wgpu::BindGroup)>,
    geometry: Option<Geometry>,
    instances: u32,
}

impl MeshRenderer {
    pub fn new(device: &wgpu::Device, shared: &Shared) -> Self {
        let module = scene_shader(device, "mesh", include_str!("../../../shaders/mesh.wgsl"));
        let entry = |binding, ty| wgpu::BindGroupLayoutEntry {
            binding,
            visibility: wgpu::ShaderStages::VERTEX,
            ty: wgpu::BindingType::Buffer {
                ty,
                has_dynamic_offset: false,
                min_binding_size: None,
            },
            count: None,
        };
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("mesh"),
            entries: &[
                entry(0, wgpu::BufferBindingType::Uniform),
                entry(1, wgpu::BufferBindingType::Storage { read_only: true }),
            ],
        });
        let pipeline_layout = shared.layout(device, Some(&layout));
        let attrs = wgpu::vertex_attr_array![
            0 => Float32x3, 1 => Float32x3, 2 => Uint16x4, 3 => Float32x4, 4 => Float32x4,
            5 => Uint32
        ];
        let pipeline = // Mirrored joints flip the winding: no culling (the builder never culls).
        shared.pipeline(
            device,
            &PipelineSpec {
                label: "mesh",
                module: &module,
                layout: &pipeline_layout,
                vs: "vs_main",
                fs: "fs_main",
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<MeshVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &attrs,
                })],
                topology: wgpu::PrimitiveTopology::TriangleList,
                depth: shared.depth(false, wgpu::CompareFunction::Less),
            },
        );
        let params = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("mesh params"),
            contents: bytemuck::bytes_of(&Params::default()),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        Self {
            pipeline,
            layout,
            params,
            palette: DynBuffer::new(device, "mesh palette", wgpu::BufferUsages::STORAGE),
            group: None,
            geometry: None,
            instances: 0,
        }
    }

    fn ensure_geometry(&mut self, device: &wgpu::Device, data: &Arc<MeshData>) {
        if self.geometry.as_ref().is_some_and(|g| g.id == data.id) {
            return;
        }
        self.geometry = Some(Geometry {
            id: data.id,
            vertices: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("mesh vertices"),
                contents: bytemuck::cast_slice(&data.vertices),
                usage: wgpu::BufferUsages::VERTEX,
            }),
            indices: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("mesh indices"),
                contents: bytemuck::cast_slice(&data.indices),
                usage: wgpu::BufferUsages::INDEX,
            }),
            index_count: data.indices.len() as u32,
        });
    }

    pub fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, frame: &SceneFrame) {
        let Some(m) = &frame.mesh else {
            self.instances = 0;
            return;
        };
        self.ensure_geometry(device, &m.data);
        self.palette
            .write(device, queue, bytemuck::cast_slice(&m.palette));
        let params = Params {
            offset: m.offset,
            tint: m.tint,
            counts: [m.data.palette_len() as u32, 0, 0, 0],
        };
        queue.write_buffer(&self.params, 0, bytemuck::bytes_of(&params));
        if self
            .group
            .as_ref()
            .is_none_or(|(v, _)| *v != self.palette.version)
        {
            let group = device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("mesh"),
                layout: &self.layout,
                entries: &[
                    wgpu::BindGroupEntry {
                        binding: 0,
                        resource: self.params.as_entire_binding(),
                    },
                    wgpu::BindGroupEntry {
                        binding: 1,
                        resource: self.palette.buffer.as_entire_binding(),
                    },
                ],
            });
            self.group = Some((self.palette.version, group));
        }
        self.instances = m.instances;
    }

    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>, shared: &Shared) {
        let (Some(g), Some((_, group))) = (&self.geometry, &self.group) else {
            return;
        };
        if self.instances == 0 {
            return;
        }
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &shared.globals_group, &[]);
        pass.set_bind_group(1, group, &[]);
        pass.set_vertex_buffer(0, g.vertices.slice(..));
        pass.set_index_buffer(g.indices.slice(..), wgpu::IndexFormat::Uint32);
        pass.draw_indexed(0..g.index_count, 0, 0..self.instances);
    }
}
