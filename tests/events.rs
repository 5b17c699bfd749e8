//! Clip events end to end: declared in a glTF's `extras` or the sidecar, carried through
//! compression into a `.skp` (read back by the runtime) and into a glTF export (read back
//! by the importer), listed by `inspect --json`.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{Value, json};
use skelpack::export::{GltfDoc, GltfFormat};
use skelpack_runtime::Skp;

/// Events written into the character's `Walk` animation, as `(name, seconds from the
/// clip's first frame, payload)`; the last is at the clip's last frame.
fn walk_events(duration: f32) -> Vec<(String, f32, Option<String>)> {
    vec![
        ("footstep_l".into(), 0.0, Some("sfx/step_l.wav".into())),
        ("footstep_r".into(), duration * 0.5, None),
        (
            "loop_end".into(),
            duration,
            Some("{\"volume\": 0.5}".into()),
        ),
    ]
}

/// The default character with events in its `Walk` animation's extras (times on the
/// animation's timeline), written into `dir`; returns the path and the events.
fn character_with_events(dir: &Path) -> (PathBuf, Vec<(String, f32, Option<String>)>) {
    let name = Path::new(skelpack::character::DEFAULT_CHARACTER_NAME);
    let asset =
        skelpack::import::load_bytes(name, skelpack::character::DEFAULT_CHARACTER_GLB).unwrap();
    let walk = asset.clips.iter().find(|c| c.name == "Walk").unwrap();
    let events = walk_events(walk.duration());
    let mut doc = GltfDoc::from_bytes(name, skelpack::character::DEFAULT_CHARACTER_GLB).unwrap();
    let anim = doc
        .array_mut("animations")
        .iter_mut()
        .find(|a| a["name"] == "Walk")
        .unwrap();
    let list: Vec<Value> = events
        .iter()
        .map(|(n, t, p)| json!({"name": n, "time": walk.start_time + t, "payload": p}))
        .collect();
    anim["extras"] = json!({ "author": "test", "events": list });
    let path = dir.join("events.glb");
    std::fs::write(&path, doc.to_bytes(GltfFormat::Binary).unwrap()).unwrap();
    (path, events)
}

fn skelpack(args: &[&str]) -> std::process::Output {
    let out = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "skelpack {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn assert_events(got: &[skelpack::model::Event], want: &[(String, f32, Option<String>)]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, (n, t, p)) in got.iter().zip(want) {
        assert_eq!(&g.name, n);
        assert!((g.time - t).abs() < 1e-5, "{}: {} vs {t}", g.name, g.time);
        assert_eq!(&g.payload, p);
    }
}

#[test]
fn events_survive_gltf_to_skp_to_runtime() {
    let dir = tempfile::tempdir().unwrap();
    let (glb, events) = character_with_events(dir.path());
    let asset = skelpack::import::load(&glb).unwrap();
    let walk = asset.clips.iter().find(|c| c.name == "Walk").unwrap();
    assert_events(&walk.events, &events);
    // Walk loops: a sidecar says so.
    std::fs::write(
        skelpack::settings::Settings::sidecar_path(&glb),
        "[clips.Walk]\nlooping = true\n",
    )
    .unwrap();
    let skp_path = dir.path().join("events.skp");
    skelpack(&["compress", s(&glb), "-o", s(&skp_path)]);
    let bytes = std::fs::read(&skp_path).unwrap();
    let skp = Skp::open(&bytes[..]).unwrap();
    let c = skp.find_clip("Walk").unwrap();
    let back: Vec<_> = (0..skp.event_count(c))
        .map(|e| {
            let (t, n, p) = skp.event(c, e);
            (n.to_owned(), t, p.map(str::to_owned))
        })
        .collect();
    assert_eq!(back.len(), events.len());
    for (b, w) in back.iter().zip(&events) {
        assert_eq!((&b.0, &b.2), (&w.0, &w.2));
        assert!((b.1 - w.1).abs() < 1e-5, "{b:?} vs {w:?}");
    }
    // Other clips have none.
    let other = (0..skp.clip_count()).find(|&i| i != c).unwrap();
    assert_eq!(skp.event_count(other), 0);
    // Played for four cycles in uneven steps: every event fires once per cycle, in order.
    let clip = skp.clip(c);
    assert!(clip.is_looping());
    let cycle = (clip.frame_count() - 1) as f32;
    let (mut t, mut fired) = (0.0f32, Vec::new());
    while t < 4.0 * cycle {
        let b = (t + 0.37).min(4.0 * cycle);
        fired.extend(clip.events_between(t, b));
        t = b;
    }
    for e in 0..3 {
        assert_eq!(
            fired.iter().filter(|&&i| i == e).count(),
            4,
            "{e}: {fired:?}"
        );
    }
    // inspect --json lists them, for the source and for the container.
    for file in [&glb, &skp_path] {
        let out = skelpack(&["inspect", "--json", s(file)]);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap();
        let clips = v[0]["clips"].as_array().unwrap();
        let w = clips.iter().find(|c| c["name"] == "Walk").unwrap();
        let names: Vec<&str> = w["events"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["footstep_l", "footstep_r", "loop_end"], "{file:?}");
        assert_eq!(w["events"][0]["payload"], "sfx/step_l.wav");
    }
}

#[test]
fn events_survive_a_gltf_export_and_reimport() {
    let dir = tempfile::tempdir().unwrap();
    let (glb, events) = character_with_events(dir.path());
    for (cmd, out) in [("compress", "out.glb"), ("convert", "scene.gltf")] {
        let path = dir.path().join(out);
        let args: Vec<&str> = if cmd == "compress" {
            vec![cmd, s(&glb), "-o", s(&path)]
        } else {
            vec![cmd, s(&glb), s(&path)]
        };
        skelpack(&args);
        let back = skelpack::import::load(&path).unwrap();
        let walk = back.clips.iter().find(|c| c.name == "Walk").unwrap();
        assert_events(&walk.events, &events);
        if cmd == "convert" {
            continue;
        }
        // Another tool's extras are kept by the compressed export.
        let doc = GltfDoc::read(&path).unwrap();
        let anim = doc
            .array("animations")
            .iter()
            .find(|a| a["name"] == "Walk")
            .unwrap();
        assert_eq!(anim["extras"]["author"], "test", "{cmd}");
    }
}

#[test]
fn sidecar_events_replace_the_sources_and_bad_ones_are_named() {
    let dir = tempfile::tempdir().unwrap();
    let (glb, _) = character_with_events(dir.path());
    let sidecar = skelpack::settings::Settings::sidecar_path(&glb);
    std::fs::write(
        &sidecar,
        "[[clips.Walk.events]]\nname = \"hit\"\ntime = 0.25\npayload = \"sword\"\n",
    )
    .unwrap();
    let out = skelpack(&["inspect", "--json", s(&glb)]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let walk = v[0]["clips"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == "Walk")
        .unwrap()
        .clone();
    assert_eq!(
        walk["events"],
        json!([{"name": "hit", "time": 0.25, "payload": "sword"}])
    );
    // A negative time is refused with the field's path.
    std::fs::write(&sidecar, "[[clips.Walk.events]]\nname = \"x\"\ntime = -1\n").unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(["inspect", s(&glb)])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("events[0]") && err.contains(".skelpack.toml"),
        "{err}"
    );
    assert_eq!(err.trim().lines().count(), 1, "{err}");
}
