//! Every gltfpack and glTF-Transform output of the shared glTF assets opens in skelpack
//! (`KHR_mesh_quantization`, `EXT_meshopt_compression` with its fallback buffer), plays
//! the same motion as its source where the optimizer kept the keys, and recompresses.
//!
//! The optimizers come from npm, pinned in `tools/peers/package-lock.json` (`npm ci` in
//! tools/peers; `.ci/run` does it). The test fails, saying so, when they are missing.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;

use skelpack::import;

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/peers")
}

fn require_peers() {
    let node = Command::new("node").arg("--version").output();
    assert!(
        matches!(node, Ok(ref o) if o.status.success()),
        "needs Node.js (Debian: apt-get install nodejs npm), then `npm ci` in tools/peers"
    );
    for bin in ["gltfpack", "gltf-transform"] {
        assert!(
            peers_dir().join("node_modules/.bin").join(bin).exists(),
            "tools/peers/node_modules/.bin/{bin} is missing: run `npm ci` in tools/peers"
        );
    }
}

/// One optimizer run: the label, the tool, its arguments around input and output, and
/// whether it keeps every key time (so the motion can be compared frame for frame).
struct Peer {
    label: &'static str,
    tool: &'static str,
    args: &'static [&'static str],
    keeps_keys: bool,
}

const PEERS: &[Peer] = &[
    Peer {
        label: "gltfpack-kn-af0",
        tool: "gltfpack",
        args: &["-kn", "-af", "0"],
        keeps_keys: true,
    },
    Peer {
        label: "gltfpack-kn-af0-cc",
        tool: "gltfpack",
        args: &["-kn", "-af", "0", "-cc"],
        keeps_keys: true,
    },
    Peer {
        label: "gltfpack-cc",
        tool: "gltfpack",
        args: &["-cc"],
        keeps_keys: false,
    },
    Peer {
        label: "gltf-transform-resample",
        tool: "gltf-transform",
        args: &["resample"],
        keeps_keys: false,
    },
    Peer {
        label: "gltf-transform-quantize",
        tool: "gltf-transform",
        args: &["quantize"],
        keeps_keys: true,
    },
    Peer {
        label: "gltf-transform-meshopt",
        tool: "gltf-transform",
        args: &["meshopt"],
        keeps_keys: false,
    },
];

/// Runs one peer on `input`, writing `out`.
fn run_peer(peer: &Peer, input: &Path, out: &Path) {
    let bin = peers_dir().join("node_modules/.bin").join(peer.tool);
    let mut cmd = Command::new(bin);
    if peer.tool == "gltfpack" {
        cmd.arg("-i").arg(input).arg("-o").arg(out).args(peer.args);
    } else {
        cmd.arg(peer.args[0])
            .arg(input)
            .arg(out)
            .args(&peer.args[1..]);
    }
    let o = cmd.output().expect("run peer");
    assert!(
        o.status.success() && out.is_file(),
        "{} on {}: {}",
        peer.label,
        input.display(),
        String::from_utf8_lossy(&o.stderr)
    );
}

fn extensions(path: &Path) -> Vec<String> {
    // The raw JSON (GltfDoc decodes meshopt): what the file itself declares.
    let bytes = std::fs::read(path).unwrap();
    let json: serde_json::Value = if bytes.starts_with(b"glTF") {
        let n = u32::from_le_bytes(bytes[12..16].try_into().unwrap()) as usize;
        serde_json::from_slice(&bytes[20..20 + n]).unwrap()
    } else {
        serde_json::from_slice(&bytes).unwrap()
    };
    json.get("extensionsRequired")
        .and_then(|v| v.as_array())
        .into_iter()
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect()
}

#[test]
fn every_peer_output_of_the_shared_assets_opens_and_plays_the_source_motion() {
    require_peers();
    let dir = tempfile::tempdir().unwrap();
    let mut seen_required = std::collections::BTreeSet::new();
    let mut opened = 0;
    for src in common::gltf_assets() {
        let orig = import::load(&src).unwrap();
        let stem = src.file_stem().unwrap().to_string_lossy().to_string();
        for peer in PEERS {
            let out = dir.path().join(format!("{stem}.{}.glb", peer.label));
            run_peer(peer, &src, &out);
            seen_required.extend(extensions(&out));
            let back = import::load(&out)
                .unwrap_or_else(|e| panic!("{} of {stem} does not open: {e}", peer.label));
            opened += 1;
            assert_eq!(
                back.clips.len(),
                orig.clips.len(),
                "{} of {stem}: clip count",
                peer.label
            );
            for clip in &orig.clips {
                let other = back
                    .clips
                    .iter()
                    .find(|c| c.name == clip.name)
                    .unwrap_or_else(|| {
                        panic!("{} of {stem}: clip '{}' lost", peer.label, clip.name)
                    });
                assert!(
                    (other.duration() - clip.duration()).abs() < 0.05,
                    "{} of {stem} '{}': {} s against {} s",
                    peer.label,
                    clip.name,
                    other.duration(),
                    clip.duration()
                );
                // Same keys: the same motion up to the peer's quantization (16-bit rotations,
                // quantized mesh data never touches the skeleton): within 5 mm at 3 cm
                // markers, scaled to the asset's unit.
                // (Joints matched by name: files with unnamed nodes, SimpleSkin, are skipped.)
                let named = orig
                    .skeleton
                    .joints
                    .iter()
                    .all(|j| back.skeleton.find(&j.name).is_some());
                if peer.keeps_keys && named && other.frame_count == clip.frame_count {
                    let offset = orig.units.from_metres(0.03);
                    let e = common::max_error(&orig.skeleton, clip, &back.skeleton, other, offset);
                    assert!(
                        e <= orig.units.from_metres(0.005),
                        "{} of {stem} '{}': {e} scene units from the source",
                        peer.label,
                        clip.name
                    );
                }
            }
            let dequantized: usize = back.meshes.iter().map(|m| m.positions.len()).sum();
            let source: usize = orig.meshes.iter().map(|m| m.positions.len()).sum();
            assert_eq!(
                dequantized > 0,
                source > 0,
                "{} of {stem}: meshes lost",
                peer.label
            );
            for m in &back.meshes {
                assert!(
                    m.positions.iter().all(|p| p.is_finite()),
                    "{} of {stem}: a mesh position is not finite",
                    peer.label
                );
            }
        }
    }
    assert!(opened >= 6 * PEERS.len());
    for ext in ["KHR_mesh_quantization", "EXT_meshopt_compression"] {
        assert!(
            seen_required.contains(ext),
            "no peer output required {ext}: {seen_required:?}"
        );
    }
}

#[test]
fn meshopt_and_quantized_peer_outputs_recompress() {
    require_peers();
    let dir = tempfile::tempdir().unwrap();
    let src = common::asset("CesiumMan.glb");
    for peer in &PEERS[..2] {
        let packed = dir.path().join(format!("{}.glb", peer.label));
        run_peer(peer, &src, &packed);
        let out = dir.path().join(format!("{}.skelpack.glb", peer.label));
        let o = Command::new(env!("CARGO_BIN_EXE_skelpack"))
            .arg("compress")
            .arg(&packed)
            .arg("-o")
            .arg(&out)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "{}: {}",
            peer.label,
            String::from_utf8_lossy(&o.stderr)
        );
        // The export still requires mesh quantization (its meshes keep their integer data)
        // and no longer meshopt (skelpack decoded it; `--meshopt` re-encodes).
        let req = extensions(&out);
        assert!(req.iter().any(|e| e == "KHR_mesh_quantization"), "{req:?}");
        assert!(
            !req.iter().any(|e| e == "EXT_meshopt_compression"),
            "{req:?}"
        );
        let back = import::load(&out).unwrap();
        let orig = import::load(&packed).unwrap();
        let shell = 0.03;
        if back.clips[0].frame_count == orig.clips[0].frame_count {
            let e = common::max_error(
                &orig.skeleton,
                &orig.clips[0],
                &back.skeleton,
                &back.clips[0],
                shell,
            );
            assert!(e <= 1.0e-4, "{}: recompressed {e} m off", peer.label);
        }
        // animeval.py cannot decode meshopt without a helper the shared kit lacks: it judges
        // against the peer file decoded to core glTF (skelpack's meshopt decoder).
        let plain = dir.path().join(format!("{}.decoded.glb", peer.label));
        let decoded = skelpack::export::GltfDoc::read(&packed).unwrap();
        std::fs::write(
            &plain,
            decoded
                .to_bytes(skelpack::export::GltfFormat::Binary)
                .unwrap(),
        )
        .unwrap();
        if let Some(report) = common::animeval_portable(&plain, &out, shell) {
            let max = common::animeval_max(&report);
            assert!(max <= 1.0e-4, "{}: animeval {max} m", peer.label);
        }
    }
}
