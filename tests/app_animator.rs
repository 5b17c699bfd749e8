#![cfg(feature = "gui")]
//! What an animator hits in the first minutes (issue 24, items 15–20), through the real app
//! headless on the software adapter, typed as a person types: one key at a time, with frames
//! between. A typed tolerance applies on Enter or focus loss, not per keystroke; Save
//! Settings on the default character asks where; a click in the joint table does not scroll
//! it; Enter confirms and Tab completes in the path field; the joint selected when a file
//! opens is the one "Go to worst" names; two dialogs never stack.

use std::path::PathBuf;

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skelpack::app::panels::path_prompt::{self, Purpose};
use skelpack::app::panels::{attribution, floor, joints, unsaved};
use skelpack::app::{Action, App};

mod app_harness;
use app_harness::{SIZE, opened, settle, shared_asset};

/// Types `text` one character per frame, as a person types.
fn type_slowly(h: &mut Harness<'static, App>, text: &str) {
    for c in text.chars() {
        h.event(egui::Event::Text(c.to_string()));
        h.step();
    }
}

/// A key pressed and released, then a frame.
fn press(h: &mut Harness<'static, App>, key: Key) {
    h.key_press(key);
    h.step();
}

fn tolerance_mm(h: &Harness<'static, App>, joint: &str) -> f32 {
    let doc = h.state().document().unwrap();
    let j = doc.asset.skeleton.find(joint).unwrap();
    doc.resolved.limits.tolerance[j] / (doc.resolved.unit.per_metre() / 1000.0)
}

fn marker_cm(h: &Harness<'static, App>, joint: &str) -> f32 {
    let doc = h.state().document().unwrap();
    let j = doc.asset.skeleton.find(joint).unwrap();
    doc.resolved.limits.marker_offset[j] / (doc.resolved.unit.per_metre() / 100.0)
}

/// Clicks a number field of the joint table (scrolled into view first): it takes the
/// keyboard with its text selected, as a click on it does for a person.
fn click_field(h: &mut Harness<'static, App>, label: &str) {
    h.get_by_label(label).scroll_to_me();
    h.run();
    h.get_by_label(label).click();
    h.run();
}

/// A leaf of the default character with a floor far below 0.05 mm.
const TIP: &str = "RightHandIndex3";

#[test]
fn a_typed_tolerance_applies_on_enter_or_focus_loss_not_per_keystroke() {
    let mut h = opened(None, SIZE);
    let before = tolerance_mm(&h, TIP);
    click_field(&mut h, &joints::tolerance_label(TIP));
    for (i, c) in "0.05".char_indices() {
        type_slowly(&mut h, &c.to_string());
        assert!(
            h.query_by_label(floor::TITLE).is_none(),
            "asked about the floor after typing {:?}",
            &"0.05"[..=i]
        );
        assert_eq!(
            tolerance_mm(&h, TIP),
            before,
            "applied while typing {:?}",
            &"0.05"[..=i]
        );
    }
    press(&mut h, Key::Enter);
    settle(&mut h);
    assert!(h.query_by_label(floor::TITLE).is_none());
    let typed = tolerance_mm(&h, TIP);
    assert!((typed - 0.05).abs() < 1e-6, "{typed} mm, typed 0.05");
    // One edit, one undo step.
    h.state_mut().undo();
    assert_eq!(tolerance_mm(&h, TIP), before, "one undo step back");
    h.state_mut().redo();
    h.run();

    // Focus loss applies too: the marker offset typed, then a click on the joint's name.
    let marker_before = marker_cm(&h, TIP);
    click_field(&mut h, &joints::marker_label(TIP));
    type_slowly(&mut h, "4.5");
    assert_eq!(
        marker_cm(&h, TIP),
        marker_before,
        "not applied while typing"
    );
    h.get_by_label(TIP).click();
    h.run();
    settle(&mut h);
    let m = marker_cm(&h, TIP);
    assert!((m - 4.5).abs() < 1e-5, "{m} cm, typed 4.5");
}

#[test]
fn save_settings_on_the_default_character_asks_for_a_path() {
    let mut h = opened(None, SIZE);
    h.get_by_label("File").click();
    h.run();
    h.get_by_label("Save Settings").click();
    h.run();
    // No native dialog here: the in-app field, with a name to save under.
    h.get_by_label(Purpose::SaveSettings.title());
    let start = h
        .get_by_label(path_prompt::FIELD)
        .value()
        .unwrap_or_default();
    assert!(start.ends_with(".skelpack.toml"), "{start}");
    assert!(
        !h.state().status().contains("no file chosen"),
        "{}",
        h.state().status()
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("default.skelpack.toml");
    h.get_by_label(path_prompt::FIELD)
        .set_text_value_accesskit(&path.display().to_string());
    h.run();
    h.get_by_label(path_prompt::OK).click();
    h.run_steps(3);
    let saved = skelpack::settings::Settings::load(&path).expect("saved where typed");
    assert_eq!(saved, h.state().document().unwrap().settings);
    assert!(h.state().status().contains("Saved settings"));
}

#[test]
fn a_click_in_the_joint_table_does_not_scroll_it() {
    let mut h = opened(Some(shared_asset("RobotExpressive.glb")), SIZE);
    let names: Vec<String> = {
        let s = &h.state().document().unwrap().asset.skeleton;
        s.joints.iter().map(|j| j.name.clone()).collect()
    };
    // The table's visible rows lie between its header and the bottom of the viewport
    // beside it (the tuning panel spans the window below both), above the Curves section
    // when the clip has weight tracks (the table stops there).
    let top = h.get_by_label("Tol. mm").rect().bottom();
    let mut bottom = h.state().viewport_rect().expect("viewport").bottom();
    if let Some(curves) = h.query_by_label_contains("morph-weight track") {
        bottom = bottom.min(curves.rect().top());
    }
    let visible = |h: &Harness<'static, App>| -> Vec<(usize, egui::Rect)> {
        let mut rows: Vec<(usize, egui::Rect)> = names
            .iter()
            .enumerate()
            .filter_map(|(j, n)| {
                let mut nodes = h.query_all_by_label(n);
                let r = nodes.next()?.rect();
                (nodes.next().is_none() && r.top() >= top && r.bottom() <= bottom).then_some((j, r))
            })
            .collect();
        rows.sort_by(|a, b| a.1.top().total_cmp(&b.1.top()));
        rows
    };
    let rows = visible(&h);
    // Enough rows for a click below the focused one and the row above it; at 1280 x 800
    // the timeline's editing rows, the tuning panel and RobotExpressive's Curves section
    // leave the table seven whole rows (six when each editing row had a line of its own
    // and the tuning panel a third of the window; eight counted while the table still drew
    // its last row under the Curves section).
    assert!(rows.len() >= 7, "{} rows visible", rows.len());
    let focus = h.state().selected();
    // The lowest visible row that is not the focused one, and the row above it.
    let (k, &(j, rect)) = rows
        .iter()
        .enumerate()
        .rev()
        .find(|(k, (j, _))| *k > 0 && Some(*j) != focus && Some(rows[k - 1].0) != focus)
        .expect("a row to click");
    let (above, above_rect) = rows[k - 1];
    h.get_by_label(&names[j]).click();
    h.run();
    assert_eq!(h.state().selected(), Some(j));
    let after = h.get_by_label(&names[j]).rect();
    assert!(
        (after.top() - rect.top()).abs() < 0.5,
        "the clicked row moved from y {} to {}",
        rect.top(),
        after.top()
    );
    // The next click lands on the row that was under the pointer.
    let p = above_rect.center();
    h.hover_at(p);
    h.drag_at(p);
    h.drop_at(p);
    h.run();
    assert_eq!(
        h.state().selected(),
        Some(above),
        "the second click selected {:?}",
        h.state().selected().map(|s| &names[s])
    );
}

#[test]
fn in_the_path_field_tab_completes_and_enter_confirms() {
    let mut h = opened(None, SIZE);
    h.state_mut().perform(Action::PromptPath(Purpose::Open));
    h.run();
    let shared = std::fs::canonicalize(shared_asset("")).unwrap();
    let folder = shared.display().to_string();
    let (parent, assets) = folder.rsplit_once('/').unwrap();
    assert_eq!(assets, "assets");
    h.get_by_label(path_prompt::FIELD)
        .set_text_value_accesskit(&format!("{parent}/asse"));
    h.run();
    press(&mut h, Key::Tab);
    h.run();
    let field = |h: &Harness<'static, App>| {
        h.get_by_label(path_prompt::FIELD)
            .value()
            .unwrap_or_default()
    };
    assert_eq!(field(&h), format!("{folder}/"), "Tab completes the folder");
    // Typing goes on at the end of the completed text; Tab completes the file.
    type_slowly(&mut h, "Robo");
    assert_eq!(field(&h), format!("{folder}/Robo"));
    press(&mut h, Key::Tab);
    h.run();
    assert_eq!(field(&h), format!("{folder}/RobotExpressive.glb"));
    press(&mut h, Key::Enter);
    h.run_steps(3);
    assert!(
        h.query_by_label(Purpose::Open.title()).is_none(),
        "Enter confirmed"
    );
    let doc = h.state().document().unwrap();
    assert!(doc.title().contains("RobotExpressive"), "{}", doc.title());
}

/// The joint selected when `file` opens with nothing asked for is the one "Go to worst"
/// names for the result shown.
fn selected_on_open_is_go_to_worst(file: PathBuf) {
    let mut h = opened(Some(file), SIZE);
    let doc = h.state().document().unwrap();
    let r = doc.result.as_ref().expect("result");
    assert!(!r.refining);
    let w = attribution::worst(&doc.asset, doc.clip, &doc.resolved.limits, r).expect("an error");
    let names = &doc.asset.skeleton.joints;
    let label = format!("Go to worst: {} @ frame {}", names[w.joint].name, w.frame);
    h.get_by_label_contains(&label);
    assert_eq!(
        h.state().selected().map(|s| names[s].name.clone()),
        Some(names[w.cause].name.clone()),
        "selected on open; the button says {label:?}"
    );
    // The user's own pick stays through later results.
    let other = (w.cause + 1) % names.len();
    h.state_mut().select_joint(Some(other));
    h.state_mut().perform(Action::Recompress);
    settle(&mut h);
    assert_eq!(h.state().selected(), Some(other));
}

#[test]
fn the_joint_selected_on_open_is_the_one_go_to_worst_names() {
    // Its first pass and its refined result have different worst joints.
    selected_on_open_is_go_to_worst(shared_asset("acl/121_10.acl.sjson"));
}

#[test]
fn a_shortcut_does_not_stack_a_dialog_on_an_open_one() {
    let mut h = opened(None, SIZE);
    let label = joints::tolerance_label(TIP);
    // An edit: the settings are unsaved.
    h.get_by_label(&label).scroll_to_me();
    h.run();
    h.get_by_label(&label).set_value_accesskit(0.05);
    settle(&mut h);
    assert!(h.state().document().unwrap().is_dirty());
    // A tolerance below the joint's floor asks first.
    click_field(&mut h, &label);
    type_slowly(&mut h, "0.000001");
    press(&mut h, Key::Enter);
    h.run();
    h.get_by_label(floor::TITLE);
    // Ctrl+Q while it asks: the question stays the only dialog.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Q);
    h.run();
    assert!(
        h.query_by_label(unsaved::TITLE).is_none(),
        "the unsaved-settings question stacked on the floor question"
    );
    assert!(!h.state().is_confirming());
    h.get_by_label(floor::TITLE);
    h.get_by_label(floor::CANCEL).click();
    h.run();
    assert!(h.query_by_label(floor::TITLE).is_none());
    // Answered: Ctrl+Q asks about the unsaved settings.
    h.key_press_modifiers(egui::Modifiers::COMMAND, Key::Q);
    h.run();
    h.get_by_label(unsaved::TITLE);
    assert!(h.state().is_confirming());
    // Another question is refused while it is open.
    h.state_mut().perform(Action::PromptPath(Purpose::Open));
    h.run();
    assert!(h.query_by_label(Purpose::Open.title()).is_none());
    h.get_by_label(unsaved::CANCEL).click();
    h.run();
    assert!(!h.state().is_confirming());
}

/// At 1280 x 800 the viewport keeps room to see a pose: the timeline's editing rows share
/// one control line, and the tuning panel takes two fifths of what the timeline leaves.
#[test]
fn a_1280_by_800_window_leaves_the_viewport_room() {
    let h = opened(Some(shared_asset("RobotExpressive.glb")), SIZE);
    let v = h.state().viewport_rect().expect("viewport");
    assert!(
        v.height() >= 240.0,
        "viewport {} points high in an 800-point window",
        v.height()
    );
    // The editing rows: one control line holds the event, piece and flag controls.
    let add = h.get_by_label(skelpack::app::panels::event_row::ADD).rect();
    let set_in = h
        .get_by_label(skelpack::app::panels::take_ranges::SET_IN)
        .rect();
    assert!(
        (add.center().y - set_in.center().y).abs() < 2.0,
        "+ Event at y {} and Set in at y {}",
        add.center().y,
        set_in.center().y
    );
}
