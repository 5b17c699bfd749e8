#![cfg(feature = "gui")]
//! Error attribution in the real app (headless, software wgpu adapter): heatmap clicks and
//! "Go to worst" land on the joint whose own tracks cause the error, the own-error heatmap
//! mode, the focused joint's floor and the colour legends; the residual view and the
//! dope-sheet row with previous / next key.

use std::path::PathBuf;
use std::time::Duration;

use egui::Modifiers;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skelpack::app::App;
use skelpack::app::panels::{attribution, curves, dope_sheet, errors, stats};
use skelpack::metric;

mod app_harness;

const SIZE: [f32; 2] = [1600.0, 1000.0];

/// The app on `file` with `joint` selected and the compressed result in.
fn harness(file: PathBuf, joint: &str) -> (Harness<'static, App>, usize) {
    let mut h = app_harness::open(Some(file), SIZE);
    h.run_steps(2);
    assert!(
        h.state_mut().wait_for_result(Duration::from_secs(120)),
        "no compressed result"
    );
    let j = app_harness::joint(&h, joint);
    h.state_mut().select_joint(Some(j));
    h.state_mut().playback_mut().frame = 0.0;
    h.run();
    (h, j)
}

/// The frame where `joint`'s error is largest, with its own and inherited parts.
fn worst_frame(h: &Harness<'static, App>, joint: usize) -> (usize, f32, f32, f32) {
    let doc = h.state().document().unwrap();
    let r = doc.shown().unwrap();
    let clip = &doc.asset.clips[doc.clip];
    let a = metric::attribute(
        &doc.asset.skeleton,
        clip,
        r.poses.as_ref(),
        r.errors.frames,
        &doc.resolved.limits,
    );
    let f = (0..r.errors.frames)
        .max_by(|x, y| r.errors.at(joint, *x).total_cmp(&r.errors.at(joint, *y)))
        .unwrap();
    (
        f,
        r.errors.at(joint, f),
        a.own_at(joint, f),
        a.inherited_at(joint, f),
    )
}

fn click(h: &mut Harness<'static, App>, p: egui::Pos2) {
    h.hover_at(p);
    h.drag_at(p);
    h.drop_at(p);
    h.run();
}

#[test]
fn heatmap_click_on_inherited_error_lands_on_the_joint_that_causes_it() {
    // Palm1.L has no keys of its own on RobotExpressive: all of its error is inherited.
    let (mut h, palm) = harness(app_harness::shared_asset("RobotExpressive.glb"), "Palm1.L");
    let (f, total, own, inherited) = worst_frame(&h, palm);
    assert!(total > 0.0, "Palm1.L carries error");
    assert_eq!(own, 0.0, "its own tracks are exact");
    assert!(inherited >= total * 0.999, "{inherited} vs {total}");
    let expected = attribution::cause(h.state().document().unwrap(), palm, f).unwrap();
    assert_ne!(expected.source, palm);
    assert!(expected.error > 0.0);
    let costs = &h.state().document().unwrap().shown().unwrap().joint_costs;
    assert!(
        costs[expected.source].animated_tracks > 0,
        "the cause has curves to tune"
    );

    // A click on Palm1.L's cell selects the cause at that frame.
    h.state_mut().select_joint(None);
    h.run();
    let p = h.state().heatmap().unwrap().cell_center(palm, f).unwrap();
    click(&mut h, p);
    assert_eq!(h.state().selected(), Some(expected.source));
    assert!((h.state().playback().frame - f as f32).abs() < 1.0);

    // Ctrl-click selects the row's joint itself.
    let p = h.state().heatmap().unwrap().cell_center(palm, f).unwrap();
    h.hover_at(p);
    h.event_modifiers(
        egui::Event::PointerButton {
            pos: p,
            button: egui::PointerButton::Primary,
            pressed: true,
            modifiers: Modifiers::COMMAND,
        },
        Modifiers::COMMAND,
    );
    h.event_modifiers(
        egui::Event::PointerButton {
            pos: p,
            button: egui::PointerButton::Primary,
            pressed: false,
            modifiers: Modifiers::COMMAND,
        },
        Modifiers::COMMAND,
    );
    h.run();
    assert_eq!(h.state().selected(), Some(palm));
    // The error panel says how the selected joint's error splits.
    h.get_by_label_contains("Palm1.L (worst");
    h.get_by_label_contains("own 0.0000 mm, inherited");
}

#[test]
fn own_error_mode_colours_by_own_tracks_and_selects_the_row() {
    let (mut h, palm) = harness(app_harness::shared_asset("RobotExpressive.glb"), "Palm1.L");
    h.get_by_label(errors::OWN_MODE).click();
    h.run();
    let (f, ..) = worst_frame(&h, palm);
    h.state_mut().select_joint(None);
    h.run();
    let p = h.state().heatmap().unwrap().cell_center(palm, f).unwrap();
    click(&mut h, p);
    // In own-error mode a cell's colour is the row's own error: the click selects the row.
    assert_eq!(h.state().selected(), Some(palm));
    save_shot(&mut h, "own_error");
    h.get_by_label(errors::TOTAL_MODE).click();
    h.run();
}

#[test]
fn go_to_worst_selects_the_cause_of_the_worst_error() {
    let (mut h, _) = harness(app_harness::shared_asset("RobotExpressive.glb"), "Hips");
    let (worst, frame) = {
        let e = &h.state().document().unwrap().shown().unwrap().errors;
        (e.samples.worst_joint, e.samples.worst_frame as usize)
    };
    let expected = attribution::cause(h.state().document().unwrap(), worst, frame).unwrap();
    // The button may sit below the fold of the stats panel: scroll to it first.
    h.get_by_label_contains("Go to worst").scroll_to_me();
    h.run();
    h.get_by_label_contains("Go to worst").click();
    h.run();
    assert_eq!(h.state().selected(), Some(expected.source));
    assert!((h.state().playback().frame - frame as f32).abs() < 0.5);
    // The cause's own tracks account for the error at the worst joint's markers.
    assert!(expected.error > 0.0);
}

#[test]
fn every_colour_scale_has_a_legend_and_the_focused_joint_shows_its_floor() {
    let (h, _) = harness(app_harness::shared_asset("RobotExpressive.glb"), "Hips");
    // Heatmap, timeline strip and the joint table's error bars.
    assert!(h.query_all_by_label(attribution::LEGEND).count() >= 3);
    // The focused joint's floor in the stats panel; its tolerance's hover names it too.
    h.get_by_label(stats::FLOOR);
    h.get_by_label("Error");
}

#[test]
fn dope_sheet_keys_and_previous_next_key_shortcuts() {
    let (mut h, j) = harness(
        app_harness::shared_asset("CesiumMan.glb"),
        "Skeleton_arm_joint_R__2_",
    );
    h.get_by_label(dope_sheet::DOPE_SHEET);
    let keys = dope_sheet::key_frames(h.state().document().unwrap(), j);
    assert!(keys.len() >= 3, "an animated joint: {keys:?}");
    assert_eq!(keys[0], 0);
    // `.` goes to the next key, `,` back; Alt+Right / Alt+Left too; the buttons too.
    h.key_press(egui::Key::Period);
    h.run();
    assert_eq!(h.state().playback().frame, keys[1] as f32);
    h.key_press_modifiers(Modifiers::ALT, egui::Key::ArrowRight);
    h.run();
    assert_eq!(h.state().playback().frame, keys[2] as f32);
    h.key_press(egui::Key::Comma);
    h.run();
    assert_eq!(h.state().playback().frame, keys[1] as f32);
    h.get_by_label(dope_sheet::PREV_KEY).click();
    h.run();
    assert_eq!(h.state().playback().frame, 0.0);
    h.get_by_label(dope_sheet::NEXT_KEY).click();
    h.run();
    assert_eq!(h.state().playback().frame, keys[1] as f32);
    // Between keys, the next key is the first one after the frame shown.
    h.state_mut().playback_mut().frame = keys[1] as f32 + 0.4;
    h.key_press(egui::Key::Period);
    h.run();
    assert_eq!(h.state().playback().frame, keys[2] as f32);
}

#[test]
fn residual_view_plots_raw_minus_decoded_in_degrees_and_mm() {
    let (mut h, _) = harness(
        app_harness::shared_asset("CesiumMan.glb"),
        "Skeleton_arm_joint_R__2_",
    );
    h.state_mut().set_residual(true);
    h.run();
    h.get_by_label(curves::RESIDUAL);
    h.get_by_label_contains("Rotation residual, raw − decoded (degrees)");
    assert!(h.state().curve_plot().is_some(), "a residual plot is drawn");
    save_shot(&mut h, "residual");
    // A joint whose translation is animated shows it in mm.
    let moving = {
        let r = h.state().document().unwrap().shown().unwrap();
        r.clip
            .tracks
            .iter()
            .position(|t| matches!(t[0], skelpack::codec::TrackData::Animated(_)))
            .expect("a joint with an animated translation")
    };
    h.state_mut().select_joint(Some(moving));
    h.run();
    h.get_by_label_contains("Translation residual, raw − decoded (mm)");
}

/// Saves the harness's image to `$SKELPACK_SHOTS/NAME.png` when that variable is set (for
/// the screenshots in docs/APP.md).
fn save_shot(h: &mut Harness<'static, App>, name: &str) {
    if let Some(dir) = std::env::var_os("SKELPACK_SHOTS") {
        let img = h.render().expect("render");
        img.save(PathBuf::from(dir).join(format!("{name}.png")))
            .expect("save");
    }
}

#[test]
fn caused_mode_lights_the_joint_whose_tracks_cause_a_descendants_error() {
    let (mut h, palm) = harness(app_harness::shared_asset("RobotExpressive.glb"), "Palm1.L");
    let (f, ..) = worst_frame(&h, palm);
    let expected = attribution::cause(h.state().document().unwrap(), palm, f).unwrap();
    assert_ne!(expected.source, palm);
    // Its caused ratio covers what it does to Palm1.L's markers.
    let caused = {
        let doc = h.state().document().unwrap();
        let r = doc.shown().unwrap();
        metric::caused_ratios(
            &doc.asset.skeleton,
            &doc.asset.clips[doc.clip],
            r.poses.as_ref(),
            r.errors.frames,
            &doc.resolved.limits,
            usize::MAX,
        )
        .unwrap()
    };
    let n = h.state().document().unwrap().asset.skeleton.len();
    let tol = h.state().document().unwrap().resolved.limits.tolerance[palm];
    assert!(caused[f * n + expected.source] >= expected.error / tol * 0.999);
    assert_eq!(caused[f * n + palm], 0.0, "Palm1.L's own tracks are exact");
    h.get_by_label(errors::CAUSED_MODE).click();
    h.run();
    h.state_mut().select_joint(None);
    h.run();
    let p = h
        .state()
        .heatmap()
        .unwrap()
        .cell_center(expected.source, f)
        .unwrap();
    click(&mut h, p);
    assert_eq!(h.state().selected(), Some(expected.source));
    save_shot(&mut h, "caused");
}
