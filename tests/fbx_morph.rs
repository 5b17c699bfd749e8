//! FBX blend shapes as morph targets and their weight curves as scalar tracks (issue 26):
//! the imported weights and offsets against ufbx's own evaluation at every frame, the `.skp`
//! scalar tracks decoded by the runtime within the vertex-distance tolerance and smaller
//! than the source's floats, and the glTF conversion and compressed export played in three.js
//! with the morph targets applied (`tools/player/player.mjs --morph`).
//!
//! The three.js test needs Node.js and `npm ci` in tools/player (see tests/real_player.rs).

mod common;
use common::player::{node_json, skelpack_ok};

use std::path::{Path, PathBuf};

use serde_json::Value;
use skelpack::import::{self, fbx};
use skelpack_runtime::Skp;

/// The two shared Blender files with shape-key animation: (file, meshes with targets).
const FILES: [(&str, usize); 2] = [
    ("blender_293_barbarian_7400_binary.fbx", 2),
    ("blender440_shape_weight_anim_7400_binary.fbx", 1),
];

fn fbx_path(name: &str) -> PathBuf {
    common::asset("fbx").join(name)
}

/// The mesh vertex of every triangle corner, as ufbx triangulates the faces.
fn corner_vertices(mesh: &ufbx::Mesh) -> Vec<usize> {
    let mut out = Vec::new();
    let mut tri = vec![0u32; mesh.max_face_triangles * 3];
    for &face in mesh.faces.iter() {
        let n = mesh.triangulate_face(&mut tri, face) as usize;
        out.extend(
            tri[..n * 3]
                .iter()
                .map(|&ix| mesh.vertex_indices[ix as usize] as usize),
        );
    }
    out
}

#[test]
fn weights_and_offsets_match_ufbx_at_every_frame() {
    for (file, meshes_with_targets) in FILES {
        let path = fbx_path(file);
        let asset = import::load(&path).unwrap();
        let bytes = std::fs::read(&path).unwrap();
        let scene = fbx::load_scene(&bytes).unwrap();
        let morphed: Vec<_> = asset
            .meshes
            .iter()
            .filter(|m| !m.morph_targets.is_empty())
            .collect();
        assert_eq!(morphed.len(), meshes_with_targets, "{file}");
        for clip in &asset.clips {
            assert_eq!(
                clip.scalar_tracks.len(),
                meshes_with_targets,
                "{file} {}",
                clip.name
            );
            assert_eq!(clip.morph_weight_channels, clip.scalar_tracks.len());
            let stack = scene
                .anim_stacks
                .iter()
                .find(|s| s.element.name.as_ref() == clip.name)
                .unwrap();
            let mut moved = 0.0f64;
            for f in 0..clip.frame_count {
                let t = clip.start_time as f64 + f as f64 / clip.sample_rate as f64;
                let at = ufbx::evaluate_scene(&scene, &stack.anim, t, Default::default()).unwrap();
                for mesh in &morphed {
                    let track = clip
                        .scalar_tracks
                        .iter()
                        .find(|s| s.name == mesh.name)
                        .unwrap();
                    assert_eq!(track.targets, mesh.morph_targets.len());
                    assert_eq!(track.times.len(), clip.frame_count);
                    let w = &track.values[f * track.targets..(f + 1) * track.targets];
                    for (k, target) in mesh.morph_targets.iter().enumerate() {
                        let (c, key) = target.source.unwrap();
                        let expected = at.blend_channels[c].keyframes[key].effective_weight;
                        assert!(
                            (w[k] as f64 - expected).abs() < 1e-6,
                            "{file} {} frame {f} target {}: {} against ufbx's {expected}",
                            clip.name,
                            target.name,
                            w[k]
                        );
                    }
                    // The blended offset of every corner against ufbx's own blended offset of
                    // its vertex (all the mesh's deformers at this frame's weights, in the
                    // scene ufbx evaluated at this time).
                    let node = at
                        .nodes
                        .iter()
                        .find(|n| {
                            n.mesh.as_ref().is_some_and(|m| {
                                m.element.name.as_ref() == mesh.name
                                    || n.element.name.as_ref() == mesh.name
                            })
                        })
                        .unwrap();
                    let fbx_mesh = node.mesh.as_ref().unwrap();
                    let corners = corner_vertices(fbx_mesh);
                    assert_eq!(corners.len(), mesh.positions.len());
                    // ufbx's deformation: every shape at its effective weight, times the
                    // shape's per-vertex weights (`ufbx_add_blend_vertex_offsets`).
                    let mut blended = vec![ufbx::Vec3::default(); fbx_mesh.num_vertices];
                    for d in fbx_mesh.blend_deformers.iter() {
                        ufbx::add_blend_vertex_offsets(d, &mut blended, 1.0);
                    }
                    for (i, &v) in corners.iter().enumerate() {
                        let mut ours = glam::DVec3::ZERO;
                        for (k, target) in mesh.morph_targets.iter().enumerate() {
                            ours += target.offsets[i].as_dvec3() * w[k] as f64;
                        }
                        let o = blended[v];
                        let theirs = glam::DVec3::new(o.x, o.y, o.z);
                        assert!(
                            (ours - theirs).length() < 1e-5,
                            "{file} {} frame {f} corner {i}: {ours} against ufbx's {theirs}",
                            clip.name
                        );
                        moved = moved.max(theirs.length());
                    }
                }
            }
            assert!(moved > 1e-3, "{file}: the shapes never move a vertex");
        }
    }
}

/// Compresses `source` to a `.skp` and checks every scalar track as the runtime decodes it
/// against the importer's curve at every source key and midpoint (the vertex distance, sum
/// over targets of |Δw| × reach, within `tolerance` metres); returns (kept keys, source keys,
/// stored bytes, source bytes as floats).
fn skp_round_trip(source: &Path, dir: &Path, tolerance_mm: &str) -> (usize, usize, usize, usize) {
    let tolerance = tolerance_mm.parse::<f64>().unwrap() * 1e-3;
    let skp_path = dir.join("out.skp");
    let out = skelpack_ok(
        &["compress", "--tolerance-mm", tolerance_mm, "--json", "-o"],
        &[&skp_path, source],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let asset = import::load(source).unwrap();
    let bytes = std::fs::read(&skp_path).unwrap();
    let skp = Skp::open(bytes.as_slice()).unwrap();
    let (mut kept, mut source_keys, mut stored, mut raw) = (0, 0, 0, 0);
    for clip in &asset.clips {
        let reported = report["clips"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == clip.name.as_str())
            .unwrap();
        assert_eq!(reported["scalar_tracks"], clip.scalar_tracks.len());
        assert!(reported["scalar_error"].as_f64().unwrap() <= tolerance);
        let c = skp.find_clip(&clip.name).unwrap();
        assert_eq!(skp.scalar_track_count(c), clip.scalar_tracks.len());
        for src in &clip.scalar_tracks {
            let i = skp.find_scalar_track(c, &src.name).unwrap();
            assert!(src.reach.iter().all(|&r| r > 0.0), "{:?}", src.reach);
            let n = src.targets;
            let worst = common::morph::runtime_scalar_error(&skp, c, i, src);
            // The runtime's float arithmetic's guard.
            assert!(
                worst <= tolerance * 1.001,
                "{} {}: a vertex moves {worst} in the runtime",
                clip.name,
                src.name
            );
            let record = &skp.clip_meta(c).scalar_tracks[i];
            kept += record.keys;
            source_keys += src.times.len();
            stored += record.times.len() + record.values.len();
            raw += src.times.len() * 4 * (1 + n);
        }
    }
    (kept, source_keys, stored, raw)
}

#[test]
fn skp_scalar_tracks_decode_within_tolerance_and_are_smaller() {
    let dir = tempfile::tempdir().unwrap();
    for (file, _) in FILES {
        // 0.1 mm (the acl preset's), then 1 mm.
        let (kept, source, stored, raw) = skp_round_trip(&fbx_path(file), dir.path(), "0.1");
        eprintln!("{file} at 0.1 mm: {kept} of {source} keys, {stored} bytes of {raw}");
        assert!(
            stored < raw,
            "{file}: {stored} bytes stored, {raw} as floats"
        );
        let (kept, source, stored, raw) = skp_round_trip(&fbx_path(file), dir.path(), "1");
        eprintln!("{file} at 1 mm: {kept} of {source} keys, {stored} bytes of {raw}");
        assert!(kept * 2 < source, "{file}: {kept} of {source} keys kept");
        assert!(
            stored * 2 < raw,
            "{file}: {stored} bytes stored, {raw} as floats"
        );
    }
}

#[test]
fn converted_and_compressed_glb_play_their_morphs_in_three_js_within_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    for (file, meshes) in FILES {
        let source = fbx_path(file);
        let raw = dir.path().join("raw.glb");
        let exported = dir.path().join("compressed.glb");
        skelpack_ok(&["convert"], &[&source, &raw]);
        // The conversion carries every target and every frame's weights.
        let doc = skelpack::export::GltfDoc::read(&raw).unwrap();
        let asset = import::load(&source).unwrap();
        let weights_channels: usize = doc
            .array("animations")
            .iter()
            .map(|a| {
                a["channels"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|c| c["target"]["path"] == "weights")
                    .count()
            })
            .sum();
        assert_eq!(weights_channels, meshes * asset.clips.len(), "{file}");
        let targets: usize = doc
            .array("meshes")
            .iter()
            .map(|m| m["primitives"][0]["targets"].as_array().map_or(0, Vec::len))
            .sum();
        let expected: usize = asset.meshes.iter().map(|m| m.morph_targets.len()).sum();
        assert_eq!(targets, expected, "{file}");
        let reimported = import::load(&raw).unwrap();
        for (a, b) in asset.clips.iter().zip(&reimported.clips) {
            assert_eq!(a.scalar_tracks.len(), b.scalar_tracks.len());
            for (x, y) in a.scalar_tracks.iter().zip(&b.scalar_tracks) {
                assert_eq!((&x.name, x.targets), (&y.name, y.targets));
                assert!(x.values.iter().zip(&y.values).all(|(p, q)| p == q));
                // The glTF's bound (from the targets' min / max) is at least the model's
                // (its largest offset's length).
                for (r, s) in x.reach.iter().zip(&y.reach) {
                    assert!(
                        *s >= *r * 0.999,
                        "{file}: reach {r} in the model, {s} in glTF"
                    );
                }
            }
        }
        let out = skelpack_ok(
            &["compress", "--preset", "acl", "--json", "-o"],
            &[&exported, &source],
        );
        let report: Value = serde_json::from_slice(&out.stdout).unwrap();
        for a in report.as_array().unwrap() {
            let s = &a["scalar_tracks"];
            assert_eq!(s["count"], meshes, "{file} {}: {s}", a["name"]);
            assert!(s["max_error"].as_f64().unwrap() <= 1e-4, "{file}: {s}");
        }
        let played = node_json("player.mjs", &[&raw, &exported], &["--morph", "--json"]);
        assert_eq!(played["measured"], "morph");
        assert_eq!(played["joints"], meshes, "{file}: {played}");
        assert_eq!(played["joints_unmatched"].as_array().unwrap().len(), 0);
        for c in played["clips"].as_array().unwrap() {
            for which in ["clean", "after_any"] {
                let e = c[which]["max"].as_f64().unwrap();
                // 0.1 mm, with three.js' float arithmetic's 1% guard (docs/EXPORT.md).
                assert!(
                    e <= 1e-4 * 1.01,
                    "{file} {} ({which}): a vertex moved {e} in three.js",
                    c["name"]
                );
            }
        }
    }
}
