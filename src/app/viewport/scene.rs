//! What one viewport frame draws, built on the CPU from poses: plain data handed to the GPU
//! renderers. Sizes follow the character's height so metre and centimetre scenes look alike.

use std::sync::Arc;

use bytemuck::{Pod, Zeroable};
use glam::{Affine3A, Mat4, Vec3};

use super::super::state::Selection;
use crate::import::SkinnedMesh;
use crate::metric::{JointLimits, joint_error_f32};
use crate::model::Skeleton;

/// Shared shader constants (`Globals` in every WGSL file).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, Pod, Zeroable)]
pub struct Globals {
    pub view_proj: [[f32; 4]; 4],
    pub eye: [f32; 4],
    pub light_dir: [f32; 4],
    /// Width, height in pixels.
    pub viewport: [f32; 4],
    /// Grid centre (xyz) and fade radius (w).
    pub ground: [f32; 4],
}

/// A solid instance: model matrix columns and colour.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Solid {
    pub model: [[f32; 4]; 4],
    pub color: [f32; 4],
}

/// A screen-sized disc.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct Point {
    pub center: [f32; 3],
    pub size_px: f32,
    pub color: [f32; 4],
}

/// A line vertex.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct LineVertex {
    pub pos: [f32; 3],
    pub color: [f32; 4],
}

/// A mesh vertex for GPU skinning.
#[repr(C)]
#[derive(Clone, Copy, Debug, Pod, Zeroable)]
pub struct MeshVertex {
    pub pos: [f32; 3],
    pub normal: [f32; 3],
    pub joints: [u16; 4],
    pub weights: [f32; 4],
    pub color: [f32; 4],
    /// First palette entry of this vertex's mesh.
    pub base: u32,
}

/// Static skinned-mesh geometry of one document, uploaded once.
pub struct MeshData {
    /// Changes whenever the geometry does (the document id).
    pub id: u64,
    pub vertices: Vec<MeshVertex>,
    pub indices: Vec<u32>,
    /// Per mesh, per skeleton joint: inverse bind matrices.
    pub inverse_bind: Vec<Vec<Mat4>>,
    pub joints: usize,
}

impl MeshData {
    pub fn build(id: u64, meshes: &[SkinnedMesh], joints: usize) -> Option<Self> {
        let mut vertices = Vec::new();
        let mut indices = Vec::new();
        let mut inverse_bind = Vec::new();
        for (m, mesh) in meshes.iter().enumerate() {
            if mesh.positions.is_empty() || mesh.indices.is_empty() {
                continue;
            }
            let first = vertices.len() as u32;
            let base = (inverse_bind.len() * joints) as u32;
            for (i, p) in mesh.positions.iter().enumerate() {
                let mut js = mesh.joints.get(i).copied().unwrap_or([0; 4]);
                let mut ws = mesh.weights.get(i).copied().unwrap_or([0.0; 4]);
                for k in 0..4 {
                    if js[k] as usize >= joints || !ws[k].is_finite() || ws[k] < 0.0 {
                        js[k] = 0;
                        ws[k] = 0.0;
                    }
                }
                let sum: f32 = ws.iter().sum();
                if sum > 1e-6 {
                    ws.iter_mut().for_each(|w| *w /= sum);
                } else {
                    ws = [1.0, 0.0, 0.0, 0.0];
                }
                let n = mesh.normals.get(i).copied().unwrap_or(Vec3::Y);
                vertices.push(MeshVertex {
                    pos: p.to_array(),
                    normal: n.to_array(),
                    joints: js,
                    weights: ws,
                    color: mesh.base_color,
                    base,
                });
            }
            let count = mesh.positions.len() as u32;
            indices.extend(
                mesh.indices
                    .iter()
                    .filter(|&&i| i < count)
                    .map(|i| i + first),
            );
            let mut ibm = mesh.inverse_bind.clone();
            ibm.resize(joints, Mat4::IDENTITY);
            inverse_bind.push(ibm);
            let _ = m;
        }
        let whole_triangles = indices.len() / 3 * 3;
        indices.truncate(whole_triangles);
        (!indices.is_empty()).then_some(Self {
            id,
            vertices,
            indices,
            inverse_bind,
            joints,
        })
    }

    /// Palette matrices for one pose (all meshes).
    pub fn palette(&self, pose: &[Affine3A], out: &mut Vec<[[f32; 4]; 4]>) {
        for ibm in &self.inverse_bind {
            for (j, m) in ibm.iter().enumerate() {
                let joint = pose.get(j).copied().unwrap_or(Affine3A::IDENTITY);
                out.push((Mat4::from(joint) * *m).to_cols_array_2d());
            }
        }
    }

    pub fn palette_len(&self) -> usize {
        self.inverse_bind.len() * self.joints
    }
}

/// The skinned mesh part of a frame.
pub struct MeshFrame {
    pub data: Arc<MeshData>,
    /// Palette for instance 0 then instance 1.
    pub palette: Vec<[[f32; 4]; 4]>,
    pub instances: u32,
    pub offset: [[f32; 4]; 2],
    pub tint: [[f32; 4]; 2],
}

/// Everything one viewport frame draws.
pub struct SceneFrame {
    pub size_px: [u32; 2],
    pub clear: [f32; 4],
    pub globals: Globals,
    pub grid: Vec<LineVertex>,
    pub bones: Vec<Solid>,
    pub joints: Vec<Solid>,
    pub points: Vec<Point>,
    pub lines: Vec<LineVertex>,
    pub mesh: Option<MeshFrame>,
}

/// Colours (display space, as egui uses).
pub mod palette {
    pub const ORIGINAL: [f32; 4] = [0.55, 0.72, 0.95, 1.0];
    pub const COMPRESSED: [f32; 4] = [0.98, 0.62, 0.30, 1.0];
    pub const SELECTED: [f32; 4] = [1.0, 0.93, 0.25, 1.0];
    pub const WITHIN: [f32; 4] = [0.25, 0.92, 0.35, 1.0];
    pub const OVER: [f32; 4] = [1.0, 0.22, 0.2, 1.0];
    pub const AXES: [[f32; 4]; 3] = [
        [0.95, 0.35, 0.35, 1.0],
        [0.4, 0.9, 0.4, 1.0],
        [0.4, 0.55, 1.0, 1.0],
    ];
    pub const BACKGROUND: [f32; 4] = [0.16, 0.17, 0.19, 1.0];
}

/// How one skeleton is drawn.
pub struct SkeletonStyle {
    pub offset: Vec3,
    pub color: [f32; 4],
    /// Solid octahedra (false: thin lines, for the overlay ghost).
    pub solid: bool,
    pub markers: bool,
    /// Markers only on the selected joints.
    pub markers_selected_only: bool,
}

/// Character-relative sizes.
#[derive(Clone, Copy, Debug)]
pub struct Scale {
    /// Character height (or largest extent), scene units.
    pub size: f32,
}

impl Scale {
    pub fn new(height: f32, extent: f32) -> Self {
        let size = if height > extent * 0.2 {
            height
        } else {
            extent
        };
        Self {
            size: if size.is_finite() && size > 0.0 {
                size
            } else {
                1.0
            },
        }
    }
}

/// Per joint: sphere radius, from the shortest adjacent bone.
pub fn joint_radii(skeleton: &Skeleton, pose: &[Affine3A], scale: Scale) -> Vec<f32> {
    let n = skeleton.len();
    let mut shortest = vec![f32::INFINITY; n];
    for (j, joint) in skeleton.joints.iter().enumerate() {
        if let Some(p) = joint.parent {
            let l = (pose[j].translation - pose[p].translation).length();
            if l > scale.size * 1e-4 {
                shortest[p] = shortest[p].min(l);
                shortest[j] = shortest[j].min(l);
            }
        }
    }
    shortest
        .into_iter()
        .map(|l| {
            let r = if l.is_finite() {
                l * 0.22
            } else {
                scale.size * 0.008
            };
            r.clamp(scale.size * 0.002, scale.size * 0.009)
        })
        .collect()
}

/// The selected joints in the viewport: drawn in the selection colour; the focused one is
/// larger, with sticks to its markers.
pub struct Highlight {
    pub focus: Option<usize>,
    pub selected: Vec<bool>,
}

impl Highlight {
    pub fn new(joints: usize, selection: Selection<'_>) -> Self {
        let mut selected = vec![false; joints];
        for &j in selection.set.iter().chain(&selection.focus) {
            if let Some(s) = selected.get_mut(j) {
                *s = true;
            }
        }
        Self {
            focus: selection.focus,
            selected,
        }
    }
}

/// Adds one skeleton's bones, joints and markers: the joints `drawn` holds (deforming, not
/// a static root detached from the body) and the bones from them.
#[allow(clippy::too_many_arguments)]
pub fn add_skeleton(
    frame: &mut SceneFrame,
    skeleton: &Skeleton,
    pose: &[Affine3A],
    limits: &JointLimits,
    radii: &[f32],
    style: &SkeletonStyle,
    highlight: &Highlight,
    over: &[bool],
    drawn: &[bool],
    scale: Scale,
) {
    let off = style.offset;
    for (j, joint) in skeleton.joints.iter().enumerate() {
        let pj = Vec3::from(pose[j].translation) + off;
        if let Some(p) = joint.parent
            && drawn[p]
        {
            let pp = Vec3::from(pose[p].translation) + off;
            let color = if highlight.selected[p] {
                palette::SELECTED
            } else {
                style.color
            };
            if style.solid {
                if let Some(m) = bone_matrix(pp, pj, pose[p], scale) {
                    frame.bones.push(Solid {
                        model: m.to_cols_array_2d(),
                        color,
                    });
                }
            } else {
                frame.lines.push(LineVertex {
                    pos: pp.to_array(),
                    color,
                });
                frame.lines.push(LineVertex {
                    pos: pj.to_array(),
                    color,
                });
            }
        }
        if !drawn[j] {
            continue;
        }
        let is_sel = highlight.focus == Some(j);
        let color = if highlight.selected[j] {
            palette::SELECTED
        } else if over.get(j).copied().unwrap_or(false) {
            palette::OVER
        } else {
            style.color
        };
        if style.solid {
            let r = radii[j] * if is_sel { 1.8 } else { 1.0 };
            frame.joints.push(Solid {
                model: (Mat4::from_translation(pj) * Mat4::from_scale(Vec3::splat(r)))
                    .to_cols_array_2d(),
                color,
            });
        } else {
            frame.points.push(Point {
                center: pj.to_array(),
                size_px: if is_sel { 9.0 } else { 5.0 },
                color,
            });
        }
        let shown = !style.markers_selected_only || highlight.selected[j];
        if style.markers && shown && limits.evaluated.get(j).copied().unwrap_or(false) {
            let d = limits.local_marker(j);
            for (k, axis) in [Vec3::X, Vec3::Y, Vec3::Z].into_iter().enumerate() {
                let m = pose[j].transform_point3(axis * d) + off;
                let mut c = palette::AXES[k];
                frame.points.push(Point {
                    center: m.to_array(),
                    size_px: if is_sel { 8.0 } else { 4.0 },
                    color: c,
                });
                // Sticks from the joint to its markers only on the selected joint (clutter).
                if is_sel {
                    c[3] = 0.8;
                    frame.lines.push(LineVertex {
                        pos: pj.to_array(),
                        color: c,
                    });
                    frame.lines.push(LineVertex {
                        pos: m.to_array(),
                        color: c,
                    });
                }
            }
        }
    }
}

/// The octahedron's frame: from `a` to `b`, width from the length, rolled with the parent's X.
fn bone_matrix(a: Vec3, b: Vec3, parent: Affine3A, scale: Scale) -> Option<Mat4> {
    let d = b - a;
    let len = d.length();
    if len.is_nan() || len <= scale.size * 1e-4 {
        return None;
    }
    let y = d / len;
    let x_ref = Vec3::from(parent.matrix3.x_axis);
    let mut x = x_ref - y * x_ref.dot(y);
    if x.length_squared() < 1e-8 {
        x = y.any_orthonormal_vector();
    }
    let x = x.normalize();
    let z = x.cross(y);
    let w = (len * 0.12).clamp(scale.size * 0.002, scale.size * 0.022);
    Some(Mat4::from_cols(
        (x * w).extend(0.0),
        d.extend(0.0),
        (z * w).extend(0.0),
        a.extend(1.0),
    ))
}

/// Raw-to-compressed marker error vectors, magnified by `magnify`, drawn at `offset`.
#[allow(clippy::too_many_arguments)]
pub fn add_error_vectors(
    frame: &mut SceneFrame,
    raw: &[Affine3A],
    compressed: &[Affine3A],
    limits: &JointLimits,
    errors: &[f32],
    offset: Vec3,
    magnify: f32,
    only: Option<&[bool]>,
) {
    for j in 0..raw.len() {
        if !limits.evaluated[j] || only.is_some_and(|o| !o[j]) {
            continue;
        }
        let d = limits.local_marker(j);
        let color = if errors[j] <= limits.tolerance[j] {
            palette::WITHIN
        } else {
            palette::OVER
        };
        for axis in [Vec3::X, Vec3::Y, Vec3::Z] {
            let a = raw[j].transform_point3(axis * d);
            let b = compressed[j].transform_point3(axis * d);
            if (b - a).length_squared() <= 0.0 {
                continue;
            }
            frame.lines.push(LineVertex {
                pos: (a + offset).to_array(),
                color,
            });
            frame.lines.push(LineVertex {
                pos: (a + offset + (b - a) * magnify).to_array(),
                color,
            });
        }
    }
}

/// Per joint visual error between two poses with the limits' marker offsets.
pub fn live_errors(raw: &[Affine3A], compressed: &[Affine3A], limits: &JointLimits) -> Vec<f32> {
    (0..raw.len())
        .map(|j| {
            if limits.evaluated[j] {
                joint_error_f32(&raw[j], &compressed[j], limits.local_marker(j))
            } else {
                0.0
            }
        })
        .collect()
}

/// Grid lines on the plane `y`, centred at `center`, cells of `step`, major every 10.
pub fn grid_lines(center: Vec3, y: f32, step: f32, half_cells: i32) -> Vec<LineVertex> {
    let mut out = Vec::new();
    let cx = (center.x / step).round() as i64;
    let cz = (center.z / step).round() as i64;
    let half = half_cells as i64;
    let (x0, x1) = ((cx - half) as f32 * step, (cx + half) as f32 * step);
    let (z0, z1) = ((cz - half) as f32 * step, (cz + half) as f32 * step);
    for i in -half..=half {
        for (axis_i, along_x) in [(cx + i, false), (cz + i, true)] {
            let v = axis_i as f32 * step;
            let color = if axis_i == 0 {
                if along_x {
                    [0.75, 0.3, 0.3, 0.9]
                } else {
                    [0.3, 0.45, 0.8, 0.9]
                }
            } else if axis_i % 10 == 0 {
                [0.5, 0.52, 0.56, 0.8]
            } else {
                [0.36, 0.37, 0.40, 0.55]
            };
            let (a, b) = if along_x {
                ([x0, y, v], [x1, y, v])
            } else {
                ([v, y, z0], [v, y, z1])
            };
            out.push(LineVertex { pos: a, color });
            out.push(LineVertex { pos: b, color });
        }
    }
    out
}

/// A grid step for a character of `size`: a power of ten about a tenth of it.
pub fn grid_step(size: f32) -> f32 {
    10f32.powf((size * 0.1).max(1e-6).log10().round())
}
