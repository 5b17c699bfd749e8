//! "Fit in N KiB" (codec::size_budget) on real clips: the search lands at or below the
//! budget, with every joint within its scaled tolerance (measured independently of the
//! compressor's report), and the scale keeps the animator's per-joint ratios.

mod common;

use skelpack::codec::size_budget::{self, MIN_SCALE};
use skelpack::codec::{self, Control};
use skelpack::import;
use skelpack::metric::{Reference, measure};
use skelpack::settings::Settings;

fn default_character() -> import::Asset {
    import::load(
        &std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/default_character.glb"),
    )
    .unwrap()
}

/// Fits the whole file in `fraction` of its size at the set tolerances and checks the answer.
fn fits_file(asset: &import::Asset, settings: &Settings, fraction: f64) -> size_budget::Fit {
    let sk = &asset.skeleton;
    let clips: Vec<_> = asset
        .clips
        .iter()
        .map(|c| (c, settings.resolve(asset, &c.name)))
        .collect();
    let at_one: u64 = clips
        .iter()
        .map(|(c, r)| {
            codec::compress(sk, c, r, &Control::new())
                .unwrap()
                .report
                .payload_bytes
        })
        .sum();
    let budget = (at_one as f64 * fraction) as u64;
    let (fit, out) = size_budget::fit_clips(sk, &clips, budget, &Control::new()).unwrap();
    let best = fit.best.clone().expect("a scale that fits");
    assert!(best.bytes <= budget, "{best:?} over {budget}");
    let written: u64 = out.iter().map(|c| c.report.payload_bytes).sum();
    assert_eq!(
        written, best.bytes,
        "the clips returned are the best probe's"
    );
    if fraction < 1.0 {
        assert!(best.scale > 1.0, "a smaller budget loosens: {best:?}");
    } else {
        assert!(best.scale < 1.0 || best.scale == MIN_SCALE, "{best:?}");
    }
    for ((clip, resolved), c) in clips.iter().zip(&out) {
        let limits = size_budget::scaled(resolved, best.scale).limits;
        for j in 0..limits.len() {
            let ratio = limits.tolerance[j] / resolved.limits.tolerance[j];
            assert!(
                (ratio - best.scale).abs() <= 1e-5 * best.scale,
                "joint {j}: {ratio}"
            );
        }
        let e = measure(
            sk,
            &Reference::new(sk, *clip, clip.frame_count),
            c,
            &limits,
            true,
        );
        assert!(
            e.samples.violations == 0 && e.midpoints.is_none_or(|m| m.violations == 0),
            "'{}' at scale {}: worst ratio {}",
            clip.name,
            best.scale,
            e.samples.worst_ratio
        );
    }
    fit
}

#[test]
fn default_character_fits_in_two_thirds_of_its_size() {
    let fit = fits_file(&default_character(), &Settings::default(), 0.66);
    eprintln!("default character at 66%: {:?}", fit.best);
}

#[test]
fn default_character_with_room_to_spare_tightens() {
    fits_file(&default_character(), &Settings::default(), 1.5);
}

#[test]
fn one_clip_of_a_shared_asset_fits_its_budget() {
    let asset = import::load(&common::asset("CesiumMan.glb")).unwrap();
    fits_file(&asset, &Settings::default(), 0.5);
}

#[test]
fn compress_fit_kb_on_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("fit.skp");
    let input =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("assets/default_character.glb");
    let run = |kib: &str| {
        std::process::Command::new(env!("CARGO_BIN_EXE_skelpack"))
            .args([
                "compress",
                input.to_str().unwrap(),
                "-o",
                out.to_str().unwrap(),
            ])
            .args(["--fit-kb", kib, "--json"])
            .output()
            .unwrap()
    };
    let o = run("12");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let best = &json["fit"]["best"];
    assert!(best["bytes"].as_u64().unwrap() <= 12 * 1024, "{best}");
    let payload: u64 = json["clips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["payload_bytes"].as_u64().unwrap())
        .sum();
    assert_eq!(payload, best["bytes"].as_u64().unwrap());
    assert!(out.is_file());
    // A budget no scale reaches: written at the smallest size reached, and exit code 1.
    let o = run("0.01");
    assert_eq!(o.status.code(), Some(1));
    let json: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(json["fit"]["best"].is_null());
    // Nonsense budgets are refused with a message.
    let o = run("0");
    assert_eq!(
        o.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert!(String::from_utf8_lossy(&o.stderr).contains("--fit-kb"));
}
