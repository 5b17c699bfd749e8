//! Repeated warnings collapsed into one counted line: a file of 10,000 animations with the
//! same ignored channel gets one line, not 10,000.

use std::collections::HashMap;

/// `warnings` with every group that differs only in the quoted animation name
/// (`animation 'NAME': ...`) collapsed into its first line plus a count, in first-seen order.
pub(super) fn collapse(warnings: Vec<String>) -> Vec<String> {
    if warnings.len() < 2 {
        return warnings;
    }
    let mut first: Vec<(String, usize)> = Vec::new();
    let mut slot: HashMap<String, usize> = HashMap::new();
    for w in warnings {
        let key = without_animation_name(&w);
        match slot.get(&key) {
            Some(&i) => first[i].1 += 1,
            None => {
                slot.insert(key, first.len());
                first.push((w, 1));
            }
        }
    }
    first
        .into_iter()
        .map(|(w, n)| match n {
            1 => w,
            n => format!("{w} (and in {} more animations)", n - 1),
        })
        .collect()
}

/// The warning with the name in `animation '...'` removed.
fn without_animation_name(w: &str) -> String {
    let Some(rest) = w.strip_prefix("animation '") else {
        return w.to_owned();
    };
    match rest.find("': ") {
        Some(end) => format!("animation '*{}", &rest[end..]),
        None => w.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_warning_in_many_animations_is_one_line() {
        let mut w: Vec<String> = (0..10_000)
            .map(|i| format!("animation 'clip{i}': channel on node 3 (scale) is ignored"))
            .collect();
        w.push("mesh 'm' is not drawn".into());
        let c = collapse(w);
        assert_eq!(
            c,
            [
                "animation 'clip0': channel on node 3 (scale) is ignored (and in 9999 more animations)",
                "mesh 'm' is not drawn"
            ]
        );
    }
}
