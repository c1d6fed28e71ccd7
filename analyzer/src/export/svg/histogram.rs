//! Histograms as small multiples: one panel per group on one shared x axis that runs from the
//! smallest to the largest value (nothing folded into an end bin), log-scaled when the values
//! span more than [`super::axis::LOG_SPAN`]; each panel its own count scale.

use super::axis::{Axis, fmt_num, nice_step, wants_log};
use super::{Anchor, Doc, SIZE, header_height, palette, text_width};

/// One panel: its heading and its values (finite).
pub struct Panel {
    pub heading: String,
    pub values: Vec<f64>,
}

const BINS: usize = 30;
const PLOT_H: f64 = 90.0;
const COLS: usize = 3;

/// Bin edges from `lo` to `hi` (evenly in log space when `log`).
fn edges(lo: f64, hi: f64, log: bool) -> Vec<f64> {
    (0..=BINS)
        .map(|k| {
            let f = k as f64 / BINS as f64;
            if log {
                10f64.powf(lo.log10() + f * (hi.log10() - lo.log10()))
            } else {
                lo + f * (hi - lo)
            }
        })
        .collect()
}

/// Counts of `values` in the bins of `edges`; the last bin is closed, so the maximum counts.
pub fn bin(values: &[f64], edges: &[f64], log: bool) -> Vec<u64> {
    let n = edges.len() - 1;
    let (lo, hi) = (edges[0], edges[n]);
    let mut counts = vec![0u64; n];
    for &v in values {
        let f = if log {
            (v.log10() - lo.log10()) / (hi.log10() - lo.log10())
        } else {
            (v - lo) / (hi - lo)
        };
        let b = (f * n as f64).floor().clamp(0.0, (n - 1) as f64) as usize;
        counts[b] += 1;
    }
    counts
}

/// The value range of all panels: (min, max), widened when all values are equal.
fn range(panels: &[Panel]) -> (f64, f64) {
    let all = panels.iter().flat_map(|p| p.values.iter().copied());
    let (min, max) = all.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    if max > min {
        (min, max)
    } else {
        (
            min - min.abs().max(1e-3) * 0.1,
            max + max.abs().max(1e-3) * 0.1,
        )
    }
}

/// What the x axis is, for the subtitle.
pub fn x_axis_note(panels: &[Panel], unit: &str) -> String {
    let (min, max) = range(panels);
    let scale = if wants_log(min, max) {
        "log scale"
    } else {
        "linear"
    };
    format!(
        "x: {unit}, {scale}, {} to {} (the smallest to the largest value: none folded); \
         y: windows per bin, each panel its own scale",
        fmt_num(min),
        fmt_num(max)
    )
}

/// The small-multiple histograms of `panels` (at least one value in all).
pub fn small_multiples(
    title: &str,
    subtitle: &[String],
    unit: &str,
    colour: &str,
    panels: &[Panel],
) -> String {
    let (min, max) = range(panels);
    let log = wants_log(min, max);
    let e = edges(min, max, log);
    let heading_w = panels
        .iter()
        .map(|p| text_width(&p.heading, SIZE))
        .fold(0.0, f64::max);
    let panel_w = (heading_w + 10.0).max(250.0);
    let (pad_l, pad_t, cell_h) = (44.0, 22.0, PLOT_H + 62.0);
    let cols = panels.len().clamp(1, COLS);
    let rows = panels.len().div_ceil(cols);
    let top = header_height(subtitle) + 6.0;
    let w = cols as f64 * (panel_w + pad_l + 16.0) + 10.0;
    let h = top + rows as f64 * cell_h + 10.0;
    let mut d = Doc::new(w, h, title, subtitle);
    for (i, p) in panels.iter().enumerate() {
        let x0 = 10.0 + (i % cols) as f64 * (panel_w + pad_l + 16.0) + pad_l;
        let y0 = top + (i / cols) as f64 * cell_h + pad_t;
        panel(&mut d, p, &e, log, (x0, y0, panel_w), (unit, colour));
    }
    d.finish()
}

/// One panel with its top-left plot corner at `(x0, y0)`, `pw` wide.
fn panel(
    d: &mut Doc,
    p: &Panel,
    edges: &[f64],
    log: bool,
    at: (f64, f64, f64),
    look: (&str, &str),
) {
    let ((x0, y0, pw), (unit, colour)) = (at, look);
    let counts = bin(&p.values, edges, log);
    let n = edges.len() - 1;
    d.text(x0, y0 - 8.0, Anchor::Start, &p.heading);
    let cmax = counts.iter().copied().max().unwrap_or(0) as f64;
    let ya = Axis::linear_from_zero(cmax, true, y0 + PLOT_H, y0);
    let xa = Axis {
        lo: edges[0],
        hi: edges[n],
        log,
        integer: false,
        p0: x0,
        p1: x0 + pw,
    };
    for t in [0.0, ya.hi] {
        d.line(x0, ya.px(t), x0 + pw, ya.px(t), palette::GRID);
        d.text(x0 - 5.0, ya.px(t) + 4.0, Anchor::End, &fmt_num(t));
    }
    for (k, c) in counts.iter().enumerate().filter(|(_, c)| **c > 0) {
        let (a, b) = (xa.px(edges[k]), xa.px(edges[k + 1]));
        let tip = format!(
            "{}..{} {unit}: {c}",
            fmt_num(edges[k]),
            fmt_num(edges[k + 1])
        );
        let y = ya.px(*c as f64);
        d.rect(a, y, (b - a - 0.5).max(0.8), y0 + PLOT_H - y, colour, &tip);
    }
    d.line(x0, y0 + PLOT_H, x0 + pw, y0 + PLOT_H, palette::AXIS);
    let ticks = x_ticks(&xa);
    for t in ticks {
        d.line(
            xa.px(t),
            y0 + PLOT_H,
            xa.px(t),
            y0 + PLOT_H + 3.0,
            palette::AXIS,
        );
        d.text(xa.px(t), y0 + PLOT_H + 15.0, Anchor::Middle, &fmt_num(t));
    }
    d.text(x0 + pw, y0 + PLOT_H + 30.0, Anchor::End, unit);
}

/// Tick values inside the data range: powers of ten on a log axis, multiples of a nice step
/// on a linear one; the range's two ends when fewer than two fall inside.
fn x_ticks(xa: &Axis) -> Vec<f64> {
    let inside: Vec<f64> = if xa.log {
        Axis::log(xa.lo, xa.hi, xa.p0, xa.p1)
            .ticks()
            .into_iter()
            .filter(|t| *t >= xa.lo * 0.999_999 && *t <= xa.hi * 1.000_001)
            .collect()
    } else {
        let step = nice_step(xa.hi - xa.lo, 4.0);
        let first = (xa.lo / step).ceil() as i64;
        let last = (xa.hi / step).floor() as i64;
        (first..=last).map(|k| k as f64 * step).collect()
    };
    if inside.len() >= 2 {
        inside
    } else {
        vec![xa.lo, xa.hi]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_largest_value_has_its_own_bin_and_wide_spans_bin_in_log_space() {
        let v = [1.0, 2.0, 3.0, 99.99, 103.6, 106.6];
        let (min, max) = (1.0, 106.6);
        assert!(wants_log(min, max));
        let e = edges(min, max, true);
        let c = bin(&v, &e, true);
        assert_eq!(c.iter().sum::<u64>(), 6);
        assert!(c[BINS - 1] >= 1, "the maximum lands in the last bin");
        assert!(e[BINS] >= 106.6 - 1e-9, "the axis reaches the maximum");
        let s = small_multiples(
            "t",
            &[],
            "ms",
            "#000000",
            &[Panel {
                heading: "p".into(),
                values: v.to_vec(),
            }],
        );
        assert!(s.contains(">107<") || s.contains(">100<"), "{s}");
    }
}
