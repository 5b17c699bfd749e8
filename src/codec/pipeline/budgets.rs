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
}
