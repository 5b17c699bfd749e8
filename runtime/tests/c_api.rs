//! The C API from C: `tests/c/decode.c`, compiled with the system C compiler against the
//! library's cdylib, decodes `.skp` files of the shared assets (compressed here with the
//! skelpack library) by random access and by a cursor, and must produce bit for bit what
//! the Rust API decodes; corrupt files give the Rust reader's error code and message.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use skelpack_runtime::{Cursor, Error, JointPose, Skp};

/// The directory holding this build's `libskelpack_runtime.so` (the test binary's `deps/`,
/// where cargo builds the library for this test; the copy one level up can be stale).
fn library_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap();
    for dir in [deps, deps.parent().unwrap()] {
        if dir.join("libskelpack_runtime.so").exists() {
            return dir.to_path_buf();
        }
    }
    panic!("libskelpack_runtime.so not found near {}", deps.display());
}

/// Compiles the C program once per test run.
fn c_program() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skp_decode_c");
    let lib = library_dir();
    let status = Command::new("cc")
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-O1"])
        .arg("-I")
        .arg(root.join("include"))
        .arg(root.join("tests/c/decode.c"))
        .arg("-L")
        .arg(&lib)
        .arg(format!("-Wl,-rpath,{}", lib.display()))
        .arg("-lskelpack_runtime")
        .arg("-o")
        .arg(&out)
        .status()
        .expect("the system C compiler `cc` runs (install build-essential)");
    assert!(status.success(), "cc failed to build tests/c/decode.c");
    out
}

fn put_pose(out: &mut Vec<u8>, pose: &[JointPose]) {
    for p in pose {
        for x in p.translation.iter().chain(&p.rotation).chain(&p.scale) {
            out.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// What decode.c writes, computed with the Rust API.
fn expected(bytes: &[u8]) -> Vec<u8> {
    let skp = Skp::open(bytes).unwrap();
    let n = skp.joint_count();
    let mut out = Vec::new();
    out.extend_from_slice(&(n as u32).to_le_bytes());
    out.extend_from_slice(&(skp.clip_count() as u32).to_le_bytes());
    for j in 0..n {
        let parent = skp.joint_parent(j).map_or(-1, |p| p as i32);
        out.extend_from_slice(&parent.to_le_bytes());
        out.push(skp.joint_deforms(j) as u8);
        put_pose(&mut out, &[skp.joint_rest(j)]);
    }
    let mut pose = vec![JointPose::default(); n];
    for c in 0..skp.clip_count() {
        let clip = skp.clip(c);
        out.extend_from_slice(&clip.frame_count().to_le_bytes());
        out.extend_from_slice(&clip.sample_rate().to_le_bytes());
        let steps = clip.frame_count() * 2;
        for i in 0..steps {
            clip.sample(0.5 * i as f32, &mut pose);
            put_pose(&mut out, &pose);
        }
        let mut cursor = Cursor::new(clip);
        for i in 0..steps {
            cursor.sample(0.5 * i as f32, &mut pose);
            put_pose(&mut out, &pose);
        }
        for i in (0..steps).rev().step_by(7) {
            cursor.sample(0.5 * i as f32, &mut pose);
            put_pose(&mut out, &pose);
        }
        put_events(&mut out, &skp, c);
        put_scalars(&mut out, &skp, c);
        out.push(clip.is_looping() as u8);
        let joint = clip.root_motion_joint().map_or(-1, |j| j as i32);
        out.extend_from_slice(&joint.to_le_bytes());
        if joint < 0 {
            continue;
        }
        let later = 0.75 * clip.frame_count() as f32;
        let last = (clip.frame_count() - 1) as f32;
        let spans = (0..steps)
            .map(|i| (0.5 * i as f32, 0.5 * i as f32 + later))
            .chain([(0.0, 100.0 * last), (3.5, -2.0)]);
        for (a, b) in spans {
            let d = clip.root_motion_delta(a, b).unwrap();
            for x in d.translation.iter().chain(&d.rotation) {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
    out
}

/// What decode.c's `put_scalars` writes for clip `c`.
fn put_scalars(out: &mut Vec<u8>, skp: &Skp<&[u8]>, c: usize) {
    let n = skp.scalar_track_count(c);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    let frames = skp.clip(c).frame_count();
    let steps = frames * 2;
    for i in 0..n {
        let (name, targets) = skp.scalar_track(c, i);
        out.extend_from_slice(&(targets as u32).to_le_bytes());
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        let error = skp.clip_meta(c).scalar_tracks[i].max_error;
        out.extend_from_slice(&error.to_le_bytes());
        let mut w = vec![0.0f32; targets];
        let at = (0..steps)
            .map(|s| 0.5 * s as f32)
            .chain([-3.0, frames as f32 + 2.5]);
        for f in at {
            skp.sample_scalar_track(c, i, f, &mut w);
            for x in &w {
                out.extend_from_slice(&x.to_le_bytes());
            }
        }
    }
}

/// What decode.c's `put_events` writes for clip `c`.
fn put_events(out: &mut Vec<u8>, skp: &Skp<&[u8]>, c: usize) {
    let n = skp.event_count(c);
    out.extend_from_slice(&(n as u32).to_le_bytes());
    for e in 0..n {
        let (time, name, payload) = skp.event(c, e);
        out.extend_from_slice(&time.to_le_bytes());
        out.extend_from_slice(&(name.len() as u32).to_le_bytes());
        out.extend_from_slice(name.as_bytes());
        out.push(payload.is_some() as u8);
        if let Some(p) = payload {
            out.extend_from_slice(&(p.len() as u32).to_le_bytes());
            out.extend_from_slice(p.as_bytes());
        }
    }
    if n == 0 {
        return;
    }
    let clip = skp.clip(c);
    let crossed = |out: &mut Vec<u8>, a: f32, b: f32| {
        out.extend_from_slice(&clip.events_count_between(a, b).to_le_bytes());
        for e in clip.events_between(a, b).take(8) {
            out.extend_from_slice(&(e as u32).to_le_bytes());
        }
    };
    let span = 3.0 * (clip.frame_count() - 1) as f32;
    let mut i = 0u32;
    while 0.3 * (i as f32) < span {
        crossed(out, 0.3 * i as f32, 0.3 * (i + 1) as f32);
        i += 1;
    }
    crossed(out, 0.0, span);
    crossed(out, span, 0.0);
}

fn run(program: &Path, skp: &Path, out: &Path) -> std::process::Output {
    run_with(program, skp, out, &[])
}

/// The C program with extra arguments (`compact`: open with `skp_open_compact`).
fn run_with(program: &Path, skp: &Path, out: &Path, extra: &[&str]) -> std::process::Output {
    // The library comes from the program's rpath (this build's `deps/`), not from a stale
    // copy elsewhere on cargo's library path.
    Command::new(program)
        .env_remove("LD_LIBRARY_PATH")
        .arg(skp)
        .arg(out)
        .args(extra)
        .output()
        .unwrap()
}

/// Looping and root-motion clips through the C API: the same wrapped poses and the same
/// root-motion deltas as Rust, bit for bit (the default character's Walk looping with root
/// motion, a mocap clip with root motion that does not loop, and Fox's Run looping).
#[test]
fn c_api_wraps_loops_and_returns_the_root_motion_deltas_rust_does() {
    use skelpack::settings::{ClipSettings, Preset, RootMotionSetting, Settings};
    let program = c_program();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skp_c_api_motion");
    std::fs::create_dir_all(&dir).unwrap();
    let character = skelpack::import::load_bytes(
        Path::new(skelpack::character::DEFAULT_CHARACTER_NAME),
        skelpack::character::DEFAULT_CHARACTER_GLB,
    )
    .unwrap();
    let cmu = skelpack::import::load(&common::asset("CMU_131_01.bvh")).unwrap();
    let fox = skelpack::import::load(&common::asset("Fox.glb")).unwrap();
    for (asset, name, looping, motion) in [
        (&character, "Walk", true, true),
        (&cmu, cmu.clips[0].name.as_str(), false, true),
        (&fox, "Run", true, false),
    ] {
        let clip = asset.clips.iter().find(|c| c.name == name).unwrap();
        // Events at the first frame, inside (with a payload) and at the last frame.
        let event = |name: &str, time: f32, payload: Option<&str>| skelpack::model::Event {
            name: name.into(),
            time,
            payload: payload.map(Into::into),
        };
        let events = vec![
            event("start", 0.0, None),
            event("footstep_l", clip.duration() * 0.4, Some("sfx/step_l.wav")),
            event("end", clip.duration(), None),
        ];
        let mut settings = Settings::from_preset(Preset::Acl);
        settings.clips.insert(
            name.to_owned(),
            ClipSettings {
                looping: Some(looping),
                root_motion: motion.then_some(RootMotionSetting::Enabled(true)),
                events: Some(events.clone()),
                ..Default::default()
            },
        );
        let r = settings.resolve(asset, name);
        let c =
            skelpack::codec::compress(&asset.skeleton, clip, &r, &skelpack::codec::Control::new())
                .unwrap();
        let bytes = skelpack::container::to_bytes(&asset.skeleton, std::slice::from_ref(&c));
        let skp = Skp::open(&bytes[..]).unwrap();
        assert_eq!(skp.clip(0).is_looping(), looping);
        assert_eq!(skp.clip(0).root_motion_joint().is_some(), motion);
        // The events come back with their names, times and payloads; the one at the last
        // frame fires once per cycle of a loop (once in all otherwise).
        let back: Vec<_> = (0..skp.event_count(0)).map(|e| skp.event(0, e)).collect();
        let want: Vec<_> = events
            .iter()
            .map(|e| (e.time, e.name.as_str(), e.payload.as_deref()))
            .collect();
        assert_eq!(back, want, "{name}");
        let k = skp.clip(0);
        let last = (k.frame_count() - 1) as f32;
        let mut fired = Vec::new();
        let mut t = 0.0f32;
        while t < 5.0 * last {
            let b = (t + 0.7).min(5.0 * last);
            fired.extend(k.events_between(t, b));
            t = b;
        }
        let ends = fired.iter().filter(|&&e| e == 2).count();
        let steps = fired.iter().filter(|&&e| e == 1).count();
        assert_eq!(
            (ends, steps),
            if looping { (5, 5) } else { (1, 1) },
            "{name}: {fired:?}"
        );
        let file = dir.join(format!("{name}.skp"));
        let out = dir.join(format!("{name}.bin"));
        std::fs::write(&file, &bytes).unwrap();
        let want = expected(&bytes);
        for extra in [&[][..], &["compact"][..]] {
            let r = run_with(&program, &file, &out, extra);
            assert!(r.status.success(), "{name} {extra:?}: {r:?}");
            let got = std::fs::read(&out).unwrap();
            assert_eq!(got.len(), want.len(), "{name}: output length");
            if let Some(at) = got.iter().zip(&want).position(|(a, b)| a != b) {
                panic!("{name} {extra:?}: C and Rust differ at byte {at}");
            }
        }
    }
}

#[test]
fn c_program_decodes_the_shared_assets_bit_for_bit_and_refuses_corrupt_files() {
    let program = c_program();
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("skp_c_api");
    std::fs::create_dir_all(&dir).unwrap();
    let mut first = None;
    for name in common::ASSETS {
        let (_, bytes) = common::skp(name, None);
        let file = dir.join(name.replace('/', "_") + ".skp");
        let out = dir.join(name.replace('/', "_") + ".bin");
        std::fs::write(&file, &bytes).unwrap();
        let r = run(&program, &file, &out);
        assert!(
            r.status.success(),
            "{name}: {}{}",
            String::from_utf8_lossy(&r.stdout),
            String::from_utf8_lossy(&r.stderr)
        );
        if *name == "RobotExpressive.glb" {
            let skp = Skp::open(bytes.as_slice()).unwrap();
            assert!(
                (0..skp.clip_count()).all(|c| skp.scalar_track_count(c) == 1),
                "RobotExpressive's face weights are scalar tracks"
            );
        }
        let got = std::fs::read(&out).unwrap();
        let want = expected(&bytes);
        assert_eq!(got.len(), want.len(), "{name}: output length");
        if let Some(at) = got.iter().zip(&want).position(|(a, b)| a != b) {
            panic!("{name}: C and Rust differ at byte {at}");
        }
        // The compact layout decodes the same poses.
        let r = run_with(&program, &file, &out, &["compact"]);
        assert!(r.status.success(), "{name} compact: {r:?}");
        assert!(
            std::fs::read(&out).unwrap() == want,
            "{name}: compact differs"
        );
        first.get_or_insert(bytes);
    }
    // Corrupt files: the C caller gets the Rust reader's code and message.
    let good = first.unwrap();
    let mut bad_magic = good.clone();
    bad_magic[0] = b'X';
    let mut version = good.clone();
    version[4] = 9;
    let mut flipped = good.clone();
    let mid = flipped.len() / 2;
    flipped[mid] ^= 0x10;
    let truncated = good[..good.len() - 9].to_vec();
    for (what, bytes, code) in [
        ("bad magic", bad_magic, 2),
        ("version", version, 3),
        ("flipped byte", flipped, 4),
        ("truncated", truncated, 4),
        ("empty", Vec::new(), 2),
    ] {
        let e = Skp::open(bytes.as_slice()).unwrap_err();
        let want_code = match e {
            Error::BadMagic => 2,
            Error::Version(_) => 3,
            Error::Corrupt(_) => 4,
        };
        assert_eq!(want_code, code, "{what}: {e}");
        let file = dir.join("corrupt.skp");
        std::fs::write(&file, &bytes).unwrap();
        let r = run(&program, &file, &dir.join("corrupt.bin"));
        assert_eq!(r.status.code(), Some(3), "{what}");
        let text = String::from_utf8_lossy(&r.stdout);
        assert_eq!(text.trim_end(), format!("skp_open: {code}: {e}"), "{what}");
    }
}
