#![cfg(feature = "gui")]
//! The clip's morph-weight tracks in the app (issue 26): listed in a "Curves" section under
//! the joint table with the keys the codec kept and their error against the tolerance; a
//! click shows a track's weights in the curves panel (source keys, decoded curve, kept
//! keys), and "Back to the joint" or another joint brings the joint's curves back. An
//! additive clip is drawn on its base.

use egui_kittest::kittest::Queryable;
use skelpack::app::panels::{curves, scalar_curves};

mod app_harness;
mod common;
use app_harness::{opened, settle};

const SIZE: [f32; 2] = [1600.0, 1000.0];

#[test]
fn a_clips_weight_tracks_are_listed_and_plotted_with_their_kept_keys() {
    let dir = tempfile::tempdir().unwrap();
    let faces = common::morph::robot_with_moving_faces(dir.path());
    let mut h = opened(Some(faces), SIZE);
    settle(&mut h);
    let (name, source_keys, kept, error, tolerance) = {
        let doc = h.state().document().unwrap();
        let src = &doc.asset.clips[doc.clip].scalar_tracks;
        assert!(!src.is_empty(), "the faces variant has weight tracks");
        let stored = &doc
            .result
            .as_ref()
            .expect("a result")
            .clip
            .playback
            .scalar_tracks;
        let s = stored.iter().find(|s| s.name == src[0].name).unwrap();
        let first = doc.asset.skeleton.deforming_joints().next().unwrap();
        (
            src[0].name.clone(),
            src[0].times.len(),
            s.times.len(),
            s.max_error,
            doc.resolved.limits.tolerance[first],
        )
    };
    assert!(kept < source_keys, "{kept} of {source_keys} keys kept");
    assert!(error <= tolerance, "{error} over {tolerance}");
    h.get_by_label_contains(&format!("{} (", scalar_curves::HEADING));
    // The row states the kept keys of the source's.
    h.get_by_label(&scalar_curves::row_label(&name)).click();
    h.run();
    h.get_by_label_contains(&format!("weights of {name}"));
    h.get_by_label_contains(&format!("{kept} of {source_keys} keys kept"));
    // Back to the selected joint's curves.
    h.get_by_label(scalar_curves::BACK).click();
    h.run();
    assert!(
        h.query_by_label_contains(&format!("weights of {name}"))
            .is_none(),
        "the joint's curves are back"
    );
    // Picking the track again, then another joint: the joint's curves.
    h.get_by_label(&scalar_curves::row_label(&name)).click();
    h.run();
    h.get_by_label_contains(&format!("weights of {name}"));
    let other = h
        .state()
        .document()
        .unwrap()
        .asset
        .skeleton
        .deforming_joints()
        .nth(3);
    h.state_mut().select_joint(other);
    h.run();
    assert!(
        h.query_by_label_contains(&format!("weights of {name}"))
            .is_none()
    );
    h.get_by_label_contains(&format!("{}: ", curves::HEADING));
    if let Some(dir) = std::env::var_os("SKELPACK_SHOTS") {
        h.get_by_label(&scalar_curves::row_label(&name)).click();
        h.run();
        let img = h.render().expect("render");
        img.save(std::path::PathBuf::from(dir).join("screenshot_weight_curves.png"))
            .expect("save");
    }
}

/// A clip without weight tracks shows no "Curves" section.
#[test]
fn a_clip_without_weight_tracks_has_no_curves_section() {
    let h = opened(Some(app_harness::shared_asset("Fox.glb")), SIZE);
    assert!(
        h.query_by_label_contains(&format!("{} (", scalar_curves::HEADING))
            .is_none()
    );
}

/// An additive clip is drawn as players show it: on its base, the raw keys and the
/// compressed ones alike, and the flags line names the base.
#[test]
fn an_additive_clip_is_drawn_on_its_base() {
    use skelpack::codec::playback::Layer;
    use skelpack::model::{Transform, local_to_object};
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("walk.bvh");
    std::fs::copy(app_harness::shared_asset("CMU_131_01.bvh"), &src).unwrap();
    std::fs::write(
        skelpack::settings::Settings::sidecar_path(&src),
        "[clips.walk]\nadditive = { base = \"rest\", mode = \"relative\" }\n",
    )
    .unwrap();
    let mut h = opened(Some(src), SIZE);
    settle(&mut h);
    h.get_by_label_contains("Additive on the rest pose (drawn on it)");
    let doc = h.state().document().unwrap();
    let a = doc.resolved.additive.as_ref().expect("additive");
    let layer = Layer {
        mode: a.mode,
        base: doc.resolved.additive_base.clone().expect("base"),
    };
    let clip = &doc.asset.clips[doc.clip];
    let s = &doc.asset.skeleton;
    let frame = 40.0;
    let mut local = vec![Transform::IDENTITY; s.len()];
    clip.sample_local(frame, &mut local);
    let plain = {
        let mut o = vec![glam::Affine3A::IDENTITY; s.len()];
        local_to_object(s, &local, &mut o);
        o
    };
    for (j, l) in local.iter_mut().enumerate() {
        *l = layer.compose(j, frame, l);
    }
    let mut want = vec![glam::Affine3A::IDENTITY; s.len()];
    local_to_object(s, &local, &mut want);
    let poses = doc.poses_at(frame);
    // Over the joints the contract measures (end sites carry no marker: an additive clip
    // stores nothing for them).
    let evaluated = &doc.resolved.limits.evaluated;
    let far = |a: &[glam::Affine3A], b: &[glam::Affine3A]| {
        a.iter()
            .zip(b)
            .zip(evaluated)
            .filter(|(_, e)| **e)
            .map(|((x, y), _)| (x.translation - y.translation).length())
            .fold(0.0f32, f32::max)
    };
    assert!(far(&poses.raw, &want) < 1e-4, "raw drawn on the base");
    assert!(
        far(&plain, &want) > 1e-2,
        "on the rest pose the clip looks different from its keys alone"
    );
    let compressed = poses.compressed.expect("a result");
    // Within the tolerance of the raw one on the base (the codec measures it there).
    let tol = doc
        .resolved
        .limits
        .tolerance
        .iter()
        .copied()
        .fold(0.0f32, f32::max);
    let off = far(&compressed, &want);
    assert!(
        off < 1.5 * tol + 1e-3,
        "compressed {off} from raw on the base, tolerance {tol}"
    );
}
