// The skinned mesh: linear blend skinning on the GPU, drawn as a translucent shell.
// Instance 0 is the original pose, instance 1 the compressed pose.

// `Globals` (g) comes from globals.wgsl.

struct MeshParams {
    offset: array<vec4<f32>, 2>,
    tint: array<vec4<f32>, 2>,
    // x: palette matrices per instance
    counts: vec4<u32>,
};
@group(1) @binding(0) var<uniform> p: MeshParams;
@group(1) @binding(1) var<storage, read> palette: array<mat4x4<f32>>;

struct VIn {
    @location(0) pos: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) joints: vec4<u32>,
    @location(3) weights: vec4<f32>,
    @location(4) color: vec4<f32>,
    @location(5) base: u32,
};

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) color: vec4<f32>,
    @location(2) world: vec3<f32>,
};

@vertex
fn vs_main(v: VIn, @builtin(instance_index) inst: u32) -> VOut {
    let b = inst * p.counts.x + v.base;
    let skin = palette[b + v.joints.x] * v.weights.x
             + palette[b + v.joints.y] * v.weights.y
             + palette[b + v.joints.z] * v.weights.z
             + palette[b + v.joints.w] * v.weights.w;
    let world = skin * vec4<f32>(v.pos, 1.0) + vec4<f32>(p.offset[inst].xyz, 0.0);
    var out: VOut;
    out.clip = g.view_proj * world;
    out.normal = (skin * vec4<f32>(v.normal, 0.0)).xyz;
    out.color = v.color * p.tint[inst];
    out.world = world.xyz;
    return out;
}

@fragment
fn fs_main(i: VOut) -> @location(0) vec4<f32> {
    let n = normalize(i.normal);
    let v = normalize(g.eye.xyz - i.world);
    let l = normalize(g.light_dir.xyz);
    let diffuse = max(dot(n, l), 0.0);
    let fill = abs(dot(n, v));
    let c = i.color.rgb * (0.3 + 0.45 * diffuse + 0.3 * fill);
    return vec4<f32>(c, i.color.a);
}
