// Bones (octahedra) and joints (spheres): instanced, lit solids.

// `Globals` (g) comes from globals.wgsl.

struct VIn {
    @location(0) pos: vec3<f32>,
    @location(1) normal: vec3<f32>,
    @location(2) m0: vec4<f32>,
    @location(3) m1: vec4<f32>,
    @location(4) m2: vec4<f32>,
    @location(5) m3: vec4<f32>,
    @location(6) color: vec4<f32>,
};

struct VOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) normal: vec3<f32>,
    @location(1) color: vec4<f32>,
    @location(2) world: vec3<f32>,
};

@vertex
fn vs_main(v: VIn) -> VOut {
    let m = mat4x4<f32>(v.m0, v.m1, v.m2, v.m3);
    let world = m * vec4<f32>(v.pos, 1.0);
    // Inverse-transpose of a rotation with per-axis scale: divide by the squared scale.
    let s = vec3<f32>(dot(v.m0.xyz, v.m0.xyz), dot(v.m1.xyz, v.m1.xyz), dot(v.m2.xyz, v.m2.xyz));
    let n = v.m0.xyz * (v.normal.x / max(s.x, 1e-30))
          + v.m1.xyz * (v.normal.y / max(s.y, 1e-30))
          + v.m2.xyz * (v.normal.z / max(s.z, 1e-30));
    var out: VOut;
    out.clip = g.view_proj * world;
    out.normal = n;
    out.color = v.color;
    out.world = world.xyz;
    return out;
}

@fragment
fn fs_main(i: VOut) -> @location(0) vec4<f32> {
    let n = normalize(i.normal);
    let v = normalize(g.eye.xyz - i.world);
    let l = normalize(g.light_dir.xyz);
    let diffuse = max(dot(n, l), 0.0);
    let fill = max(dot(n, v), 0.0);
    let h = normalize(l + v);
    let spec = pow(max(dot(n, h), 0.0), 40.0) * 0.35;
    let rim = pow(1.0 - fill, 3.0) * 0.2;
    let c = i.color.rgb * (0.28 + 0.5 * diffuse + 0.3 * fill) + vec3<f32>(spec + rim);
    return vec4<f32>(c, i.color.a);
}
