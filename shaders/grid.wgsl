// The ground grid: lines on the floor plane fading out with distance.

// `Globals` (g) comes from globals.wgsl.

struct VIn {
    @location(0) pos: vec3<f32>,
    @location(1) color: vec4<f32>,
};

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
    @location(1) world: vec3<f32>,
};

@vertex
fn vs_main(v: VIn) -> VOut {
    var out: VOut;
    out.clip = g.view_proj * vec4<f32>(v.pos, 1.0);
    out.color = v.color;
    out.world = v.pos;
    return out;
}

@fragment
fn fs_main(i: VOut) -> @location(0) vec4<f32> {
    let d = distance(i.world.xz, g.ground.xz);
    let fade = 1.0 - smoothstep(0.55 * g.ground.w, g.ground.w, d);
    return vec4<f32>(i.color.rgb, i.color.a * fade);
}
