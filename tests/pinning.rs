//! Joint pinning: a pinned joint re-derives its local track against the decoded parent chain,
//! so its ancestors no longer budget for its subtree (a hand holding a sword): the arm gets
//! smaller while the pinned subtree still holds its tolerance. (The whole clip did too, by
//! 14 B of 6,567, until session 22: since the default starts unpinned tracks at 4 times
//! their budgets, the unpinned JumpAttack is 6,401 B and the pinned one 6,553 B, its hand
//! carrying the corrections its arm no longer does; docs/COMPRESSION.md, "Session 22".)

mod common;

use skelpack::character::{DEFAULT_CHARACTER_GLB, DEFAULT_CHARACTER_NAME};
use skelpack::import;
use skelpack::settings::{JointSettings, Preset, Settings};

#[test]
fn pinning_the_sword_hand_shrinks_the_arm_and_holds_the_sword() {
    let asset = import::load_bytes(
        std::path::Path::new(DEFAULT_CHARACTER_NAME),
        DEFAULT_CHARACTER_GLB,
    )
    .unwrap();
    let clip = asset.clips.iter().find(|c| c.name == "JumpAttack").unwrap();
    let plain = Settings::from_preset(Preset::Acl);
    let mut pinned = plain.clone();
    pinned.joints.insert(
        "RightHand".into(),
        JointSettings {
            pinned: Some(true),
            ..Default::default()
        },
    );

    let run = |s: &Settings| common::compress_measured(&asset, clip, s);
    let (a, ea, _) = run(&plain);
    let (b, eb, rb) = run(&pinned);
    assert!(rb.pinned[asset.skeleton.find("RightHand").unwrap()]);
    assert!(a.report.contract_met && b.report.contract_met);
    assert!(ea.within_tolerance() && eb.within_tolerance());
    let tip = asset.skeleton.find("SwordTip").unwrap();
    assert!(
        eb.joint_max[tip] <= rb.limits.tolerance[tip],
        "sword tip {}",
        eb.joint_max[tip]
    );
    // The arm above the pinned hand (every ancestor of it) takes fewer bits.
    let sk = &asset.skeleton;
    let hand = sk.find("RightHand").unwrap();
    let arm_bits = |c: &skelpack::codec::CompressedClip| -> u64 {
        std::iter::successors(sk.joints[hand].parent, |&j| sk.joints[j].parent)
            .flat_map(|j| (0..3).map(move |k| (j, k)))
            .map(|(j, k)| c.tracks[j][k].cost(k == 1, c.frame_count).bits)
            .sum()
    };
    assert!(
        arm_bits(&b) < arm_bits(&a),
        "arm pinned {} bits vs plain {} (clip pinned {} B vs plain {} B)",
        arm_bits(&b),
        arm_bits(&a),
        b.report.payload_bytes,
        a.report.payload_bytes
    );
}
