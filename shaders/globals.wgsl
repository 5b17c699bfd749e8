// Shared by every scene shader (prepended by `scene_shader` in src/app/viewport/gpu.rs):
// the camera and lighting uniforms at group 0, binding 0.

struct Globals {
    view_proj: mat4x4<f32>,
    eye: vec4<f32>,
    light_dir: vec4<f32>,
    viewport: vec4<f32>,
    ground: vec4<f32>,
};
@group(0) @binding(0) var<uniform> g: Globals;
