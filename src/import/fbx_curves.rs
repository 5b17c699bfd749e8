//! A node's local transform sampled from its own curves, for nodes where that is what
//! `ufbx_evaluate_transform` computes: the take's first layer is the only one that animates
//! the node, and of its transform properties it animates only `Lcl Translation`,
//! `Lcl Rotation` and `Lcl Scaling` (ufbx sets the first layer's value as is, whatever its
//! weight; other animated properties such as `Visibility` do not enter the transform). The
//! node's other transform properties (pivots, offsets, pre / post rotation, rotation order)
//! and ufbx's unit / axis adjustments are constant, read once; each time costs the curve
//! evaluations and the composition `ufbxi_get_transform` (ufbx.c) does, in its order:
//! `T · Roff · Rp · Rpre · R · Rpost⁻¹ · Rp⁻¹ · Soff · Sp · S · Sp⁻¹` between the
//! adjustments. What `ufbx_evaluate_transform` spends finding each of the ten transform
//! properties by name in every layer at every call is saved. `tests/import_fbx.rs` compares
//! the result with ufbx's own scene evaluation at every frame of every shared file.

use glam::{DQuat, DVec3};

/// The properties `ufbx_evaluate_transform` reads besides the three this module samples.
const OTHER_TRANSFORM_PROPS: [&str; 7] = [
    "PostRotation",
    "PreRotation",
    "RotationOffset",
    "RotationOrder",
    "RotationPivot",
    "ScalingOffset",
    "ScalingPivot",
];

/// One node's curves (indices into the first layer's `anim_props`) and constants.
pub(super) struct NodeCurves {
    /// `anim_props` index of Lcl Translation / Rotation / Scaling in layer 0, if animated.
    props: [Option<usize>; 3],
    /// The static Lcl Translation / Rotation (Euler degrees) / Scaling.
    statics: [DVec3; 3],
    order: ufbx::RotationOrder,
    use_rotation_space: bool,
    pre_rotation: DQuat,
    /// PostRotation's quaternion, inverted.
    post_rotation_inv: DQuat,
    scale_pivot: DVec3,
    rot_pivot: DVec3,
    scale_offset: DVec3,
    rot_offset: DVec3,
    adjust: Option<Adjust>,
    mirror: ufbx::MirrorAxis,
}

/// ufbx's space-conversion adjustments of a node (`has_adjust_transform`).
struct Adjust {
    post_rotation: DQuat,
    post_scale: f64,
    pre_translation: DVec3,
    pre_rotation: DQuat,
    pre_scale: f64,
    translation_scale: f64,
}

fn v3(v: ufbx::Vec3) -> DVec3 {
    DVec3::new(v.x, v.y, v.z)
}

fn quat(q: ufbx::Quat) -> DQuat {
    DQuat::from_xyzw(q.x, q.y, q.z, q.w)
}

fn euler(v: DVec3, order: ufbx::RotationOrder) -> DQuat {
    quat(ufbx::euler_to_quat(
        ufbx::Vec3 {
            x: v.x,
            y: v.y,
            z: v.z,
        },
        order,
    ))
}

/// A static vec3 property of the node (its own value or its template's), as
/// `ufbxi_find_vec3` reads it.
fn static_vec3(node: &ufbx::Node, name: &str, default: DVec3) -> DVec3 {
    ufbx::find_prop(&node.element.props, name).map_or(default, |p| {
        DVec3::new(p.value_vec4.x, p.value_vec4.y, p.value_vec4.z)
    })
}

/// A transform under construction, as ufbx's `ufbx_transform` in `ufbxi_get_transform`:
/// each step left-multiplies it.
struct Building {
    t: DVec3,
    r: DQuat,
    s: DVec3,
}

impl Building {
    fn rotate(&mut self, q: DQuat) {
        self.r = q * self.r;
        self.t = q * self.t;
    }
    fn scale(&mut self, v: DVec3) {
        self.t *= v;
        self.s *= v;
    }
}

impl NodeCurves {
    /// The node's curves in `anim`, or `None` when ufbx's own evaluation is needed (another
    /// layer animates the node, a property other than the three is animated, connected or
    /// overridden, or ufbx made scale helper nodes).
    pub(super) fn new(anim: &ufbx::Anim, node: &ufbx::Node) -> Option<Self> {
        if node.is_root || !anim.prop_overrides.is_empty() || !anim.transform_overrides.is_empty() {
            return None;
        }
        if node.is_scale_helper
            || node.scale_helper.is_some()
            || node.parent.as_ref().is_some_and(|p| {
                p.scale_helper.is_some()
                    || p.inherit_scale_node
                        .as_ref()
                        .is_some_and(|i| i.scale_helper.is_some())
            })
        {
            return None;
        }
        let id = node.element.element_id;
        let layers = &anim.layers;
        let first = layers.first()?;
        if layers
            .iter()
            .skip(1)
            .any(|l| l.anim_props.iter().any(|p| p.element.element_id == id))
        {
            return None;
        }
        let mut props = [None; 3];
        for (i, p) in first.anim_props.iter().enumerate() {
            if p.element.element_id != id {
                continue;
            }
            match p.prop_name.as_ref() {
                "Lcl Translation" => props[0] = Some(i),
                "Lcl Rotation" => props[1] = Some(i),
                "Lcl Scaling" => props[2] = Some(i),
                // Visibility, custom properties: not part of the transform.
                other if OTHER_TRANSFORM_PROPS.contains(&other) => return None,
                _ => {}
            }
        }
        // A connected transform property takes its value from another element.
        let names = ["Lcl Translation", "Lcl Rotation", "Lcl Scaling"];
        if names
            .iter()
            .chain(OTHER_TRANSFORM_PROPS.iter())
            .filter_map(|n| ufbx::find_prop(&node.element.props, n))
            .any(|p| p.flags.has_any(ufbx::PropFlags::CONNECTED))
        {
            return None;
        }
        let xyz = ufbx::RotationOrder::Xyz;
        let adjust = node.has_adjust_transform.then(|| Adjust {
            post_rotation: quat(node.adjust_post_rotation),
            post_scale: node.adjust_post_scale,
            pre_translation: v3(node.adjust_pre_translation),
            pre_rotation: quat(node.adjust_pre_rotation),
            pre_scale: node.adjust_pre_scale,
            translation_scale: node.adjust_translation_scale,
        });
        Some(NodeCurves {
            props,
            statics: [
                static_vec3(node, "Lcl Translation", DVec3::ZERO),
                static_vec3(node, "Lcl Rotation", DVec3::ZERO),
                static_vec3(node, "Lcl Scaling", DVec3::ONE),
            ],
            order: node.rotation_order,
            use_rotation_space: node.use_rotation_space,
            pre_rotation: euler(static_vec3(node, "PreRotation", DVec3::ZERO), xyz),
            post_rotation_inv: euler(static_vec3(node, "PostRotation", DVec3::ZERO), xyz)
                .conjugate(),
            scale_pivot: static_vec3(node, "ScalingPivot", DVec3::ZERO),
            rot_pivot: static_vec3(node, "RotationPivot", DVec3::ZERO),
            scale_offset: static_vec3(node, "ScalingOffset", DVec3::ZERO),
            rot_offset: static_vec3(node, "RotationOffset", DVec3::ZERO),
            adjust,
            mirror: node.adjust_mirror_axis,
        })
    }

    /// The node's local transform at `time` (what `ufbx_evaluate_transform` returns).
    pub(super) fn evaluate(&self, anim: &ufbx::Anim, time: f64) -> ufbx::Transform {
        let first = &anim.layers[0];
        let [translation, rotation, scaling] = std::array::from_fn(|i| match self.props[i] {
            Some(p) => v3(ufbx::evaluate_anim_value_vec3(
                &first.anim_props[p].anim_value,
                time,
            )),
            None => self.statics[i],
        });
        let mut b = Building {
            t: DVec3::ZERO,
            r: DQuat::IDENTITY,
            s: DVec3::ONE,
        };
        if let Some(a) = &self.adjust {
            b.rotate(a.post_rotation);
            b.scale(DVec3::splat(a.post_scale));
        }
        b.t -= self.scale_pivot;
        b.scale(scaling);
        b.t += self.scale_pivot;
        b.t += self.scale_offset;
        b.t -= self.rot_pivot;
        if self.use_rotation_space {
            b.rotate(self.post_rotation_inv);
            b.rotate(euler(rotation, self.order));
            b.rotate(self.pre_rotation);
        } else {
            b.rotate(euler(rotation, ufbx::RotationOrder::Xyz));
        }
        b.t += self.rot_pivot;
        b.t += self.rot_offset;
        b.t += translation;
        if let Some(a) = &self.adjust {
            b.t += a.pre_translation;
            b.rotate(a.pre_rotation);
            b.scale(DVec3::splat(a.pre_scale));
            b.t *= a.translation_scale;
        }
        let (mut t, mut r) = (b.t, b.r);
        match self.mirror {
            ufbx::MirrorAxis::None => {}
            ufbx::MirrorAxis::X => {
                t.x = -t.x;
                (r.y, r.z) = (-r.y, -r.z);
            }
            ufbx::MirrorAxis::Y => {
                t.y = -t.y;
                (r.z, r.x) = (-r.z, -r.x);
            }
            ufbx::MirrorAxis::Z => {
                t.z = -t.z;
                (r.x, r.y) = (-r.x, -r.y);
            }
        }
        ufbx::Transform {
            translation: ufbx::Vec3 {
                x: t.x,
                y: t.y,
                z: t.z,
            },
            rotation: ufbx::Quat {
                x: r.x,
                y: r.y,
                z: r.z,
                w: r.w,
            },
            scale: ufbx::Vec3 {
                x: b.s.x,
                y: b.s.y,
                z: b.s.z,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: ufbx::Vec3, b: ufbx::Vec3) -> f64 {
        (v3(a) - v3(b)).abs().max_element() / (1.0 + v3(b).abs().max_element())
    }

    /// Every node of every shared FBX file the curves can sample gives, at every frame of
    /// every take (and between frames), what `ufbx_evaluate_transform` gives; the layered
    /// take is left to ufbx.
    #[test]
    fn curves_give_ufbx_evaluate_transform_on_every_shared_file() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/fbx");
        let mut files: Vec<_> = std::fs::read_dir(&dir)
            .expect("the shared FBX files")
            .map(|e| e.unwrap().path())
            .filter(|p| p.extension().is_some_and(|e| e == "fbx"))
            .collect();
        files.sort();
        assert!(files.len() >= 10, "{} FBX files", files.len());
        let (mut sampled, mut refused, mut compared) = (0usize, 0usize, 0usize);
        let mut worst = 0.0f64;
        for path in &files {
            let bytes = std::fs::read(path).unwrap();
            let scene = super::super::fbx::load_scene(&bytes).unwrap();
            let fps = scene.settings.frames_per_second;
            for stack in &scene.anim_stacks {
                let frames = ((stack.time_end - stack.time_begin) * fps).round() as usize + 1;
                for node in &scene.nodes {
                    let animated = stack.anim.layers.iter().any(|l| {
                        l.anim_props
                            .iter()
                            .any(|p| p.element.element_id == node.element.element_id)
                    });
                    if !animated {
                        continue;
                    }
                    let Some(curves) = NodeCurves::new(&stack.anim, node) else {
                        refused += 1;
                        continue;
                    };
                    sampled += 1;
                    for f in 0..2 * frames {
                        let t = stack.time_begin + f as f64 / (2.0 * fps);
                        let ours = curves.evaluate(&stack.anim, t);
                        let theirs = ufbx::evaluate_transform(&stack.anim, node, t);
                        let dq = quat(ours.rotation).dot(quat(theirs.rotation)).abs();
                        let d = close(ours.translation, theirs.translation)
                            .max(close(ours.scale, theirs.scale))
                            .max(1.0 - dq);
                        assert!(
                            d < 1e-12,
                            "{}: node '{}' at {t} s: {d:e}",
                            path.display(),
                            node.element.name
                        );
                        worst = worst.max(d);
                        compared += 1;
                    }
                }
            }
        }
        eprintln!(
            "{sampled} node-takes sampled from curves ({compared} times, worst {worst:e}), {refused} left to ufbx"
        );
        assert!(
            sampled > 100 && refused > 0,
            "{sampled} sampled, {refused} refused"
        );
    }
}
