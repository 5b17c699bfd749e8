//! glTF is metres (spec §3.4): a scene written from a BVH or ACL source, whose lengths are
//! in whatever unit the capture used, is first converted to metres so that every DCC
//! opens it at the right size (a CMU BVH in its ASF unit was a 26.6 m figure in Blender).
//!
//! The conversion is baked, not a scale on a new root node: every length is multiplied by
//! `1 / unit.per_metre()` (rest and animated translations, mesh positions, the translation
//! of inverse bind matrices, sockets' levers, the source's tolerance and marker offsets); rotations and
//! scales are unchanged. Object-space poses are the source's times that factor, so the
//! motion and the visual error (relative to the tolerance, in the same unit) are the same,
//! and the glTF has exactly the source's joints, no extra node.

use crate::import::{Asset, SourceFormat};
use crate::model::LengthUnit;

/// Whether [`in_metres`] applies to assets of this format: BVH and ACL clips declare no
/// unit; glTF declares metres (a file authored in other units stays as it is: its
/// compressed export keeps the original's nodes). FBX is read in metres, and is written
/// as a new scene like BVH and ACL: from the unit in force (metres, unless its proportions
/// or the user say otherwise).
pub fn converts(format: SourceFormat) -> bool {
    format != SourceFormat::Gltf
}

/// The unit a compressed glTF of `asset` is written and measured in: metres for the
/// formats [`converts`] applies to, else the unit in force.
pub fn gltf_unit(asset: &Asset, settings: &crate::settings::Settings) -> LengthUnit {
    if converts(asset.format) {
        LengthUnit::Metre
    } else {
        settings.unit_for(asset)
    }
}

/// `asset` with every length converted from `unit` to metres; its units then say metres
/// (sizes converted too). A unit of one metre returns the asset unchanged.
pub fn in_metres(asset: &Asset, unit: LengthUnit) -> Asset {
    let mut out = asset.clone();
    out.units = asset.units.converted_to_metres(unit);
    if unit == LengthUnit::Metre {
        return out;
    }
    let k = 1.0 / unit.per_metre();
    for joint in out.skeleton.joints.iter_mut() {
        joint.rest.translation *= k;
        if let Some(d) = joint.source_marker_offset.as_mut() {
            *d *= k;
        }
    }
    for socket in out.skeleton.sockets.iter_mut() {
        socket.offset.translation *= k as f64;
    }
    for clip in out.clips.iter_mut() {
        for r in clip
            .scalar_tracks
            .iter_mut()
            .flat_map(|s| s.reach.iter_mut())
        {
            *r *= k;
        }
        for tracks in clip.tracks.iter_mut() {
            for t in tracks.translations.iter_mut() {
                *t *= k;
            }
        }
    }
    for mesh in out.meshes.iter_mut() {
        for p in mesh.positions.iter_mut() {
            *p *= k;
        }
        for o in mesh
            .morph_targets
            .iter_mut()
            .flat_map(|t| t.offsets.iter_mut())
        {
            *o *= k;
        }
        // Scaling the whole scene by K maps a bind matrix M to K M K^-1: only the
        // translation column changes.
        for m in mesh.inverse_bind.iter_mut() {
            m.w_axis = (m.w_axis.truncate() * k).extend(m.w_axis.w);
        }
    }
    out.source_tolerance = asset.source_tolerance.map(|t| t * k);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Joint, Skeleton, Transform, local_to_object};
    use glam::{Affine3A, Quat, Vec3};

    #[test]
    fn poses_scale_by_the_unit_and_nothing_else_changes() {
        let rest = |t: Vec3| Transform::new(t, Quat::from_rotation_z(0.3), Vec3::splat(1.5));
        let mut root = Joint::new("root", None, rest(Vec3::new(0.0, 90.0, 0.0)));
        root.source_marker_offset = Some(3.0);
        let skeleton = Skeleton::new(vec![
            root,
            Joint::new("knee", Some(0), rest(Vec3::new(0.0, -40.0, 5.0))),
        ])
        .unwrap();
        let mut clip = crate::model::Clip::rest("a", &skeleton, 30.0, 2);
        clip.tracks[1].translations[1] = Vec3::new(1.0, -42.0, 5.0);
        let units = crate::model::Units::measure(&skeleton, std::slice::from_ref(&clip), None);
        let asset = Asset {
            path: "x.bvh".into(),
            format: SourceFormat::Bvh,
            skeleton,
            clips: vec![clip],
            meshes: Vec::new(),
            source_tolerance: Some(0.01),
            source_additive: Vec::new(),
            units,
            warnings: Vec::new(),
            fbx: None,
            held: Vec::new(),
        };
        let m = in_metres(&asset, LengthUnit::Centimetre);
        assert_eq!(m.units.unit, LengthUnit::Metre);
        assert!((m.units.height - asset.units.height / 100.0).abs() < 1e-6);
        assert_eq!(m.source_tolerance, Some(0.0001));
        assert_eq!(m.skeleton.joints[0].source_marker_offset, Some(0.03));
        let pose = |a: &Asset, f: usize| {
            let mut local = vec![Transform::IDENTITY; 2];
            a.clips[0].sample_local(f as f32, &mut local);
            let mut obj = vec![Affine3A::IDENTITY; 2];
            local_to_object(&a.skeleton, &local, &mut obj);
            obj
        };
        for f in 0..2 {
            for (a, b) in pose(&asset, f).iter().zip(pose(&m, f)) {
                assert!(
                    (Vec3::from(a.translation) / 100.0 - Vec3::from(b.translation)).length() < 1e-5
                );
                assert!(
                    a.matrix3.abs_diff_eq(b.matrix3, 1e-6),
                    "rotation and scale kept"
                );
            }
        }
        assert_eq!(
            in_metres(&asset, LengthUnit::Metre).skeleton,
            asset.skeleton
        );
    }
}
