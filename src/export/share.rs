//! Identical animation data stored once: sampler inputs and outputs whose accessors hold
//! the same elements (component type, type, normalization, count and bytes) point at one
//! accessor, within an animation and across animations (constant channels holding the same
//! value, clips sharing key times, skeletons repeated in one file). The accessors no
//! longer referenced are then removed by [`super::compact`].

use std::collections::HashMap;

use serde_json::{Value, json};

use super::GltfDoc;

/// Points every animation sampler at the first accessor holding the same data as its own.
/// Returns how many sampler references changed.
pub fn share_accessors(doc: &mut GltfDoc) -> usize {
    let mut first: HashMap<(String, Vec<u8>), usize> = HashMap::new();
    let mut same: HashMap<usize, usize> = HashMap::new();
    for ai in super::meshopt::animation_accessors(doc) {
        let a = &doc.array("accessors")[ai];
        if a.get("sparse").is_some() {
            continue;
        }
        let Some(bytes) = doc.element_bytes(ai) else {
            continue;
        };
        let shape = format!(
            "{}/{}/{}/{}",
            a["componentType"],
            a["type"],
            a.get("normalized")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            a["count"]
        );
        let to = *first.entry((shape, bytes)).or_insert(ai);
        if to != ai {
            same.insert(ai, to);
        }
    }
    let mut changed = 0;
    for anim in doc.array_mut("animations") {
        let samplers = anim.get_mut("samplers").and_then(Value::as_array_mut);
        for s in samplers.into_iter().flatten() {
            for key in ["input", "output"] {
                let Some(ai) = s.get(key).and_then(Value::as_u64) else {
                    continue;
                };
                if let Some(&to) = same.get(&(ai as usize)) {
                    s[key] = json!(to);
                    changed += 1;
                }
            }
        }
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identical_outputs_and_times_share_one_accessor_each() {
        let mut d = GltfDoc::new();
        let t1 = d.push_f32(&[0.0, 1.0], 1, "SCALAR", true, None);
        let t2 = d.push_f32(&[0.0, 1.0], 1, "SCALAR", true, None);
        let v1 = d.push_f32(&[1.0; 6], 3, "VEC3", false, None);
        let v2 = d.push_f32(&[1.0; 6], 3, "VEC3", false, None);
        let v3 = d.push_f32(&[2.0; 6], 3, "VEC3", false, None);
        d.json["animations"] = json!([
            { "channels": [], "samplers": [{ "input": t1, "output": v1 }, { "input": t2, "output": v3 }] },
            { "channels": [], "samplers": [{ "input": t2, "output": v2 }] },
        ]);
        assert_eq!(share_accessors(&mut d), 3);
        let a = d.array("animations");
        assert_eq!(a[0]["samplers"][1]["input"], t1);
        assert_eq!(a[0]["samplers"][1]["output"], v3);
        assert_eq!(a[1]["samplers"][0], json!({ "input": t1, "output": v1 }));
        assert!(super::super::compact::compact(&mut d));
        assert_eq!(d.array("accessors").len(), 3);
    }
}
