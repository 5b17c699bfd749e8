// Virtual markers as screen-sized discs, and overlay lines (marker sticks, error vectors,
// ghost bones), both drawn on top of the solids.

// `Globals` (g) comes from globals.wgsl.

struct PointIn {
    @location(0) center: vec3<f32>,
    @location(1) size_px: f32,
    @location(2) color: vec4<f32>,
};

struct PointOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) corner: vec2<f32>,
    @location(1) color: vec4<f32>,
};

@vertex
fn vs_point(p: PointIn, @builtin(vertex_index) vi: u32) -> PointOut {
    var corners = array<vec2<f32>, 6>(
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, -1.0), vec2<f32>(1.0, 1.0),
        vec2<f32>(-1.0, -1.0), vec2<f32>(1.0, 1.0), vec2<f32>(-1.0, 1.0),
    );
    let c = corners[vi];
    var clip = g.view_proj * vec4<f32>(p.center, 1.0);
    let half_px = p.size_px * 0.5;
    clip = vec4<f32>(clip.xy + c * half_px * 2.0 / g.viewport.xy * clip.w, clip.zw);
    var out: PointOut;
    out.clip = clip;
    out.corner = c;
    out.color = p.color;
    return out;
}

@fragment
fn fs_point(i: PointOut) -> @location(0) vec4<f32> {
    let r = length(i.corner);
    if (r > 1.0) {
        discard;
    }
    // A dark rim keeps markers readable on any background.
    let rim = smoothstep(0.6, 0.85, r);
    return vec4<f32>(mix(i.color.rgb, i.color.rgb * 0.25, rim), i.color.a);
}

struct LineIn {
    @location(0) pos: vec3<f32>,
    @location(1) color: vec4<f32>,
};

struct LineOut {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
};

@vertex
fn vs_line(v: LineIn) -> LineOut {
    var out: LineOut;
    out.clip = g.view_proj * vec4<f32>(v.pos, 1.0);
    out.color = v.color;
    return out;
}

@fragment
fn fs_line(i: LineOut) -> @location(0) vec4<f32> {
    return i.color;
}
