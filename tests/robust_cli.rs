//! The command line under hostile conditions: stdout closed early, outputs that are not
//! regular files, interrupted and killed writes (the old file stays, no temporary file is
//! left behind), `.skp` files read back by `inspect` / `convert`, and byte-identical
//! outputs whatever the number of threads.

mod common;

use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

fn skelpack() -> Command {
    Command::new(env!("CARGO_BIN_EXE_skelpack"))
}

fn run(args: &[&str]) -> Output {
    let out = skelpack().args(args).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
    out
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Temporary files (`.NAME.PID.tmp`) in a folder.
fn litter(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect()
}

/// The one `error:` line of a failed command.
fn error_line(out: &Output) -> String {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|l| l.starts_with("error:")).collect();
    assert_eq!(lines.len(), 1, "expected one error line: {stderr}");
    lines[0].to_owned()
}

#[test]
fn a_closed_stdout_ends_every_command_quietly() {
    let d = tempfile::tempdir().unwrap();
    let skp = d.path().join("fox.skp");
    let glb = d.path().join("fox.glb");
    let fox = common::asset("RiggedSimple.glb");
    let assets = common::assets().join("acl");
    let cases: Vec<Vec<&str>> = vec![
        vec!["report", s(&assets)],
        vec!["report", "--json", s(&assets)],
        vec!["inspect", s(&fox)],
        vec!["inspect", "--json", s(&fox)],
        vec!["compress", s(&fox), "-o", s(&skp)],
        vec!["compress", "--json", s(&fox), "-o", s(&glb)],
        vec!["convert", s(&fox), s(&glb)],
        vec!["--help"],
    ];
    for args in cases {
        let mut child = skelpack()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // The reader goes away before the command prints anything.
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(
            out.status.success() || out.status.signal() == Some(libc::SIGPIPE),
            "{args:?}: {:?} {stderr}",
            out.status
        );
    }
    // The file written before the report was printed is complete.
    assert!(skelpack::container::read(&skp).is_ok());
}

#[test]
fn an_output_that_is_not_a_regular_file_is_refused() {
    let d = tempfile::tempdir().unwrap();
    let input = common::asset("RiggedSimple.glb");
    let fifo = d.path().join("pipe.skp");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: mkfifo with a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
    let target = d.path().join("target.skp");
    std::fs::write(&target, b"keep me").unwrap();
    let link = d.path().join("link.skp");
    std::os::unix::fs::symlink(&target, &link).unwrap();
    let dir = d.path().join("folder.glb");
    std::fs::create_dir(&dir).unwrap();
    for (out, what) in [
        (&fifo, "FIFO"),
        (&link, "symbolic link"),
        (&dir, "directory"),
    ] {
        let o = run(&["compress", s(&input), "-o", s(out)]);
        assert_eq!(o.status.code(), Some(2), "{}", out.display());
        let line = error_line(&o);
        assert!(
            line.contains(what) && line.contains("not a regular file"),
            "{line}"
        );
        assert!(
            line.contains(&*out.file_name().unwrap().to_string_lossy()),
            "{line}"
        );
    }
    // A device, through `convert`.
    let o = run(&["convert", s(&input), "/dev/null"]);
    assert_eq!(o.status.code(), Some(2));
    // Nothing was replaced.
    assert!(
        std::fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    assert_eq!(std::fs::read(&target).unwrap(), b"keep me");
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::metadata(&fifo).unwrap().file_type().is_fifo());
    assert!(litter(d.path()).is_empty());
}

#[test]
fn a_write_that_fails_midway_leaves_the_old_file_and_no_litter() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("out.skp");
    std::fs::write(&p, b"old").unwrap();
    let e = skelpack::fsutil::write_atomic_with(&p, |w| {
        w.write_all(&[7u8; 1 << 20])?;
        Err(std::io::Error::other("disk full (simulated)"))
    })
    .unwrap_err();
    assert!(e.to_string().contains("simulated"));
    assert_eq!(std::fs::read(&p).unwrap(), b"old");
    assert!(litter(d.path()).is_empty());
    // A write that succeeds replaces the file.
    skelpack::fsutil::write_atomic(&p, b"new").unwrap();
    assert_eq!(std::fs::read(&p).unwrap(), b"new");
    assert!(litter(d.path()).is_empty());
}

/// Runs `args`, signals it after `delay`, and returns how it ended.
fn interrupted(args: &[&str], signal: i32, delay: Duration) -> std::process::ExitStatus {
    let mut child = skelpack()
        .args(args)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    std::thread::sleep(delay);
    // SAFETY: signalling our own child, still unreaped (its id cannot be reused).
    unsafe { libc::kill(child.id() as libc::pid_t, signal) };
    child.wait().unwrap()
}

#[test]
fn interrupted_and_killed_writes_leave_the_old_file_and_no_litter() {
    let d = tempfile::tempdir().unwrap();
    // A large output: a BVH take as a glTF with its buffer embedded as base64.
    let input = common::asset("CMU_131_01.bvh");
    let out = d.path().join("big.gltf");
    std::fs::write(&out, b"old").unwrap();
    let args = ["convert", s(&input), s(&out)];
    let start = Instant::now();
    assert!(run(&args).status.success());
    let full = start.elapsed();
    let new = std::fs::read(&out).unwrap();
    assert!(new.len() > 256 << 10);
    for (k, signal) in (0..12).zip([libc::SIGTERM, libc::SIGINT].into_iter().cycle()) {
        std::fs::write(&out, b"old").unwrap();
        let status = interrupted(&args, signal, full * k / 10);
        let now = std::fs::read(&out).unwrap();
        assert!(
            now == b"old" || now == new,
            "signal after {k}/10: a partial file"
        );
        // The handler removed its temporary file; or the command finished first.
        assert!(
            litter(d.path()).is_empty(),
            "{status:?}: {:?}",
            litter(d.path())
        );
    }
    // SIGKILL cannot be handled: whatever it leaves, the next write of that file removes.
    for k in 0..8 {
        std::fs::write(&out, b"old").unwrap();
        interrupted(&args, libc::SIGKILL, full * k / 8);
        let now = std::fs::read(&out).unwrap();
        assert!(
            now == b"old" || now == new,
            "kill after {k}/8: a partial file"
        );
    }
    assert!(run(&args).status.success());
    assert!(litter(d.path()).is_empty(), "{:?}", litter(d.path()));
}

#[test]
fn stale_temporary_files_of_dead_processes_are_removed() {
    let d = tempfile::tempdir().unwrap();
    let mut dead = Command::new("true").spawn().unwrap();
    let pid = dead.id();
    dead.wait().unwrap();
    let stale = d.path().join(format!(".out.skp.{pid}.tmp"));
    std::fs::write(&stale, b"half a file").unwrap();
    // One of a live process (ours) and one of another name stay.
    let live = d
        .path()
        .join(format!(".out.skp.{}.tmp", std::process::id()));
    std::fs::write(&live, b"being written").unwrap();
    let other = d.path().join(format!(".other.skp.{pid}.tmp"));
    std::fs::write(&other, b"not ours").unwrap();
    let out = d.path().join("out.skp");
    let input = common::asset("RiggedSimple.glb");
    assert!(
        run(&["compress", s(&input), "-o", s(&out)])
            .status
            .success()
    );
    assert!(!stale.exists());
    assert!(live.exists() && other.exists());
    assert!(skelpack::container::read(&out).is_ok());
}

#[test]
fn inspect_and_convert_read_a_skp_back() {
    let d = tempfile::tempdir().unwrap();
    let input = common::asset("CesiumMan.glb");
    let skp = d.path().join("man.skp");
    assert!(
        run(&["compress", s(&input), "-o", s(&skp)])
            .status
            .success()
    );
    let c = skelpack::container::read(&skp).unwrap();

    let o = run(&["inspect", "--json", s(&skp)]);
    assert!(o.status.success());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let info = &v[0];
    assert_eq!(info["format"], "skp");
    assert_eq!(info["joints"], c.skeleton.len());
    assert_eq!(info["clips"].as_array().unwrap().len(), c.clips.len());
    assert_eq!(info["clips"][0]["frames"], c.clips[0].frame_count);
    let o = run(&["inspect", s(&skp)]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(&c.clips[0].name));

    // Back to glTF: the skeleton and every decoded frame, re-imported exactly.
    let glb = d.path().join("man.glb");
    assert!(run(&["convert", s(&skp), s(&glb)]).status.success());
    let back = skelpack::import::load(&glb).unwrap();
    assert_eq!(back.clips.len(), c.clips.len());
    let mut pose = vec![skelpack::model::Transform::IDENTITY; c.skeleton.len()];
    for (dec, imp) in c.clips.iter().zip(&back.clips) {
        assert_eq!(imp.frame_count, dec.frame_count);
        assert!((imp.sample_rate - dec.sample_rate).abs() < 1e-3 * dec.sample_rate);
        for f in 0..dec.frame_count {
            skelpack::metric::PoseSource::sample_local(dec, f as f32, &mut pose);
            for (jc, joint) in c.skeleton.joints.iter().enumerate() {
                let ji = back.skeleton.find(&joint.name).unwrap();
                let a = pose[jc];
                let b = imp.tracks[ji].at(f);
                assert!(
                    a.translation.abs_diff_eq(b.translation, 1e-5)
                        && a.rotation.dot(b.rotation).abs() > 1.0 - 1e-6
                        && a.scale.abs_diff_eq(b.scale, 1e-5),
                    "{} frame {f} joint {}",
                    dec.name,
                    joint.name
                );
            }
        }
    }

    // A damaged container: one line naming the file, exit 2, for both commands.
    let mut bytes = std::fs::read(&skp).unwrap();
    let n = bytes.len();
    bytes[n / 2] ^= 0x55;
    let bad = d.path().join("bad.skp");
    std::fs::write(&bad, &bytes).unwrap();
    for args in [
        vec!["inspect", s(&bad)],
        vec!["convert", s(&bad), s(&d.path().join("bad.glb"))],
    ] {
        let o = run(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let line = error_line(&o);
        assert!(
            line.contains("bad.skp") && line.contains("checksum"),
            "{line}"
        );
    }
    assert!(!d.path().join("bad.glb").exists());
}

/// Compresses `input` to `out` with `threads` worker threads.
fn compress_with_threads(input: &Path, out: &Path, threads: usize) -> Vec<u8> {
    let o = skelpack()
        .args(["compress", s(input), "-o", s(out)])
        .env("RAYON_NUM_THREADS", threads.to_string())
        .output()
        .unwrap();
    assert!(
        o.status.code().is_some_and(|c| c <= 1),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    std::fs::read(out).unwrap()
}

#[test]
fn outputs_are_byte_identical_with_1_2_and_8_threads() {
    let d = tempfile::tempdir().unwrap();
    for asset in [
        "Fox.glb",
        "RiggedFigure.glb",
        "acl/49_15.acl.sjson",
        "CMU_131_01.bvh",
    ] {
        let input = common::asset(asset);
        let exts: &[&str] = if asset.ends_with(".glb") {
            &["skp", "glb"]
        } else {
            &["skp"]
        };
        for ext in exts {
            let out = d.path().join(format!("out.{ext}"));
            let one = compress_with_threads(&input, &out, 1);
            for threads in [2, 8] {
                assert!(
                    compress_with_threads(&input, &out, threads) == one,
                    "{asset} .{ext}: {threads} threads differ from 1"
                );
            }
        }
    }
}

#[test]
fn report_streams_files_in_order_as_valid_json() {
    let d = tempfile::tempdir().unwrap();
    for (i, f) in [
        "acl/49_15.acl.sjson",
        "RiggedSimple.glb",
        "acl/13_07.acl.sjson",
    ]
    .iter()
    .enumerate()
    {
        let name = Path::new(f).file_name().unwrap().to_string_lossy();
        std::fs::copy(common::asset(f), d.path().join(format!("{i}_{name}"))).unwrap();
    }
    std::fs::write(d.path().join("3_broken.bvh"), b"HIERARCHY\nnonsense").unwrap();
    let o = run(&["report", "--json", s(d.path())]);
    assert_eq!(o.status.code(), Some(2), "one file is broken");
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let files: Vec<String> = v["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["file"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(v["totals"]["clips"], files.len());
    let mut sorted = files.clone();
    sorted.sort();
    assert_eq!(files, sorted, "file order");
    assert_eq!(
        v["totals"]["failed_files"][0].as_str().unwrap(),
        s(&d.path().join("3_broken.bvh"))
    );
    assert!(error_line(&o).contains("3_broken.bvh"));
    let o = run(&["report", s(d.path())]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.contains("0_49_15") && text.contains("total: "),
        "{text}"
    );
}

#[test]
fn a_settings_error_is_one_line_with_the_file_line_and_field() {
    let d = tempfile::tempdir().unwrap();
    let input = common::asset("RiggedSimple.glb");
    let out = d.path().join("out.skp");
    for (name, text, needles) in [
        (
            "s.json",
            "{\n  \"joints\": {\n    \"Hand\": {\n      \"tolerance_mm\": -1\n    }\n  }\n}\n",
            ["line 4", "joints.Hand.tolerance_mm"],
        ),
        (
            "s.toml",
            "tolerance_mm = 0.1\n\n[joints.Hand]\ntolerance_mm = 0\n",
            ["line 4", "joints.Hand.tolerance_mm"],
        ),
        (
            "m.toml",
            "preset = \"acl\"\nmethod = 3\n",
            ["line 2", "method:"],
        ),
    ] {
        let p = d.path().join(name);
        std::fs::write(&p, text).unwrap();
        let o = run(&["compress", s(&input), "--settings", s(&p), "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(2), "{name}");
        let line = error_line(&o);
        assert!(line.contains(name), "{line}");
        for n in needles {
            assert!(line.contains(n), "{n} in {line}");
        }
    }
    assert!(!out.exists());
}
