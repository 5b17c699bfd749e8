//! three.js' quaternion interpolation, as its `AnimationMixer` plays LINEAR rotation
//! channels (`QuaternionLinearInterpolant` -> `Quaternion.slerpFlat`, three 0.187), so the
//! verifier measures what three.js shows rather than the spec's slerp.
//!
//! It differs from the spec where keys are not unit length (normalized SHORT or QUATERNION
//! filtered keys as stored): keys more than about 3.6 degrees apart (`dot < 0.9995`) are
//! slerped *without normalizing* (the result's length runs between the two keys' lengths, and
//! its matrix is scaled by it), closer keys are lerped then normalized. The result lands in the
//! mixer's `Float64Array`; keys arrive as `Float32Array` values.

use glam::{DVec4, Vec4};

/// `Quaternion.slerpFlat(dst, 0, [a], 0, [b], 0, t)` of three.js, in double precision as
/// JavaScript computes it, on the key values exactly as stored.
pub fn slerp_flat(a: Vec4, b: Vec4, t: f64) -> DVec4 {
    let a = a.as_dvec4();
    let mut b = b.as_dvec4();
    if a == b {
        return a;
    }
    let mut dot = a.dot(b);
    if dot < 0.0 {
        b = -b;
        dot = -dot;
    }
    let s = 1.0 - t;
    if dot < 0.9995 {
        let theta = dot.acos();
        let sin = theta.sin();
        let s = (s * theta).sin() / sin;
        let t = (t * theta).sin() / sin;
        a * s + b * t
    } else {
        let v = a * s + b * t;
        v * (1.0 / v.length())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use glam::Quat;

    #[test]
    fn unit_keys_give_the_spec_slerp() {
        let a = Vec4::from(Quat::from_rotation_z(0.1));
        let b = Vec4::from(Quat::from_rotation_z(1.3));
        for i in 0..=10 {
            let u = i as f64 / 10.0;
            let want = Vec4::from(Quat::from_rotation_z(0.1 + 1.2 * u as f32));
            assert!(
                (slerp_flat(a, b, u).as_vec4() - want).length() < 1e-6,
                "{u}"
            );
        }
    }

    #[test]
    fn keys_off_unit_length_stay_off_between_wide_keys() {
        // Two keys 1.2 rad apart, each 1e-3 too long: three.js plays a quaternion too long
        // between them as well (not normalized; the weights come from acos of the keys' dot,
        // 1.002 cos, so it is a little shorter than the keys).
        let a = Vec4::from(Quat::from_rotation_z(0.1)) * 1.001;
        let b = Vec4::from(Quat::from_rotation_z(1.3)) * 1.001;
        let mid = slerp_flat(a, b, 0.5).length();
        assert!(mid > 1.0005 && mid < 1.001, "{mid}");
        // Close keys are lerped and normalized.
        let c = Vec4::from(Quat::from_rotation_z(0.12)) * 1.001;
        assert!((slerp_flat(a, c, 0.5).length() - 1.0).abs() < 1e-12);
    }
}
