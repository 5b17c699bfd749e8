//! The 3-D viewport: camera input, scene building and the paint callback that runs the
//! wgpu renderers (one per thing drawn: grid, bones, markers, mesh; `shaders/*.wgsl`).

pub mod bones;
pub mod camera;
pub mod composite;
pub mod framing;
pub mod gpu;
pub mod grid;
pub mod markers;
pub mod mesh;
pub mod pipeline;
pub mod scene;

use std::sync::Arc;

use egui::{Align2, Color32, FontId, Pos2, Rect, Sense, Stroke, StrokeKind, Vec2};
use glam::{Affine3A, Vec3};

use self::camera::OrbitCamera;
use self::framing::{Body, Bounds};
use self::gpu::{ViewportCallback, ViewportGpu};
use self::scene::{
    Globals, Highlight, MeshData, MeshFrame, Scale, SceneFrame, SkeletonStyle, add_error_vectors,
    add_skeleton, grid_lines, grid_step, joint_radii, live_errors, palette,
};
use super::state::{AbShow, Document, Layout, Selection, ViewOptions};
use crate::model::{Transform, local_to_object};

/// The label over the second copy when the file has no clip: the rest pose, nothing
/// compressed (and nothing being computed).
pub const NO_CLIP_LABEL: &str = "Rest pose (no clip to compress)";

/// What the bounds were computed for: document, clip, in place.
type BoundsKey = (u64, usize, bool);

/// What the viewport reports back to the app.
#[derive(Default)]
pub struct ViewportOutput {
    /// A joint the user clicked on.
    pub picked: Option<usize>,
}

/// Viewport state that lives across frames.
pub struct Viewport {
    pub camera: OrbitCamera,
    bounds: Option<(BoundsKey, Bounds)>,
    /// The moving body of the document's clip (what is framed and followed in place).
    body: Option<((u64, usize), Arc<Body>)>,
    mesh: Option<Arc<MeshData>>,
    mesh_doc: Option<u64>,
    frame_pending: bool,
    /// False when eframe runs without wgpu (no custom rendering possible).
    pub gpu: bool,
    /// MSAA samples in use (1 or 4).
    pub samples: u32,
    /// Time spent building the last frame's scene on the CPU.
    pub last_build: std::time::Duration,
    /// Joint screen positions of the last frame (for picking): (joint, position).
    picks: Vec<(usize, Pos2)>,
    /// The joint under the pointer last frame.
    pub hovered: Option<usize>,
    /// The copies' labels drawn last frame: text and rectangle (points).
    pub labels: Vec<(String, Rect)>,
}

impl Viewport {
    /// Installs the GPU resources into eframe's renderer when it runs on wgpu.
    pub fn new(render_state: Option<&egui_wgpu::RenderState>) -> Self {
        let mut samples = 1;
        let gpu = if let Some(rs) = render_state {
            let g = ViewportGpu::new(&rs.device, &rs.adapter, rs.target_format);
            samples = g.samples();
            rs.renderer.write().callback_resources.insert(g);
            true
        } else {
            false
        };
        Self {
            camera: OrbitCamera::default(),
            bounds: None,
            body: None,
            mesh: None,
            mesh_doc: None,
            frame_pending: true,
            gpu,
            samples,
            last_build: Default::default(),
            picks: Vec::new(),
            hovered: None,
            labels: Vec::new(),
        }
    }

    /// Frames the character on the next frame.
    pub fn request_frame(&mut self) {
        self.frame_pending = true;
    }

    /// Frames the character on the next frame when `cond` holds.
    pub fn request_frame_if(&mut self, cond: bool) {
        self.frame_pending |= cond;
    }

    /// The document's skinned mesh, built once per document.
    fn mesh_for(&mut self, doc: &Document) -> Option<Arc<MeshData>> {
        if self.mesh_doc != Some(doc.id) {
            self.mesh =
                MeshData::build(doc.id, &doc.asset.meshes, doc.asset.skeleton.len()).map(Arc::new);
            self.mesh_doc = Some(doc.id);
        }
        self.mesh.clone()
    }

    /// The raw clip's object-space poses at up to about 48 frames spread over it.
    fn sampled_poses(doc: &Document) -> Vec<Vec<Affine3A>> {
        let s = &doc.asset.skeleton;
        let n = s.len();
        let mut local = vec![Transform::IDENTITY; n];
        let frames = doc.frame_count();
        let step = (frames / 48).max(1);
        (0..frames)
            .step_by(step)
            .map(|f| {
                match doc.asset.clips.get(doc.clip) {
                    Some(c) => c.sample_local(f as f32, &mut local),
                    None => local = s.rest_pose(),
                }
                let mut obj = vec![Affine3A::IDENTITY; n];
                local_to_object(s, &local, &mut obj);
                obj
            })
            .collect()
    }

    /// The moving body of the document's clip (computed once per clip).
    fn body_for(&mut self, doc: &Document, poses: Option<&[Vec<Affine3A>]>) -> Arc<Body> {
        let key = (doc.id, doc.clip);
        if let Some((k, b)) = &self.body
            && *k == key
        {
            return b.clone();
        }
        let body = Arc::new(match poses {
            Some(p) => Body::find(&doc.asset.skeleton, p),
            None => Body::find(&doc.asset.skeleton, &Self::sampled_poses(doc)),
        });
        self.body = Some((key, body.clone()));
        body
    }

    /// The raw clip's extent over its frames: the body's joints and the skinned mesh, in
    /// place or not.
    fn bounds_for(&mut self, doc: &Document, in_place: bool) -> Bounds {
        let key = (doc.id, doc.clip, in_place);
        if let Some((k, b)) = self.bounds
            && k == key
        {
            return b;
        }
        let mesh = self.mesh_for(doc);
        let s = &doc.asset.skeleton;
        let poses = Self::sampled_poses(doc);
        let body = self.body_for(doc, Some(&poses));
        let mut b = Bounds::EMPTY;
        for obj in &poses {
            let shift = framing::in_place_shift(obj, body.root, in_place);
            framing::add_joints(&mut b, s, &body, obj, shift);
            if let Some(m) = &mesh {
                framing::add_mesh(&mut b, m, obj, shift);
            }
        }
        if b.is_empty() {
            b = Bounds {
                min: Vec3::splat(-0.5),
                max: Vec3::splat(0.5),
            };
        }
        self.bounds = Some((key, b));
        self.frame_pending = true;
        b
    }

    /// Where joint `j` of the original skeleton was drawn last frame (screen points).
    pub fn joint_position(&self, j: usize) -> Option<Pos2> {
        self.picks.iter().find(|(k, _)| *k == j).map(|(_, p)| *p)
    }

    /// Draws the viewport into `rect` and handles camera input.
    pub fn show(
        &mut self,
        ui: &mut egui::Ui,
        rect: Rect,
        doc: Option<&Document>,
        frame: f32,
        view: &ViewOptions,
        selection: Selection<'_>,
    ) -> ViewportOutput {
        let mut out = ViewportOutput::default();
        let response = ui.interact(
            rect,
            ui.scope_id().with("viewport"),
            Sense::click_and_drag(),
        );
        let painter = ui.painter_at(rect);
        painter.rect_filled(rect, 0.0, to_color(palette::BACKGROUND));
        let Some(doc) = doc else {
            painter.text(
                rect.center(),
                Align2::CENTER_CENTER,
                "Open a file (File > Open...) or drop one here",
                FontId::proportional(16.0),
                Color32::GRAY,
            );
            return out;
        };
        let start = std::time::Instant::now();
        let bounds = self.bounds_for(doc, view.in_place);
        // Sizes follow this clip's skeleton (not the whole file's), whatever the unit.
        let size = bounds.max - bounds.min;
        let scale = Scale::new(size.y, size.max_element());
        let offset = match (view.layout, view.ab) {
            (_, Some(_)) | (Layout::Overlay, None) => Vec3::ZERO,
            (Layout::SideBySide, None) => {
                framing::side_offset(&bounds, scale.size, OrbitCamera::default().yaw)
            }
        };
        let aspect = rect.width() / rect.height().max(1.0);
        if self.frame_pending && rect.width() > 10.0 {
            let margin = Vec3::splat(scale.size * 0.08);
            self.camera
                .frame(bounds.min - margin, bounds.max + offset + margin, aspect);
            self.frame_pending = false;
        }
        // Camera input.
        if response.dragged() {
            let d = response.drag_delta();
            let pan = response.dragged_by(egui::PointerButton::Secondary)
                || response.dragged_by(egui::PointerButton::Middle)
                || ui.input(|i| i.modifiers.shift);
            if pan {
                self.camera.pan(glam::Vec2::new(d.x, d.y), rect.height());
            } else {
                self.camera.orbit(glam::Vec2::new(d.x, d.y));
            }
        }
        if response.hovered() {
            let scroll = ui.input(|i| i.smooth_scroll_delta.y);
            if scroll != 0.0 {
                self.camera.zoom(scroll);
            }
        }
        if response.double_clicked() {
            self.request_frame();
        }
        if response.clicked()
            && let Some(pos) = response.interact_pointer_pos()
        {
            out.picked = self
                .picks
                .iter()
                .map(|(j, p)| (*j, p.distance(pos)))
                .filter(|(_, d)| *d < 14.0)
                .min_by(|a, b| a.1.total_cmp(&b.1))
                .map(|(j, _)| j);
        }

        // Scene.
        let mut poses = doc.poses_at(frame);
        let skeleton = &doc.asset.skeleton;
        let body = self.body_for(doc, None);
        let drawn: Vec<bool> = (0..skeleton.len())
            .map(|j| body.drawn(skeleton, j))
            .collect();
        let shift = framing::in_place_shift(&poses.raw, body.root, view.in_place);
        for m in poses
            .raw
            .iter_mut()
            .chain(poses.compressed.iter_mut().flatten())
        {
            m.translation += glam::Vec3A::from(shift);
        }
        // A/B: the chosen copy alone, where the original stands.
        if let Some(show) = view.ab {
            if show == AbShow::Compressed
                && let Some(c) = poses.compressed.take()
            {
                poses.raw = c;
            }
            poses.compressed = None;
        }
        let limits = &doc.resolved.limits;
        let compressed = poses.compressed.as_deref().unwrap_or(&poses.raw);
        let errors = live_errors(&poses.raw, compressed, limits);
        let over: Vec<bool> = errors
            .iter()
            .zip(&limits.tolerance)
            .map(|(e, t)| e > t)
            .collect();
        let ppp = ui.ctx().pixels_per_point();
        let size_px = [
            (rect.width() * ppp).round().max(1.0) as u32,
            (rect.height() * ppp).round().max(1.0) as u32,
        ];
        let eye = self.camera.eye();
        let light = (eye - self.camera.target).normalize_or(Vec3::Z) + Vec3::new(0.4, 1.2, 0.2);
        let floor = if bounds.min.y >= 0.0 && bounds.min.y < 0.2 * scale.size {
            0.0
        } else {
            bounds.min.y
        };
        let step = grid_step(scale.size);
        let centre = (bounds.min + bounds.max + offset) * 0.5;
        let radius = ((bounds.max + offset - bounds.min).length() * 0.5).max(scale.size) * 2.2;
        let half_cells = ((radius / step).ceil() as i32).clamp(5, 400);
        let mut sf = SceneFrame {
            size_px,
            clear: palette::BACKGROUND,
            globals: Globals {
                view_proj: self.camera.view_proj(aspect).to_cols_array_2d(),
                eye: eye.extend(1.0).to_array(),
                light_dir: light.normalize().extend(0.0).to_array(),
                viewport: [size_px[0] as f32, size_px[1] as f32, ppp, 0.0],
                ground: [centre.x, floor, centre.z, radius],
            },
            grid: if view.grid {
                // In place, the ground slides under the feet (the root's travel, reversed).
                let mut g = grid_lines(
                    Vec3::new(centre.x - shift.x, floor, centre.z - shift.z),
                    floor,
                    step,
                    half_cells,
                );
                for v in &mut g {
                    v.pos[0] += shift.x;
                    v.pos[2] += shift.z;
                }
                g
            } else {
                Vec::new()
            },
            bones: Vec::new(),
            joints: Vec::new(),
            points: Vec::new(),
            lines: Vec::new(),
            mesh: None,
        };
        let radii = joint_radii(skeleton, &poses.raw, scale);
        let highlight = Highlight::new(skeleton.len(), selection);
        let none = vec![false; skeleton.len()];
        add_skeleton(
            &mut sf,
            skeleton,
            &poses.raw,
            limits,
            &radii,
            &SkeletonStyle {
                offset: Vec3::ZERO,
                color: if view.ab == Some(AbShow::Compressed) {
                    palette::COMPRESSED
                } else {
                    palette::ORIGINAL
                },
                solid: true,
                markers: view.markers,
                markers_selected_only: view.markers_selected_only,
            },
            &highlight,
            &none,
            &drawn,
            scale,
        );
        if view.ab.is_none() {
            add_skeleton(
                &mut sf,
                skeleton,
                compressed,
                limits,
                &radii,
                &SkeletonStyle {
                    offset,
                    color: palette::COMPRESSED,
                    solid: view.layout == Layout::SideBySide,
                    markers: view.markers && view.layout == Layout::SideBySide,
                    markers_selected_only: view.markers_selected_only,
                },
                &highlight,
                &over,
                &drawn,
                scale,
            );
        }
        if view.error_vectors && view.ab.is_none() {
            add_error_vectors(
                &mut sf,
                &poses.raw,
                compressed,
                limits,
                &errors,
                offset,
                view.error_scale,
                view.markers_selected_only
                    .then_some(highlight.selected.as_slice()),
            );
        }
        if view.mesh
            && let Some(data) = &self.mesh_for(doc)
        {
            let mut pal = Vec::with_capacity(data.palette_len() * 2);
            data.palette(&poses.raw, &mut pal);
            data.palette(compressed, &mut pal);
            let alpha = 0.45;
            sf.mesh = Some(MeshFrame {
                data: data.clone(),
                palette: pal,
                instances: if view.layout == Layout::SideBySide && view.ab.is_none() {
                    2
                } else {
                    1
                },
                offset: [[0.0; 4], offset.extend(0.0).to_array()],
                // Each copy tinted like its skeleton, so they never read as one.
                tint: [
                    tint(
                        if view.ab == Some(AbShow::Compressed) {
                            palette::COMPRESSED
                        } else {
                            palette::ORIGINAL
                        },
                        alpha,
                    ),
                    tint(palette::COMPRESSED, alpha),
                ],
            });
        }
        // Picking targets and labels.
        let size = glam::Vec2::new(rect.width(), rect.height());
        let to_screen = |p: Vec3| {
            self.camera
                .project(p, size)
                .map(|s| rect.min + Vec2::new(s.x, s.y))
        };
        self.picks.clear();
        for j in 0..skeleton.len() {
            if !drawn[j] {
                continue;
            }
            for (pose, off) in [(poses.raw.as_slice(), Vec3::ZERO), (compressed, offset)] {
                if let Some(p) = to_screen(Vec3::from(pose[j].translation) + off) {
                    self.picks.push((j, p));
                }
            }
        }
        self.last_build = start.elapsed();
        if self.gpu {
            ui.painter().add(egui_wgpu::Callback::new_paint_callback(
                rect,
                ViewportCallback {
                    frame: Arc::new(sf),
                },
            ));
        } else {
            painter.text(
                rect.center(),
                Align2::CENTER_CENTER,
                "The 3-D viewport needs the wgpu renderer",
                FontId::proportional(16.0),
                Color32::LIGHT_RED,
            );
        }
        // Labels above each copy: above the clip's highest point (mesh included), kept
        // inside the view and never overlapping.
        let top = |pose: &[Affine3A], off: Vec3| {
            let (mut lo, mut hi) = (Vec3::splat(f32::INFINITY), Vec3::splat(f32::NEG_INFINITY));
            for (j, m) in pose.iter().enumerate() {
                if skeleton.joints[j].deforming {
                    lo = lo.min(Vec3::from(m.translation));
                    hi = hi.max(Vec3::from(m.translation));
                }
            }
            let c = (lo + hi) * 0.5 + off;
            Vec3::new(c.x, hi.y.max(bounds.max.y) + 0.04 * scale.size, c.z)
        };
        let pending = doc.result.is_none();
        let stale = doc.is_stale();
        let compressed_label = if !doc.has_clip() {
            NO_CLIP_LABEL
        } else if stale {
            "Compressed (recomputing...)"
        } else if pending {
            "Compressed (computing...)"
        } else {
            "Compressed"
        };
        let labels: Vec<(Vec3, String, [f32; 4])> = match (view.ab, view.layout) {
            (Some(show), _) => vec![(
                top(&poses.raw, Vec3::ZERO),
                match show {
                    AbShow::Original => format!("A · {}  (B flips)", "Original"),
                    AbShow::Compressed => format!("B · {compressed_label}  (B flips)"),
                },
                if show == AbShow::Original {
                    palette::ORIGINAL
                } else {
                    palette::COMPRESSED
                },
            )],
            (None, Layout::SideBySide) => vec![
                (
                    top(&poses.raw, Vec3::ZERO),
                    "Original".into(),
                    palette::ORIGINAL,
                ),
                (
                    top(compressed, offset),
                    compressed_label.into(),
                    palette::COMPRESSED,
                ),
            ],
            (None, Layout::Overlay) => vec![(
                top(&poses.raw, Vec3::ZERO),
                "Original (solid) + Compressed (ghost)".into(),
                palette::COMPRESSED,
            )],
        };
        self.labels.clear();
        for (p, text, color) in labels {
            let Some(s) = to_screen(p) else { continue };
            let galley_size = painter
                .layout_no_wrap(text.clone(), FontId::proportional(15.0), Color32::WHITE)
                .size();
            let mut r = Align2::CENTER_BOTTOM
                .anchor_size(s, galley_size)
                .expand(4.0);
            for (_, placed) in &self.labels {
                if r.intersects(*placed) {
                    r = r.translate(Vec2::new(placed.right() + 6.0 - r.left(), 0.0));
                }
            }
            // Inside the view (a label off screen says nothing).
            let inner = rect.shrink(4.0);
            let dx = (inner.left() - r.left()).max(0.0) - (r.right() - inner.right()).max(0.0);
            let dy = (inner.top() - r.top()).max(0.0) - (r.bottom() - inner.bottom()).max(0.0);
            r = r.translate(Vec2::new(dx, dy));
            painter.rect_filled(r, 4.0, Color32::from_black_alpha(150));
            // A real label (not just paint) so tests and screen readers find it.
            let rich = egui::RichText::new(text.clone())
                .size(15.0)
                .color(to_color(color));
            ui.put(
                r.shrink(4.0),
                egui::Label::new(rich).selectable(false).extend(),
            );
            self.labels.push((text, r));
        }
        // Hover: the joint under the pointer, ringed and named.
        self.hovered = response
            .hover_pos()
            .filter(|_| !response.dragged())
            .and_then(|pos| {
                self.picks
                    .iter()
                    .map(|(j, p)| (*j, *p, p.distance(pos)))
                    .filter(|(_, _, d)| *d < 14.0)
                    .min_by(|a, b| a.2.total_cmp(&b.2))
            })
            .map(|(j, p, _)| {
                painter.circle_stroke(p, 9.0, Stroke::new(2.0, Color32::WHITE));
                let galley = painter.layout_no_wrap(
                    skeleton.joints[j].name.clone(),
                    FontId::proportional(14.0),
                    Color32::WHITE,
                );
                let at = p + Vec2::new(12.0, -12.0 - galley.size().y);
                painter.rect_filled(
                    Rect::from_min_size(at, galley.size()).expand(3.0),
                    3.0,
                    Color32::from_black_alpha(170),
                );
                painter.galley(at, galley, Color32::WHITE);
                j
            });
        // Legend.
        let legend = format!(
            "LMB orbit · RMB/Shift pan · wheel zoom · double-click frame{}",
            if view.error_vectors {
                format!("   error vectors ×{:.0}", view.error_scale)
            } else {
                String::new()
            }
        );
        painter.text(
            rect.left_bottom() + Vec2::new(8.0, -6.0),
            Align2::LEFT_BOTTOM,
            legend,
            FontId::proportional(11.0),
            Color32::from_gray(150),
        );
        if response.hovered() {
            painter.rect_stroke(
                rect,
                0.0,
                Stroke::new(1.0, Color32::from_gray(70)),
                StrokeKind::Inside,
            );
        }
        out
    }
}

/// A mesh tint: the copy's colour, lightened so the mesh's own colours still read.
fn tint(c: [f32; 4], alpha: f32) -> [f32; 4] {
    [
        0.25 + 0.75 * c[0],
        0.25 + 0.75 * c[1],
        0.25 + 0.75 * c[2],
        alpha,
    ]
}

fn to_color(c: [f32; 4]) -> Color32 {
    Color32::from_rgba_unmultiplied(
        (c[0] * 255.0) as u8,
        (c[1] * 255.0) as u8,
        (c[2] * 255.0) as u8,
        (c[3] * 255.0) as u8,
    )
}
