//! Takes split into clips: pieces of the 8 s CMU capture cut by `--take` and by the
//! sidecar, compressed to clips of their own within tolerance, covering the take's frames;
//! a trimmed piece keeps its settings and the events inside its new range and reports
//! the others.

mod common;

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use skelpack_runtime::Skp;

fn cmu() -> std::path::PathBuf {
    common::asset("CMU_131_01.bvh")
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(args)
        .output()
        .unwrap()
}

fn ok(args: &[&str]) -> std::process::Output {
    let out = run(args);
    assert!(
        out.status.success(),
        "skelpack {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

#[test]
fn a_take_split_in_three_compresses_to_three_clips_covering_it() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("take.bvh");
    std::fs::copy(cmu(), &src).unwrap();
    let s = src.to_str().unwrap();
    let frames = skelpack::import::load(&src).unwrap().clips[0].frame_count as u32;
    let source = "take";
    let (a, b) = (frames / 3, 2 * frames / 3);
    let flags = [
        format!("Enter={source}:0-{a}"),
        format!("Swing={source}:{a}-{b}"),
        format!("Recover={source}:{b}-{}", frames - 1),
    ];
    let skp = dir.path().join("take.skp");
    let mut args = vec!["compress", s, "-o", skp.to_str().unwrap(), "--json"];
    for f in &flags {
        args.extend(["--take", f.as_str()]);
    }
    let out = ok(&args);
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let clips = report["clips"].as_array().unwrap();
    assert_eq!(clips.len(), 4, "the source and three pieces");
    for c in clips {
        assert_eq!(c["contract_met"], true, "{}", c["name"]);
    }
    // Three clips besides the untouched source, whose frames cover the take's.
    let bytes = std::fs::read(&skp).unwrap();
    let k = Skp::open(&bytes[..]).unwrap();
    assert_eq!(k.clip(k.find_clip(source).unwrap()).frame_count(), frames);
    let mut covered = vec![false; frames as usize];
    let mut inspect = vec!["inspect", "--json", s];
    for f in &flags {
        inspect.extend(["--take", f.as_str()]);
    }
    let info: Value = serde_json::from_slice(&ok(&inspect).stdout).unwrap();
    for name in ["Enter", "Swing", "Recover"] {
        let c = info[0]["clips"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap();
        let t = &c["take"];
        assert_eq!(t["source"], source);
        let (start, end) = (t["start"].as_u64().unwrap(), t["end"].as_u64().unwrap());
        let stored = k.clip(k.find_clip(name).unwrap());
        assert_eq!(stored.frame_count() as u64, end - start + 1, "{name}");
        assert!((stored.start_time() - start as f32 / stored.sample_rate()).abs() < 1e-5);
        for f in start..=end {
            covered[f as usize] = true;
        }
    }
    assert!(
        covered.iter().all(|&c| c),
        "the pieces cover every frame of the take"
    );
    // The source's clip entry has no take.
    let whole = &info[0]["clips"][0];
    assert!(whole.get("take").is_none(), "{whole}");
}

#[test]
fn a_trimmed_piece_keeps_its_settings_and_inner_events_and_reports_the_others() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("take.bvh");
    std::fs::copy(cmu(), &src).unwrap();
    let sidecar = skelpack::settings::Settings::sidecar_path(&src);
    let write = |end: u32| {
        std::fs::write(
            &sidecar,
            format!(
                "[takes.Swing]\nsource = \"take\"\nstart = 120\nend = {end}\nlooping = false\n\n\
                 [clips.Swing]\ntolerance_mm = 0.5\n\n\
                 [[clips.Swing.events]]\nname = \"early\"\ntime = 0.5\n\n\
                 [[clips.Swing.events]]\nname = \"late\"\ntime = 1.9\npayload = \"whoosh\"\n"
            ),
        )
        .unwrap()
    };
    let skp = dir.path().join("take.skp");
    let (s, o) = (src.to_str().unwrap(), skp.to_str().unwrap());
    let names = |bytes: &[u8]| -> Vec<String> {
        let k = Skp::open(bytes).unwrap();
        let c = k.find_clip("Swing").unwrap();
        (0..k.event_count(c))
            .map(|e| k.event(c, e).1.to_owned())
            .collect()
    };
    // 240 frames at 120 fps: 2 s, both events inside.
    write(360);
    let out = ok(&["compress", s, "-o", o, "--json"]);
    assert_eq!(names(&std::fs::read(&skp).unwrap()), ["early", "late"]);
    // The tolerance a clip was held to: its worst error over its worst error ÷ tolerance.
    let tol = |out: &std::process::Output, name: &str| -> f64 {
        let r: Value = serde_json::from_slice(&out.stdout).unwrap();
        let c = r["clips"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()
            .clone();
        let e = &c["error_samples"];
        e["max"].as_f64().unwrap() / e["worst_ratio"].as_f64().unwrap()
    };
    // The piece's own 0.5 mm against the file's default 0.1 mm.
    let ratio = |out: &std::process::Output| tol(out, "Swing") / tol(out, "take");
    assert!((ratio(&out) - 5.0).abs() < 0.05, "{}", ratio(&out));
    // Trimmed to 1.5 s: "late" (1.9 s) falls outside, is reported, and left out.
    write(300);
    let out = ok(&["compress", s, "-o", o, "--json"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("warning:") && l.contains("Swing") && l.contains("late")),
        "{err}"
    );
    assert!(!err.contains("early"), "{err}");
    assert_eq!(names(&std::fs::read(&skp).unwrap()), ["early"]);
    let k = Skp::open(std::fs::read(&skp).unwrap()).unwrap();
    assert_eq!(k.clip(k.find_clip("Swing").unwrap()).frame_count(), 181);
    // Its own settings stay.
    assert!((ratio(&out) - 5.0).abs() < 0.05, "{}", ratio(&out));
    // A range past the take is refused with a one-line error naming the take.
    write(5000);
    let out = run(&["compress", s, "-o", o]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("takes.\"Swing\"") && err.trim().lines().count() == 1,
        "{err}"
    );
}

/// A compressed glTF of a BVH take carries its pieces as animations of their own, each
/// within tolerance as animeval measures it against `convert`'s uncompressed scene of the
/// same pieces, and each starting at time 0, where players start an animation.
#[test]
fn the_pieces_of_a_take_export_as_compressed_gltf_animations() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("take.bvh");
    std::fs::copy(cmu(), &src).unwrap();
    let s = src.to_str().unwrap();
    let flags = ["Enter=take:0-120", "Swing=take:120-300"];
    let glb = dir.path().join("take.glb");
    let mut args = vec!["compress", s, "-o", glb.to_str().unwrap(), "--json"];
    for f in &flags {
        args.extend(["--take", f]);
    }
    let report: Value = serde_json::from_slice(&ok(&args).stdout).unwrap();
    let names: Vec<&str> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["take", "Enter", "Swing"]);
    let scene = dir.path().join("scene.glb");
    let mut conv = vec!["convert", s, scene.to_str().unwrap()];
    for f in &flags {
        conv.extend(["--take", f]);
    }
    ok(&conv);
    let tolerance = report[0]["tolerance"].as_f64().unwrap();
    let shell = report[0]["marker_offset"].as_f64().unwrap() as f32;
    if let Some(eval) = common::animeval_portable(&scene, &glb, shell) {
        let anims = eval["animations"].as_array().unwrap();
        assert_eq!(anims.len(), 3, "every animation matched by name");
        for a in anims {
            let max = a["error"]["max"].as_f64().unwrap();
            assert!(
                max <= tolerance * 1.001,
                "{}: {max} over {tolerance}",
                a["name"]
            );
        }
        // The piece of frames 120-300 at 120 fps plays from 0 to 1.5 s.
        let piece = anims.iter().find(|a| a["name"] == "Swing").unwrap();
        let t = piece["time_range"].as_array().unwrap();
        assert!(t[0].as_f64().unwrap().abs() < 1e-6, "{t:?}");
        assert!((t[1].as_f64().unwrap() - 1.5).abs() < 1e-3, "{t:?}");
    }
}

/// Runs `tests/pieces/piece_eval.py` (animeval's evaluation of a piece against its window
/// of the original animation); `None` when python3 with numpy is missing.
fn piece_eval(
    original: &Path,
    export: &Path,
    piece: &str,
    source: &str,
    t0: f32,
    t1: f32,
) -> Option<Value> {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/pieces/piece_eval.py");
    let animeval = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/tools/animeval.py");
    let probe = Command::new("python3")
        .args(["-c", "import numpy"])
        .output();
    if !matches!(probe, Ok(ref o) if o.status.success()) {
        eprintln!("SKIPPED piece_eval: python3 with numpy is not available");
        return None;
    }
    let out = Command::new("python3")
        .arg(&script)
        .args([animeval.as_path(), original, export])
        .args([piece, source, &t0.to_string(), &t1.to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(serde_json::from_slice(&out.stdout).unwrap())
}

/// A glTF source's pieces are added to its compressed export as animations of their own
/// (the file's own animations stay): each plays from time 0 to its length, within the
/// tolerance of the window of the source animation it was cut from as animeval's
/// evaluation measures it (the portable players' rules, physical markers), and reads back
/// as a clip of the piece's frames. The app writes the same file.
#[test]
fn the_pieces_of_a_gltf_take_are_added_to_its_compressed_export() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("cesium.glb");
    std::fs::copy(common::asset("CesiumMan.glb"), &src).unwrap();
    let s = src.to_str().unwrap();
    let source = skelpack::import::load(&src).unwrap();
    let take = &source.clips[0];
    let last = take.frame_count as u32 - 1;
    let pieces = [("Stride", 0, last / 2), ("Return", last / 2, last)];
    let glb = dir.path().join("out.glb");
    let mut args = vec!["compress", s, "-o", glb.to_str().unwrap(), "--json"];
    let flags: Vec<String> = pieces
        .iter()
        .map(|(n, a, b)| format!("{n}={}:{a}-{b}", take.name))
        .collect();
    for f in &flags {
        args.extend(["--take", f.as_str()]);
    }
    let report: Value = serde_json::from_slice(&ok(&args).stdout).unwrap();
    let names: Vec<&str> = report
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["name"].as_str().unwrap())
        .collect();
    // After the file's own animation, the pieces in name order (as `takes::split` adds them).
    assert_eq!(names, [take.name.as_str(), "Return", "Stride"]);
    let tolerance = report[0]["tolerance"].as_f64().unwrap();
    let back = skelpack::import::load(&glb).unwrap();
    for (name, a, b) in pieces {
        let clip = back.clips.iter().find(|c| c.name == name).unwrap();
        assert_eq!(clip.frame_count as u32, b - a + 1, "{name}");
        assert_eq!(clip.start_time, 0.0, "{name}");
        let rate = take.sample_rate;
        let (t0, t1) = (
            take.start_time + a as f32 / rate,
            take.start_time + b as f32 / rate,
        );
        // The source animation by its index: CesiumMan's has no name in the file.
        let Some(e) = piece_eval(&src, &glb, name, "0", t0, t1) else {
            continue;
        };
        let max = e["max"].as_f64().unwrap();
        assert!(max <= tolerance * 1.001, "{name}: {max} over {tolerance}");
        assert!(e["first_key"].as_f64().unwrap().abs() < 1e-6, "{e}");
        assert!(
            (e["last_key"].as_f64().unwrap() - (t1 - t0) as f64).abs() < 1e-4,
            "{e}"
        );
        // The measure can fail: the same piece against the wrong window of the source.
        let shifted = piece_eval(&src, &glb, name, "0", t0 + 0.25, t1 + 0.25).unwrap();
        assert!(
            shifted["max"].as_f64().unwrap() > 10.0 * tolerance,
            "{shifted}"
        );
    }
}
