//! Error attribution on real compressed clips: on every joint and sample of the first clip of
//! every shared asset, own + inherited bound the total error and each part is within the
//! total plus the other (up to the scale the decoded parents carry); a root inherits
//! nothing; and the worst error has a cause whose tracks alone move the worst joint.

mod common;

use rayon::prelude::*;
use skelpack::metric::{attribute, responsible};
use skelpack::settings::{Preset, Settings};

#[test]
fn own_and_inherited_bound_the_total_on_every_shared_asset() {
    let failures: Vec<String> = common::all_assets()
        .par_iter()
        .filter_map(|path| {
            let asset = skelpack::import::load(path).unwrap();
            let clip = asset.clips.first()?;
            let (c, e, r) =
                common::compress_measured(&asset, clip, &Settings::from_preset(Preset::Acl));
            let sk = &asset.skeleton;
            let a = attribute(sk, clip, &c, clip.frame_count, &r.limits);
            let mut bad = Vec::new();
            for f in 0..clip.frame_count {
                for j in 0..sk.len() {
                    let (o, h, t) = (a.own_at(j, f), a.inherited_at(j, f), e.at(j, f));
                    // Slack: f32 storage and parents whose decoded scale differs slightly.
                    let slack = 1e-3 * o.max(h).max(t) + 1e-6 * r.limits.tolerance[j];
                    if t > o + h + slack || o > t + h + slack || h > t + o + slack {
                        bad.push(format!(
                            "{} f{f}: total {t} own {o} inherited {h}",
                            sk.joints[j].name
                        ));
                    }
                    if sk.joints[j].parent.is_none() && h != 0.0 {
                        bad.push(format!("root {} inherits {h}", sk.joints[j].name));
                    }
                }
            }
            let (w, wf) = (e.samples.worst_joint, e.samples.worst_frame);
            if e.samples.max > 0.0 && r.limits.evaluated[w] {
                let cause = responsible(sk, clip, &c, &r.limits, w, wf);
                // Decoded alone, the cause moves the worst joint's markers (the worst error
                // has a cause among the joint and its ancestors).
                if cause.error <= 0.0 {
                    bad.push(format!(
                        "cause {} of worst {}: {} vs {}",
                        sk.joints[cause.source].name, sk.joints[w].name, cause.error, e.samples.max
                    ));
                }
            }
            (!bad.is_empty()).then(|| {
                format!(
                    "{} ({} cells): {:?}",
                    path.display(),
                    bad.len(),
                    &bad[..bad.len().min(5)]
                )
            })
        })
        .collect();
    assert!(failures.is_empty(), "{failures:#?}");
}
