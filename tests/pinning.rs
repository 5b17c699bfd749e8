//! Joint pinning: a pinned joint re-derives its local track against the decoded parent chain,
//! so its ancestors no longer budget for its subtree (a hand holding a sword): the clip gets
//! smaller while the pinned subtree still holds its tolerance.

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
    assert!(
        b.report.payload_bytes < a.report.payload_bytes,
        "pinned {} B vs plain {} B",
        b.report.payload_bytes,
        a.report.payload_bytes
    );
}
