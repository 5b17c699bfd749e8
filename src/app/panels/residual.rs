//! The residual view of the curves panel: raw − decoded per channel at every sample, in
//! degrees for rotations (the rotation taking the decoded value to the raw one, about the
//! joint's local x, y, z), millimetres for translations and plain ratios for scales, against
//! the track's own tolerance band.

use egui::{Color32, Id, PointerButton};
use egui_plot::{Corner, HLine, Legend, Line, LineStyle, Plot};
use glam::{Quat, Vec3, Vec4};

use super::super::actions::Action;
use super::curves::{PlotGeom, X_LINK, geom_of, playhead, scrub};
use super::decimate;
use crate::codec::Curve;
use crate::model::{Clip, LengthUnit};

/// Axis colours (x red, y green, z blue), as in the curve plots.
const COLORS: [Color32; 3] = [
    Color32::from_rgb(235, 85, 80),
    Color32::from_rgb(95, 200, 95),
    Color32::from_rgb(90, 150, 245),
];

/// The residual of track `k` (0 translation, 1 rotation, 2 scale) of joint `j` at every
/// sample, per axis, in display units (mm, degrees, ratio).
pub fn residuals(
    clip: &Clip,
    j: usize,
    k: usize,
    curve: &Curve,
    unit: LengthUnit,
) -> Vec<[f64; 3]> {
    let to_mm = 1000.0 / unit.per_metre() as f64;
    let t = &clip.tracks[j];
    (0..clip.frame_count)
        .map(|f| {
            let d = curve.sample(f as f32);
            let v: Vec3 = match k {
                0 => (t.translations[f] - d.truncate()) * to_mm as f32,
                1 => rotation_residual(t.rotations[f], d)
                    .map(f32::to_degrees)
                    .into(),
                _ => t.scales[f] - d.truncate(),
            };
            [v.x as f64, v.y as f64, v.z as f64]
        })
        .collect()
}

/// The rotation from `decoded` to `raw` in the decoded frame, as a rotation vector (radians
/// about x, y, z; the short way round).
fn rotation_residual(raw: Quat, decoded: Vec4) -> [f32; 3] {
    let d = Quat::from_vec4(decoded).normalize();
    let mut e = d.inverse() * raw.normalize();
    if e.w < 0.0 {
        e = -e;
    }
    e.to_scaled_axis().into()
}

/// The residual plot of one track, with the track's tolerance (`band`, display units) as
/// dashed lines; returns where it was drawn.
#[allow(clippy::too_many_arguments)]
pub fn plot(
    ui: &mut egui::Ui,
    k: usize,
    series: &[[f64; 3]],
    band: f64,
    height: f32,
    frame: f32,
    out: &mut Vec<Action>,
) -> PlotGeom {
    let resp = Plot::new(("residual", k))
        .height(height)
        .link_axis(Id::unique(X_LINK), [true, false])
        .link_cursor(Id::unique(X_LINK), [true, false])
        .pan_pointer_button(PointerButton::Middle)
        .allow_zoom([true, false])
        .include_y(band * 1.1)
        .include_y(-band * 1.1)
        .legend(Legend::default().position(Corner::RightTop))
        .y_axis_label(["mm", "°", "ratio"][k])
        .y_axis_min_width(44.0)
        .show(ui, |p| {
            for (c, color) in COLORS.iter().enumerate() {
                let pts: Vec<[f64; 2]> = series
                    .iter()
                    .enumerate()
                    .map(|(f, v)| [f as f64, v[c]])
                    .collect();
                p.line(
                    Line::new(["x", "y", "z"][c], decimate::min_max(&pts, p.transform()))
                        .color(*color)
                        .width(1.2),
                );
            }
            for y in [band, -band] {
                p.hline(
                    HLine::new("track tolerance", y)
                        .color(Color32::from_rgb(220, 40, 40))
                        .style(LineStyle::dashed_dense()),
                );
            }
            p.vline(playhead(frame));
        });
    if let Some(f) = scrub(&resp) {
        out.push(Action::Seek(f));
    }
    geom_of(&resp.transform)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::Interpolation;
    use crate::model::{Joint, Skeleton, Transform};

    #[test]
    fn residuals_are_raw_minus_decoded_in_display_units() {
        let s = Skeleton::new(vec![Joint::new("a", None, Transform::IDENTITY)]).unwrap();
        let mut clip = Clip::rest("c", &s, 30.0, 3);
        for f in 0..3 {
            clip.tracks[0].translations[f] = Vec3::new(0.001 * f as f32, 0.0, 0.0);
            clip.tracks[0].rotations[f] = Quat::from_rotation_z((f as f32).to_radians());
        }
        // Decoded: translations all zero, rotations all identity.
        let zero = Curve::new(
            Interpolation::Linear,
            false,
            vec![0, 2],
            vec![Vec4::ZERO, Vec4::ZERO],
        );
        let identity = Curve::new(
            Interpolation::Linear,
            true,
            vec![0, 2],
            vec![Vec4::W, Vec4::W],
        );
        let t = residuals(&clip, 0, 0, &zero, LengthUnit::Metre);
        assert!((t[2][0] - 2.0).abs() < 1e-4, "2 mm: {:?}", t[2]);
        let r = residuals(&clip, 0, 1, &identity, LengthUnit::Metre);
        for (f, v) in r.iter().enumerate() {
            assert!((v[2] - f as f64).abs() < 1e-3, "{f}°: {v:?}");
            assert!(v[0].abs() < 1e-6 && v[1].abs() < 1e-6);
        }
        // The short way round: -q is the same rotation.
        let e = rotation_residual(-Quat::from_rotation_x(0.01), Vec4::W);
        assert!((e[0] - 0.01).abs() < 1e-5, "{e:?}");
    }
}
