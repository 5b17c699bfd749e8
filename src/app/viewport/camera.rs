//! Orbit camera: yaw / pitch / distance around a target, Y up (glTF convention).

use glam::{Mat4, Vec2, Vec3, Vec4Swizzles};

/// An orbit camera; all lengths in scene units.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct OrbitCamera {
    pub target: Vec3,
    /// Radians around +Y; 0 looks along -Z (from the character's front).
    pub yaw: f32,
    /// Radians above the horizon.
    pub pitch: f32,
    pub distance: f32,
    /// Vertical field of view in radians.
    pub fov_y: f32,
}

impl Default for OrbitCamera {
    fn default() -> Self {
        Self {
            target: Vec3::ZERO,
            yaw: 0.35,
            pitch: 0.18,
            distance: 5.0,
            fov_y: 40f32.to_radians(),
        }
    }
}

impl OrbitCamera {
    /// The eye position.
    pub fn eye(&self) -> Vec3 {
        let (sy, cy) = self.yaw.sin_cos();
        let (sp, cp) = self.pitch.sin_cos();
        self.target + Vec3::new(sy * cp, sp, cy * cp) * self.distance
    }

    pub fn view(&self) -> Mat4 {
        glam::camera::rh::view::look_at_mat4(self.eye(), self.target, Vec3::Y)
    }

    /// Near / far planes scaled with the distance so any scene unit works.
    pub fn projection(&self, aspect: f32) -> Mat4 {
        let near = (self.distance * 0.01).max(1e-5);
        let far = self.distance * 200.0;
        // wgpu: NDC z in [0, 1], y up (the DirectX convention).
        glam::camera::rh::proj::directx::perspective(self.fov_y, aspect.max(1e-3), near, far)
    }

    pub fn view_proj(&self, aspect: f32) -> Mat4 {
        self.projection(aspect) * self.view()
    }

    /// Rotates by a pointer drag in points.
    pub fn orbit(&mut self, drag: Vec2) {
        self.yaw -= drag.x * 0.008;
        self.pitch = (self.pitch + drag.y * 0.008).clamp(-1.5, 1.5);
    }

    /// Moves the target in the view plane by a pointer drag in points over a view
    /// `view_height` points tall.
    pub fn pan(&mut self, drag: Vec2, view_height: f32) {
        let view = self.view();
        let right = view.row(0).xyz();
        let up = view.row(1).xyz();
        let per_point = 2.0 * self.distance * (self.fov_y * 0.5).tan() / view_height.max(1.0);
        self.target += (-right * drag.x + up * drag.y) * per_point;
    }

    /// Zooms by scroll steps (positive = closer).
    pub fn zoom(&mut self, steps: f32) {
        self.distance = (self.distance * (-steps * 0.0015).exp()).clamp(1e-4, 1e7);
    }

    /// Frames an axis-aligned box so it fills most of a view with `aspect`.
    pub fn frame(&mut self, min: Vec3, max: Vec3, aspect: f32) {
        if !(min.is_finite() && max.is_finite()) || min.x > max.x {
            return;
        }
        self.target = (min + max) * 0.5;
        let radius = ((max - min).length() * 0.5).max(1e-3);
        let half_v = self.fov_y * 0.5;
        let half_h = (half_v.tan() * aspect.max(0.2)).atan();
        let half = half_v.min(half_h);
        self.distance = radius / half.sin() * 1.02;
        // Tighten: scale the distance until the box's corners fill ~90% of the view.
        let corners: Vec<Vec3> = (0..8)
            .map(|i| {
                Vec3::new(
                    if i & 1 == 0 { min.x } else { max.x },
                    if i & 2 == 0 { min.y } else { max.y },
                    if i & 4 == 0 { min.z } else { max.z },
                )
            })
            .collect();
        for _ in 0..4 {
            let vp = self.view_proj(aspect);
            let mut extent = 0.0f32;
            for c in &corners {
                let p = vp * c.extend(1.0);
                if p.w <= 1e-6 {
                    extent = f32::INFINITY;
                    break;
                }
                extent = extent.max((p.x / p.w).abs()).max((p.y / p.w).abs());
            }
            if !extent.is_finite() {
                break;
            }
            let factor = (extent / 0.9).clamp(0.5, 1.5);
            self.distance *= factor;
        }
    }

    /// Projects a point to a position in a `size` view (origin top-left); None behind the
    /// camera.
    pub fn project(&self, p: Vec3, size: Vec2) -> Option<Vec2> {
        let clip = self.view_proj(size.x / size.y.max(1.0)) * p.extend(1.0);
        if clip.w <= 1e-6 {
            return None;
        }
        let ndc = clip.xy() / clip.w;
        Some(Vec2::new(
            (ndc.x * 0.5 + 0.5) * size.x,
            (0.5 - ndc.y * 0.5) * size.y,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn framed_box_projects_inside_the_view() {
        let mut c = OrbitCamera::default();
        let (min, max) = (Vec3::new(-50.0, 0.0, -10.0), Vec3::new(50.0, 180.0, 10.0));
        c.frame(min, max, 1.6);
        let size = Vec2::new(1600.0, 1000.0);
        for corner in [min, max, Vec3::new(min.x, max.y, max.z)] {
            let p = c.project(corner, size).unwrap();
            assert!(
                p.x >= 0.0 && p.x <= size.x && p.y >= 0.0 && p.y <= size.y,
                "{p}"
            );
        }
    }
}
