//! Plots at screen resolution: a series of thousands of points reduced to at most two per
//! pixel column (its lowest and highest, in order), so a long clip costs what the plot's
//! width costs and every spike stays visible.

use egui_plot::PlotTransform;

/// `points` (sorted by x) reduced to the lowest and highest point of each pixel column of
/// `transform`'s plot, in their original order; the first and last points are always kept.
/// Series that already fit (two points per column or fewer) are returned as they are.
pub fn min_max(points: &[[f64; 2]], transform: &PlotTransform) -> Vec<[f64; 2]> {
    let width = transform.frame().width().max(1.0) as f64;
    let span = transform.bounds().width();
    by_column(points, span / width)
}

/// `points` (sorted by x) reduced to the lowest and highest of each `column`-wide x range.
pub fn by_column(points: &[[f64; 2]], column: f64) -> Vec<[f64; 2]> {
    let (Some(first), Some(last)) = (points.first(), points.last()) else {
        return Vec::new();
    };
    let range = last[0] - first[0];
    if !(column.is_finite() && column > 0.0) || points.len() as f64 <= 2.0 * range / column + 2.0 {
        return points.to_vec();
    }
    let mut out = Vec::with_capacity((2.0 * range / column) as usize + 4);
    out.push(*first);
    let mut at = 1;
    let end = points.len() - 1;
    while at < end {
        let bin = ((points[at][0] - first[0]) / column).floor();
        let (mut lo, mut hi) = (at, at);
        let mut next = at + 1;
        while next < end && ((points[next][0] - first[0]) / column).floor() == bin {
            if points[next][1] < points[lo][1] {
                lo = next;
            }
            if points[next][1] > points[hi][1] {
                hi = next;
            }
            next += 1;
        }
        out.push(points[lo.min(hi)]);
        if lo != hi {
            out.push(points[lo.max(hi)]);
        }
        at = next;
    }
    if end > 0 {
        out.push(*last);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_every_column_extreme_and_the_ends() {
        // 10,000 samples of a sine with one spike, over 100 columns.
        let mut pts: Vec<[f64; 2]> = (0..10_000)
            .map(|i| [i as f64, (i as f64 * 0.01).sin()])
            .collect();
        pts[4321][1] = 50.0;
        pts[7777][1] = -50.0;
        let d = by_column(&pts, 100.0);
        assert!(d.len() <= 2 * 100 + 2, "{} points", d.len());
        assert_eq!(d.first(), pts.first());
        assert_eq!(d.last(), pts.last());
        assert!(
            d.contains(&pts[4321]) && d.contains(&pts[7777]),
            "spikes kept"
        );
        assert!(d.windows(2).all(|w| w[0][0] < w[1][0]), "order kept");
        // Every column's max and min survive.
        for c in 1..99 {
            let col = &pts[c * 100..(c + 1) * 100];
            let hi = col.iter().map(|p| p[1]).fold(f64::MIN, f64::max);
            let lo = col.iter().map(|p| p[1]).fold(f64::MAX, f64::min);
            assert!(d.iter().any(|p| p[1] == hi) && d.iter().any(|p| p[1] == lo));
        }
    }

    #[test]
    fn short_series_and_bad_columns_are_kept_whole() {
        let pts: Vec<[f64; 2]> = (0..50).map(|i| [i as f64, i as f64]).collect();
        assert_eq!(by_column(&pts, 1.0), pts);
        assert_eq!(by_column(&pts, f64::NAN), pts);
        assert_eq!(by_column(&pts, 0.0), pts);
        assert!(by_column(&[], 1.0).is_empty());
        assert_eq!(by_column(&pts[..1], 10.0), pts[..1].to_vec());
    }
}
