//! The budgets pass: each moving track's local tolerance at scale 1, from the hierarchical
//! budgets of the held tolerances (lever arms, an adaptive split among a joint's moving
//! tracks; `codec::budget`).

use super::state::State;
use crate::codec::budget::Budgets;

/// Sets `st.base`.
pub(crate) fn budgets(st: &mut State) {
    let budgets = Budgets::new(st.skeleton, st.shown, &st.held, &st.moving, &st.pinned);
    st.base = (0..st.len())
        .map(|j| {
            let t = budgets.local_tolerances(j, st.moving_tracks[j], 1.0);
            [t.translation, t.rotation, t.scale]
        })
        .collect();
    // An additive layer's end sites (leaves no marker measures) would decode to the additive
    // identity, which on the base is not where the raw layer puts them: their translation is
    // held to the joint's tolerance, so the compressed copy draws them where the raw
    // composed pose does (a constant offset costs one constant track).
    if st.layer.is_some() {
        let s = st.skeleton;
        let mut leaf = vec![true; s.len()];
        for j in &s.joints {
            if let Some(p) = j.parent {
                leaf[p] = false;
            }
        }
        for (j, &leaf) in leaf.iter().enumerate() {
            if leaf && !st.held.evaluated[j] && !st.base[j][0].is_finite() {
                st.base[j][0] = budgets.translation_tolerance(j, st.held.tolerance[j]);
            }
        }
    }
}
