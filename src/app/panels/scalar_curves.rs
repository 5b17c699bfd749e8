//! The clip's scalar tracks (morph-target weights) beside the joints: a "Curves" section
//! under the joint table lists each track (its mesh node, targets, keys kept of the
//! source's, storage, error against the tolerance); a click shows the track in the curves
//! panel instead of the joint's tracks: each target's source keys, the decoded curve and
//! the kept keys on the clip's frame scale. Selecting a joint again shows the joint's
//! curves.

use egui::{Color32, RichText};
use egui_plot::{Corner, Legend, Line, MarkerShape, Plot, Points};

use super::super::actions::Action;
use super::super::state::Document;
use super::curves::{self, PlotGeom, X_LINK};
use crate::model::scalar::{ScalarStorage, ScalarTrack, StoredScalarTrack};

/// The section's heading (tests find it by this).
pub const HEADING: &str = "Curves";
/// The button that goes back from a scalar track to the selected joint's curves.
pub const BACK: &str = "Back to the joint";

/// The accessible name of a track's row in the section.
pub fn row_label(track: &str) -> String {
    format!("Weights of {track}")
}

/// Which scalar track the curves panel shows (kept by the app between frames).
#[derive(Clone, Debug, Default)]
pub struct ScalarCurvesView {
    /// The track shown (an index into the clip's scalar tracks) and the joint selected when
    /// it was picked: selecting another joint goes back to the joint's curves.
    shown: Option<(usize, Option<usize>)>,
    clip: Option<(u64, usize)>,
}

impl ScalarCurvesView {
    /// The scalar track the curves panel shows instead of the joint's, if any.
    pub fn shown(&mut self, doc: &Document, joint: Option<usize>) -> Option<usize> {
        if self.clip != Some((doc.id, doc.clip)) {
            *self = Self {
                clip: Some((doc.id, doc.clip)),
                ..Default::default()
            };
        }
        match self.shown {
            Some((t, at)) if at == joint && t < tracks(doc).len() => Some(t),
            _ => {
                self.shown = None;
                None
            }
        }
    }
}

/// The open clip's source scalar tracks.
pub fn tracks(doc: &Document) -> &[ScalarTrack] {
    doc.asset
        .clips
        .get(doc.clip)
        .map_or(&[][..], |c| &c.scalar_tracks[..])
}

/// The open clip's scalar tracks as compressed for the result on screen (none until a
/// result is shown).
fn stored(doc: &Document) -> &[StoredScalarTrack] {
    doc.result
        .as_ref()
        .map_or(&[][..], |r| &r.clip.playback.scalar_tracks[..])
}

/// The scalar tracks' distance tolerance, as the codec holds them.
fn tolerance(doc: &Document) -> f32 {
    crate::codec::playback::scalar_limits(&doc.asset.skeleton, &doc.resolved, "").tolerance
}

/// The "Curves" section: one row per scalar track of the open clip (nothing when it has
/// none). A click on a row shows that track in the curves panel.
pub fn list(ui: &mut egui::Ui, doc: &Document, joint: Option<usize>, view: &mut ScalarCurvesView) {
    let src = tracks(doc);
    if src.is_empty() {
        return;
    }
    let shown = view.shown(doc, joint);
    let stored = stored(doc);
    let tol = tolerance(doc);
    let unit = doc.resolved.unit;
    let count = match src.len() {
        1 => "1 morph-weight track".to_owned(),
        n => format!("{n} morph-weight tracks"),
    };
    ui.label(RichText::new(format!("{HEADING} ({count})")).strong())
        .on_hover_text(
            "Morph-target weights: a weight's error is the largest vertex displacement it \
             causes, held to the same distance tolerance as the joints (targets without \
             geometry: the settings' weight_tolerance)",
        );
    egui::ScrollArea::vertical()
        .id_salt("scalar_curves_list")
        .max_height(110.0)
        .show(ui, |ui| {
            for (i, t) in src.iter().enumerate() {
                let s = stored.iter().find(|s| s.name == t.name);
                let text = match s {
                    Some(s) => format!(
                        "{}  ·  {} targets  ·  {} of {} keys  ·  {}  ·  {} / {}",
                        t.name,
                        t.targets,
                        s.times.len(),
                        t.times.len(),
                        match s.storage {
                            ScalarStorage::Float => "float",
                            ScalarStorage::Unorm16 => "16-bit",
                        },
                        super::fmt_len(s.max_error, unit),
                        super::fmt_len(tol, unit),
                    ),
                    None => format!(
                        "{}  ·  {} targets  ·  {} keys",
                        t.name,
                        t.targets,
                        t.times.len()
                    ),
                };
                let over = s.is_some_and(|s| s.max_error > tol * 1.0001 && tol > 0.0);
                let text = RichText::new(text).small();
                let text = if over {
                    text.color(Color32::from_rgb(230, 90, 80))
                } else {
                    text
                };
                let r = ui.selectable_label(shown == Some(i), text);
                let label = row_label(&t.name);
                r.widget_info(|| egui::WidgetInfo::labeled(egui::Role::Button, true, &label));
                if r.clicked() {
                    view.shown = Some((i, joint));
                }
            }
        });
}

/// The curves panel for scalar track `index`: per target, the source keys (faint dots),
/// the decoded curve (line) and the kept keys (filled dots), on the clip's frames, with the
/// playhead; clicking or dragging scrubs. Returns where the plot was drawn.
pub fn plot(
    ui: &mut egui::Ui,
    doc: &Document,
    index: usize,
    frame: f32,
    view: &mut ScalarCurvesView,
    out: &mut Vec<Action>,
) -> Option<PlotGeom> {
    let src = &tracks(doc)[index];
    let stored = stored(doc).iter().find(|s| s.name == src.name);
    let rate = doc.sample_rate() as f64;
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("{HEADING}: weights of {}", src.name)).strong());
        if ui.button(BACK).clicked() {
            view.shown = None;
        }
        let kept = stored.map_or("not yet compressed".to_owned(), |s| {
            format!(
                "{} of {} keys kept, worst vertex displacement {} (tolerance {})",
                s.times.len(),
                src.times.len(),
                super::fmt_len(s.max_error, doc.resolved.unit),
                super::fmt_len(tolerance(doc), doc.resolved.unit),
            )
        });
        ui.label(RichText::new(kept).weak().small());
    });
    let n = src.targets.max(1);
    let decoded = stored.map(|s| (s, s.decoded()));
    let colors = [
        Color32::from_rgb(235, 85, 80),
        Color32::from_rgb(95, 200, 95),
        Color32::from_rgb(90, 150, 245),
        Color32::from_rgb(220, 180, 80),
        Color32::from_rgb(200, 120, 220),
        Color32::from_rgb(90, 200, 200),
    ];
    let resp = Plot::new(("scalar_curve", index))
        .link_axis(egui::Id::unique(X_LINK), [true, false])
        .link_cursor(egui::Id::unique(X_LINK), [true, false])
        .allow_zoom([true, false])
        .legend(Legend::default().position(Corner::RightTop))
        .y_axis_min_width(44.0)
        .show(ui, |p| {
            for k in 0..src.targets {
                let col = colors[k % colors.len()];
                let name = format!("target {k}");
                p.points(
                    Points::new(
                        name.as_str(),
                        src.times
                            .iter()
                            .enumerate()
                            .map(|(i, t)| [*t as f64 * rate, src.values[i * n + k] as f64])
                            .collect::<Vec<_>>(),
                    )
                    .radius(1.6)
                    .color(col.gamma_multiply(0.55)),
                );
                if let Some((s, values)) = &decoded {
                    let pts: Vec<[f64; 2]> = s
                        .times
                        .iter()
                        .enumerate()
                        .map(|(i, t)| [*t as f64 * rate, values[i * n + k] as f64])
                        .collect();
                    p.line(Line::new(name.as_str(), pts.clone()).color(col).width(1.5));
                    p.points(
                        Points::new(name.as_str(), pts)
                            .radius(3.0)
                            .shape(MarkerShape::Circle)
                            .filled(true)
                            .color(col),
                    );
                }
            }
            p.vline(curves::playhead(frame));
        });
    if let Some(f) = curves::scrub(&resp) {
        out.push(Action::Seek(f));
    }
    Some(curves::geom_of(&resp.transform))
}
