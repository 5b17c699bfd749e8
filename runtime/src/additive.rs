//! Additive layering (docs/RUNTIME.md): an additive pose applied onto a base pose with a
//! weight, per joint in local space, by ACL's rules (`AdditiveMode`).

use glam::{Quat, Vec3};

use crate::clip::JointPose;
use crate::meta::AdditiveMode;

/// The additive identity of `mode` (`base ⊕ identity = base`): translation 0, rotation
/// identity, scale 1 (0 for `Additive1`). A rest track of an additive clip decodes to it.
pub fn identity(mode: AdditiveMode) -> JointPose {
    JointPose {
        translation: [0.0; 3],
        rotation: [0.0, 0.0, 0.0, 1.0],
        scale: if mode == AdditiveMode::Additive1 {
            [0.0; 3]
        } else {
            [1.0; 3]
        },
    }
}

/// The pose rest tracks of a clip decode to: the skeleton's `rest`, or for an additive
/// clip of `mode` its identity for every joint.
pub fn rest_for(rest: &[JointPose], additive: Option<AdditiveMode>) -> Vec<JointPose> {
    match additive {
        Some(mode) => vec![identity(mode); rest.len()],
        None => rest.to_vec(),
    }
}

/// `base ⊕ additive` for one joint at full weight, as the encoder measured it:
///
/// * `Relative`: the transform product `base · additive` (additive applied first):
///   translation `base.r · (base.s ∘ add.t) + base.t`, rotation `base.r · add.r`, scale
///   `base.s ∘ add.s`;
/// * `Additive0`: translation `base.t + add.t`, rotation `base.r · add.r`, scale
///   `base.s ∘ add.s`;
/// * `Additive1`: as `Additive0` with scale `base.s ∘ (1 + add.s)`.
///
/// (`·` is the Hamilton product: ACL's `quat_mul(add, base)`.)
pub fn compose(base: &JointPose, add: &JointPose, mode: AdditiveMode) -> JointPose {
    let (bt, br, bs) = (
        Vec3::from_array(base.translation),
        Quat::from_array(base.rotation),
        Vec3::from_array(base.scale),
    );
    let (at, ar, ax) = (
        Vec3::from_array(add.translation),
        Quat::from_array(add.rotation),
        Vec3::from_array(add.scale),
    );
    let rotation = (br * ar).normalize().to_array();
    let (translation, scale) = match mode {
        AdditiveMode::Relative => (br * (bs * at) + bt, bs * ax),
        AdditiveMode::Additive0 => (bt + at, bs * ax),
        AdditiveMode::Additive1 => (bt + at, bs * (Vec3::ONE + ax)),
    };
    JointPose {
        translation: translation.to_array(),
        rotation,
        scale: scale.to_array(),
    }
}

/// The additive pose scaled by `weight` (0: the identity of `mode`, 1: itself): translation
/// times the weight, rotation slerped from the identity, scale blended from the identity
/// scale (1, or 0 for `Additive1`).
pub fn weighted(add: &JointPose, weight: f32, mode: AdditiveMode) -> JointPose {
    if weight == 1.0 {
        return *add;
    }
    let identity_scale = if mode == AdditiveMode::Additive1 {
        Vec3::ZERO
    } else {
        Vec3::ONE
    };
    let mut r = Quat::from_array(add.rotation);
    if r.w < 0.0 {
        r = -r;
    }
    JointPose {
        translation: (Vec3::from_array(add.translation) * weight).to_array(),
        rotation: Quat::IDENTITY.slerp(r, weight).normalize().to_array(),
        scale: identity_scale
            .lerp(Vec3::from_array(add.scale), weight)
            .to_array(),
    }
}

/// Applies `additive` onto `base` in place with `weight` (1: the full layer as the encoder
/// measured it, 0: `base` unchanged), joint by joint over the shorter of the two poses.
/// Allocates nothing.
pub fn apply_additive(
    base: &mut [JointPose],
    additive: &[JointPose],
    weight: f32,
    mode: AdditiveMode,
) {
    if weight == 0.0 || weight.is_nan() {
        return;
    }
    for (b, a) in base.iter_mut().zip(additive) {
        *b = compose(b, &weighted(a, weight, mode), mode);
    }
}
