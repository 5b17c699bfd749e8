//! Seamless loops and root motion (issue 26): clips marked `looping` in the settings play
//! across their wrap — last frame, the segment back to the first, the first — within
//! tolerance in the runtime (random access and forward playback), cycle after cycle; a
//! root-motion clip played 100 cycles ends where the source's own 100 cycles end.

mod common;
use common::player::skelpack_ok;

use glam::{DAffine3, Quat, Vec3};
use skelpack::character::{DEFAULT_CHARACTER_GLB, DEFAULT_CHARACTER_NAME};
use skelpack::codec::playback::closes;
use skelpack::codec::runtime::to_transform;
use skelpack::container;
use skelpack::import::{self, Asset};
use skelpack::metric::{exceeds, joint_error};
use skelpack::model::{Clip, Transform, local_to_object_f64};
use skelpack::settings::{ClipSettings, Preset, RootMotionSetting, Settings};
use skelpack_runtime::{JointPose, Skp};

fn load(file: &str) -> Asset {
    if file == DEFAULT_CHARACTER_NAME {
        import::load_bytes(std::path::Path::new(file), DEFAULT_CHARACTER_GLB).unwrap()
    } else {
        import::load(&common::asset(file)).unwrap()
    }
}

/// ACL's preset with `clip` marked looping (and its root motion).
fn looping(clip: &str, root_motion: Option<RootMotionSetting>) -> Settings {
    let mut s = Settings::from_preset(Preset::Acl);
    s.clips.insert(
        clip.to_owned(),
        ClipSettings {
            looping: Some(true),
            root_motion,
            ..Default::default()
        },
    );
    s
}

/// The source played as a loop at frame `t` of a cycle of `period` frames: its own frames,
/// and when the cycle is one frame longer than the source (its first frame appended), the
/// segment from its last frame back to its first.
fn source_loop(clip: &Clip, period: usize, t: f32, out: &mut [Transform]) {
    let u = t.rem_euclid(period as f32);
    let last = clip.frame_count - 1;
    if period == last || u <= last as f32 {
        clip.sample_local(u.min(last as f32), out);
        return;
    }
    let w = u - last as f32;
    for (j, o) in out.iter_mut().enumerate() {
        let a = clip.tracks[j].at(last);
        let b = clip.tracks[j].at(0);
        *o = a.interpolate(&b, w);
    }
}

fn object(asset: &Asset, local: &[Transform]) -> Vec<DAffine3> {
    let mut o = vec![DAffine3::IDENTITY; local.len()];
    local_to_object_f64(&asset.skeleton, local, &mut o);
    o
}

#[test]
fn looping_clips_play_across_the_wrap_within_tolerance() {
    let cases = [
        ("Fox.glb", "Run"),
        ("Fox.glb", "Walk"),
        ("RobotExpressive.glb", "Running"),
        ("RobotExpressive.glb", "Walking"),
        (DEFAULT_CHARACTER_NAME, "Walk"),
    ];
    for (file, name) in cases {
        let asset = load(file);
        let clip = asset.clips.iter().find(|c| c.name == name).unwrap();
        let settings = looping(name, None);
        let resolved = settings.resolve(&asset, name);
        assert!(resolved.looping);
        let c = common::compress(&asset, clip, &settings);
        assert!(c.report.contract_met, "{file} {name}");
        assert!(c.report.playback.looping);
        // The cycle: the source's frames, plus its first frame when the last does not
        // return to it within tolerance.
        let closed = closes(&asset.skeleton, clip, &resolved.limits, None);
        let period = clip.frame_count - usize::from(closed);
        assert_eq!(c.frame_count - 1, period, "{file} {name}");
        assert_eq!(c.report.playback.loop_appended, !closed);
        let bytes = container::to_bytes(&asset.skeleton, std::slice::from_ref(&c));
        let skp = Skp::open(&bytes[..]).unwrap();
        let rt = skp.clip(0);
        assert!(rt.is_looping());
        let n = asset.skeleton.len();
        let mut pose = vec![JointPose::default(); n];
        let mut forward = vec![JointPose::default(); n];
        let mut cursor = skelpack_runtime::Cursor::new(rt);
        let mut src = vec![Transform::IDENTITY; n];
        let mut worst = 0.0f32;
        let p = period as f32;
        for cycle in [0.0, 1.0, 7.0] {
            // The last frames of one cycle, across the wrap, into the next (samples and
            // midpoints, as the codec measures).
            for half in 0..=8 {
                let t = cycle * p + p - 2.0 + half as f32 * 0.5;
                rt.sample(t, &mut pose);
                cursor.sample(t, &mut forward);
                assert_eq!(pose, forward, "{file} {name} frame {t}");
                let dec: Vec<Transform> = pose.iter().map(to_transform).collect();
                source_loop(clip, period, t, &mut src);
                let (a, b) = (object(&asset, &src), object(&asset, &dec));
                for j in 0..n {
                    if !resolved.limits.evaluated[j] {
                        continue;
                    }
                    let e = joint_error(&a[j], &b[j], resolved.limits.local_marker(j));
                    let tol = resolved.limits.tolerance[j];
                    worst = worst.max(e / tol);
                    assert!(
                        !exceeds(e, tol),
                        "{file} {name} frame {t}: joint {} error {e} > {tol}",
                        asset.skeleton.joints[j].name
                    );
                }
            }
        }
        let wrap = c.report.playback.wrap_error.unwrap();
        println!(
            "{file} {name}: {} frames, loop {}, payload {} B, worst across the wrap {worst:.3} of tolerance, reported wrap error {wrap:e}",
            clip.frame_count,
            if closed { "closed" } else { "appended" },
            c.report.payload_bytes
        );
    }
}

/// A clip that does not loop clamps; the same clip looping wraps.
#[test]
fn looping_wraps_time_and_a_plain_clip_clamps() {
    let asset = load("Fox.glb");
    let clip = asset.clips.iter().find(|c| c.name == "Walk").unwrap();
    let plain = common::compress(&asset, clip, &Settings::from_preset(Preset::Acl));
    let looped = common::compress(&asset, clip, &looping("Walk", None));
    let bytes = container::to_bytes(&asset.skeleton, &[plain, looped]);
    let skp = Skp::open(&bytes[..]).unwrap();
    let n = skp.joint_count();
    let (mut a, mut b) = (vec![JointPose::default(); n], vec![JointPose::default(); n]);
    let last = (skp.clip(1).frame_count() - 1) as f32;
    assert!(!skp.clip(0).is_looping());
    skp.clip(0).sample(last + 3.0, &mut a);
    skp.clip(0).sample(1e9, &mut b);
    assert_eq!(a, b);
    skp.clip(1).sample(last + 3.25, &mut a);
    skp.clip(1).sample(3.25, &mut b);
    assert_eq!(a, b);
    skp.clip(1).sample(-last + 3.25, &mut a);
    assert_eq!(a, b);
}

/// The motion joint's travel after `cycles` cycles and `s` frames of the source, computed
/// from the source's samples alone (f64): per cycle the travel from frame 0 to the last
/// frame, composed as the runtime documents (`(pa, Ra) ∘ (pb, Rb) = (pa + Ra pb, Ra Rb)`).
fn source_travel(clip: &Clip, joint: usize, cycles: u32, s: usize) -> (glam::DVec3, glam::DQuat) {
    let t = &clip.tracks[joint];
    let at = |f: usize| {
        (
            t.translations[f].as_dvec3(),
            t.rotations[f].normalize().as_dquat(),
        )
    };
    let (p0, r0) = at(0);
    let travel = |f: usize| {
        let (p, r) = at(f);
        (p - p0, (r * r0.inverse()).normalize())
    };
    let cycle = travel(clip.frame_count - 1);
    let (mut p, mut r) = (glam::DVec3::ZERO, glam::DQuat::IDENTITY);
    for _ in 0..cycles {
        p += r * cycle.0;
        r = (r * cycle.1).normalize();
    }
    let (dp, dr) = travel(s);
    (p + r * dp, (r * dr).normalize())
}

#[test]
fn root_motion_over_100_cycles_ends_where_the_source_does() {
    for (file, name) in [(DEFAULT_CHARACTER_NAME, "Walk"), ("CMU_131_01.bvh", "")] {
        let asset = load(file);
        let clip = if name.is_empty() {
            &asset.clips[0]
        } else {
            asset.clips.iter().find(|c| c.name == name).unwrap()
        };
        let name = clip.name.as_str();
        let settings = looping(name, Some(RootMotionSetting::Enabled(true)));
        let resolved = settings.resolve(&asset, name);
        assert_eq!(resolved.root_motion, Some(0));
        let c = common::compress(&asset, clip, &settings);
        assert!(c.report.contract_met, "{file} {name}");
        let bytes = container::to_bytes(&asset.skeleton, std::slice::from_ref(&c));
        let skp = Skp::open(&bytes[..]).unwrap();
        let rt = skp.clip(0);
        assert_eq!(rt.root_motion_joint(), Some(0));
        let root_tol = resolved.limits.tolerance[0];
        let marker = resolved.limits.local_marker(0) as f64;
        // The cycle the codec compressed: the source, or the source with a frame appended
        // (its travel extrapolated), as the report says.
        let appended = c.report.playback.loop_appended;
        let last = rt.frame_count() - 1;
        let source = (!appended).then_some(clip);
        // After 100 cycles: the runtime's accumulated delta from frame 0, ticked at 30 Hz
        // across every wrap, against the source's own accumulation.
        // (The engine's side, accumulating the deltas, in f64.)
        let ticks_per_frame = 1;
        let mut acc_p = glam::DVec3::ZERO;
        let mut acc_r = glam::DQuat::IDENTITY;
        let total = 100 * last as usize * ticks_per_frame;
        let mut t0 = 0.0f32;
        for i in 1..=total {
            let t1 = i as f32 / ticks_per_frame as f32;
            let d = rt.root_motion_delta(t0, t1).unwrap();
            acc_p += acc_r * Vec3::from_array(d.translation).as_dvec3();
            acc_r = (acc_r * Quat::from_array(d.rotation).as_dquat()).normalize();
            t0 = t1;
        }
        let direct = rt.root_motion_delta(0.0, 100.0 * last as f32).unwrap();
        let expected = match source {
            Some(src) => source_travel(src, 0, 100, 0),
            None => {
                // An appended frame: the stored cycle is the source's travel extrapolated
                // by one frame's step; compose it 100 times.
                let m = rt.root_motion().unwrap();
                let (cp, cr) = (
                    Vec3::from_array(m.cycle_translation).as_dvec3(),
                    Quat::from_array(m.cycle_rotation).as_dquat(),
                );
                let (mut p, mut r) = (glam::DVec3::ZERO, glam::DQuat::IDENTITY);
                for _ in 0..100 {
                    p += r * cp;
                    r = (r * cr).normalize();
                }
                (p, r)
            }
        };
        let pos_err = (acc_p - expected.0).length();
        let ang_err = acc_r.angle_between(expected.1);
        let direct_err = (Vec3::from_array(direct.translation).as_dvec3() - expected.0).length();
        // Position within the root's tolerance; facing within the angle its marker allows.
        let distance = expected.0.length();
        println!(
            "{file} {name}: 100 cycles travel {distance:.3} units; ticked end off by {pos_err:e} units and {ang_err:e} rad, direct {direct_err:e} (root tolerance {root_tol:e}, report {:?})",
            c.report.playback.root_motion_error
        );
        assert!(distance > 0.0);
        // Asked at once, 100 cycles on: within the root's tolerance of the source.
        assert!(
            direct_err <= root_tol as f64,
            "{file} {name}: {direct_err} > {root_tol}"
        );
        let direct_angle = Quat::from_array(direct.rotation)
            .as_dquat()
            .angle_between(expected.1);
        assert!(
            direct_angle * marker <= root_tol as f64,
            "{file} {name}: facing {direct_angle}"
        );
        // Ticked frame by frame, each delta rounded to f32 once: the rounding adds up over
        // the ticks (not the compression error), bounded here by 1e-5 of the distance.
        let ticks = total as f64;
        assert!(
            pos_err <= root_tol as f64 + 1e-5 * distance,
            "{file} {name}: {pos_err} after {ticks} ticks"
        );
        assert!(
            ang_err <= 1e-5 + root_tol as f64 / marker,
            "{file} {name}: facing {ang_err}"
        );
        let report = c.report.playback.root_motion_error.as_ref().unwrap();
        assert_eq!(report.cycles, 100);
        assert!(report.translation <= 2.0 * root_tol, "{report:?}");
    }
}

/// `inspect --json` and `report --json` per clip: `looping`, `root_motion`, `additive`
/// (from the sidecar for a source, from the metadata for a `.skp`), `looping_suggested`,
/// and in the report the error across the wrap and the root motion's accumulated error.
#[test]
fn inspect_and_report_give_the_playback_flags() {
    let d = tempfile::tempdir().unwrap();
    let fox = d.path().join("fox.glb");
    std::fs::copy(common::asset("Fox.glb"), &fox).unwrap();
    std::fs::write(
        d.path().join("fox.glb.skelpack.toml"),
        "[clips.Walk]\nlooping = true\nroot_motion = true\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_skelpack"))
            .args(args)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{args:?}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        serde_json::from_slice::<serde_json::Value>(&o.stdout).unwrap()
    };
    let s = |p: &std::path::Path| p.to_str().unwrap().to_owned();
    let root = load("Fox.glb").skeleton.joints[0].name.clone();
    let v = run(&["inspect", "--json", &s(&fox)]);
    let clips = v[0]["clips"].as_array().unwrap();
    let walk = clips.iter().find(|c| c["name"] == "Walk").unwrap();
    assert_eq!(walk["looping"], true);
    assert_eq!(walk["root_motion"], root.as_str());
    assert!(walk["additive"].is_null());
    assert_eq!(walk["looping_suggested"], true);
    let survey = clips.iter().find(|c| c["name"] == "Survey").unwrap();
    assert_eq!(survey["looping"], false);
    assert!(survey["root_motion"].is_null());

    let skp = d.path().join("fox.skp");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_skelpack"))
        .args(["compress", &s(&fox), "-o", &s(&skp)])
        .output()
        .unwrap();
    assert!(o.status.success());
    let v = run(&["inspect", "--json", &s(&skp)]);
    let clips = v[0]["clips"].as_array().unwrap();
    let walk = clips.iter().find(|c| c["name"] == "Walk").unwrap();
    assert_eq!(walk["looping"], true);
    assert_eq!(walk["root_motion"], root.as_str());
    assert!(walk["additive"].is_null());
    let run_clip = clips.iter().find(|c| c["name"] == "Run").unwrap();
    assert_eq!(run_clip["looping"], false);

    let v = run(&["report", "--json", &s(&fox)]);
    let clips = v["clips"].as_array().unwrap();
    let walk = &clips
        .iter()
        .find(|c| c["report"]["name"] == "Walk")
        .unwrap()["report"];
    assert_eq!(walk["looping"], true);
    assert_eq!(walk["looping_suggested"], true);
    assert_eq!(walk["root_motion"], root.as_str());
    assert!(walk["wrap_error"].as_f64().unwrap() > 0.0);
    assert_eq!(walk["root_motion_error"]["cycles"], 100);
    let survey = &clips
        .iter()
        .find(|c| c["report"]["name"] == "Survey")
        .unwrap()["report"];
    assert_eq!(survey["looping"], false);
    assert!(survey.get("wrap_error").is_none());
}

/// The root's travel over one cycle of `clip` (joint 0's object transform, first frame to
/// last), composed `cycles` times: where a game that takes root motion from a glTF clip's
/// root channel ends up (position, facing).
fn gltf_travel(asset: &Asset, clip: &Clip, cycles: u32) -> (glam::DVec3, glam::DQuat) {
    let n = asset.skeleton.len();
    let mut local = vec![Transform::IDENTITY; n];
    let mut at = |f: usize| {
        clip.sample_local(f as f32, &mut local);
        let o = object(asset, &local)[0];
        let (_, r, p) = o.to_scale_rotation_translation();
        (p, r)
    };
    let (p0, r0) = at(0);
    let (p1, r1) = at(clip.frame_count - 1);
    let (cp, cr) = (r0.inverse() * (p1 - p0), (r0.inverse() * r1).normalize());
    let (mut p, mut r) = (glam::DVec3::ZERO, glam::DQuat::IDENTITY);
    for _ in 0..cycles {
        p += r * cp;
        r = (r * cr).normalize();
    }
    (p, r)
}

/// Root motion in a glTF export (docs/EXPORT.md "Additive and root-motion clips in glTF"):
/// glTF has no root-motion flag, so players loop a travelling clip in place (three.js'
/// LoopRepeat jumps the root back at each wrap: `looping_clips_hold_across_the_wrap_in_three_js`
/// measures every cycle there). A game that extracts root motion from the exported root
/// channel accumulates the root's travel over a cycle; after 100 cycles of the default
/// character's Walk and the CMU walk (converted to glTF, then compressed), the export's
/// accumulated root is measured against the source's (printed; asserted for the Walk).
#[test]
fn gltf_export_root_travel_over_100_cycles() {
    let dir = tempfile::tempdir().unwrap();
    let walk = dir.path().join("default.glb");
    std::fs::write(&walk, DEFAULT_CHARACTER_GLB).unwrap();
    let cmu = dir.path().join("cmu.glb");
    skelpack_ok(&["convert"], &[&common::asset("CMU_131_01.bvh"), &cmu]);
    for (original, name) in [(&walk, "Walk"), (&cmu, "")] {
        let exported = original.with_extension("exp.glb");
        skelpack_ok(
            &["compress", "--preset", "acl", "-o"],
            &[&exported, original],
        );
        let (a, b) = (
            import::load(original).unwrap(),
            import::load(&exported).unwrap(),
        );
        let pick = |x: &Asset| -> Clip {
            (x.clips.iter())
                .find(|c| name.is_empty() || c.name == name)
                .unwrap()
                .clone()
        };
        let (ca, cb) = (pick(&a), pick(&b));
        assert_eq!(ca.frame_count, cb.frame_count);
        let resolved = Settings::from_preset(Preset::Acl).resolve(&a, &ca.name);
        let (tol, marker) = (
            resolved.limits.tolerance[0] as f64,
            resolved.limits.local_marker(0) as f64,
        );
        let (pa, ra) = gltf_travel(&a, &ca, 100);
        let (pb, rb) = gltf_travel(&b, &cb, 100);
        let (one_a, _) = gltf_travel(&a, &ca, 1);
        let (one_b, _) = gltf_travel(&b, &cb, 1);
        println!(
            "{} {}: 100 cycles travel {:.3}; export off by {:e} and {:e} rad ({:e} at the marker); one cycle {:e}; root tolerance {tol:e}",
            original.display(),
            ca.name,
            pa.length(),
            (pa - pb).length(),
            ra.angle_between(rb),
            ra.angle_between(rb) * marker,
            (one_a - one_b).length(),
        );
        // What the export guarantees: every frame within tolerance, so the root's travel
        // over one cycle within twice the root's tolerance.
        assert!(
            (one_a - one_b).length() <= 2.0 * tol,
            "{}: one cycle's travel off by {}",
            ca.name,
            (one_a - one_b).length()
        );
        // The default character's Walk keeps its root's travel: 100 cycles within tolerance.
        // (The CMU walk drifts: 23.8 mm after 100 cycles, its facing 1e-3 rad off; a game
        // needing the 100-cycle contract takes root motion from the runtime, which stores
        // the cycle's travel: `root_motion_over_100_cycles_ends_where_the_source_does`.)
        if name == "Walk" {
            assert!((pa - pb).length() <= tol, "{}", (pa - pb).length());
            assert!(ra.angle_between(rb) * marker <= tol);
        }
    }
}
