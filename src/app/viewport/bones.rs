//! Bones as octahedra and joints as spheres (`shaders/bones.wgsl`), instanced.

use egui_wgpu::wgpu;
use glam::Vec3;
use wgpu::util::DeviceExt as _;

use super::pipeline::{DynBuffer, PipelineSpec, Shared, scene_shader};
use super::scene::{SceneFrame, Solid};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct ShapeVertex {
    pos: [f32; 3],
    normal: [f32; 3],
}

struct Shape {
    vertices: wgpu::Buffer,
    count: u32,
}

pub struct BonesRenderer {
    pipeline: wgpu::RenderPipeline,
    octahedron: Shape,
    sphere: Shape,
    bones: DynBuffer,
    bone_count: u32,
    joints: DynBuffer,
    joint_count: u32,
}

/// A unit bone from the origin to +Y, widest (1 in X and Z) a fifth of the way up.
fn octahedron() -> Vec<ShapeVertex> {
    let base = Vec3::ZERO;
    let tip = Vec3::Y;
    let w = 0.2;
    let ring = [
        Vec3::new(1.0, w, 0.0),
        Vec3::new(0.0, w, -1.0),
        Vec3::new(-1.0, w, 0.0),
        Vec3::new(0.0, w, 1.0),
    ];
    let mut out = Vec::new();
    for i in 0..4 {
        let (a, b) = (ring[i], ring[(i + 1) % 4]);
        for tri in [[base, b, a], [tip, a, b]] {
            let n = (tri[1] - tri[0]).cross(tri[2] - tri[0]).normalize();
            for p in tri {
                out.push(ShapeVertex {
                    pos: p.to_array(),
                    normal: n.to_array(),
                });
            }
        }
    }
    out
}

/// A unit UV sphere with smooth normals, as a triangle list.
fn sphere() -> Vec<ShapeVertex> {
    let (rings, segments) = (8, 12);
    let at = |r: usize, s: usize| {
        let theta = std::f32::consts::PI * r as f32 / rings as f32;
        let phi = std::f32::consts::TAU * s as f32 / segments as f32;
        Vec3::new(
            theta.sin() * phi.cos(),
            theta.cos(),
            theta.sin() * phi.sin(),
        )
    };
    let mut out = Vec::new();
    for r in 0..rings {
        for s in 0..segments {
            let (a, b, c, d) = (at(r, s), at(r + 1, s), at(r + 1, s + 1), at(r, s + 1));
            for p in [a, d, c, a, c, b] {
                out.push(ShapeVertex {
                    pos: p.to_array(),
                    normal: p.to_array(),
                });
            }
        }
    }
    out
}

impl BonesRenderer {
    pub fn new(device: &wgpu::Device, shared: &Shared) -> Self {
        let module = scene_shader(device, "bones", include_str!("../../../shaders/bones.wgsl"));
        let layout = shared.layout(device, None);
        let shape_attrs = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3];
        let instance_attrs = wgpu::vertex_attr_array![
            2 => Float32x4, 3 => Float32x4, 4 => Float32x4, 5 => Float32x4, 6 => Float32x4
        ];
        let pipeline = shared.pipeline(
            device,
            &PipelineSpec {
                label: "bones",
                module: &module,
                layout: &layout,
                vs: "vs_main",
                fs: "fs_main",
                buffers: &[
                    Some(wgpu::VertexBufferLayout {
                        array_stride: std::mem::size_of::<ShapeVertex>() as u64,
                        step_mode: wgpu::VertexStepMode::Vertex,
                        attributes: &shape_attrs,
                    }),
                    Some(wgpu::VertexBufferLayout {
                        array_stride: std::mem::size_of::<Solid>() as u64,
                        step_mode: wgpu::VertexStepMode::Instance,
                        attributes: &instance_attrs,
                    }),
                ],
                topology: wgpu::PrimitiveTopology::TriangleList,
                depth: shared.depth(true, wgpu::CompareFunction::Less),
            },
        );
        let shape = |label, v: Vec<ShapeVertex>| Shape {
            vertices: device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(&v),
                usage: wgpu::BufferUsages::VERTEX,
            }),
            count: v.len() as u32,
        };
        Self {
            pipeline,
            octahedron: shape("octahedron", octahedron()),
            sphere: shape("sphere", sphere()),
            bones: DynBuffer::new(device, "bone instances", wgpu::BufferUsages::VERTEX),
            bone_count: 0,
            joints: DynBuffer::new(device, "joint instances", wgpu::BufferUsages::VERTEX),
            joint_count: 0,
        }
    }

    pub fn upload(&mut self, device: &wgpu::Device, queue: &wgpu::Queue, frame: &SceneFrame) {
        self.bones
            .write(device, queue, bytemuck::cast_slice(&frame.bones));
        self.bone_count = frame.bones.len() as u32;
        self.joints
            .write(device, queue, bytemuck::cast_slice(&frame.joints));
        self.joint_count = frame.joints.len() as u32;
    }

    pub fn draw(&self, pass: &mut wgpu::RenderPass<'_>) {
        pass.set_pipeline(&self.pipeline);
        for (shape, instances, count) in [
            (&self.octahedron, &self.bones, self.bone_count),
            (&self.sphere, &self.joints, self.joint_count),
        ] {
            if count == 0 {
                continue;
            }
            pass.set_vertex_buffer(0, shape.vertices.slice(..));
            pass.set_vertex_buffer(1, instances.buffer.slice(..));
            pass.draw(0..shape.count, 0..count);
        }
    }
}
