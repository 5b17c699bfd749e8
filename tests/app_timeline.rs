#![cfg(feature = "gui")]
//! The timeline's event row, take ranges and loop flag (issues 27, 26) through the real app
//! headless on the software adapter, used as a person does: a click on "+ Event" adds one
//! at the playhead and the name typed replaces the default one on Enter; a marker dragged
//! lands on the frame it is dropped on; delete; each edit one undo step (and redo). In / out
//! at the playhead, a typed name and "Create piece" cut a piece that becomes a clip (the
//! take stays as it is); dragging its end trims it, keeping its settings, and an event left
//! outside is reported and kept; undo restores the range. The loop flag is undoable and
//! saved in the sidecar.

use egui::{Key, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use skelpack::app::panels::{clip_flags, event_row, take_ranges, timeline};
use skelpack::app::{Action, App};
use skelpack::model::event::Event;

mod app_harness;
use app_harness::{opened, settle, shared_asset};

const SIZE: [f32; 2] = [1600.0, 1000.0];

fn type_slowly(h: &mut Harness<'static, App>, text: &str) {
    for c in text.chars() {
        h.event(egui::Event::Text(c.to_string()));
        h.step();
    }
}

fn press(h: &mut Harness<'static, App>, key: Key) {
    h.key_press(key);
    h.step();
    h.run();
}

fn seek(h: &mut Harness<'static, App>, frame: f32) {
    h.state_mut().perform(Action::Seek(frame));
    h.run();
}

fn events(h: &Harness<'static, App>) -> Vec<Event> {
    event_row::events(h.state().document().unwrap())
}

fn rate(h: &Harness<'static, App>) -> f32 {
    h.state().document().unwrap().sample_rate()
}

/// The x of `frame` on the scrub bar's scale (the rows under it share it).
fn x_of(h: &Harness<'static, App>, frame: f32) -> f32 {
    let r = h.get_by_label(timeline::SCRUB).rect();
    let last = (h.state().document().unwrap().frame_count() - 1) as f32;
    r.left() + 6.0 + (r.width() - 12.0) * frame / last
}

/// Presses at `from`, moves in steps to `to`, releases there.
fn drag(h: &mut Harness<'static, App>, from: Pos2, to: Pos2) {
    h.hover_at(from);
    h.drag_at(from);
    h.step();
    for k in 1..=6 {
        h.hover_at(from + (to - from) * (k as f32 / 6.0));
        h.step();
    }
    h.drop_at(to);
    h.run();
}

fn undo(h: &mut Harness<'static, App>) {
    h.state_mut().undo();
    h.run();
}

fn redo(h: &mut Harness<'static, App>) {
    h.state_mut().redo();
    h.run();
}

#[test]
fn events_are_added_dragged_renamed_and_deleted_with_undo() {
    let mut h = opened(None, SIZE);
    let rate = rate(&h);
    let clip = h.state().document().unwrap().clip_name().to_owned();
    assert!(events(&h).is_empty(), "the default character has no events");
    seek(&mut h, 10.0);
    h.get_by_label(event_row::ADD).click();
    h.run();
    let e = events(&h);
    assert_eq!(e.len(), 1);
    assert_eq!(e[0].name, "event");
    assert!((e[0].time - 10.0 / rate).abs() < 1e-5, "{} s", e[0].time);

    // The name field has the cursor with the default name selected: typing replaces it,
    // nothing applies per keystroke, Enter applies.
    type_slowly(&mut h, "footstep_l");
    assert_eq!(events(&h)[0].name, "event", "applied while typing");
    press(&mut h, Key::Enter);
    assert_eq!(events(&h)[0].name, "footstep_l");
    h.get_by_label(&event_row::marker_label("footstep_l"));

    // Payload: typed, applied on focus loss (a click on the marker).
    h.get_by_label(event_row::PAYLOAD).click();
    h.run();
    type_slowly(&mut h, "sfx/step_dirt");
    assert_eq!(events(&h)[0].payload, None, "applied while typing");
    press(&mut h, Key::Enter);
    assert_eq!(events(&h)[0].payload.as_deref(), Some("sfx/step_dirt"));

    // Drag the marker to frame 24: it snaps to the frame it is dropped near.
    let from = h
        .get_by_label(&event_row::marker_label("footstep_l"))
        .rect()
        .center();
    let to = Pos2::new(x_of(&h, 24.3), from.y);
    drag(&mut h, from, to);
    let e = events(&h);
    assert!(
        (e[0].time - 24.0 / rate).abs() < 1e-5,
        "dropped at {} s",
        e[0].time
    );
    assert_eq!(e[0].name, "footstep_l", "moving keeps the name");

    // Each edit is one undo step, undone in turn and redone.
    undo(&mut h);
    assert!(
        (events(&h)[0].time - 10.0 / rate).abs() < 1e-5,
        "move undone"
    );
    undo(&mut h);
    assert_eq!(events(&h)[0].payload, None, "payload undone");
    undo(&mut h);
    assert_eq!(events(&h)[0].name, "event", "rename undone");
    redo(&mut h);
    redo(&mut h);
    redo(&mut h);
    let e = events(&h);
    assert_eq!(e[0].name, "footstep_l");
    assert!((e[0].time - 24.0 / rate).abs() < 1e-5);

    // The `E` key adds one at the playhead too.
    seek(&mut h, 40.0);
    h.key_press(Key::E);
    h.run();
    let e = events(&h);
    assert_eq!(e.len(), 2, "E added one: {e:?}");
    assert!((e[1].time - 40.0 / rate).abs() < 1e-5);
    type_slowly(&mut h, "hit");
    press(&mut h, Key::Enter);
    assert_eq!(events(&h)[1].name, "hit");

    // Listed in the clip dashboard.
    h.state_mut().perform(Action::ToggleDashboard);
    h.run();
    h.get_by_label_contains("footstep_l @24");
    h.state_mut().perform(Action::ToggleDashboard);
    h.run();

    // Saved in the sidecar as [[clips.NAME.events]].
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("x.skelpack.toml");
    h.state_mut()
        .perform(Action::SaveSettings(Some(path.clone())));
    h.run();
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains("events"), "{text}");
    let saved = skelpack::settings::Settings::load(&path).unwrap();
    let listed = saved.clips[&clip].events.clone().unwrap();
    assert_eq!(listed, events(&h));

    // Delete: select the marker, then the button; undo brings it back.
    h.get_by_label(&event_row::marker_label("footstep_l"))
        .click();
    h.run();
    h.get_by_label(event_row::DELETE).click();
    h.run();
    let names: Vec<String> = events(&h).into_iter().map(|e| e.name).collect();
    assert_eq!(names, ["hit"]);
    undo(&mut h);
    assert_eq!(events(&h).len(), 2, "delete undone");
    redo(&mut h);
    assert_eq!(events(&h).len(), 1, "delete redone");
}

#[test]
fn a_take_piece_is_created_trimmed_and_undone() {
    let mut h = opened(None, SIZE);
    let take = h.state().document().unwrap().clip_name().to_owned();
    let clips_before = h.state().document().unwrap().asset.clips.len();
    let take_frames = h.state().document().unwrap().frame_count();
    assert!(take_frames > 30, "{take_frames} frames");
    seek(&mut h, 5.0);
    h.get_by_label(take_ranges::SET_IN).click();
    h.run();
    seek(&mut h, 25.0);
    h.get_by_label(take_ranges::SET_OUT).click();
    h.run();
    h.get_by_label(take_ranges::NAME).click();
    h.run();
    type_slowly(&mut h, "Attack");
    h.get_by_label(take_ranges::LOOPING).click();
    h.run();
    h.get_by_label(take_ranges::CREATE).click();
    h.run();
    {
        let doc = h.state().document().unwrap();
        let t = &doc.settings.takes["Attack"];
        assert_eq!((t.source.as_str(), t.start, t.end), (take.as_str(), 5, 25));
        assert_eq!(t.looping, Some(true));
        assert_eq!(doc.asset.clips.len(), clips_before + 1);
        let piece = doc.asset.clips.iter().find(|c| c.name == "Attack").unwrap();
        assert_eq!(piece.frame_count, 21);
        assert_eq!(doc.clip_name(), take, "the take stays open");
        assert_eq!(doc.frame_count(), take_frames, "the take is untouched");
        let text = doc
            .settings
            .to_text(std::path::Path::new("x.skelpack.toml"));
        assert!(text.contains("[takes.Attack]"), "{text}");
    }
    // The piece's bar is on the take's strip; dragging its out end trims it.
    let bar = h.get_by_label(&take_ranges::bar_label("Attack")).rect();
    let out_end = h
        .get_by_label(&take_ranges::end_label("Attack", true))
        .rect();
    assert!(bar.width() > 10.0);
    let to = Pos2::new(x_of(&h, 30.0), out_end.center().y);
    drag(&mut h, out_end.center(), to);
    {
        let doc = h.state().document().unwrap();
        let t = &doc.settings.takes["Attack"];
        assert_eq!((t.start, t.end), (5, 30), "trimmed by the drag");
        let piece = doc.asset.clips.iter().find(|c| c.name == "Attack").unwrap();
        assert_eq!(piece.frame_count, 26);
    }

    // The piece is a clip of its own: open it, compress it, give it an event near its end.
    let i = h
        .state()
        .document()
        .unwrap()
        .asset
        .clips
        .iter()
        .position(|c| c.name == "Attack")
        .unwrap();
    h.state_mut().set_clip(i);
    settle(&mut h);
    assert!(
        h.state().document().unwrap().resolved.looping,
        "the take's looping"
    );
    seek(&mut h, 22.0);
    h.get_by_label(event_row::ADD).click();
    h.run();
    type_slowly(&mut h, "swing");
    press(&mut h, Key::Enter);
    // A tighter own tolerance: a setting the trim must keep.
    let mut s = h.state().document().unwrap().settings.clone();
    s.clips.get_mut("Attack").unwrap().tolerance_mm = Some(0.3);
    h.state_mut()
        .perform(Action::EditSettings("tolerance".into(), Box::new(s)));
    h.run();

    // Out at the playhead (piece frame 12) trims the piece from its own timeline: the
    // event at frame 22 falls outside, is reported and kept.
    seek(&mut h, 12.0);
    h.get_by_label(take_ranges::SET_OUT).click();
    h.run();
    {
        let doc = h.state().document().unwrap();
        assert_eq!(doc.clip_name(), "Attack", "the piece stays open");
        let t = &doc.settings.takes["Attack"];
        assert_eq!((t.start, t.end), (5, 17));
        assert_eq!(doc.frame_count(), 13);
        let c = &doc.settings.clips["Attack"];
        assert_eq!(c.tolerance_mm, Some(0.3), "its settings kept");
        assert_eq!(c.events.as_ref().unwrap().len(), 1, "its event kept");
        assert!(doc.resolved.events.is_empty(), "but not played");
    }
    h.get_by_label_contains("events outside the piece (kept, not exported): swing (");
    settle(&mut h);

    // Undo: the range comes back, the event is inside again.
    undo(&mut h);
    {
        let doc = h.state().document().unwrap();
        let t = &doc.settings.takes["Attack"];
        assert_eq!((t.start, t.end), (5, 30));
        assert_eq!(doc.frame_count(), 26);
        assert_eq!(doc.resolved.events.len(), 1);
    }
    assert!(
        h.query_by_label_contains("events outside the piece")
            .is_none()
    );
    settle(&mut h);
    // Undoing the tolerance, the rename, the event, the drag and the creation leaves the
    // take alone.
    for _ in 0..5 {
        undo(&mut h);
    }
    let doc = h.state().document().unwrap();
    assert!(doc.settings.takes.is_empty());
    assert_eq!(doc.asset.clips.len(), clips_before);
    assert_eq!(
        doc.clip_name(),
        take,
        "back on the take when the piece is gone"
    );
}

#[test]
fn the_loop_flag_toggles_with_undo_and_is_suggested_for_a_cycle() {
    let mut h = opened(Some(shared_asset("Fox.glb")), SIZE);
    // Find a clip that closes (the fox's Run or Walk) and one that does not.
    let n = h.state().document().unwrap().asset.clips.len();
    let mut closing = None;
    for i in 0..n {
        h.state_mut().set_clip(i);
        settle(&mut h);
        if clip_flags::closes(h.state().document().unwrap()) {
            closing = Some(i);
            h.get_by_label(clip_flags::SUGGESTED);
            break;
        }
        assert!(h.query_by_label(clip_flags::SUGGESTED).is_none());
    }
    let i = closing.expect("a fox clip that returns to its first frame");
    let name = h.state().document().unwrap().clip_name().to_owned();
    assert!(
        !h.state().document().unwrap().resolved.looping,
        "suggested, not set"
    );
    h.get_by_label(clip_flags::LOOPS).click();
    h.run();
    let doc = h.state().document().unwrap();
    assert_eq!(doc.clip, i);
    assert!(doc.resolved.looping);
    assert_eq!(doc.settings.clips[&name].looping, Some(true));
    assert!(
        h.query_by_label(clip_flags::SUGGESTED).is_none(),
        "no longer suggested"
    );
    settle(&mut h);
    undo(&mut h);
    assert!(!h.state().document().unwrap().resolved.looping);
    h.get_by_label(clip_flags::SUGGESTED);
    redo(&mut h);
    assert!(h.state().document().unwrap().resolved.looping);
}

/// The sidecar of the screenshot: three pieces of CMU_131_01 and four events on the take.
const CMU_SIDECAR: &str = r#"
[takes.Enter]
source = "CMU_131_01"
start = 0
end = 300

[takes.Swing]
source = "CMU_131_01"
start = 300
end = 650
looping = true

[takes.Recover]
source = "CMU_131_01"
start = 650
end = 993

[[clips.CMU_131_01.events]]
name = "footstep_l"
time = 1.2

[[clips.CMU_131_01.events]]
name = "footstep_r"
time = 2.1

[[clips.CMU_131_01.events]]
name = "hit"
time = 3.8
payload = "damage=12"

[[clips.CMU_131_01.events]]
name = "whoosh"
time = 5.0
"#;

/// A file opened with `[takes.*]` in its sidecar has the pieces as clips, their bars on
/// the take's strip and the take's events on the row; with `SKELPACK_SHOTS` set, saves the
/// docs/APP.md screenshot (a piece and an event selected).
#[test]
fn a_sidecars_takes_and_events_open_on_the_timeline() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("CMU_131_01.bvh");
    std::fs::copy(shared_asset("CMU_131_01.bvh"), &src).unwrap();
    std::fs::write(
        skelpack::settings::Settings::sidecar_path(&src),
        CMU_SIDECAR,
    )
    .unwrap();
    let mut h = opened(Some(src), SIZE);
    {
        let doc = h.state().document().unwrap();
        let names: Vec<&str> = doc.asset.clips.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["CMU_131_01", "Enter", "Recover", "Swing"]);
        assert_eq!(doc.frame_count(), 994, "the take untouched");
    }
    for p in ["Enter", "Swing", "Recover"] {
        h.get_by_label(&take_ranges::bar_label(p));
    }
    for e in ["footstep_l", "footstep_r", "hit", "whoosh"] {
        h.get_by_label(&event_row::marker_label(e));
    }
    h.get_by_label(&take_ranges::bar_label("Swing")).click();
    h.run();
    h.get_by_label_contains("'Swing': frames 300-650");
    h.get_by_label(&event_row::marker_label("hit")).click();
    seek(&mut h, 456.0);
    assert_eq!(
        h.get_by_label(event_row::PAYLOAD).value().as_deref(),
        Some("damage=12")
    );
    if let Some(dir) = std::env::var_os("SKELPACK_SHOTS") {
        let img = h.render().expect("render");
        img.save(std::path::PathBuf::from(dir).join("screenshot_timeline_edit.png"))
            .expect("save");
    }
}

/// Moving a piece's start keeps its own events on the take frames they were on (their
/// piece times shift by what the start moved); a range that is no range is no edit.
#[test]
fn trimming_a_pieces_start_keeps_its_events_on_their_take_frames() {
    use skelpack::settings::Settings;
    use skelpack::settings::takes::TakeSettings;
    let mut s = Settings::default();
    s.takes.insert(
        "Attack".into(),
        TakeSettings {
            source: "Take".into(),
            start: 10,
            end: 40,
            looping: None,
        },
    );
    s.clips.entry("Attack".into()).or_default().events = Some(vec![Event {
        name: "hit".into(),
        time: 0.5, // take frame 10 + 15 at 30 fps
        payload: None,
    }]);
    let t = take_ranges::trimmed(&s, "Attack", 16, 40, 30.0).unwrap();
    assert_eq!((t.takes["Attack"].start, t.takes["Attack"].end), (16, 40));
    let e = &t.clips["Attack"].events.as_ref().unwrap()[0];
    assert!(
        (e.time - 0.3).abs() < 1e-6,
        "take frame 25 is piece frame 9: {}",
        e.time
    );
    // Trimming only the end moves nothing.
    let t = take_ranges::trimmed(&s, "Attack", 10, 20, 30.0).unwrap();
    assert_eq!(t.clips["Attack"].events.as_ref().unwrap()[0].time, 0.5);
    assert!(take_ranges::trimmed(&s, "Attack", 10, 40, 30.0).is_none());
    assert!(take_ranges::trimmed(&s, "Attack", 30, 30, 30.0).is_none());
    assert!(take_ranges::trimmed(&s, "Nope", 1, 5, 30.0).is_none());
}

/// A root-motion clip offers in place / travelling playback on the timeline; a clip
/// without root motion does not.
#[test]
fn a_root_motion_clip_plays_in_place_or_travelling() {
    let mut h = opened(None, SIZE);
    assert!(h.query_by_label(clip_flags::TRAVELLING).is_none());
    let name = h.state().document().unwrap().clip_name().to_owned();
    let mut s = h.state().document().unwrap().settings.clone();
    s.clips.entry(name).or_default().root_motion =
        Some(skelpack::settings::RootMotionSetting::Enabled(true));
    h.state_mut()
        .perform(Action::EditSettings("root motion".into(), Box::new(s)));
    h.run();
    assert!(h.state().document().unwrap().resolved.root_motion.is_some());
    assert!(h.state().view_options().in_place);
    h.get_by_label(clip_flags::TRAVELLING).click();
    h.run();
    assert!(!h.state().view_options().in_place, "travelling");
    h.get_by_label(clip_flags::IN_PLACE).click();
    h.run();
    assert!(h.state().view_options().in_place, "in place again");
}
