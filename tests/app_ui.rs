#![cfg(feature = "gui")]
//! The real app, headless on the software wgpu adapter (Vulkan pinned, see STACK.md):
//! menus and timeline by label, play / pause, joint selection, layouts, a broken file, export
//! availability, undo / redo of a settings edit, a file without a clip, and a viewport image
//! snapshot.

use std::path::PathBuf;
use std::time::Duration;

use egui::{Pos2, Rect};
use egui_kittest::kittest::Queryable;
use egui_kittest::{Harness, SnapshotOptions};
use skelpack::app::panels::{self, curves, errors, joints, timeline, unsaved};
use skelpack::app::viewport::NO_CLIP_LABEL;
use skelpack::app::{Action, App, Layout};

mod app_harness;
use app_harness::{SIZE, joint, settle, wait_for_export};

/// The app on `file` (None: the default character), with the compressed result in.
fn harness(file: Option<PathBuf>) -> Harness<'static, App> {
    app_harness::opened(file, SIZE)
}

#[test]
fn default_character_shows_menus_timeline_and_both_skeletons() {
    let mut h = harness(None);
    let doc = h.state().document().expect("default character open");
    assert!(!doc.asset.clips.is_empty());
    assert!(doc.result.is_some());
    for menu in ["File", "Edit", "View", "Help"] {
        h.get_by_label(menu);
    }
    h.get_by_label(timeline::PLAY);
    h.get_by_label(timeline::SCRUB);
    h.get_by_label("Loop");
    h.get_by_label("Original");
    h.get_by_label("Compressed");
    h.get_by_label("File").click();
    h.run();
    for item in [
        "Open...",
        "Open Recent",
        "Export Compressed glTF...",
        "Export .skp...",
        "Save Settings",
        "Quit",
    ] {
        h.get_by_label(item);
    }
}

#[test]
fn play_pause_step_and_space() {
    let mut h = harness(None);
    h.get_by_label(timeline::PLAY).click();
    h.run_steps(4);
    assert!(h.state().playback().playing);
    assert!(h.state().playback().frame > 0.0, "playback advanced");
    h.get_by_label(timeline::PAUSE).click();
    h.run();
    assert!(!h.state().playback().playing);
    h.state_mut().playback_mut().frame = 0.0;
    h.get_by_label(timeline::NEXT).click();
    h.run();
    assert_eq!(h.state().playback().frame, 1.0);
    h.key_press(egui::Key::ArrowRight);
    h.run();
    assert_eq!(h.state().playback().frame, 2.0);
    h.key_press(egui::Key::Space);
    h.run_steps(2);
    assert!(h.state().playback().playing);
    h.key_press(egui::Key::Space);
    h.run();
    assert!(!h.state().playback().playing);
}

#[test]
fn select_joint_in_tree_and_switch_layouts() {
    let mut h = harness(Some(app_harness::shared_asset("RobotExpressive.glb")));
    let (j, name) = {
        let s = &h.state().document().unwrap().asset.skeleton;
        let j = s.deforming_joints().next().unwrap();
        (j, s.joints[j].name.clone())
    };
    click_joint(&mut h, &name, egui::Modifiers::NONE);
    assert_eq!(h.state().selected(), Some(j));
    // Down / Up walk the table.
    h.key_press(egui::Key::ArrowDown);
    h.run();
    let next = h.state().selected().expect("a joint");
    assert_ne!(next, j);
    h.key_press(egui::Key::ArrowUp);
    h.run();
    assert_eq!(h.state().selected(), Some(j));
    h.get_by_label_contains(&format!("Joint {name}"));

    h.get_by_label("Overlay").click();
    h.run();
    assert_eq!(h.state().view_options().layout, Layout::Overlay);
    h.get_by_label("Original (solid) + Compressed (ghost)");
    h.get_by_label("View").click();
    h.run();
    h.get_by_label("Layout: side by side").click();
    h.run();
    assert_eq!(h.state().view_options().layout, Layout::SideBySide);
    h.get_by_label("Overlay").click();
    h.run();
    h.get_by_label("Side by side").click();
    h.run();
    assert_eq!(h.state().view_options().layout, Layout::SideBySide);
}

#[test]
fn broken_file_shows_error_and_keeps_the_document() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken.glb");
    std::fs::write(&bad, b"glTF\x02\x00\x00\x00garbage").unwrap();
    let mut h = harness(Some(app_harness::shared_asset("RobotExpressive.glb")));
    let before = h.state().document().unwrap().id;
    h.state_mut().perform(Action::Open(bad));
    h.run();
    let (title, message) = h.state().error_banner().expect("error banner");
    assert!(title.contains("broken.glb"), "{title}");
    assert!(message.contains("broken.glb"), "{message}");
    h.get_by_label_contains("Could not open broken.glb");
    assert_eq!(h.state().document().unwrap().id, before, "kept what it had");
    h.get_by_label("Dismiss").click();
    h.run();
    assert!(h.state().error_banner().is_none());
}

/// A file with no take (an FBX bind pose) opens as its rest pose, and every place that shows
/// a compressed result says there is no clip rather than waiting for one that never comes.
#[test]
fn a_file_without_a_clip_says_so_instead_of_computing() {
    let file = app_harness::shared_asset("fbx/pab_arnaud.fbx");
    let mut h = app_harness::open(Some(file), SIZE);
    h.run_steps(4);
    let waited = std::time::Instant::now();
    assert!(
        !h.state_mut().wait_for_result(Duration::from_secs(20)),
        "a compressed result for a file without a clip"
    );
    assert!(
        waited.elapsed() < Duration::from_secs(5),
        "waited {:?} for a result that cannot come",
        waited.elapsed()
    );
    h.run();
    let doc = h.state().document().expect("the bind pose is open");
    assert!(doc.asset.clips.is_empty());
    assert!(!doc.asset.skeleton.joints.is_empty());
    assert!(!h.state().is_compressing());
    h.get_by_label(NO_CLIP_LABEL);
    // The Errors panel and the Compression section.
    assert_eq!(h.query_all_by_label(panels::NO_CLIP).count(), 2);
    h.get_by_label_contains("Error at frame: none (no clip");
    for busy in ["computing", "Waiting for the compressed", "compressing"] {
        assert!(
            h.query_by_label_contains(busy).is_none(),
            "the app still says '{busy}'"
        );
    }
}

#[test]
fn export_skp_gltf_availability_and_settings_undo() {
    let mut h = harness(Some(app_harness::shared_asset("RobotExpressive.glb")));
    let dir = tempfile::tempdir().unwrap();
    let glb = dir.path().join("robot.glb");
    h.state_mut().perform(Action::ExportGltf(Some(glb.clone())));
    wait_for_export(&mut h);
    let status = h.state().status().to_owned();
    assert!(status.contains("wrote"), "{status}");
    let back = skelpack::import::load(&glb).expect("the exported glTF imports");
    assert_eq!(back.clips.len(), 14);
    let skp = dir.path().join("robot.skp");
    h.state_mut().perform(Action::ExportSkp(Some(skp.clone())));
    wait_for_export(&mut h);
    let status = h.state().status().to_owned();
    assert!(
        status.contains("wrote") && status.contains("max error"),
        "{status}"
    );
    skelpack::container::read(&skp).expect("the exported .skp reads back");

    let tol_before = tolerances(&h);
    let mut s = h.state().document().unwrap().settings.clone();
    s.preset = Some(skelpack::settings::Preset::Ozz);
    h.state_mut()
        .perform(Action::EditSettings("preset ozz".into(), Box::new(s)));
    settle(&mut h);
    let tol_after = tolerances(&h);
    assert_ne!(tol_before, tol_after);
    h.get_by_label("Edit").click();
    h.run();
    h.get_by_label("Undo preset ozz").click();
    settle(&mut h);
    assert_eq!(tolerances(&h), tol_before);
    h.state_mut().redo();
    assert_eq!(tolerances(&h), tol_after);
}

#[test]
fn viewport_snapshot() {
    let mut h = harness(Some(app_harness::shared_asset("RobotExpressive.glb")));
    let j = h
        .state()
        .document()
        .unwrap()
        .asset
        .skeleton
        .deforming_joints()
        .nth(5);
    h.state_mut().select_joint(j);
    h.state_mut().playback_mut().frame = 10.0;
    h.run();
    // Only the viewport: mask the panels around it (their numbers include timings).
    let v = h.state().viewport_rect().expect("viewport drawn");
    let (w, ht) = (SIZE[0], SIZE[1]);
    for r in [
        Rect::from_min_max(Pos2::ZERO, Pos2::new(w, v.top())),
        Rect::from_min_max(Pos2::new(0.0, v.bottom()), Pos2::new(w, ht)),
        Rect::from_min_max(Pos2::new(0.0, v.top()), Pos2::new(v.left(), v.bottom())),
        Rect::from_min_max(Pos2::new(v.right(), v.top()), Pos2::new(w, v.bottom())),
    ] {
        h.mask(r);
    }
    // A codec change that moves the compressed pose by a pixel is not a rendering change:
    // allow a few hundred of the ~100k viewport pixels to differ.
    h.snapshot_options(
        "viewport_robot_side_by_side",
        &SnapshotOptions::new().max_failed_pixels(300),
    );
}

/// The app on the ACL clip with `joint` selected and the playhead at frame 0.
fn acl_with_joint(joint: &str) -> (Harness<'static, App>, usize) {
    let mut h = harness(Some(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/acl/13_07.acl.sjson"),
    ));
    let j = h
        .state()
        .document()
        .unwrap()
        .asset
        .skeleton
        .joints
        .iter()
        .position(|x| x.name == joint)
        .expect("joint");
    h.state_mut().select_joint(Some(j));
    h.state_mut().playback_mut().frame = 0.0;
    h.run();
    (h, j)
}

#[test]
fn curves_panel_shows_tracks_and_scrubs_by_drag() {
    let (mut h, _) = acl_with_joint("rFoot");
    h.get_by_label_contains(&format!("{}: rFoot", curves::HEADING));
    h.get_by_label(curves::EULER);
    h.get_by_label_contains("Rotation (quaternion)");
    // A rest or constant track says so instead of plotting nothing.
    h.get_by_label_contains("Scale: rest pose — not stored");
    let g = h.state().curve_plot().expect("curve plot drawn");
    let target = 120.0;
    let p = g.point_at(target);
    h.hover_at(p);
    h.drag_at(p);
    h.run_steps(2);
    h.drop_at(p);
    h.run();
    let f = h.state().playback().frame;
    assert!((f - target as f32).abs() < 2.0, "scrubbed to {f}");
    // Dragging further moves the playhead with the pointer.
    let p2 = g.point_at(200.0);
    h.drag_at(g.point_at(150.0));
    h.run_steps(1);
    h.hover_at(p2);
    h.run_steps(1);
    h.drop_at(p2);
    h.run();
    let f = h.state().playback().frame;
    assert!((f - 200.0).abs() < 2.0, "dragged to {f}");
    // Euler display does not lose the plot.
    h.state_mut().set_euler(true);
    h.run();
    h.get_by_label_contains("Rotation (degrees, XYZ)");
}

#[test]
fn heatmap_click_selects_joint_and_frame() {
    let (mut h, _) = acl_with_joint("rFoot");
    h.get_by_label(errors::HEATMAP);
    let hm = h.state().heatmap().expect("heatmap drawn").clone();
    let doc = h.state().document().unwrap();
    let target = doc
        .asset
        .skeleton
        .joints
        .iter()
        .position(|x| x.name == "lShldr")
        .unwrap();
    let p = hm.cell_center(target, 42).expect("a row for lShldr");
    assert_eq!(hm.cell_at(p), Some((target, 42)));
    h.hover_at(p);
    h.drag_at(p);
    h.drop_at(p);
    h.run();
    // The click lands on the joint whose own tracks cause lShldr's error at that frame.
    let doc = h.state().document().unwrap();
    let cause = skelpack::app::panels::attribution::cause(doc, target, 42).unwrap();
    let name = doc.asset.skeleton.joints[cause.source].name.clone();
    assert_eq!(h.state().selected(), Some(cause.source));
    assert!((h.state().playback().frame - 42.0).abs() < 1.0);
    h.get_by_label_contains(&format!("{}: {name}", errors::HEADING));
    assert!(h.state().error_plot().is_some(), "error plot for the joint");
}

/// The ACL clip 13_07 with nothing selected yet; the names of its first deforming joints
/// in tree order (near the top of the joint table, so on screen).
fn acl() -> (Harness<'static, App>, Vec<String>) {
    let mut h = harness(Some(
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/acl/13_07.acl.sjson"),
    ));
    h.state_mut().select_joint(None);
    h.run();
    let s = &h.state().document().unwrap().asset.skeleton;
    let names = s
        .deforming_joints()
        .map(|j| s.joints[j].name.clone())
        .filter(|n| n != "13_07") // the root joint shares the clip's name
        .take(4)
        .collect();
    (h, names)
}

/// Scrolls the joint table to `name`, then clicks it with `modifiers`.
fn click_joint(h: &mut Harness<'static, App>, name: &str, modifiers: egui::Modifiers) {
    h.get_by_label(name).scroll_to_me();
    h.run();
    h.get_by_label(name).click_modifiers(modifiers);
    h.run();
}

fn compressed_bytes(h: &Harness<'static, App>) -> usize {
    let doc = h.state().document().unwrap();
    doc.result
        .as_ref()
        .expect("a result")
        .sizes
        .compressed_bytes
}

/// Every joint's resolved tolerance (scene units).
fn tolerances(h: &Harness<'static, App>) -> Vec<f32> {
    let doc = h.state().document().unwrap();
    doc.resolved.limits.tolerance.clone()
}

fn tolerance_mm(h: &Harness<'static, App>, joint: &str) -> f32 {
    let doc = h.state().document().unwrap();
    let j = doc.asset.skeleton.find(joint).unwrap();
    doc.resolved.limits.tolerance[j] / (doc.resolved.unit.per_metre() / 1000.0)
}

#[test]
fn tree_tolerance_edit_recompresses_and_undo_restores() {
    let (mut h, _) = acl();
    // A joint at the end of a chain with curves of its own: its tolerance alone sets its
    // tracks' budgets (a parent's budget is bounded by its children's).
    let name = &{
        let d = h.state().document().unwrap();
        let sk = &d.asset.skeleton;
        let costs = &d.result.as_ref().unwrap().joint_costs;
        let leaf = sk
            .heights()
            .iter()
            .enumerate()
            .position(|(j, &ht)| ht == 0 && costs[j].animated_tracks > 0)
            .expect("an animated leaf");
        sk.joints[leaf].name.clone()
    };
    let before = compressed_bytes(&h);
    let max_before = {
        let d = h.state().document().unwrap();
        d.result.as_ref().unwrap().errors.samples.max
    };
    let stats_before = format!("{:.2} : 1", {
        let d = h.state().document().unwrap();
        d.result.as_ref().unwrap().sizes.ratio()
    });
    h.get_by_label(&stats_before);
    click_joint(&mut h, name, egui::Modifiers::NONE);
    assert_eq!(
        h.state().selected(),
        h.state().document().unwrap().asset.skeleton.find(name)
    );
    // Loosen the root's tolerance tenfold: the clip gets smaller.
    let loose = tolerance_mm(&h, name) * 10.0;
    h.get_by_label(&joints::tolerance_label(name))
        .set_value_accesskit(loose as f64);
    settle(&mut h);
    assert!((tolerance_mm(&h, name) - loose).abs() < 1e-4);
    let after = compressed_bytes(&h);
    assert!(after < before, "{after} B not below {before} B");
    assert!(h.state().document().unwrap().is_dirty());
    assert!(h.state().last_edit_latency().is_some(), "latency measured");
    // The stats panel shows the new ratio.
    let d = h.state().document().unwrap();
    let ratio = format!("{:.2} : 1", d.result.as_ref().unwrap().sizes.ratio());
    assert_ne!(ratio, stats_before);
    h.get_by_label(&ratio);
    // ... and what the edit changed.
    h.get_by_label(&format!(
        "{} B; max error was {}",
        after as i64 - before as i64,
        skelpack::app::panels::fmt_len(max_before, h.state().document().unwrap().resolved.unit)
    ));
    // Undo from the menu restores the tolerance and the size.
    h.get_by_label("Edit").click();
    h.run();
    h.get_by_label(&format!("Undo tolerance of {name}")).click();
    settle(&mut h);
    assert_eq!(compressed_bytes(&h), before);
    assert!(!h.state().document().unwrap().is_dirty());
    h.get_by_label(&stats_before);
}

#[test]
fn multi_select_pin_and_apply_to_descendants() {
    let (mut h, names) = acl();
    let sk = h.state().document().unwrap().asset.skeleton.clone();
    // Click one joint, ctrl-click another: both selected, an edit applies to both.
    click_joint(&mut h, &names[1], egui::Modifiers::NONE);
    click_joint(&mut h, &names[2], egui::Modifiers::COMMAND);
    assert_eq!(h.state().selection().len(), 2);
    h.get_by_label(&joints::tolerance_label(&names[2]))
        .set_value_accesskit(0.5);
    settle(&mut h);
    assert!((tolerance_mm(&h, &names[1]) - 0.5).abs() < 1e-4);
    assert!((tolerance_mm(&h, &names[2]) - 0.5).abs() < 1e-4);
    // Pin the selection with one checkbox.
    h.get_by_label(&joints::pin_label(&names[1])).click();
    settle(&mut h);
    let pinned = |h: &Harness<'static, App>, n: &str| {
        let d = h.state().document().unwrap();
        d.resolved.pinned[d.asset.skeleton.find(n).unwrap()]
    };
    assert!(pinned(&h, &names[1]) && pinned(&h, &names[2]));
    // Right-click the root: its tolerance goes to every joint below it.
    let root = &names[0];
    h.get_by_label(root).scroll_to_me();
    h.run();
    h.get_by_label(root).click_secondary();
    h.run();
    h.get_by_label_contains("Apply tolerance").click();
    settle(&mut h);
    let root_tol = tolerance_mm(&h, root);
    let j = sk.find(root).unwrap();
    for d in sk.subtree(j) {
        if sk.joints[d].deforming {
            assert!((tolerance_mm(&h, &sk.joints[d].name) - root_tol).abs() < 1e-5);
        }
    }
}

#[test]
fn adaptive_fill_tightens_the_root() {
    let (mut h, names) = acl();
    // In this clip only: the clip's own overrides change, not the file-wide ones.
    h.get_by_label(joints::THIS_CLIP).click();
    h.run();
    h.get_by_label(joints::ADAPTIVE).click();
    h.run();
    h.get_by_label_contains(joints::ADAPTIVE_APPLY).click();
    settle(&mut h);
    let doc = h.state().document().unwrap();
    let sk = &doc.asset.skeleton;
    let leaf = sk
        .heights()
        .iter()
        .position(|&x| x == 0)
        .map(|j| sk.joints[j].name.clone())
        .unwrap();
    assert!(tolerance_mm(&h, &names[0]) < tolerance_mm(&h, &leaf) * 0.5);
    let settings = &h.state().document().unwrap().settings;
    assert!(settings.joints.is_empty());
    assert!(settings.clips["13_07"].joints.len() > 10);
    assert!(
        h.state()
            .document()
            .unwrap()
            .result
            .as_ref()
            .unwrap()
            .contract_met
    );
}

#[test]
fn unsaved_settings_are_asked_about_before_quit_and_open() {
    let (mut h, names) = acl();
    h.get_by_label(&joints::tolerance_label(&names[0]))
        .set_value_accesskit(0.3);
    settle(&mut h);
    assert!(h.state().document().unwrap().is_dirty());
    h.state_mut().perform(Action::Quit);
    h.run();
    assert!(h.state().is_confirming());
    h.get_by_label(unsaved::TITLE);
    h.get_by_label(unsaved::CANCEL).click();
    h.run();
    assert!(!h.state().is_confirming());
    // Opening another file asks too; discarding opens it.
    let id = h.state().document().unwrap().id;
    h.state_mut()
        .perform(Action::Open(app_harness::shared_asset(
            "RobotExpressive.glb",
        )));
    h.run();
    assert!(h.state().is_confirming());
    assert_eq!(h.state().document().unwrap().id, id, "nothing replaced yet");
    h.get_by_label(unsaved::DISCARD).click();
    h.run();
    assert!(!h.state().is_confirming());
    assert_ne!(h.state().document().unwrap().id, id);
    assert!(
        h.state()
            .document()
            .unwrap()
            .title()
            .contains("RobotExpressive")
    );

    // Saved settings are not asked about, and the file reads back as they were.
    let mut edited = h.state().document().unwrap().settings.clone();
    edited.tolerance_mm = Some(0.25);
    h.state_mut().perform(Action::EditSettings(
        "tolerance".into(),
        Box::new(edited.clone()),
    ));
    h.run_steps(2);
    assert!(h.state().document().unwrap().is_dirty());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("robot.skelpack.toml");
    h.state_mut()
        .perform(Action::SaveSettings(Some(path.clone())));
    h.run_steps(2);
    assert!(
        h.state().status().contains("Saved settings"),
        "{}",
        h.state().status()
    );
    assert_eq!(skelpack::settings::Settings::load(&path).unwrap(), edited);
    assert!(!h.state().document().unwrap().is_dirty());
    h.state_mut().perform(Action::Quit);
    h.run_steps(2);
    assert!(!h.state().is_confirming());
}

#[test]
fn clicking_a_joint_in_the_viewport_selects_it() {
    let mut h = harness(None);
    let head = joint(&h, "Head");
    h.state_mut().select_joint(None);
    h.run();
    let p = h
        .state()
        .joint_screen_position(head)
        .expect("the head is on screen");
    h.hover_at(p);
    h.drag_at(p);
    h.drop_at(p);
    h.run();
    assert_eq!(h.state().selected(), Some(head));
    // The tree follows: the head's row is there to edit.
    h.get_by_label(&joints::tolerance_label("Head"));
}

/// An FBX take with a piece in its sidecar exports from the File menu's compressed glTF
/// as the command line writes it: a new scene in metres holding the take and its piece,
/// byte for byte the file `skelpack compress` writes.
#[test]
fn gltf_export_of_an_fbx_take_with_a_piece_writes_what_the_cli_writes() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("run.fbx");
    std::fs::copy(app_harness::shared_asset("fbx/pab_run.fbx"), &src).unwrap();
    std::fs::write(
        skelpack::settings::Settings::sidecar_path(&src),
        "[takes.Stride]\nsource = \"run\"\nstart = 3\nend = 15\n",
    )
    .unwrap();
    let mut h = harness(Some(src.clone()));
    let out = dir.path().join("app.glb");
    h.state_mut().perform(Action::ExportGltf(Some(out.clone())));
    wait_for_export(&mut h);
    let status = h.state().status().to_owned();
    assert!(status.contains("wrote"), "{status}");
    assert!(h.state().error_banner().is_none());
    let cli = dir.path().join("cli.glb");
    app_harness::cli_compress(&src, &cli);
    let back = skelpack::import::load(&out).expect("the app's export imports");
    let names: Vec<&str> = back.clips.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["run", "Stride"]);
    assert_eq!(back.clips[1].frame_count, 13);
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(&cli).unwrap(),
        "the same bytes"
    );
}

#[test]
fn unit_override_changes_tolerances_and_round_trips_through_the_sidecar() {
    use skelpack::model::LengthUnit;
    let mut h = harness(None);
    let before = tolerances(&h);
    assert_eq!(
        h.state().document().unwrap().resolved.unit,
        LengthUnit::Metre
    );
    // The unit picker names the inferred unit and how sure it is.
    h.get_by_value("inferred: metre (high)").click();
    h.run();
    h.get_by_label("centimetre").click();
    settle(&mut h);
    let doc = h.state().document().unwrap();
    assert_eq!(doc.settings.unit, Some(LengthUnit::Centimetre));
    assert_eq!(doc.resolved.unit, LengthUnit::Centimetre);
    assert!(doc.is_dirty());
    // Tolerances are physical: 0.1 mm is now 0.01 scene units.
    for (a, b) in before.iter().zip(tolerances(&h)) {
        assert!((b / a - 100.0).abs() < 1e-3, "{a} -> {b}");
    }
    // A 1.76-unit person in centimetres is implausible: the panel says so.
    h.get_by_label_contains("Check the unit");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("character.skelpack.toml");
    h.state_mut()
        .perform(Action::SaveSettings(Some(path.clone())));
    h.run_steps(2);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("unit = \"centimetre\""), "{text}");
    let saved = skelpack::settings::Settings::load(&path).unwrap();
    assert_eq!(saved, h.state().document().unwrap().settings);
    // Undo brings the inferred unit back.
    h.get_by_label("Edit").click();
    h.run();
    h.get_by_label("Undo Unit: centimetre").click();
    settle(&mut h);
    assert_eq!(h.state().document().unwrap().settings.unit, None);
    assert_eq!(tolerances(&h), before);
}

#[test]
fn a_tolerance_below_the_floor_asks_first() {
    use skelpack::app::panels::floor;
    let mut h = harness(None);
    let tip = "RightHandIndex3";
    let before = tolerance_mm(&h, tip);
    let floor_mm = {
        let d = h.state().document().unwrap();
        let j = d.asset.skeleton.find(tip).unwrap();
        d.result.as_ref().unwrap().clip.report.floors[j] * 1000.0
    };
    assert!(floor_mm > 0.0 && floor_mm < 0.01, "floor {floor_mm} mm");
    let impossible = (floor_mm / 10.0) as f64;
    let ask = |h: &mut Harness<'static, App>| {
        let mut s = h.state().document().unwrap().settings.clone();
        s.joints.entry(tip.into()).or_default().tolerance_mm = Some(impossible as f32);
        h.state_mut().perform(Action::EditSettings(
            format!("tolerance of {tip}"),
            Box::new(s),
        ));
        h.run();
    };
    ask(&mut h);
    h.get_by_label(floor::TITLE);
    h.get_by_label(floor::CANCEL).click();
    h.run();
    assert!(h.query_by_label(floor::TITLE).is_none());
    assert_eq!(tolerance_mm(&h, tip), before, "kept");
    // Applied anyway: the joint is reported with its floor; every other joint holds.
    ask(&mut h);
    h.get_by_label(floor::APPLY).click();
    settle(&mut h);
    assert!(
        (tolerance_mm(&h, tip) as f64 - impossible).abs() < 1e-9,
        "{} mm, asked {impossible} mm; status {}",
        tolerance_mm(&h, tip),
        h.state().status()
    );
    let d = h.state().document().unwrap();
    let r = d.result.as_ref().unwrap();
    let failures = &r.clip.report.failures;
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert_eq!(failures[0].joint, tip);
    h.get_by_label_contains(&format!("{tip} (floor"));
}

#[test]
fn undo_and_redo_show_the_earlier_results_at_once() {
    let mut h = harness(None);
    let tip = "LeftHandIndex3";
    let before = compressed_bytes(&h);
    let mut s = h.state().document().unwrap().settings.clone();
    s.joints.entry(tip.into()).or_default().tolerance_mm = Some(0.02);
    h.state_mut().perform(Action::EditSettings(
        format!("tolerance of {tip}"),
        Box::new(s),
    ));
    settle(&mut h);
    let after = compressed_bytes(&h);
    assert_ne!(after, before);
    // Undo: the result for the earlier settings is there on the very next frame, with no
    // compression started.
    h.state_mut().perform(Action::Undo);
    h.step();
    let doc = h.state().document().unwrap();
    assert!(doc.result.is_some(), "shown at once");
    assert_eq!(compressed_bytes(&h), before);
    assert!(!h.state().is_compressing(), "nothing recompressed");
    h.state_mut().perform(Action::Redo);
    h.step();
    assert_eq!(compressed_bytes(&h), after);
    assert!(!h.state().is_compressing());
}

/// A drag sends an edit per frame, with no debounce: each edit cancels the compression of
/// the one before and starts its own at once. When the drag ends, the result on screen is
/// the last edit's, byte for byte what a full compression of those settings gives, and the
/// edit's first result was shown no later than its final one.
#[test]
fn a_drag_of_edits_ends_on_the_last_edits_exact_result() {
    let mut h = harness(None);
    let tip = "LeftHandIndex3";
    let start = h.state().document().unwrap().settings.clone();
    for step in 0..6 {
        let mut s = start.clone();
        s.joints.entry(tip.into()).or_default().tolerance_mm = Some(0.08 - 0.01 * step as f32);
        h.state_mut().perform(Action::EditSettings(
            format!("tolerance of {tip}"),
            Box::new(s),
        ));
        h.step();
    }
    settle(&mut h);
    let doc = h.state().document().unwrap();
    let j = doc.asset.skeleton.find(tip).unwrap();
    let asked = doc.resolved.limits.tolerance[j] / (doc.resolved.unit.per_metre() / 1000.0);
    assert!(
        (asked - 0.03).abs() < 1e-5,
        "the last edit's settings: {asked} mm"
    );
    let shown = doc.result.as_ref().expect("a result");
    assert!(!shown.refining, "the final result");
    let clip = &doc.asset.clips[doc.clip];
    let full = skelpack::codec::compress(
        &doc.asset.skeleton,
        clip,
        &doc.resolved,
        &skelpack::codec::Control::new(),
    )
    .unwrap();
    let bytes = |c: &skelpack::codec::CompressedClip| {
        skelpack::container::to_bytes(&doc.asset.skeleton, std::slice::from_ref(c))
    };
    assert!(
        bytes(&shown.clip) == bytes(&full),
        "not the full compression's bytes"
    );
    let first = h.state().last_edit_latency().expect("first result timed");
    let last = h
        .state()
        .last_edit_final_latency()
        .expect("final result timed");
    assert!(first <= last, "{first:?} after {last:?}");
}

#[test]
fn playback_follows_the_wall_clock() {
    let mut h = harness(None);
    let rate = h.state().document().unwrap().sample_rate();
    h.state_mut().playback_mut().looping = false;
    h.state_mut().playback_mut().frame = 0.0;
    h.state_mut().perform(Action::TogglePlay);
    h.step(); // applies the action
    h.step(); // starts the clock
    let after_first = std::time::Instant::now();
    let f0 = h.state().playback().frame;
    std::thread::sleep(Duration::from_millis(400));
    let before_second = std::time::Instant::now();
    h.step();
    let after_second = std::time::Instant::now();
    let moved = h.state().playback().frame - f0;
    // The app's clock read falls inside the test's brackets around the two frames.
    let least = before_second.duration_since(after_first).as_secs_f32() * rate;
    let most = after_second.duration_since(after_first).as_secs_f32() * rate + 1.0;
    assert!(
        (least * 0.99..=most).contains(&moved),
        "moved {moved} frames; wall clock says {least}..{most}"
    );
    // Frames drawn this slowly are reported as skipped.
    assert!(h.state().playback().skipping(rate));
}

#[test]
fn a_path_typed_in_the_app_opens_the_file() {
    use skelpack::app::panels::path_prompt::{self, Purpose};
    let mut h = harness(None);
    h.state_mut().perform(Action::PromptPath(Purpose::Open));
    h.run();
    h.get_by_label(Purpose::Open.title());
    let path = app_harness::shared_asset("RobotExpressive.glb");
    // It starts in the open file's folder (here the working folder), ready to complete.
    let start = h
        .get_by_label(path_prompt::FIELD)
        .value()
        .unwrap_or_default();
    assert!(start.ends_with('/'), "{start}");
    h.get_by_label(path_prompt::FIELD)
        .set_text_value_accesskit(&format!("{}", path.display()));
    h.run();
    // A path that is not a file cannot be chosen; the robot can.
    h.get_by_label(path_prompt::OK).click();
    h.run_steps(3);
    assert!(
        h.state()
            .document()
            .unwrap()
            .title()
            .contains("RobotExpressive"),
        "{}",
        h.state().status()
    );
    assert!(
        h.query_by_label(Purpose::Open.title()).is_none(),
        "prompt closed"
    );
}

#[test]
fn open_without_a_native_dialog_offers_the_path_prompt() {
    use skelpack::app::panels::path_prompt::Purpose;
    // No desktop portal or zenity here: the native dialog answers at once with nothing.
    let mut h = harness(None);
    h.state_mut().perform(Action::OpenDialog);
    h.run();
    h.get_by_label(Purpose::Open.title());
    assert!(
        h.state().status().contains("No file dialog could open"),
        "{}",
        h.state().status()
    );
    h.get_by_label(skelpack::app::panels::path_prompt::CANCEL)
        .click();
    h.run();
    assert!(h.query_by_label(Purpose::Open.title()).is_none());
}

/// The app reads and writes the shared result cache as `compress` and `report` do: a second
/// app takes the first one's result from it (the same payload), and `report` accepts what
/// the app stored.
#[test]
fn a_shared_cache_serves_a_second_app_and_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let file = app_harness::shared_asset("CesiumMan.glb");
    let opts = skelpack::app::StartOptions {
        file: Some(file.clone()),
        ignore_storage: true,
        cache: Some((dir.path().display().to_string(), 64 << 20)),
        ..Default::default()
    };
    let payload = |h: &Harness<'static, App>| {
        let doc = h.state().document().unwrap();
        let r = doc.result.clone().unwrap();
        let skp =
            skelpack::container::to_bytes(&doc.asset.skeleton, std::slice::from_ref(&*r.clip));
        (r.from_cache, skp)
    };
    let mut first = app_harness::open_with(opts.clone(), SIZE);
    settle(&mut first);
    let (hit, computed) = payload(&first);
    assert!(!hit, "an empty cache served a result");
    drop(first);
    let mut second = app_harness::open_with(opts, SIZE);
    settle(&mut second);
    let (hit, cached) = payload(&second);
    assert!(hit, "the second app computed the clip again");
    assert!(cached == computed, "the cached payload differs");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(["report", "--cache"])
        .arg(dir.path())
        .arg(&file)
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("cache") && stderr.contains(" 1 from the cache"),
        "{stderr}"
    );
}

/// The compression effort is a setting of the app as of the command line (issue 28): chosen
/// in the combo above the joint table, recompressed with it (13_07's fast result is larger
/// than the default's), undone from the Edit menu.
#[test]
fn effort_combo_recompresses_and_undoes() {
    let mut h = harness(Some(app_harness::shared_asset("acl/13_07.acl.sjson")));
    let bytes = |h: &Harness<'static, App>| {
        let doc = h.state().document().unwrap();
        doc.result.as_ref().unwrap().sizes.compressed_bytes
    };
    let default_bytes = bytes(&h);
    h.get_by_label("Effort").click();
    h.run();
    h.get_by_label("fast: least search, a few % larger").click();
    h.run();
    settle(&mut h);
    let doc = h.state().document().unwrap();
    assert_eq!(doc.settings.effort, skelpack::settings::Effort::Fast);
    assert_eq!(doc.resolved.effort, skelpack::settings::Effort::Fast);
    let fast_bytes = bytes(&h);
    assert!(
        fast_bytes > default_bytes,
        "fast {fast_bytes} B against default {default_bytes} B"
    );
    h.get_by_label("Edit").click();
    h.run();
    h.get_by_label("Undo effort fast").click();
    settle(&mut h);
    let doc = h.state().document().unwrap();
    assert_eq!(doc.settings.effort, skelpack::settings::Effort::Default);
    assert_eq!(bytes(&h), default_bytes);
}
