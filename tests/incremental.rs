//! Incremental recompression (`codec::Recompressor`): after single-joint edits (tolerance,
//! marker offset, pin), chosen at random with a fixed seed on every shared asset, the
//! recompressed clip is byte-identical to a full compression with the same settings, and
//! the recompression reused earlier work.

mod common;

use skelpack::codec::{self, CompressedClip, Control, Recompressor};
use skelpack::container;
use skelpack::import;
use skelpack::model::Skeleton;
use skelpack::settings::{Preset, Resolved, Settings};

/// A small deterministic generator (64-bit LCG), so failures reproduce.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

#[derive(Clone, Copy, Debug)]
enum Edit {
    Tolerance,
    Marker,
    Pin,
}

/// Applies one edit to joint `j` (an evaluated joint), as the app's joint table does.
fn apply(settings: &mut Resolved, edit: Edit, j: usize, rng: &mut Lcg) {
    let factors = [0.25f32, 0.5, 2.0, 4.0];
    let f = factors[rng.below(factors.len())];
    match edit {
        Edit::Tolerance => settings.limits.tolerance[j] *= f,
        Edit::Marker => settings.limits.marker_offset[j] *= f,
        Edit::Pin => settings.pinned[j] = !settings.pinned[j],
    }
}

/// Everything a compressed clip stores or reports, except the time it took.
fn same(skeleton: &Skeleton, a: &CompressedClip, b: &CompressedClip) -> Result<(), String> {
    let bytes = |c: &CompressedClip| container::to_bytes(skeleton, std::slice::from_ref(c));
    if bytes(a) != bytes(b) {
        return Err("the .skp bytes differ".into());
    }
    if a.tracks != b.tracks {
        return Err("the tracks differ".into());
    }
    let tolerances = |c: &CompressedClip| -> Vec<[u32; 3]> {
        c.local_tolerance
            .iter()
            .map(|t| t.map(f32::to_bits))
            .collect()
    };
    if tolerances(a) != tolerances(b) {
        return Err("the local tolerances differ".into());
    }
    let report = |c: &CompressedClip| {
        let mut r = c.report.clone();
        r.compress_ms = 0.0;
        serde_json::to_string(&r).unwrap()
    };
    if report(a) != report(b) {
        return Err("the reports differ".into());
    }
    Ok(())
}

#[test]
fn recompression_after_random_single_joint_edits_is_byte_identical_on_every_asset() {
    let mut rng = Lcg(0x5eed_1234);
    let mut checked = 0;
    let mut failures = Vec::new();
    // Encodings reused and computed over the tolerance edits (on a two-joint rig an edit
    // may change every budget; over all assets most encodings must be reused).
    let (mut reused, mut computed) = (0, 0);
    for path in common::all_assets() {
        let Ok(asset) = import::load(&path) else {
            // A deliberately malformed fixture: tests/bad_input.rs covers it.
            continue;
        };
        let Some(clip) = asset.clips.iter().max_by_key(|c| c.frame_count) else {
            continue;
        };
        let skeleton = &asset.skeleton;
        let evaluated: Vec<usize> = (0..skeleton.len())
            .filter(|&j| skeleton.joints[j].deforming)
            .collect();
        if evaluated.is_empty() {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let mut settings = Settings::from_preset(Preset::Acl).resolve(&asset, &clip.name);
        let control = Control::new();
        let mut memo = Recompressor::new();
        let first = memo.compress(skeleton, clip, &settings, &control).unwrap();
        let full = codec::compress(skeleton, clip, &settings, &control).unwrap();
        if let Err(e) = same(skeleton, &first, &full) {
            failures.push(format!("{name}: first compression: {e}"));
        }
        for edit in [Edit::Tolerance, Edit::Marker, Edit::Pin, Edit::Tolerance] {
            let j = evaluated[rng.below(evaluated.len())];
            apply(&mut settings, edit, j, &mut rng);
            let incremental = memo.compress(skeleton, clip, &settings, &control).unwrap();
            let reuse = memo.reuse();
            let full = codec::compress(skeleton, clip, &settings, &control).unwrap();
            let joint = &skeleton.joints[j].name;
            if let Err(e) = same(skeleton, &incremental, &full) {
                failures.push(format!("{name}: {edit:?} on {joint}: {e}"));
            }
            assert!(
                reuse.reference_reused,
                "{name}: the reference poses were computed again"
            );
            if matches!(edit, Edit::Tolerance) {
                reused += reuse.encodings_reused;
                computed += reuse.encodings_computed;
            }
            checked += 1;
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
    assert!(checked >= 40, "only {checked} edits checked");
    assert!(
        reused > computed,
        "tolerance edits reused {reused} encodings and computed {computed}"
    );
    eprintln!("tolerance edits: {reused} encodings reused, {computed} computed");
}

#[test]
fn unchanged_settings_reuse_every_encoding() {
    let asset = import::load(&common::asset("CesiumMan.glb")).unwrap();
    let clip = &asset.clips[0];
    let settings = Settings::from_preset(Preset::Acl).resolve(&asset, &clip.name);
    let mut memo = Recompressor::new();
    let control = Control::new();
    let first = memo
        .compress(&asset.skeleton, clip, &settings, &control)
        .unwrap();
    assert!(memo.reuse().encodings_computed > 0);
    let again = memo
        .compress(&asset.skeleton, clip, &settings, &control)
        .unwrap();
    let reuse = memo.reuse();
    assert_eq!(reuse.encodings_computed, 0, "{reuse:?}");
    assert!(reuse.encodings_reused > 0 && reuse.floors_reused);
    same(&asset.skeleton, &first, &again).unwrap();
}

#[test]
fn another_clip_starts_afresh() {
    let asset = import::load(&common::asset("Fox.glb")).unwrap();
    let mut memo = Recompressor::new();
    let control = Control::new();
    for clip in &asset.clips {
        let settings = Settings::from_preset(Preset::Acl).resolve(&asset, &clip.name);
        let got = memo
            .compress(&asset.skeleton, clip, &settings, &control)
            .unwrap();
        assert!(!memo.reuse().reference_reused, "{}", clip.name);
        let full = codec::compress(&asset.skeleton, clip, &settings, &control).unwrap();
        same(&asset.skeleton, &got, &full).unwrap();
    }
}

/// A source saved again with a few keys moved (the live reload): the clip's state keeps the
/// unchanged tracks' encodings, and the result is byte-identical to a full compression of
/// the new clip, on every shared asset's first clip.
#[test]
fn a_clip_with_some_tracks_changed_reuses_the_others_and_matches_a_full_compression() {
    let control = Control::new();
    let mut checked = 0;
    for path in common::all_assets() {
        let Ok(asset) = import::load(&path) else {
            continue;
        };
        let Some(clip) = asset.clips.first() else {
            continue;
        };
        if clip.frame_count < 3 {
            continue;
        }
        let settings = Settings::default().resolve(&asset, &clip.name);
        let mut memo = Recompressor::new();
        memo.compress(&asset.skeleton, clip, &settings, &control)
            .unwrap();
        // The first animated track moved at one frame by a tenth of its range (or 1 mm
        // worth of scene units), as an animator's key edit does.
        let mut moved = clip.clone();
        let Some(j) = (0..moved.tracks.len())
            .find(|&j| moved.tracks[j].rotations.windows(2).any(|w| w[0] != w[1]))
        else {
            continue;
        };
        let f = clip.frame_count / 2;
        let q = moved.tracks[j].rotations[f];
        moved.tracks[j].rotations[f] = (glam::Quat::from_rotation_y(0.05) * q).normalize();
        let got = memo
            .compress(&asset.skeleton, &moved, &settings, &control)
            .unwrap();
        let reuse = memo.reuse();
        assert!(
            !reuse.reference_reused,
            "{}: the moved clip's reference",
            path.display()
        );
        assert!(
            reuse.encodings_reused > 0,
            "{}: unchanged tracks reused: {reuse:?}",
            path.display()
        );
        let full = codec::compress(&asset.skeleton, &moved, &settings, &control).unwrap();
        same(&asset.skeleton, &got, &full).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        checked += 1;
    }
    assert!(checked >= 10, "{checked} assets checked");
}

/// Progressive results: the first pass a compression hands out holds every tolerance the
/// final result holds (measured independently against the requested limits), and asking for
/// it leaves the final result unchanged. The error matrices the codec hands out with the
/// first pass and keeps for the final result (which the app shows instead of measuring
/// again) are `metric::measure`'s, bit for bit.
#[test]
fn the_first_pass_holds_every_tolerance_and_the_final_result_is_unchanged() {
    use skelpack::metric::{Reference, measure};
    let mut shown = 0;
    for name in [
        "CesiumMan.glb",
        "CMU_131_01.bvh",
        "acl/104_30.acl.sjson",
        "RobotExpressive.glb",
    ] {
        let asset = import::load(&common::asset(name)).unwrap();
        let clip = asset.clips.iter().max_by_key(|c| c.frame_count).unwrap();
        let skeleton = &asset.skeleton;
        let settings = Settings::from_preset(Preset::Acl).resolve(&asset, &clip.name);
        let control = Control::new();
        let mut first = None;
        let mut keep = |c: CompressedClip, _: &Reference, e: &skelpack::metric::ErrorReport| {
            first = Some((c, e.clone()))
        };
        let mut memo = Recompressor::new();
        let last = memo
            .compress_progressive(skeleton, clip, &settings, &control, Some(&mut keep))
            .unwrap();
        let full = codec::compress(skeleton, clip, &settings, &control).unwrap();
        same(skeleton, &last, &full).unwrap_or_else(|e| panic!("{name}: {e}"));
        let (first, handed) = first.unwrap_or_else(|| panic!("{name}: no first pass"));
        assert!(first.matches(skeleton));
        let reference = Reference::new(skeleton, clip, clip.frame_count);
        let errors = measure(skeleton, &reference, &first, &settings.limits, true);
        let same_matrix = |a: &skelpack::metric::ErrorReport, b: &skelpack::metric::ErrorReport| {
            a.at_samples == b.at_samples && a.at_midpoints == b.at_midpoints
        };
        assert!(same_matrix(&handed, &errors), "{name}: first pass matrix");
        let kept = memo.errors().expect("the final result's errors");
        let measured = measure(skeleton, &reference, &last, &settings.limits, true);
        assert!(same_matrix(&kept, &measured), "{name}: final matrix");
        for j in 0..skeleton.len() {
            let tolerance = settings.limits.tolerance[j];
            // Below its floor a joint is held just above it (codec::floor).
            let floor = last.report.floors[j];
            let held = if tolerance < floor {
                floor * skelpack::codec::floor::FLOOR_MARGIN
            } else {
                tolerance
            };
            if settings.limits.evaluated[j] && last.report.contract_met {
                assert!(
                    errors.joint_max[j] <= held,
                    "{name}: {} misses by {} (tolerance {tolerance})",
                    skeleton.joints[j].name,
                    errors.joint_max[j]
                );
            }
        }
        assert_eq!(
            first.report.contract_met, last.report.contract_met,
            "{name}"
        );
        assert!(
            first.report.payload_bytes >= last.report.payload_bytes,
            "{name}: relaxation grew the clip"
        );
        shown += 1;
    }
    assert_eq!(shown, 4);
}

/// The app recompresses incrementally: tolerance edits made in the joint table show results
/// byte-identical to a full compression of the document's settings.
#[cfg(feature = "gui")]
mod app_harness;

#[cfg(feature = "gui")]
mod app {
    use std::path::PathBuf;

    use egui_kittest::Harness;
    use egui_kittest::kittest::Queryable;
    use skelpack::app::App;
    use skelpack::app::panels::joints;
    use skelpack::codec;

    use super::app_harness::{self, settle};

    fn harness(file: PathBuf) -> Harness<'static, App> {
        app_harness::opened(Some(file), app_harness::SIZE)
    }

    /// The shown result against a full compression of the document's current settings.
    fn shown_is_a_full_compression(h: &Harness<'static, App>) {
        let doc = h.state().document().unwrap();
        let shown = doc.result.as_ref().expect("a result");
        assert!(!shown.refining);
        let asset = &doc.asset;
        let clip = &asset.clips[doc.clip];
        let full =
            codec::compress(&asset.skeleton, clip, &doc.resolved, &codec::Control::new()).unwrap();
        super::same(&asset.skeleton, &shown.clip, &full).unwrap();
    }

    #[test]
    fn tolerance_edits_in_the_joint_table_recompress_to_a_full_compressions_bytes() {
        let mut h = harness(super::common::asset("acl/104_30.acl.sjson"));
        shown_is_a_full_compression(&h);
        for (joint, factor) in [("lHand", 0.5f32), ("rShin", 3.0), ("lHand", 0.7)] {
            let j = {
                let doc = h.state().document().unwrap();
                doc.asset.skeleton.find(joint).expect("a joint of 104_30")
            };
            h.state_mut().select_joint(Some(j));
            h.run();
            let mm = {
                let doc = h.state().document().unwrap();
                doc.resolved.limits.tolerance[j] / (doc.resolved.unit.per_metre() / 1000.0)
            };
            let label = joints::tolerance_label(joint);
            h.get_by_label(&label).scroll_to_me();
            h.run();
            h.get_by_label(&label)
                .set_value_accesskit((mm * factor) as f64);
            settle(&mut h);
            let now = {
                let doc = h.state().document().unwrap();
                doc.resolved.limits.tolerance[j] / (doc.resolved.unit.per_metre() / 1000.0)
            };
            assert!((now - mm * factor).abs() < 1e-4, "{joint}: {now} mm");
            shown_is_a_full_compression(&h);
        }
    }
}

/// Edits in a row without a debounce: each new edit cancels the compression under way (the
/// app starts the next one at once). Cancelled at any point (before it starts, right after
/// its first pass, or after a delay that lands anywhere in it), a compression stops with
/// `Cancelled` or finishes, and the state it leaves serves the next compression to the
/// same bytes as a full compression.
#[test]
fn a_cancelled_compression_leaves_the_state_exact_for_the_next() {
    use skelpack::codec::CodecError;
    use skelpack::metric::Reference;
    use std::time::Duration;
    for name in ["acl/104_30.acl.sjson", "CesiumMan.glb"] {
        let asset = import::load(&common::asset(name)).unwrap();
        let clip = &asset.clips[0];
        let skeleton = &asset.skeleton;
        let base = Settings::from_preset(Preset::Acl).resolve(&asset, &clip.name);
        let mut memo = Recompressor::new();
        memo.compress(skeleton, clip, &base, &Control::new())
            .unwrap();
        let mut rng = Lcg(0x5eed ^ name.len() as u64);
        let evaluated: Vec<usize> = (0..skeleton.len())
            .filter(|&j| base.limits.evaluated[j])
            .collect();
        for round in 0..6 {
            let mut edited = base.clone();
            let j = evaluated[rng.below(evaluated.len())];
            apply(&mut edited, Edit::Tolerance, j, &mut rng);
            let control = Control::new();
            let outcome = match round % 3 {
                0 => {
                    control.cancel();
                    memo.compress(skeleton, clip, &edited, &control)
                }
                1 => {
                    let c = control.clone();
                    let mut cancel =
                        move |_: CompressedClip,
                              _: &Reference,
                              _: &skelpack::metric::ErrorReport| {
                            c.cancel()
                        };
                    memo.compress_progressive(skeleton, clip, &edited, &control, Some(&mut cancel))
                }
                _ => {
                    let c = control.clone();
                    let delay = Duration::from_millis(2 + 7 * round as u64);
                    let canceller = std::thread::spawn(move || {
                        std::thread::sleep(delay);
                        c.cancel();
                    });
                    let r = memo.compress(skeleton, clip, &edited, &control);
                    canceller.join().unwrap();
                    r
                }
            };
            // Cancelled before it starts, or once its first pass is out (relaxation follows
            // on these clips): it must stop rather than finish.
            if round % 3 != 2 {
                assert!(
                    matches!(outcome, Err(CodecError::Cancelled)),
                    "{name}: round {round} was not cancelled"
                );
            }
            match outcome {
                Err(CodecError::Cancelled) => {}
                Ok(c) => {
                    let full = codec::compress(skeleton, clip, &edited, &Control::new()).unwrap();
                    same(skeleton, &c, &full).unwrap_or_else(|e| panic!("{name}: {e}"));
                }
                Err(e) => panic!("{name}: {e}"),
            }
            // The next edit's compression, on what the cancelled one left.
            let mut next = edited.clone();
            apply(&mut next, Edit::Tolerance, j, &mut rng);
            let got = memo
                .compress(skeleton, clip, &next, &Control::new())
                .unwrap();
            let full = codec::compress(skeleton, clip, &next, &Control::new()).unwrap();
            same(skeleton, &got, &full).unwrap_or_else(|e| panic!("{name} round {round}: {e}"));
        }
    }
}
