#![cfg(feature = "gui")]
//! The clip dashboard, headless on the software adapter: every clip of RobotExpressive with
//! pass / fail, a per-clip preset edit through the UI (undoable, saved in `[clips.NAME]`),
//! clicking a row opens the clip, and "fit in N KiB" on the default character lands at or
//! below N with the result shown and applied (and undone from the result cache, with no
//! compression).

use std::path::PathBuf;
use std::time::Duration;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skelpack::app::panels::dashboard;
use skelpack::app::{Action, App};
use skelpack::settings::Preset;

mod app_harness;

/// The app on `file` (None: the default character) with the dashboard open and every
/// clip's result in. The open clip's result is waited for first: the panels lay out again
/// when it arrives (the selection follows the refined result), and a click queued in that
/// frame could land beside the button on a loaded machine.
fn dashboard(file: Option<PathBuf>) -> Harness<'static, App> {
    let mut h = app_harness::opened(file, [1600.0, 960.0]);
    h.get_by_label("Clips").click();
    h.run_steps(2);
    assert!(h.state().dashboard_open());
    all_clips(&mut h);
    h
}

fn all_clips(h: &mut Harness<'static, App>) {
    assert!(
        h.state_mut().wait_for_clips(Duration::from_secs(300)),
        "every clip compressed"
    );
    h.run_steps(3);
}

#[test]
fn every_clip_of_robot_expressive_is_listed_with_pass_or_fail() {
    let mut h = dashboard(Some(app_harness::shared_asset("RobotExpressive.glb")));
    let names: Vec<String> = h
        .state()
        .document()
        .unwrap()
        .asset
        .clips
        .iter()
        .map(|c| c.name.clone())
        .collect();
    assert!(names.len() > 10, "{names:?}");
    let results = h.state_mut().clip_results();
    assert!(
        results.iter().all(Option::is_some),
        "every row has a result"
    );
    for n in &names {
        assert!(h.query_all_by_label(n).count() >= 1, "row for '{n}'");
    }
    let pass = h.query_all_by_label(dashboard::PASS).count();
    let fail = h.query_all_by_label(dashboard::FAIL).count();
    assert_eq!(pass + fail, names.len());
    let failing = results.iter().flatten().filter(|r| !r.contract_met).count();
    assert_eq!(fail, failing, "FAIL exactly where the contract is not met");
    // Clicking a row opens that clip, with its result at once (kept from the dashboard).
    let last = names[3].clone();
    h.query_all_by_label(&last).last().unwrap().click();
    h.step();
    h.step();
    let doc = h.state().document().unwrap();
    assert_eq!(doc.clip_name(), last);
    assert!(
        doc.result.is_some(),
        "the dashboard's result is shown at once"
    );
    assert!(!h.state().is_compressing());
}

#[test]
fn a_per_clip_preset_edit_is_undoable_and_saved_in_the_clip_section() {
    let mut h = dashboard(None);
    let first = h.state().document().unwrap().asset.clips[0].name.clone();
    let before = h.state_mut().clip_results()[0]
        .as_ref()
        .unwrap()
        .sizes
        .compressed_bytes;
    h.get_by_label(&dashboard::preset_label(&first)).click();
    h.run();
    h.get_by_label(Preset::Ozz.name()).click();
    h.run_steps(2);
    let doc = h.state().document().unwrap();
    assert_eq!(doc.settings.clips[&first].preset, Some(Preset::Ozz));
    all_clips(&mut h);
    let after = h.state_mut().clip_results()[0]
        .as_ref()
        .unwrap()
        .sizes
        .compressed_bytes;
    assert!(after < before, "ozz is looser: {after} < {before}");
    // Saved as [clips.NAME] in the sidecar.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("s.skelpack.toml");
    h.state_mut()
        .perform(Action::SaveSettings(Some(path.clone())));
    h.run_steps(2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.contains(&format!("[clips.{first}]")) && text.contains("preset = \"ozz\""),
        "{text}"
    );
    // Undo brings the file's preset back, and the earlier size.
    h.state_mut().perform(Action::Undo);
    h.run_steps(2);
    assert!(h.state().document().unwrap().settings.clips.is_empty());
    all_clips(&mut h);
    assert_eq!(
        h.state_mut().clip_results()[0]
            .as_ref()
            .unwrap()
            .sizes
            .compressed_bytes,
        before
    );
}

#[test]
fn fit_in_kib_lands_at_or_below_the_budget_and_applies() {
    let mut h = dashboard(None);
    let total: usize = h
        .state_mut()
        .clip_results()
        .iter()
        .flatten()
        .map(|r| r.sizes.compressed_bytes)
        .sum();
    let budget = 16 * 1024; // the dashboard's default budget
    assert!(total > budget, "the default settings do not fit: {total}");
    h.get_by_label("whole file").click();
    h.run();
    h.get_by_label(dashboard::FIT).click();
    h.run_steps(2);
    assert!(h.state_mut().wait_for_fit(Duration::from_secs(300)));
    h.run_steps(2);
    let o = h.state().fit_outcome().expect("outcome").clone();
    assert_eq!(o.clip, None);
    let fit = o.fit.expect("search ran");
    let best = fit.best.clone().expect("fits");
    assert!(
        best.bytes as usize <= budget && best.contract_met,
        "{best:?}"
    );
    assert!(best.scale > 1.0);
    h.get_by_label_contains("fits in");
    h.get_by_label(dashboard::APPLY_FIT).click();
    h.run_steps(2);
    assert!(h.state().document().unwrap().is_dirty());
    all_clips(&mut h);
    // The applied settings compress to what the search measured, every joint in tolerance.
    let results = h.state_mut().clip_results();
    let applied: usize = results
        .iter()
        .flatten()
        .map(|r| r.sizes.compressed_bytes)
        .sum();
    assert_eq!(applied as u64, best.bytes);
    assert!(
        results
            .iter()
            .flatten()
            .all(|r| r.contract_met && r.errors.samples.violations == 0)
    );
    // Undo: every clip's earlier result is there on the next frames, none compressed again.
    h.state_mut().perform(Action::Undo);
    h.run_steps(2);
    assert!(!h.state().document().unwrap().is_dirty());
    let undone = h.state_mut().clip_results();
    assert!(
        undone.iter().all(Option::is_some),
        "clips without a result after the undo: {:?}",
        undone
            .iter()
            .enumerate()
            .filter(|(_, r)| r.is_none())
            .map(|(i, _)| i)
            .collect::<Vec<_>>()
    );
    assert!(!h.state().clips_compressing() && !h.state().is_compressing());
    let sum: usize = undone
        .iter()
        .flatten()
        .map(|r| r.sizes.compressed_bytes)
        .sum();
    assert_eq!(sum, total, "the sizes from before the fit");
}

/// The app on `file` at `size`, with the open clip's result in (no dashboard).
fn viewer(file: Option<PathBuf>, size: [f32; 2]) -> Harness<'static, App> {
    app_harness::opened(file, size)
}

fn labels(h: &Harness<'static, App>) -> Vec<String> {
    h.state()
        .viewport_labels()
        .iter()
        .map(|(t, _)| t.clone())
        .collect()
}

#[test]
fn a_b_flip_shows_one_copy_in_one_place() {
    let mut h = viewer(None, [1600.0, 960.0]);
    assert_eq!(labels(&h), ["Original", "Compressed"]);
    let hips = app_harness::joint(&h, "Hips");
    let before = h.state().joint_screen_position(hips).unwrap();
    h.key_press(egui::Key::B);
    h.run();
    assert_eq!(labels(&h).len(), 1);
    assert!(
        labels(&h)[0].starts_with("B · Compressed"),
        "{:?}",
        labels(&h)
    );
    h.key_press(egui::Key::B);
    h.run();
    assert!(
        labels(&h)[0].starts_with("A · Original"),
        "{:?}",
        labels(&h)
    );
    // Flipping keeps the camera: the copy shown stands where the other one stood.
    let a = h.state().joint_screen_position(hips).unwrap();
    h.key_press(egui::Key::B);
    h.run();
    let b = h.state().joint_screen_position(hips).unwrap();
    assert!(a.distance(b) < 3.0, "{a:?} vs {b:?}");
    h.key_press(egui::Key::Escape);
    h.run();
    assert_eq!(labels(&h), ["Original", "Compressed"]);
    let after = h.state().joint_screen_position(hips).unwrap();
    assert!(before.distance(after) < 3.0, "framing restored");
}

#[test]
fn in_place_follows_a_walk_and_can_be_turned_off() {
    let cmu = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/CMU_131_01.bvh");
    let mut h = viewer(Some(cmu), [1600.0, 960.0]);
    let root = 0;
    let last = h.state().document().unwrap().frame_count() as f32 - 1.0;
    let at = |h: &mut Harness<'static, App>, frame: f32| {
        h.state_mut().perform(Action::Seek(frame));
        h.run();
        h.state().joint_screen_position(root).unwrap()
    };
    assert!(h.state().view_options().in_place, "on by default");
    let (p0, p1) = (at(&mut h, 0.0), at(&mut h, last));
    assert!(
        p0.distance(p1) < 40.0,
        "in place: the hips stay put ({p0:?}, {p1:?})"
    );
    let rect = h.state().viewport_rect().unwrap();
    // Not tiny: the character fills a good part of the view's height.
    let head = app_harness::joint(&h, "Head");
    let foot = app_harness::joint(&h, "LeftToe");
    let tall = (h.state().joint_screen_position(head).unwrap().y
        - h.state().joint_screen_position(foot).unwrap().y)
        .abs();
    assert!(tall > 0.25 * rect.height(), "{tall} of {}", rect.height());
    h.get_by_label("In place").click();
    h.run();
    assert!(!h.state().view_options().in_place);
    let (q0, q1) = (at(&mut h, 0.0), at(&mut h, last));
    assert!(
        q0.distance(q1) > 100.0,
        "the walk travels: {q0:?} -> {q1:?}"
    );
}

#[test]
fn hovering_a_joint_names_it() {
    let mut h = viewer(None, [1600.0, 960.0]);
    let head = app_harness::joint(&h, "Head");
    let p = h.state().joint_screen_position(head).unwrap();
    h.hover_at(p);
    h.run();
    assert_eq!(h.state().hovered_joint(), Some(head));
}

/// At 1280x720 and 1600x960, the copies' labels are inside the viewport and do not overlap,
/// also for a quadruped seen at an angle (Fox).
#[test]
fn copy_labels_never_overlap_in_small_windows() {
    let fox = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/Fox.glb");
    for size in [[1280.0, 720.0], [1600.0, 960.0]] {
        for file in [None, Some(fox.clone())] {
            let h = viewer(file.clone(), size);
            let l = h.state().viewport_labels().to_vec();
            assert_eq!(l.len(), 2, "{size:?} {file:?}: {l:?}");
            let view = h.state().viewport_rect().unwrap();
            assert!(!l[0].1.intersects(l[1].1), "{size:?} {file:?}: {l:?}");
            for (_, r) in &l {
                assert!(
                    view.contains_rect(*r),
                    "{size:?} {file:?}: {r:?} outside {view:?}"
                );
            }
        }
    }
}

/// At 1280x720, "Go to worst" is at the top of the stats and the joint table shows a
/// useful number of rows (their tolerance fields on screen).
#[test]
fn a_1280x720_window_keeps_the_table_and_go_to_worst_in_view() {
    let h = viewer(
        Some(app_harness::shared_asset("RobotExpressive.glb")),
        [1280.0, 720.0],
    );
    let worst = h.get_by_label_contains("Go to worst").rect();
    assert!(worst.bottom() < 720.0 * 0.25, "{worst:?}");
    let names: Vec<String> = h
        .state()
        .document()
        .unwrap()
        .asset
        .skeleton
        .joints
        .iter()
        .map(|j| j.name.clone())
        .collect();
    let shown = names
        .iter()
        .filter(|n| {
            h.query_by_label(&skelpack::app::panels::joints::tolerance_label(n))
                .is_some_and(|node| {
                    let r = node.rect();
                    r.top() >= 0.0 && r.bottom() <= 720.0
                })
        })
        .count();
    assert!(shown >= 8, "{shown} joint rows on screen");
}
