//! The curves panel: for the selected joint, one plot per track (translation, rotation,
//! scale) with the raw samples, the decoded curve drawn densely (between keys too), the kept
//! keys (those the fitter inserted numbered in insertion order) and the playhead. Clicking or
//! dragging in a plot scrubs; the x axes are linked (also with the error plot).

use egui::{Align2, Color32, Id, PointerButton, Rect, RichText};
use egui_plot::{Corner, Legend, Line, MarkerShape, Plot, PlotPoint, Points, Text, VLine};
use glam::{EulerRot, Quat, Vec4};

use super::super::actions::Action;
use super::super::state::Document;
use super::component_scale::ComponentScale;
use super::{decimate, residual};
use crate::codec::TrackData;

/// Heading of the panel (found by label in tests).
pub const HEADING: &str = "Curves";
/// The rotation display toggle.
pub const EULER: &str = "Rotation as Euler XYZ (degrees)";
/// The per-component normalization toggle.
pub const NORMALIZE: &str = "Normalize components";
/// The residual view toggle.
pub const RESIDUAL: &str = "Residual (raw − decoded)";
/// The id of the x-axis group shared by the curve plots and the error plot.
pub const X_LINK: &str = "skelpack.time_axis";

const TRACK_NAMES: [&str; 3] = ["Translation", "Rotation", "Scale"];
const AXES: [&str; 4] = ["x", "y", "z", "w"];
const COLORS: [Color32; 4] = [
    Color32::from_rgb(235, 85, 80),
    Color32::from_rgb(95, 200, 95),
    Color32::from_rgb(90, 150, 245),
    Color32::from_rgb(200, 200, 200),
];
/// Most decoded points drawn per component (the density drops on long clips).
const MAX_DENSE: usize = 6000;

/// Options of the panel (kept by the app between frames).
#[derive(Clone, Debug)]
pub struct CurvesView {
    /// Show rotations as Euler angles in degrees instead of quaternion components.
    pub euler: bool,
    /// Scale each component to its own raw range (shapes of small channels beside large ones).
    pub normalize: bool,
    /// Plot raw − decoded per channel (degrees, mm) instead of the curves.
    pub residual: bool,
}

impl Default for CurvesView {
    fn default() -> Self {
        Self {
            euler: false,
            normalize: true,
            residual: false,
        }
    }
}

/// Where a time plot was drawn: maps frames to screen x (scrubbing, tests).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PlotGeom {
    /// The plotting area on screen.
    pub rect: Rect,
    /// The frames shown at the left and right edges.
    pub x_range: [f64; 2],
}

impl PlotGeom {
    /// Screen x of a (fractional) frame.
    pub fn x_of(&self, frame: f64) -> f32 {
        let [a, b] = self.x_range;
        let t = ((frame - a) / (b - a).max(1e-9)) as f32;
        self.rect.left() + t * self.rect.width()
    }

    /// The screen point at `frame`, halfway down the plot.
    pub fn point_at(&self, frame: f64) -> egui::Pos2 {
        egui::pos2(self.x_of(frame), self.rect.center().y)
    }
}

/// Shows the curves of `joint`; returns where the first plot was drawn.
pub fn show(
    ui: &mut egui::Ui,
    doc: &Document,
    joint: Option<usize>,
    frame: f32,
    view: &mut CurvesView,
    out: &mut Vec<Action>,
) -> Option<PlotGeom> {
    let Some(j) = joint else {
        ui.label(RichText::new(HEADING).strong());
        ui.label(
            RichText::new("Select a joint (tree, viewport or error heatmap) to see its curves.")
                .weak(),
        );
        return None;
    };
    let name = &doc.asset.skeleton.joints[j].name;
    ui.horizontal(|ui| {
        ui.label(RichText::new(format!("{HEADING}: {name}")).strong());
        ui.checkbox(&mut view.euler, EULER);
        ui.add_enabled(
            !view.residual,
            egui::Checkbox::new(&mut view.normalize, NORMALIZE),
        )
        .on_hover_text(
            "Each component scaled to the range of its raw and decoded values together: \
                 0 = min, 1 = max; a component varying by less than the track's tolerance is \
                 drawn flat and labelled constant",
        );
        ui.checkbox(&mut view.residual, RESIDUAL).on_hover_text(
            "Per channel, raw minus decoded at every sample: rotations in degrees about the \
             joint's x, y, z, translations in mm; dashed: the track's own tolerance",
        );
        ui.add(
            egui::Label::new(
                RichText::new(
                    "x red · y green · z blue · w grey · click / drag: scrub · scroll: pan · \
                     ctrl+scroll: zoom · right-drag: zoom box · double-click: reset",
                )
                .weak()
                .small(),
            )
            .truncate(),
        );
    });
    let (Some(r), Some(clip)) = (doc.shown(), doc.asset.clips.get(doc.clip)) else {
        let waiting = if doc.has_clip() {
            "Waiting for the compressed result…"
        } else {
            super::NO_CLIP
        };
        ui.label(RichText::new(waiting).weak());
        return None;
    };
    let cc = &r.clip;
    let tracks = &cc.tracks[j];
    let animated = tracks
        .iter()
        .filter(|t| matches!(t, TrackData::Animated(_)))
        .count();
    let text_rows = 3 - animated;
    let per_plot = ((ui.available_height() - text_rows as f32 * 20.0) / animated.max(1) as f32
        - 22.0)
        .max(50.0);
    let unit = doc.resolved.unit.symbol();
    let mut geom = None;
    for (k, track) in tracks.iter().enumerate() {
        let rotation = k == 1;
        let euler = rotation && view.euler;
        let what = TRACK_NAMES[k];
        match track {
            TrackData::Rest => {
                ui.label(format!("{what}: rest pose — not stored"));
            }
            TrackData::Constant { value, .. } => {
                let c = components(k, *value, euler);
                let shown = if k == 1 && !euler { 4 } else { 3 };
                let v = c[..shown]
                    .iter()
                    .map(|x| format!("{x:.4}"))
                    .collect::<Vec<_>>()
                    .join(", ");
                let suffix = if euler { "°" } else { "" };
                ui.label(format!("{what}: constant: {v}{suffix} (1 key)"));
            }
            TrackData::Animated(a) if view.residual => {
                let unit = doc.resolved.unit;
                let series = residual::residuals(clip, j, k, &a.curve, unit);
                let tol = cc.local_tolerance[j][k] as f64;
                let band = match k {
                    0 => tol * 1000.0 / unit.per_metre() as f64,
                    1 => tol.to_degrees(),
                    _ => tol,
                };
                let worst = series
                    .iter()
                    .flat_map(|v| v.iter().map(|x| x.abs()))
                    .fold(0.0f64, f64::max);
                let units = ["mm", "degrees", "ratio"][k];
                ui.label(
                    RichText::new(format!(
                        "{what} residual, raw − decoded ({units}): worst {worst:.4}, track \
                         tolerance ±{band:.4}; {} keys",
                        a.curve.len()
                    ))
                    .small(),
                );
                let g = residual::plot(ui, k, &series, band, per_plot, frame, out);
                geom.get_or_insert(g);
            }
            TrackData::Animated(a) => {
                let curve = &a.curve;
                let inserted = a.insert_order.len().saturating_sub(2);
                let label = match k {
                    0 => format!("{what} ({unit})"),
                    1 if euler => format!("{what} (degrees, XYZ)"),
                    1 => format!("{what} (quaternion)"),
                    _ => what.to_string(),
                };
                let label = if view.normalize {
                    format!("{label}, normalized per component")
                } else {
                    label
                };
                ui.label(
                    RichText::new(format!(
                        "{label}: {} keys of {} frames ({inserted} inserted, numbered in \
                         insertion order), {:?}",
                        curve.len(),
                        clip.frame_count,
                        a.format
                    ))
                    .small(),
                );
                let raw: Vec<Vec4> = (0..clip.frame_count)
                    .map(|f| {
                        let t = &clip.tracks[j];
                        match k {
                            0 => t.translations[f].extend(0.0),
                            1 => {
                                // The raw quaternion on the decoded curve's hemisphere.
                                let q = Vec4::from(t.rotations[f]);
                                if q.dot(curve.sample(f as f32)) < 0.0 {
                                    -q
                                } else {
                                    q
                                }
                            }
                            _ => t.scales[f].extend(0.0),
                        }
                    })
                    .collect();
                let n = clip.frame_count.max(2);
                let per_frame = (MAX_DENSE / n).clamp(1, 8);
                let dense: Vec<(f64, Vec4)> = (0..=(n - 1) * per_frame)
                    .map(|i| {
                        let f = i as f32 / per_frame as f32;
                        (f as f64, curve.sample(f))
                    })
                    .collect();
                let keys: Vec<(u32, Vec4)> = curve
                    .frames
                    .iter()
                    .copied()
                    .zip(curve.values.iter().copied())
                    .collect();
                let ranks: Vec<Option<usize>> = keys
                    .iter()
                    .map(|(f, _)| a.insert_order.iter().position(|o| o == f).map(|p| p + 1))
                    .collect();
                // Displayed values: components, optionally scaled to each one's raw range.
                // Euler angles are unwrapped along the raw samples (no ±180° jumps), and
                // every other value is unwrapped to the raw sample at its frame.
                let mut raw_disp: Vec<[f64; 4]> =
                    raw.iter().map(|v| components(k, *v, euler)).collect();
                if euler {
                    unwrap_series(&mut raw_disp);
                }
                let last = raw_disp.len().saturating_sub(1);
                let raw_disp = &raw_disp;
                let unwrapped = move |f: f64, v: Vec4| -> [f64; 4] {
                    let mut c = components(k, v, euler);
                    if euler {
                        let near = &raw_disp[(f.round().max(0.0) as usize).min(last)];
                        for i in 0..3 {
                            c[i] = unwrap_degrees(c[i], near[i]);
                        }
                    }
                    c
                };
                // Normalized over raw and decoded together, with a floor on each span: what
                // the track's tolerance allows (a quaternion component moves by half the
                // angle), so noise within it is drawn flat and labelled constant.
                let tol = cc.local_tolerance[j][k] as f64;
                let floor = 2.0
                    * match k {
                        1 if euler => tol.to_degrees(),
                        1 => tol / 2.0,
                        _ => tol,
                    };
                let scale = ComponentScale::new(
                    raw_disp
                        .iter()
                        .copied()
                        .chain(dense.iter().map(|(f, v)| unwrapped(*f, *v)))
                        .chain(keys.iter().map(|(f, v)| unwrapped(*f as f64, *v))),
                    floor,
                );
                let normalize = view.normalize;
                let disp = move |f: f64, v: Vec4| -> [f64; 4] {
                    let c = unwrapped(f, v);
                    if normalize { scale.apply(c) } else { c }
                };
                let key_radius = if keys.len() > 80 { 2.5 } else { 4.0 };
                let ncomp = if k == 1 && !euler { 4 } else { 3 };
                let resp = Plot::new(("curve", k))
                    .height(per_plot)
                    .link_axis(Id::unique(X_LINK), [true, false])
                    .link_cursor(Id::unique(X_LINK), [true, false])
                    .pan_pointer_button(PointerButton::Middle)
                    .allow_zoom([true, false])
                    .legend(Legend::default().position(Corner::RightTop))
                    .y_axis_min_width(44.0)
                    .show(ui, |p| {
                        for c in 0..ncomp {
                            let col = COLORS[c];
                            let axis = if normalize && scale.constant[c] {
                                format!("{} (constant)", AXES[c])
                            } else {
                                AXES[c].to_string()
                            };
                            let axis = axis.as_str();
                            p.points(
                                Points::new(
                                    axis,
                                    decimate::min_max(
                                        &raw.iter()
                                            .enumerate()
                                            .map(|(f, v)| [f as f64, disp(f as f64, *v)[c]])
                                            .collect::<Vec<_>>(),
                                        p.transform(),
                                    ),
                                )
                                .radius(1.6)
                                .color(col.gamma_multiply(0.55)),
                            );
                            p.line(
                                Line::new(
                                    axis,
                                    decimate::min_max(
                                        &dense
                                            .iter()
                                            .map(|(f, v)| [*f, disp(*f, *v)[c]])
                                            .collect::<Vec<_>>(),
                                        p.transform(),
                                    ),
                                )
                                .color(col)
                                .width(1.5),
                            );
                            p.points(
                                Points::new(
                                    axis,
                                    keys.iter()
                                        .map(|(f, v)| [*f as f64, disp(*f as f64, *v)[c]])
                                        .collect::<Vec<_>>(),
                                )
                                .radius(key_radius)
                                .shape(MarkerShape::Circle)
                                .filled(true)
                                .color(col),
                            );
                        }
                        // Number the inserted keys when there is room for the labels.
                        let b = p.plot_bounds();
                        let visible = keys
                            .iter()
                            .filter(|(f, _)| (b.min()[0]..=b.max()[0]).contains(&(*f as f64)))
                            .count()
                            .max(1);
                        let room = p.transform().frame().width() / visible as f32;
                        // Crowded: number only the earliest insertions (the most important keys).
                        let width = p.transform().frame().width();
                        let budget = if room >= 14.0 {
                            usize::MAX
                        } else {
                            (width / 26.0) as usize + 2
                        };
                        for ((f, v), rank) in keys.iter().zip(&ranks) {
                            let Some(rank) = rank.filter(|&r| r > 2 && r <= budget) else {
                                continue;
                            };
                            let top = disp(*f as f64, *v)[..ncomp]
                                .iter()
                                .copied()
                                .fold(f64::MIN, f64::max);
                            p.text(
                                Text::new(
                                    "",
                                    PlotPoint::new(*f as f64, top),
                                    RichText::new(format!("{rank}"))
                                        .small()
                                        .strong()
                                        .color(Color32::from_rgb(255, 230, 120)),
                                )
                                .anchor(Align2::CENTER_BOTTOM),
                            );
                        }
                        p.vline(playhead(frame));
                    });
                if let Some(f) = scrub(&resp) {
                    out.push(Action::Seek(f));
                }
                geom.get_or_insert(geom_of(&resp.transform));
            }
        }
    }
    geom
}

/// The playhead: an orange vertical line at `frame`.
pub fn playhead(frame: f32) -> VLine {
    VLine::new("", frame as f64)
        .color(Color32::from_rgb(255, 170, 40))
        .width(1.5)
}

/// The frame under the pointer when the plot is clicked or dragged with the primary button.
pub fn scrub<R>(resp: &egui_plot::PlotResponse<R>) -> Option<f32> {
    let r = &resp.response;
    if !(r.clicked() || r.dragged_by(PointerButton::Primary) || r.drag_started()) {
        return None;
    }
    let p = r.interact_pointer_pos()?;
    Some(resp.transform.value_from_position(p).x.max(0.0) as f32)
}

/// The frame-to-screen mapping of a drawn plot.
pub fn geom_of(t: &egui_plot::PlotTransform) -> PlotGeom {
    let b = t.bounds();
    PlotGeom {
        rect: *t.frame(),
        x_range: [b.min()[0], b.max()[0]],
    }
}

/// `angle` (degrees) moved by whole turns to lie within 180° of `reference`.
fn unwrap_degrees(angle: f64, reference: f64) -> f64 {
    angle + 360.0 * ((reference - angle) / 360.0).round()
}

/// Unwraps Euler angle samples in place so consecutive samples never jump by a turn.
fn unwrap_series(samples: &mut [[f64; 4]]) {
    for f in 1..samples.len() {
        let previous = samples[f - 1];
        for (angle, reference) in samples[f].iter_mut().zip(previous).take(3) {
            *angle = unwrap_degrees(*angle, reference);
        }
    }
}

/// The displayed components of a track value: xyz for vectors, xyzw or Euler XYZ degrees
/// for rotations (normalized, as the decoder uses them).
fn components(track: usize, v: Vec4, euler: bool) -> [f64; 4] {
    if track != 1 {
        return [v.x as f64, v.y as f64, v.z as f64, 0.0];
    }
    let q = Quat::from_vec4(v).normalize();
    if euler {
        let (x, y, z) = q.to_euler(EulerRot::XYZ);
        [
            x.to_degrees() as f64,
            y.to_degrees() as f64,
            z.to_degrees() as f64,
            0.0,
        ]
    } else {
        [q.x as f64, q.y as f64, q.z as f64, q.w as f64]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn euler_angles_unwrap_across_the_seam() {
        assert_eq!(unwrap_degrees(-179.0, 179.0), 181.0);
        assert_eq!(unwrap_degrees(179.0, -179.0), -181.0);
        assert_eq!(unwrap_degrees(10.0, 725.0), 730.0);
        // A rotation turning steadily about X crosses ±180° without a jump.
        let mut s: Vec<[f64; 4]> = (0..40)
            .map(|f| {
                let q = Quat::from_rotation_x((f as f32 * 12.0).to_radians());
                components(1, Vec4::from(q), true)
            })
            .collect();
        unwrap_series(&mut s);
        for w in s.windows(2) {
            assert!((w[1][0] - w[0][0] - 12.0).abs() < 1e-3, "{:?}", w);
        }
        assert!((s[39][0] - 468.0).abs() < 1e-3);
    }
}
