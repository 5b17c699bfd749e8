//! The joint hierarchy: the skeleton as a tree (a flat list while filtering) with, per joint,
//! its worst error against tolerance as a bar, its tolerance, marker offset and pinned flag
//! editable inline, and the keys and bytes its tracks cost. Click selects, ctrl-click adds,
//! shift-click selects a range; an edit on a selected joint applies to the whole selection
//! (and to descendants when asked). The toolbar holds the preset, mesh-derived markers and
//! the adaptive fill.

mod row;
mod toolbar;

use std::collections::HashSet;

use egui::RichText;
use egui_extras::TableBuilder;

use super::super::actions::Action;
use super::super::state::Document;
pub use super::super::state::Selection;
use crate::settings::{EditScope, JointEdit, Settings};

/// Accessible names of the inline editors (tests find them by these).
pub fn tolerance_label(joint: &str) -> String {
    format!("Tolerance of {joint}")
}
pub fn marker_label(joint: &str) -> String {
    format!("Marker offset of {joint}")
}
pub fn pin_label(joint: &str) -> String {
    format!("Pin {joint}")
}
pub const DESCENDANTS: &str = "Edits include descendants";
pub const ADAPTIVE: &str = "Adaptive…";
pub const ADAPTIVE_APPLY: &str = "Apply adaptive tolerances";
pub const MESH_MARKERS: &str = "Markers from mesh";
pub const THIS_CLIP: &str = "This clip only";
const ROW_HEIGHT: f32 = 20.0;
/// Up to this many rows every row is built each frame; a longer table builds the rows on
/// screen only.
const EVERY_ROW_UP_TO: usize = 250;

/// What the panel keeps between frames (owned by the app).
#[derive(Clone, Debug)]
pub struct JointsView {
    pub filter: String,
    /// Joints whose children are hidden.
    pub collapsed: HashSet<usize>,
    /// Where a shift-click range starts.
    pub anchor: Option<usize>,
    /// Inline edits also apply to every descendant of the edited joints.
    pub include_descendants: bool,
    /// Edits change the current clip's own overrides, not the file-wide ones.
    pub this_clip_only: bool,
    /// Adaptive fill: the tolerance of leaf joints (mm) and the factor at the root.
    pub adaptive_leaf_mm: Option<f32>,
    pub adaptive_root_factor: f32,
    /// The focused joint the table last scrolled to (a new focus is revealed once).
    pub revealed: Option<usize>,
}

impl Default for JointsView {
    fn default() -> Self {
        Self {
            filter: String::new(),
            collapsed: HashSet::new(),
            anchor: None,
            include_descendants: false,
            this_clip_only: false,
            adaptive_leaf_mm: None,
            adaptive_root_factor: 0.25,
            revealed: None,
        }
    }
}

pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    sel: Selection<'_>,
    view: &mut JointsView,
    attr: Option<&crate::metric::Attribution>,
    out: &mut Vec<Action>,
) {
    toolbar::show(ui, doc, sel, view, out);
    // The bars' legend, unless the table is short (a small window keeps its rows; the
    // "Error" header's hover explains the bars too).
    if ui.available_height() > 300.0 {
        super::attribution::legend(ui, "Error bars (solid own, hatched inherited):");
    }
    ui.separator();
    let skeleton = &doc.asset.skeleton;
    let children = skeleton.children();
    // A joint focused elsewhere (viewport, heatmap, worst joint) is expanded into view.
    let reveal = sel.focus.filter(|&f| view.revealed != Some(f));
    if let Some(f) = reveal {
        let mut p = skeleton.joints[f].parent;
        while let Some(a) = p {
            view.collapsed.remove(&a);
            p = skeleton.joints[a].parent;
        }
    }
    view.revealed = sel.focus;
    let needle = view.filter.trim().to_lowercase();
    let visible: Vec<(usize, usize)> = if needle.is_empty() {
        let mut v = Vec::new();
        for (j, joint) in skeleton.joints.iter().enumerate() {
            if joint.parent.is_none() {
                walk(j, 0, &children, &view.collapsed, &mut v);
            }
        }
        v
    } else {
        skeleton
            .joints
            .iter()
            .enumerate()
            .filter(|(_, joint)| joint.name.to_lowercase().contains(&needle))
            .map(|(j, _)| (j, 0))
            .collect()
    };
    step_with_arrow_keys(ui, &visible, sel, &mut view.anchor, out);
    let ctx = row::RowContext::new(doc, sel, &children, view, attr);
    let mut toggles = Vec::new();
    // The focus a click in the table gives: the row is where the pointer is, so the table
    // does not scroll to it (a scroll would put the next click on another row).
    let mut clicked = None;
    if visible.is_empty() {
        ui.label(RichText::new("No joint matches the filter.").weak());
    }
    let mut table = row::columns(
        TableBuilder::new(ui)
            .id_salt(("joint table", doc.id))
            .striped(true)
            .resizable(true)
            .auto_shrink([false, false])
            .cell_layout(egui::Layout::left_to_right(egui::Align::Center)),
    );
    if let Some(i) = reveal.and_then(|f| visible.iter().position(|&(j, _)| j == f)) {
        table = table.scroll_to_row(i, Some(egui::Align::Center));
    }
    let mut show_row = |mut r: egui_extras::TableRow<'_, '_>, j: usize, depth: usize| {
        r.set_selected(sel.set.contains(&j));
        let indent = needle.is_empty().then_some(depth);
        let collapsed = view.collapsed.contains(&j);
        match row::show(&mut r, &ctx, j, indent, collapsed, out) {
            Some(row::Click::Expand) => toggles.push(j),
            Some(click) => {
                clicked = Some(select(click, j, &visible, sel, &mut view.anchor, out));
            }
            None => {}
        }
    };
    table.header(20.0, row::header).body(|mut body| {
        if visible.len() <= EVERY_ROW_UP_TO {
            // Every row is built (not only the visible ones), so each stays reachable for
            // keyboard and accessibility.
            for &(j, depth) in &visible {
                body.row(ROW_HEIGHT, |r| show_row(r, j, depth));
            }
        } else {
            // A large rig: only the rows on screen are built, or every frame would lay out
            // hundreds of rows of editors (an 840-joint rig's table cost more than the rest
            // of the window).
            body.rows(ROW_HEIGHT, visible.len(), |r| {
                let (j, depth) = visible[r.index()];
                show_row(r, j, depth);
            });
        }
    });
    if let Some(focus) = clicked {
        view.revealed = focus;
    }
    for j in toggles {
        if !view.collapsed.remove(&j) {
            view.collapsed.insert(j);
        }
    }
}

/// Up / Down (when no text field has the keyboard) focus the previous / next joint in the
/// table.
fn step_with_arrow_keys(
    ui: &egui::Ui,
    visible: &[(usize, usize)],
    sel: Selection<'_>,
    anchor: &mut Option<usize>,
    out: &mut Vec<Action>,
) {
    if ui.ctx().egui_wants_keyboard_input() || visible.is_empty() {
        return;
    }
    let (down, up) = ui.input(|i| {
        (
            i.key_pressed(egui::Key::ArrowDown),
            i.key_pressed(egui::Key::ArrowUp),
        )
    });
    if !(down || up) {
        return;
    }
    let at = sel
        .focus
        .and_then(|f| visible.iter().position(|&(j, _)| j == f));
    let next = match (at, down) {
        (Some(i), true) => (i + 1).min(visible.len() - 1),
        (Some(i), false) => i.saturating_sub(1),
        (None, _) => 0,
    };
    let j = visible[next].0;
    *anchor = Some(j);
    out.push(Action::Select(Some(j)));
}

/// Depth-first order of the expanded tree.
fn walk(
    j: usize,
    depth: usize,
    children: &[Vec<usize>],
    collapsed: &HashSet<usize>,
    out: &mut Vec<(usize, usize)>,
) {
    out.push((j, depth));
    if !collapsed.contains(&j) {
        for &c in &children[j] {
            walk(c, depth + 1, children, collapsed, out);
        }
    }
}

/// Turns a click on a joint's name into a selection change; returns the focus it gives.
fn select(
    click: row::Click,
    j: usize,
    visible: &[(usize, usize)],
    sel: Selection<'_>,
    anchor: &mut Option<usize>,
    out: &mut Vec<Action>,
) -> Option<usize> {
    match click {
        row::Click::Single => {
            *anchor = Some(j);
            let only_this = sel.focus == Some(j) && sel.set.len() <= 1;
            let focus = (!only_this).then_some(j);
            out.push(Action::Select(focus));
            focus
        }
        row::Click::Expand => sel.focus,
        row::Click::Add => {
            *anchor = Some(j);
            let mut set = sel.set.clone();
            if !set.remove(&j) {
                set.insert(j);
            }
            let focus = if set.contains(&j) {
                Some(j)
            } else {
                sel.focus.filter(|f| set.contains(f))
            };
            out.push(Action::SelectMany(set.into_iter().collect(), focus));
            // The app falls back to the first selected joint when no focus is given.
            focus.or_else(|| set_first(out))
        }
        row::Click::Range => {
            let from = anchor.unwrap_or(j);
            let pos = |x: usize| visible.iter().position(|&(v, _)| v == x);
            let (Some(a), Some(b)) = (pos(from), pos(j)) else {
                out.push(Action::Select(Some(j)));
                return Some(j);
            };
            let range = visible[a.min(b)..=a.max(b)].iter().map(|&(v, _)| v);
            out.push(Action::SelectMany(range.collect(), Some(j)));
            Some(j)
        }
    }
}

/// The first joint of the selection just pushed (the focus the app gives it).
fn set_first(out: &[Action]) -> Option<usize> {
    match out.last() {
        Some(Action::SelectMany(set, _)) => set.iter().min().copied(),
        _ => None,
    }
}

/// The settings after `edit` on `joints` (and their descendants when asked) of the current
/// clip, with an undo label naming what changed.
pub fn edited(
    doc: &Document,
    scope: EditScope,
    joints: &[usize],
    edit: JointEdit,
    what: &str,
) -> (String, Box<Settings>) {
    let names: Vec<&str> = joints
        .iter()
        .map(|&j| doc.asset.skeleton.joints[j].name.as_str())
        .collect();
    let mut s = doc.settings.clone();
    s.edit_joints(doc.clip_name(), scope, names.iter().copied(), edit);
    let label = match names.as_slice() {
        [one] => format!("{what} of {one}"),
        many => format!("{what} of {} joints", many.len()),
    };
    let label = match scope {
        EditScope::File => label,
        EditScope::Clip => format!("{label} in {}", doc.clip_name()),
    };
    (label, Box::new(s))
}
