//! The open clip's playback flags on the timeline (issue 26): whether it loops (a setting,
//! `[clips.NAME] looping`, undoable; suggested — never set — when its last frame returns to
//! its first within every joint's tolerance, as cycles exported with the first frame
//! repeated at the end do), and for a root-motion clip whether the viewport plays it in
//! place (the root's horizontal motion removed for display) or travelling.

use egui::Color32;

use super::super::actions::Action;
use super::super::state::Document;

/// The loop flag's label.
pub const LOOPS: &str = "Clip loops";
/// The suggestion's text (tests look for it).
pub const SUGGESTED: &str = "suggested: its last frame returns to its first";
/// The root-motion playback choices' accessible names (shown as "In place" / "Travelling").
pub const IN_PLACE: &str = "Root motion in place";
pub const TRAVELLING: &str = "Root motion travelling";

/// What the flags keep between frames: whether the open clip closes, for the settings it
/// was measured with (document, clip, settings revision).
#[derive(Clone, Debug, Default)]
pub struct ClipFlagsState {
    closes: Option<((u64, usize, u64), bool)>,
}

/// Whether the open clip's last frame returns to its first within tolerance (the root
/// motion joint's own travel aside).
pub fn closes(doc: &Document) -> bool {
    doc.asset.clips.get(doc.clip).is_some_and(|c| {
        crate::codec::playback::closes(
            &doc.asset.skeleton,
            c,
            &doc.resolved.limits,
            doc.resolved.root_motion,
        )
    })
}

/// Shows the flags on the current line; pushes the loop edit, flips `in_place`.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    state: &mut ClipFlagsState,
    in_place: &mut bool,
    out: &mut Vec<Action>,
) {
    if !doc.has_clip() {
        return;
    }
    let key = (doc.id, doc.clip, doc.settings_rev);
    let suggest = match state.closes {
        Some((k, c)) if k == key => c,
        _ => {
            let c = closes(doc);
            state.closes = Some((key, c));
            c
        }
    };
    let name = doc.clip_name().to_owned();
    let mut looping = doc.resolved.looping;
    let tip = "The clip is a cycle: compressed so that playback across the wrap (last frame \
               to first) stays within tolerance, and exported as looping";
    if ui
        .checkbox(&mut looping, LOOPS)
        .on_hover_text(tip)
        .changed()
    {
        let mut s = doc.settings.clone();
        s.clips.entry(name.clone()).or_default().looping = Some(looping);
        let label = if looping {
            format!("mark '{name}' looping")
        } else {
            format!("mark '{name}' not looping")
        };
        out.push(Action::EditSettings(label, Box::new(s)));
    }
    if suggest && !doc.resolved.looping {
        ui.colored_label(Color32::from_rgb(230, 200, 90), SUGGESTED)
            .on_hover_text("within every joint's tolerance: tick it if the clip is a cycle");
    }
    if doc.resolved.root_motion.is_some() {
        ui.separator();
        ui.label("Root motion");
        ui.selectable_value(in_place, true, "In place")
            .on_hover_text("The root's horizontal motion removed for display (I)")
            .accessible_name(IN_PLACE);
        ui.selectable_value(in_place, false, "Travelling")
            .on_hover_text("The character travels along the root's path (I)")
            .accessible_name(TRAVELLING);
    }
    if let Some(a) = &doc.resolved.additive {
        ui.separator();
        let shown = doc.resolved.additive_base.is_some();
        ui.label(additive_label(&a.base, shown)).on_hover_text(
            "An additive clip: its own keys are stored, and its error is measured (and the \
             viewport draws it) on its base with the additive applied, as players show it",
        );
    }
}

/// What the flags line says of an additive clip's base (`shown`: drawn on it).
pub fn additive_label(base: &crate::model::playback::AdditiveBase, shown: bool) -> String {
    use crate::model::playback::AdditiveBase;
    let on = match base {
        AdditiveBase::Rest => "the rest pose".to_owned(),
        AdditiveBase::Frame { clip, frame } => format!("'{clip}' frame {frame}"),
        AdditiveBase::Clip { clip } => format!("'{clip}' in sync"),
    };
    if shown {
        format!("Additive on {on} (drawn on it)")
    } else {
        format!("Additive on {on}: the base is not in the file")
    }
}
