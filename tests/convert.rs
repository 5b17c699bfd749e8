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
    let st = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .arg("convert")
        .arg(common::asset("CMU_131_01.bvh"))
        .arg(&out)
        .output()
        .unwrap();
    assert!(
        st.status.success(),
        "{}",
        String::from_utf8_lossy(&st.stderr)
    );
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
