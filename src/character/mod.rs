//! The default character (DESIGN §6, issue 4): a humanoid the project generates itself,
//! deterministically, so the app has something to open and the tests have a character with
//! fingers and a long prop. `skelpack make-character OUT.glb` regenerates
//! `assets/default_character.glb`; a test keeps the committed file equal to the generator's
//! output.
//!
//! All math runs in `f64` and is rounded to `f32` once, so platform differences in the last
//! bit of `sin`/`cos` almost never reach the file.

pub mod clips;
pub mod mesh;
pub mod rig;
pub mod solve;

use crate::export::{ExportError, GltfFormat, scene_to_gltf};
use crate::import::SkinnedMesh;
use crate::model::{Clip, Joint, Skeleton, Transform};

/// File name of the committed character, under `assets/`.
pub const DEFAULT_CHARACTER_NAME: &str = "default_character.glb";

/// The committed character (`assets/default_character.glb`).
pub const DEFAULT_CHARACTER_GLB: &[u8] = include_bytes!("../../assets/default_character.glb");

/// The committed character as the importer reads it from `assets/` (for tests that
/// compress its clips).
#[cfg(test)]
pub(crate) fn committed_asset() -> crate::import::Asset {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("assets")
        .join(DEFAULT_CHARACTER_NAME);
    crate::import::load(&path).expect("the committed character imports")
}

/// The character's skeleton (59 joints, all deforming).
pub fn skeleton() -> Skeleton {
    let joints = rig::joints()
        .into_iter()
        .map(|j| {
            Joint::new(
                j.name,
                j.parent,
                Transform::new(j.offset.as_vec3(), j.rotation.as_quat(), glam::Vec3::ONE),
            )
        })
        .collect();
    Skeleton::new(joints).expect("the rig lists parents first")
}

/// The character's clips, sampled at 30 fps.
pub fn clips() -> Vec<Clip> {
    let rig = rig::joints();
    let skeleton = skeleton();
    clips::MOTIONS
        .iter()
        .map(|m| {
            let frames = (m.duration * clips::RATE).round() as usize + 1;
            let mut clip = Clip::rest(m.name, &skeleton, clips::RATE as f32, frames);
            for f in 0..frames {
                let local = solve::solve(&rig, &(m.pose)(f as f64 / clips::RATE));
                for (tracks, t) in clip.tracks.iter_mut().zip(local) {
                    tracks.translations[f] = t.translation;
                    tracks.rotations[f] = t.rotation;
                }
            }
            for (j, tracks) in clip.tracks.iter_mut().enumerate() {
                // Every joint is keyed in rotation; the root and hips also move.
                tracks.source_channels = [j < 2, true, false];
            }
            clip
        })
        .collect()
}

/// The character's body and sword meshes.
pub fn meshes() -> Vec<SkinnedMesh> {
    mesh::meshes(&rig::joints())
}

/// Generates the character as `.glb` bytes.
pub fn generate_glb() -> Result<Vec<u8>, ExportError> {
    scene_to_gltf(&skeleton(), &clips(), &meshes())?.to_bytes(GltfFormat::Binary)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::local_to_object;
    use glam::{Affine3A, Vec3};

    /// World positions of `names` at every frame of a clip.
    fn track(clip: &Clip, names: &[&str]) -> Vec<Vec<Vec3>> {
        let s = skeleton();
        let idx: Vec<usize> = names.iter().map(|n| s.find(n).unwrap()).collect();
        let mut obj = vec![Affine3A::IDENTITY; s.len()];
        let mut local = s.rest_pose();
        (0..clip.frame_count)
            .map(|f| {
                clip.sample_local(f as f32, &mut local);
                local_to_object(&s, &local, &mut obj);
                idx.iter()
                    .map(|&i| Vec3::from(obj[i].translation))
                    .collect()
            })
            .collect()
    }

    #[test]
    fn has_the_promised_shape() {
        let s = skeleton();
        assert!((55..=65).contains(&s.len()), "{} joints", s.len());
        for side in ["Left", "Right"] {
            for f in rig::FINGERS {
                for k in 1..=3 {
                    assert!(s.find(&format!("{side}Hand{f}{k}")).is_some());
                }
            }
        }
        let sword = s.find("Sword").unwrap();
        assert!(s.is_ancestor_or_self(s.find("RightHand").unwrap(), sword));
        let rest = track(&Clip::rest("r", &s, 30.0, 1), &["HeadTop", "LeftToeEnd"]);
        assert!(
            (rest[0][0].y - 1.79).abs() < 0.02,
            "height {}",
            rest[0][0].y
        );
        let c = clips();
        assert_eq!(c.len(), 3);
        assert!(c.iter().all(|c| c.sample_rate == 30.0));
    }

    #[test]
    fn feet_stay_on_or_above_the_ground() {
        for clip in clips() {
            let names = [
                "LeftFoot",
                "RightFoot",
                "LeftToeEnd",
                "RightToeEnd",
                "SwordTip",
            ];
            let p = track(&clip, &names);
            let low = p
                .iter()
                .flatten()
                .map(|v| v.y)
                .fold(f32::INFINITY, f32::min);
            assert!(
                low > -0.02,
                "{}: something goes {low} m below ground",
                clip.name
            );
        }
    }

    #[test]
    fn walk_plants_its_feet_and_loops() {
        let walk = &clips()[1];
        let p = track(walk, &["LeftFoot", "RightFoot"]);
        // Left stance: phase [0, 0.5) = frames 0..18; right: 18..36.
        for (k, range) in [(0usize, 2..16), (1, 20..34)] {
            let a = p[range.start][k];
            for f in range {
                let d = (p[f][k] - a) * Vec3::new(1.0, 0.0, 1.0);
                assert!(
                    d.length() < 0.02,
                    "foot {k} slides {} m at frame {f}",
                    d.length()
                );
            }
        }
        let last = walk.frame_count - 1;
        for (j, t) in walk.tracks.iter().enumerate().skip(1) {
            assert!(
                t.rotations[0].dot(t.rotations[last]).abs() > 1.0 - 1e-6,
                "joint {j} does not loop"
            );
        }
    }

    #[test]
    fn the_strike_reaches_the_ground_fast() {
        let attack = &clips()[2];
        let tip = track(attack, &["SwordTip"]);
        let impact = (30..40).map(|f| tip[f][0].y).fold(f32::INFINITY, f32::min);
        assert!(impact < 0.3, "the blade tip only comes down to {impact} m");
        let fastest = (1..attack.frame_count)
            .map(|f| (tip[f][0] - tip[f - 1][0]).length() * 30.0)
            .fold(0.0, f32::max);
        assert!(fastest > 8.0, "tip speed peaks at {fastest} m/s");
    }

    #[test]
    fn committed_file_matches_the_generator() {
        let now = generate_glb().unwrap();
        assert!(
            now == DEFAULT_CHARACTER_GLB,
            "assets/{DEFAULT_CHARACTER_NAME} is stale: run `skelpack make-character assets/{DEFAULT_CHARACTER_NAME}`"
        );
        let a =
            crate::import::load_bytes(std::path::Path::new(DEFAULT_CHARACTER_NAME), &now).unwrap();
        assert!(a.skeleton.len() >= 55);
        assert!(a.clips.len() >= 3 && a.clips.iter().all(|c| c.sample_rate == 30.0));
        assert!(!a.meshes.is_empty());
    }
}
