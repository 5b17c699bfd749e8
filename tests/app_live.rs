//! The app's live source (issue 27): the open file replaced on disk the way Blender and
//! Maya save (a modified copy under a temporary name, renamed over it) reloads, keeping the
//! per-joint settings of joints that still exist, the selection and the undo history, and
//! reporting (keeping aside) the settings of a joint the new file lacks; "Export on save"
//! rewrites the remembered export after the reload.

mod app_harness;

use std::path::Path;
use std::time::{Duration, Instant};

use egui_kittest::Harness;
use skelpack::app::{Action, App};

/// A BVH chain Hips > Spine > Head, plus LeftArm on the spine when `arm`; `wave` scales
/// the motion (a different value is a modified take).
fn bvh(arm: bool, wave: f32) -> String {
    let arm_text = if arm {
        "  JOINT LeftArm\n  {\n   OFFSET 15 0 0\n   CHANNELS 3 Zrotation Xrotation Yrotation\n   End Site\n   {\n    OFFSET 25 0 0\n   }\n  }\n"
    } else {
        ""
    };
    let mut s = format!(
        "HIERARCHY\nROOT Hips\n{{\n OFFSET 0 90 0\n CHANNELS 6 Xposition Yposition Zposition Zrotation Xrotation Yrotation\n JOINT Spine\n {{\n  OFFSET 0 20 0\n  CHANNELS 3 Zrotation Xrotation Yrotation\n  JOINT Head\n  {{\n   OFFSET 0 30 0\n   CHANNELS 3 Zrotation Xrotation Yrotation\n   End Site\n   {{\n    OFFSET 0 10 0\n   }}\n  }}\n{arm_text} }}\n}}\nMOTION\nFrames: 60\nFrame Time: 0.0333333\n"
    );
    for f in 0..60 {
        let t = f as f32 / 60.0 * std::f32::consts::TAU;
        let a = wave * t.sin();
        let mut row = format!(
            "{:.4} 90 0 {:.4} 0 0 {:.4} {:.4} 0 {:.4} 0 {:.4}",
            a,
            a * 10.0,
            a * 20.0,
            a * 5.0,
            a * 15.0,
            a * 3.0
        );
        if arm {
            row.push_str(&format!(" {:.4} {:.4} 0", a * 40.0, a * 8.0));
        }
        s.push_str(&row);
        s.push('\n');
    }
    s
}

/// Writes `text` beside `path` under a temporary name, then renames it over `path`.
fn save_like_a_dcc(path: &Path, text: &str) {
    let tmp = path.with_extension("bvh.tmp~");
    std::fs::write(&tmp, text).unwrap();
    std::fs::rename(&tmp, path).unwrap();
}

/// Steps frames until `done` holds (the live source reloads between frames).
fn step_until(h: &mut Harness<'static, App>, what: &str, done: impl Fn(&App) -> bool) {
    let start = Instant::now();
    while !done(h.state()) {
        assert!(
            start.elapsed() < Duration::from_secs(120),
            "timed out waiting for {what}; live log: {:?}",
            h.state().live_log()
        );
        std::thread::sleep(Duration::from_millis(20));
        h.step();
    }
}

fn joint_index(app: &App, name: &str) -> Option<usize> {
    app.document()?
        .asset
        .skeleton
        .joints
        .iter()
        .position(|j| j.name == name)
}

#[test]
fn a_save_renamed_over_the_open_file_reloads_keeping_settings_and_reporting_a_removed_joint() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("take.bvh");
    std::fs::write(&file, bvh(true, 1.0)).unwrap();
    std::fs::write(
        dir.path().join("take.bvh.skelpack.toml"),
        "[joints.Spine]\ntolerance_mm = 5.0\n\n[joints.LeftArm]\ntolerance_mm = 3.0\n",
    )
    .unwrap();
    let mut h = app_harness::opened(Some(file.clone()), app_harness::SIZE);
    let spine = joint_index(h.state(), "Spine").unwrap();
    h.state_mut().select_joint(Some(spine));
    // An edit made in the app before the save: undoable after the reload too.
    let mut edited = h.state().document().unwrap().settings.clone();
    edited.joints.entry("Head".into()).or_default().tolerance_mm = Some(2.0);
    h.state_mut().perform(Action::EditSettings(
        "Head tolerance".into(),
        Box::new(edited),
    ));
    h.run_steps(2);
    let first_id = h.state().document().unwrap().id;

    // Blender / Maya: the modified take (no LeftArm, other motion) under a temporary name,
    // renamed over the open file.
    save_like_a_dcc(&file, &bvh(false, 1.5));
    step_until(&mut h, "the reload and its result", |a| {
        a.document()
            .is_some_and(|d| d.id != first_id && d.result.is_some())
            && !a.live_busy()
    });

    let app = h.state();
    let doc = app.document().unwrap();
    assert_eq!(joint_index(app, "LeftArm"), None, "the new file is shown");
    let spine = joint_index(app, "Spine").unwrap();
    let head = joint_index(app, "Head").unwrap();
    let hips = joint_index(app, "Hips").unwrap();
    // Per-joint settings still apply on the joints that exist.
    let tol = &doc.resolved.limits.tolerance;
    assert!(
        tol[spine] > tol[hips] && tol[head] > tol[hips],
        "Spine's and Head's own tolerances apply after the reload: {tol:?}"
    );
    assert_eq!(doc.settings.joints["Spine"].tolerance_mm, Some(5.0));
    // The removed joint's settings are kept aside and reported.
    assert_eq!(doc.settings.joints["LeftArm"].tolerance_mm, Some(3.0));
    let (title, message) = app
        .error_banner()
        .expect("a banner reports the removed joint");
    assert!(title.contains("kept aside"), "{title}");
    assert!(message.contains("LeftArm"), "{message}");
    assert!(
        app.live_log().iter().any(|l| l.contains("modified")),
        "the change is described: {:?}",
        app.live_log()
    );
    // Selection kept by name.
    assert_eq!(app.selected(), Some(spine));
    assert!(app.reload_latency().1.is_some());
    // With `SKELPACK_SHOTS` set, the docs/APP.md screenshot of the reload's banner.
    if let Some(dir) = std::env::var_os("SKELPACK_SHOTS") {
        h.run();
        let img = h.render().expect("render");
        img.save(std::path::PathBuf::from(dir).join("screenshot_reload.png"))
            .expect("save");
    }
    // The undo history survives: undoing takes the Head edit back.
    h.state_mut().undo();
    let doc = h.state().document().unwrap();
    assert!(
        !doc.settings.joints.contains_key("Head"),
        "undo after reload"
    );
    assert!(doc.settings.joints.contains_key("LeftArm"));
}

#[test]
fn export_on_save_rewrites_the_remembered_export() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("take.bvh");
    let out = dir.path().join("take.skp");
    std::fs::write(&file, bvh(true, 1.0)).unwrap();
    let mut h = app_harness::opened(Some(file.clone()), app_harness::SIZE);
    h.state_mut().perform(Action::ExportSkp(Some(out.clone())));
    app_harness::wait_for_export(&mut h);
    let first = std::fs::read(&out).unwrap();
    // Remembered in the sidecar.
    let sidecar = std::fs::read_to_string(dir.path().join("take.bvh.skelpack.toml")).unwrap();
    assert!(
        sidecar.contains("[[exports]]") && sidecar.contains("take.skp"),
        "{sidecar}"
    );
    h.state_mut().view_options_mut().export_on_save = true;

    save_like_a_dcc(&file, &bvh(true, 2.0));
    step_until(&mut h, "the export on save", |a| {
        a.live_log()
            .iter()
            .any(|l| l.starts_with("Export on save:"))
            && !a.live_busy()
    });
    let line = h
        .state()
        .live_log()
        .iter()
        .find(|l| l.starts_with("Export on save:"))
        .unwrap()
        .clone();
    assert!(
        line.contains("wrote") && line.contains("take.skp"),
        "{line}"
    );
    let second = std::fs::read(&out).unwrap();
    assert_ne!(
        first, second,
        "the export was rewritten from the saved motion"
    );
}

/// With "Export on save" on and a compressed glTF remembered in the sidecar, opening the
/// file prepares that target in the background (its memo filled, no scratch file left),
/// so that the first save re-encodes only what changed. A save writes the target at `fast`
/// effort first, then at the effort in force: byte for byte what `skelpack compress`
/// writes from the saved file.
#[test]
fn export_on_save_prepares_gltf_targets_before_the_first_save() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("take.bvh");
    let out = dir.path().join("take.glb");
    std::fs::write(&file, bvh(true, 1.0)).unwrap();
    std::fs::write(
        dir.path().join("take.bvh.skelpack.toml"),
        format!(
            "[[exports]]\npath = {:?}\nformat = \"glb\"\n",
            out.to_str().unwrap()
        ),
    )
    .unwrap();
    let scratch = |pid: u32| {
        std::fs::read_dir(std::env::temp_dir())
            .unwrap()
            .filter_map(Result::ok)
            .filter(|e| {
                let n = e.file_name().to_string_lossy().into_owned();
                n.starts_with(&format!("skelpack-warm-{pid}-"))
            })
            .count()
    };
    let mut h = app_harness::opened(Some(file.clone()), app_harness::SIZE);
    assert!(h.state().exports_prepared().is_none(), "not asked for yet");
    h.state_mut().view_options_mut().export_on_save = true;
    step_until(&mut h, "the glTF target prepared", |a| {
        a.exports_prepared().is_some()
    });
    let prepared = h.state().exports_prepared().unwrap();
    assert_eq!(prepared.len(), 1, "{prepared:?}");
    assert_eq!(prepared[0].0, out);
    assert!(prepared[0].1 >= 1, "the memo holds the clip: {prepared:?}");
    assert!(!out.exists(), "preparing writes no target");
    assert_eq!(scratch(std::process::id()), 0, "no scratch file left");

    save_like_a_dcc(&file, &bvh(true, 2.0));
    step_until(&mut h, "the export on save", |a| {
        a.live_log()
            .iter()
            .any(|l| l.starts_with("Export on save: wrote"))
            && !a.live_busy()
    });
    // The quick export (fast effort) first, then the final one replacing it.
    let wrote: Vec<&String> = (h.state().live_log().iter())
        .filter(|l| l.starts_with("Export on save: wrote"))
        .collect();
    assert_eq!(wrote.len(), 2, "{wrote:?}");
    assert!(
        wrote[0].contains("(fast; the final export follows)"),
        "{wrote:?}"
    );
    assert!(!wrote[1].contains("(fast"), "{wrote:?}");
    let cli = dir.path().join("cli.glb");
    app_harness::cli_compress(&file, &cli);
    assert!(
        std::fs::read(&out).unwrap() == std::fs::read(&cli).unwrap(),
        "the export on save is the command line's file"
    );
}

/// A file whose sidecar cuts a take into a piece: after a save the piece is cut once from
/// the new file (not again from the clips already holding it), and it is reported as
/// modified, not as added or removed.
#[test]
fn a_reload_cuts_the_takes_pieces_once_from_the_saved_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("take.bvh");
    std::fs::write(&file, bvh(true, 1.0)).unwrap();
    std::fs::write(
        dir.path().join("take.bvh.skelpack.toml"),
        "[takes.Wave]\nsource = \"take\"\nstart = 10\nend = 40\n",
    )
    .unwrap();
    let mut h = app_harness::opened(Some(file.clone()), app_harness::SIZE);
    let names = |app: &App| -> Vec<String> {
        let doc = app.document().unwrap();
        doc.asset.clips.iter().map(|c| c.name.clone()).collect()
    };
    let before = names(h.state());
    assert!(before.iter().any(|n| n == "Wave"), "the piece: {before:?}");
    let first_id = h.state().document().unwrap().id;

    save_like_a_dcc(&file, &bvh(true, 1.5));
    step_until(&mut h, "the reload and its result", |a| {
        a.document()
            .is_some_and(|d| d.id != first_id && d.result.is_some())
            && !a.live_busy()
    });
    assert_eq!(names(h.state()), before, "the same clips, the piece once");
    let log = h.state().live_log().join("\n");
    assert!(log.contains("modified"), "{log}");
    assert!(!log.contains("added") && !log.contains("removed"), "{log}");
}
