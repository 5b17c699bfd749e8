//! `skelpack watch`: a save written the way Blender writes it (a modified copy under a
//! temporary name, renamed over the source) rewrites the export, with a line naming the
//! changed clip; SIGTERM stops it leaving no temporary file.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::json;
use skelpack::export::{GltfDoc, GltfFormat};

/// The default character with one event on `Walk`: a change to that clip only.
fn modified_character() -> Vec<u8> {
    let name = Path::new(skelpack::character::DEFAULT_CHARACTER_NAME);
    let mut doc = GltfDoc::from_bytes(name, skelpack::character::DEFAULT_CHARACTER_GLB).unwrap();
    let walk = doc
        .array_mut("animations")
        .iter_mut()
        .find(|a| a["name"] == "Walk")
        .unwrap();
    walk["extras"] = json!({ "events": [{ "name": "step", "time": 0.3 }] });
    doc.to_bytes(GltfFormat::Binary).unwrap()
}

/// Waits for a line of the watch's output satisfying `want`.
fn wait_line(rx: &mpsc::Receiver<String>, want: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(60);
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match rx.recv_timeout(left) {
            Ok(l) if want(&l) => return l,
            Ok(_) => {}
            Err(_) => break,
        }
    }
    panic!("the expected line did not come");
}

#[test]
fn watch_rewrites_the_export_after_a_save_and_leaves_no_temp_files_on_sigterm() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("char.glb");
    let out = dir.path().join("char.skp");
    std::fs::write(&src, skelpack::character::DEFAULT_CHARACTER_GLB).unwrap();
    let (mut child, rx) = start_watch(&src, &out);
    wait_line(&rx, |l| l.starts_with("watching"));
    let first = std::fs::read(&out).unwrap();
    let events = |bytes: &[u8]| {
        let k = skelpack_runtime::Skp::open(bytes).unwrap();
        let c = k.find_clip("Walk").unwrap();
        k.event_count(c)
    };
    assert_eq!(events(&first), 0);
    // Blender's save: the whole new file under another name, then a rename over the source.
    let tmp = dir.path().join("char.glb@");
    std::fs::write(&tmp, modified_character()).unwrap();
    std::fs::rename(&tmp, &src).unwrap();
    let line = wait_line(&rx, |l| l.contains("char.skp"));
    assert!(line.contains("modified: Walk"), "{line}");
    assert!(!line.contains("Idle") && !line.contains("added"), "{line}");
    let second = std::fs::read(&out).unwrap();
    assert_eq!(events(&second), 1, "the export holds the new event");
    // SIGTERM: the process ends; the folder holds the source and the export only.
    let st = Command::new("kill")
        .args(["-TERM", &child.0.id().to_string()])
        .status()
        .unwrap();
    assert!(st.success());
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        if child.0.try_wait().unwrap().is_some() {
            break;
        }
        assert!(Instant::now() < deadline, "watch did not stop on SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut names: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["char.glb", "char.skp"]);
}

/// A compressed glTF target is written twice after a save: first at `fast` effort (a line
/// saying the final export follows; the bytes `compress --effort fast` writes), then at the
/// effort in force, which replaces it with the bytes `compress` writes.
#[test]
fn a_gltf_export_is_written_fast_first_then_final() {
    let dir = tempfile::tempdir().unwrap();
    let src = dir.path().join("man.glb");
    let out = dir.path().join("man_out.glb");
    let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/assets/CesiumMan.glb");
    std::fs::copy(&source, &src).unwrap();
    let compress = |effort: &str, to: &Path| {
        let run = Command::new(env!("CARGO_BIN_EXE_skelpack"))
            .args([
                "compress",
                src.to_str().unwrap(),
                "-o",
                to.to_str().unwrap(),
            ])
            .args(["--effort", effort])
            .output()
            .unwrap();
        assert!(
            run.status.success(),
            "{}",
            String::from_utf8_lossy(&run.stderr)
        );
        std::fs::read(to).unwrap()
    };
    let fast = compress("fast", &dir.path().join("fast.glb"));
    let final_ = compress("default", &dir.path().join("final.glb"));
    assert_ne!(
        fast.len(),
        final_.len(),
        "the two efforts differ on this file"
    );
    let (_child, rx) = start_watch(&src, &out);
    wait_line(&rx, |l| l.starts_with("watching"));
    // A save: the same file written under another name and renamed over the source.
    let tmp = dir.path().join("man.glb@");
    std::fs::copy(&source, &tmp).unwrap();
    std::fs::rename(&tmp, &src).unwrap();
    // `..., 449364 -> 449036 bytes, ...`: the size written.
    let bytes = |line: &str| -> usize {
        let (before, _) = line.split_once(" bytes").unwrap();
        before.rsplit(' ').next().unwrap().parse().unwrap()
    };
    let quick = wait_line(&rx, |l| l.contains("after the save"));
    assert!(
        quick.contains("(fast, the final export follows)"),
        "{quick}"
    );
    assert_eq!(bytes(&quick), fast.len(), "{quick}");
    let last = wait_line(&rx, |l| l.contains("after the save"));
    assert!(!last.contains("(fast"), "{last}");
    assert_eq!(
        std::fs::read(&out).unwrap(),
        final_,
        "the final export replaced it"
    );
}

/// Starts `skelpack watch SRC --export OUT`; its output lines arrive on the receiver.
fn start_watch(src: &Path, out: &Path) -> (Killed, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args([
            "watch",
            src.to_str().unwrap(),
            "--export",
            out.to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for l in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(l);
        }
    });
    (Killed(child), rx)
}

/// A child process stopped when the test ends, passing or not.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}
