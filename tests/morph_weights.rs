//! Morph-target weights as scalar tracks in the glTF export (issue 26): compressed under the
//! joints' distance tolerance (a weight's error is |Δw| × its target's largest vertex
//! offset), verified by the exporter, smaller than the source's, and played in three.js
//! within that tolerance (`tools/player/player.mjs --morph`, which bounds vertex distances
//! from three.js' own morph attributes and influences).
//!
//! Needs Node.js and `npm ci` in tools/player (see tests/real_player.rs).

mod common;
use common::player::{node_json, skelpack_ok};

use std::path::Path;

use serde_json::Value;
use skelpack::export::gltf_doc::GltfDoc;

/// Bytes of the accessors the `weights` channels' samplers of `doc` reference (count x
/// component size; weights accessors are scalars).
fn weight_bytes(doc: &GltfDoc) -> usize {
    let accessors = doc.array("accessors");
    let mut seen = std::collections::BTreeSet::new();
    for a in doc.array("animations") {
        let samplers = a["samplers"].as_array().unwrap();
        for c in a["channels"].as_array().unwrap() {
            if c["target"]["path"] == "weights" {
                let s = &samplers[c["sampler"].as_u64().unwrap() as usize];
                seen.insert(s["input"].as_u64().unwrap() as usize);
                seen.insert(s["output"].as_u64().unwrap() as usize);
            }
        }
    }
    seen.iter()
        .map(|&i| {
            let a = &accessors[i];
            assert_eq!(a["type"], "SCALAR");
            let component = match a["componentType"].as_u64().unwrap() {
                5126 => 4,
                5123 | 5122 => 2,
                _ => 1,
            };
            a["count"].as_u64().unwrap() as usize * component
        })
        .sum()
}

/// Exports `original` (acl preset: 0.1 mm), checks the exporter's own report of the scalar
/// tracks and three.js' measurement of the morphs; returns the export's report.
fn export_and_play(original: &Path, exported: &Path) -> Value {
    let out = skelpack_ok(
        &["compress", "--preset", "acl", "--json", "-o"],
        &[exported, original],
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let anims = report.as_array().unwrap();
    assert_eq!(anims.len(), 14);
    for a in anims {
        let s = &a["scalar_tracks"];
        assert_eq!(s["count"], 1, "{}: {s}", a["name"]);
        assert!(
            s["max_error"].as_f64().unwrap() <= 1e-4,
            "{}: {s}",
            a["name"]
        );
    }
    let played = node_json("player.mjs", &[original, exported], &["--morph", "--json"]);
    assert_eq!(played["measured"], "morph");
    assert_eq!(
        played["joints"], 3,
        "the Head node's three primitives: {played}"
    );
    assert_eq!(played["joints_unmatched"].as_array().unwrap().len(), 0);
    for c in played["clips"].as_array().unwrap() {
        for which in ["clean", "after_any"] {
            let e = c[which]["max"].as_f64().unwrap();
            // 0.1 mm, with three.js' float arithmetic's 1% guard (docs/EXPORT.md).
            assert!(
                e <= 1e-4 * 1.01,
                "{} ({which}): a vertex moved {e} in three.js",
                c["name"]
            );
        }
    }
    report
}

#[test]
fn robot_expressive_weights_are_stored_smaller_and_play_within_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let original = common::asset("RobotExpressive.glb");
    let exported = dir.path().join("robot.glb");
    let report = export_and_play(&original, &exported);
    // Every face channel holds one set of weights: one key each.
    for a in report.as_array().unwrap() {
        let c = &a["scalar_tracks"]["compressed"];
        assert_eq!(c.as_array().unwrap().len(), 1, "{}: {c}", a["name"]);
        assert_eq!(c[0]["keys"], 1);
        assert_eq!(c[0]["targets"], 3);
    }
    let before = weight_bytes(&GltfDoc::read(&original).unwrap());
    let after = weight_bytes(&GltfDoc::read(&exported).unwrap());
    assert!(
        after * 10 < before,
        "weights: {after} bytes exported, {before} in the source"
    );
}

#[test]
fn moving_face_weights_drop_keys_and_hold_the_vertex_tolerance() {
    let dir = tempfile::tempdir().unwrap();
    let original = common::morph::robot_with_moving_faces(dir.path());
    let exported = dir.path().join("faces.glb");
    let report = export_and_play(&original, &exported);
    let mut kept = 0;
    let mut source = 0;
    for a in report.as_array().unwrap() {
        for c in a["scalar_tracks"]["compressed"].as_array().unwrap() {
            kept += c["keys"].as_u64().unwrap();
            source += c["source_keys"].as_u64().unwrap();
            // A ramp, a hold and a fall: at least its corners survive.
            assert!(c["keys"].as_u64().unwrap() >= 3, "{}: {c}", a["name"]);
            assert_eq!(c["storage"], "unorm16", "{}: weights in [0, 1]", a["name"]);
        }
    }
    assert!(kept * 2 < source, "{kept} of {source} keys kept");
    let before = weight_bytes(&GltfDoc::read(&original).unwrap());
    let after = weight_bytes(&GltfDoc::read(&exported).unwrap());
    assert!(
        after < before,
        "weights: {after} bytes exported, {before} in the source"
    );
}
