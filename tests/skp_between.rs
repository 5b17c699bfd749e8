//! `.skp` holds the contract where a source's curve leaves the chord of its frames (issue 24
//! item 3): the clip's reference between frames is the source's own curve (CUBICSPLINE), so
//! the codec works on a grid fine enough to follow it (`codec::grid`), and `report` and
//! `compress -o x.skp` hold the tolerance on it.

mod common;

use std::process::Command;

use skelpack::codec::CompressedClip;
use skelpack::metric::{PoseSource, Reference, measure};
use skelpack::model::Transform;
use skelpack::settings::Settings;

/// A decoded clip sampled at the source clip's frame positions (its rate is `n` times it).
struct AtSourceFrames<'a> {
    clip: &'a CompressedClip,
    n: f32,
}

impl PoseSource for AtSourceFrames<'_> {
    fn sample_local(&self, frame: f32, out: &mut [Transform]) {
        self.clip.sample_local(frame * self.n, out);
    }
}

#[test]
fn report_and_skp_hold_cubic_sources_between_frames() {
    let path = common::assets().join("InterpolationTest.glb");
    let bin = env!("CARGO_BIN_EXE_skelpack");
    let out = Command::new(bin)
        .args(["report", "--json"])
        .arg(&path)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "report exited {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    let dir = tempfile::tempdir().unwrap();
    let skp = dir.path().join("x.skp");
    let out = Command::new(bin)
        .arg("compress")
        .arg(&path)
        .arg("-o")
        .arg(&skp)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "compress -o x.skp exited {:?}: {}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout)
    );
    holds_between_frames(&path, &skp);
}

/// The app's File → Export .skp writes what `compress` writes: the app's own result of the
/// clip on screen (computed on the source's frames) is not reused for a clip that needs a
/// finer grid, and the other clips are compressed on their grids too.
#[test]
fn the_apps_skp_export_holds_cubic_sources_between_frames() {
    use std::sync::Arc;

    use skelpack::app::{compressor, exporter};
    let path = common::assets().join("InterpolationTest.glb");
    let asset = Arc::new(skelpack::import::load(&path).unwrap());
    let settings = Settings::default();
    let dir = tempfile::tempdir().unwrap();
    // Whichever clip is on screen, as the app holds it.
    for on_screen in 0..asset.clips.len() {
        let clip = &asset.clips[on_screen];
        let resolved = settings.resolve(&asset, &clip.name);
        let shown = compressor::compress(
            &asset.skeleton,
            clip,
            &resolved,
            &compressor::Control::new(),
        )
        .unwrap();
        let input = exporter::ExportInput {
            asset: asset.clone(),
            settings: settings.clone(),
            current: Some((on_screen, shown.clip.clone())),
            gltf_meshopt: false,
            memo: None,
        };
        let skp = dir.path().join(format!("app_{on_screen}.skp"));
        (exporter::SKP.write)(&input, &skp).unwrap();
        holds_between_frames(&path, &skp);
    }
}

/// Every clip of the `.skp` at `skp` holds its tolerance against the source's own curve at
/// 8 points per source frame interval, on a grid whose frames include the source's; the
/// three cubic clips of InterpolationTest are on finer grids.
fn holds_between_frames(path: &std::path::Path, skp: &std::path::Path) {
    // Measured here, against the source's own curve at 8 points per source frame interval.
    let container = skelpack::container::read(skp).unwrap();
    let asset = skelpack::import::load(path).unwrap();
    let settings = Settings::default();
    let sk = &asset.skeleton;
    let mut finer = 0;
    for clip in &asset.clips {
        let c = container
            .clips
            .iter()
            .find(|c| c.name == clip.name)
            .unwrap_or_else(|| panic!("{} not in the .skp", clip.name));
        let n = c.sample_rate / clip.sample_rate;
        assert_eq!(
            (clip.frame_count - 1) as f32 * n,
            (c.frame_count - 1) as f32,
            "{}: the source frames are frames of the .skp",
            clip.name
        );
        finer += usize::from(n > 1.0);
        let limits = settings.resolve(&asset, &clip.name).limits;
        let reference = Reference::with_inner_points(sk, clip, clip.frame_count, 8);
        let e = measure(
            sk,
            &reference,
            &AtSourceFrames { clip: c, n },
            &limits,
            true,
        );
        let mid = e.midpoints.unwrap();
        assert!(
            e.within_tolerance() && mid.violations == 0,
            "{}: {} mm at frames, {} mm between",
            clip.name,
            e.samples.max * 1e3,
            mid.max * 1e3
        );
    }
    // The three cubic clips; the LINEAR and STEP ones keep their grid.
    assert_eq!(finer, 3);
}
