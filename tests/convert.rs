//! `skelpack convert`: BVH and ACL clips become glTF scenes that re-import to the same poses.

mod common;

use std::path::Path;
use std::process::Command;

use skelpack::import;

fn check(path: &Path, ext: &str) {
    let (orig, back, _dir, _out) = common::scene_round_trip(path, ext);
    // Every deforming joint comes back under its name; End Sites (non-deforming leaves)
    // are written as nodes but carry no markers.
    for j in orig.skeleton.joints.iter().filter(|j| j.deforming) {
        let b = back
            .skeleton
            .find(&j.name)
            .unwrap_or_else(|| panic!("{} lost", j.name));
        assert!(back.skeleton.joints[b].deforming, "{}", j.name);
    }
    assert_eq!(orig.clips.len(), back.clips.len());
    let offset = orig.units.from_metres(0.03);
    for (a, b) in orig.clips.iter().zip(&back.clips) {
        if a.frame_count > 1 {
            // A single key carries no rate (glTF stores times, not rates).
            assert_eq!(a.sample_rate, b.sample_rate, "{}: rate", path.display());
        }
        assert_eq!(a.frame_count, b.frame_count, "{}: frames", path.display());
        let e = common::max_error(&orig.skeleton, a, &back.skeleton, b, offset);
        let bound = 1e-6 * orig.units.extent.max(1.0) * 10.0;
        assert!(e <= bound, "{}: max error {e} > {bound}", path.display());
    }
}

#[test]
fn bvh_files_convert_to_the_same_poses() {
    for name in ["CMU_131_01.bvh", "pirouette.bvh"] {
        check(&common::asset(name), "glb");
    }
}

#[test]
fn acl_clips_convert_to_the_same_poses() {
    let files = import::collect_files(&common::asset("acl")).unwrap();
    assert!(files.len() >= 8, "{files:?}");
    for f in files {
        check(&f, "gltf");
    }
}

#[test]
fn convert_command_writes_a_glb() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("walk.glb");
    common::player::skelpack_ok(&["convert"], &[&common::asset("CMU_131_01.bvh"), &out]);
    let a = import::load(&out).unwrap();
    assert_eq!(a.clips.len(), 1);
    assert_eq!(a.clips[0].sample_rate, 120.0);
    // A bad extension is a one-line error, exit code 2.
    let st = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .arg("convert")
        .arg(common::asset("CMU_131_01.bvh"))
        .arg(dir.path().join("walk.fbx"))
        .output()
        .unwrap();
    assert_eq!(st.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&st.stderr).contains(".glb or .gltf"));
}

/// The character's height in the glTF file itself, read with the `gltf` crate (not
/// skelpack's importer): the median over the first animation's keys of the joints' Y extent,
/// every node's world transform composed from its TRS and the channels' values at that key.
fn gltf_height(path: &Path) -> f32 {
    use glam::{Mat4, Quat, Vec3};
    use gltf::animation::util::ReadOutputs;
    let (doc, buffers, _) = gltf::import(path).unwrap();
    let nodes: Vec<gltf::Node> = doc.nodes().collect();
    let mut parent = vec![None; nodes.len()];
    for n in &nodes {
        for c in n.children() {
            parent[c.index()] = Some(n.index());
        }
    }
    let anim = doc.animations().next().expect("an animation");
    let mut channels = Vec::new();
    let mut keys = 0;
    for ch in anim.channels() {
        let r = ch.reader(|b| Some(&buffers[b.index()]));
        keys = r.read_inputs().unwrap().count();
        let values: Vec<[f32; 4]> = match r.read_outputs().unwrap() {
            ReadOutputs::Translations(v) => v.map(|[x, y, z]| [x, y, z, 0.0]).collect(),
            ReadOutputs::Rotations(v) => v.into_f32().collect(),
            ReadOutputs::Scales(v) => v.map(|[x, y, z]| [x, y, z, 0.0]).collect(),
            ReadOutputs::MorphTargetWeights(_) => continue,
        };
        channels.push((ch.target().node().index(), ch.target().property(), values));
    }
    let mut heights = Vec::new();
    for k in 0..keys {
        let mut trs: Vec<_> = nodes.iter().map(|n| n.transform().decomposed()).collect();
        for (node, prop, values) in &channels {
            let v = values[k];
            match prop {
                gltf::animation::Property::Translation => trs[*node].0 = [v[0], v[1], v[2]],
                gltf::animation::Property::Rotation => trs[*node].1 = v,
                gltf::animation::Property::Scale => trs[*node].2 = [v[0], v[1], v[2]],
                _ => {}
            }
        }
        // Nodes are written parents first.
        let mut world = vec![Mat4::IDENTITY; nodes.len()];
        let (mut lo, mut hi) = (f32::INFINITY, f32::NEG_INFINITY);
        for i in 0..nodes.len() {
            let (t, r, s) = trs[i];
            let local = Mat4::from_scale_rotation_translation(
                Vec3::from(s),
                Quat::from_array(r),
                Vec3::from(t),
            );
            world[i] = parent[i].map_or(local, |p| {
                assert!(p < i, "parents first");
                world[p] * local
            });
            let y = world[i].w_axis.y;
            lo = lo.min(y);
            hi = hi.max(y);
        }
        heights.push(hi - lo);
    }
    heights.sort_by(f32::total_cmp);
    heights[heights.len() / 2]
}

/// Issue 24 item 6: glTF is metres, so a BVH in another unit (CMU's ASF unit) is written in
/// metres: a person 1-2.3 m tall in the file itself, the motion the source's scaled.
#[test]
fn converted_bvh_files_are_in_metres() {
    let dir = tempfile::tempdir().unwrap();
    for name in ["CMU_131_01.bvh", "pirouette.bvh"] {
        let input = common::asset(name);
        let out = dir.path().join(format!("{name}.glb"));
        common::player::skelpack_ok(&["convert"], &[&input, &out]);
        let h = gltf_height(&out);
        assert!((1.0..=2.3).contains(&h), "{name}: {h} m tall in its glTF");
        // The same poses, in metres: skelpack's importer agrees, at the source's rate.
        let orig = import::load(&input).unwrap();
        let back = import::load(&out).unwrap();
        assert_eq!(back.units.unit, skelpack::model::LengthUnit::Metre);
        let metres = skelpack::export::metres::in_metres(&orig, orig.units.unit);
        let (a, b) = (&metres.clips[0], &back.clips[0]);
        assert_eq!(
            (a.sample_rate, a.frame_count),
            (b.sample_rate, b.frame_count)
        );
        let e = common::max_error(&metres.skeleton, a, &back.skeleton, b, 0.03);
        assert!(e < 1e-5, "{name}: {e} m from the source in metres");
    }
    // --unit overrides the inferred unit (here: the file declared in centimetres).
    let out = dir.path().join("cm.glb");
    common::player::skelpack_ok(
        &["convert", "--unit", "cm"],
        &[&common::asset("pirouette.bvh"), &out],
    );
    let orig = import::load(&common::asset("pirouette.bvh")).unwrap();
    let h = gltf_height(&out);
    assert!((h * 100.0 / orig.units.height - 1.0).abs() < 1e-2, "{h}");
}

/// A glTF source whose curves leave the chord of their frames (InterpolationTest's three
/// CUBICSPLINE clips) converts to a scene that follows those curves between frames: written
/// on the codec's finer grid, and re-imported at the source's rate and frame count.
#[test]
fn cubic_sources_convert_with_their_curves_between_frames() {
    use skelpack::metric::{Reference, measure};
    use skelpack::settings::Settings;
    let src = common::asset("InterpolationTest.glb");
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("x.glb");
    let run = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .arg("convert")
        .arg(&src)
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let orig = import::load(&src).unwrap();
    let back = import::load(&out).unwrap();
    let mut finer = 0;
    for a in &orig.clips {
        let b = (back.clips.iter().find(|b| b.name == a.name))
            .unwrap_or_else(|| panic!("{} lost", a.name));
        assert_eq!(a.sample_rate, b.sample_rate, "{}: rate", a.name);
        assert_eq!(a.frame_count, b.frame_count, "{}: frames", a.name);
        finer += usize::from(!b.between.is_empty());
        // Against the source's own curve at 8 points per frame interval.
        let b = common::remap(&back.skeleton, b, &orig.skeleton);
        let reference = Reference::with_inner_points(&orig.skeleton, a, a.frame_count, 8);
        let limits = Settings::default().resolve(&orig, &a.name).limits;
        let e = measure(&orig.skeleton, &reference, &b, &limits, true);
        let mid = e.midpoints.unwrap();
        assert!(
            e.within_tolerance() && mid.violations == 0,
            "{}: {} mm at frames, {} mm between",
            a.name,
            e.samples.max * 1e3,
            mid.max * 1e3
        );
    }
    // The cubic clips come back with their keys between frames.
    assert!(finer >= 3, "{finer} clips with keys between frames");
}
