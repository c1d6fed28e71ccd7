//! Points with spread: one marker per series and x at its centre value, a whisker over its
//! spread, a thin line joining a series' points; ticks only at the x values measured, each
//! with its sample size under it.

use std::fmt::Write as _;

use super::axis::{Axis, fmt_num, wants_log};
use super::{Anchor, Doc, SIZE, header_height, legend_width, palette, text_width};

/// A point: centre `y` and spread `lo..=hi` at `x`.
pub struct Point {
    pub x: f64,
    pub y: f64,
    pub lo: f64,
    pub hi: f64,
}

/// A named series in its colour.
pub struct Series {
    pub name: String,
    pub colour: &'static str,
    pub points: Vec<Point>,
}

/// An x tick: its value, its label, and the sample size printed under it.
pub struct XTick {
    pub x: f64,
    pub label: String,
    pub n: String,
}

const PLOT_W: f64 = 520.0;
const PLOT_H: f64 = 280.0;

/// The x axis over the tick values: log when they span more than the log threshold, else
/// linear with a margin so no point sits on the frame.
fn x_axis(ticks: &[XTick], p0: f64, p1: f64) -> Axis {
    let (min, max) = ticks
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), t| {
            (a.min(t.x), b.max(t.x))
        });
    if wants_log(min, max) {
        return Axis {
            lo: min / 1.5,
            hi: max * 1.5,
            log: true,
            integer: false,
            p0,
            p1,
        };
    }
    let pad = if max > min { (max - min) * 0.15 } else { 1.0 };
    Axis {
        lo: min - pad,
        hi: max + pad,
        log: false,
        integer: false,
        p0,
        p1,
    }
}

/// The y axis over every centre and spread value.
fn y_axis(series: &[Series], p0: f64, p1: f64) -> Axis {
    let vals = series
        .iter()
        .flat_map(|s| s.points.iter().flat_map(|p| [p.y, p.lo, p.hi]));
    let (min, max) = vals.fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), v| {
        (a.min(v), b.max(v))
    });
    Axis::auto(min, max, p0, p1)
}

/// What the y axis is, for a subtitle.
pub fn y_axis_note(series: &[Series]) -> &'static str {
    y_axis(series, 0.0, 1.0).describe()
}

/// The chart. Only series with points are drawn and named in the legend.
pub fn points(
    title: &str,
    subtitle: &[String],
    labels: (&str, &str),
    ticks: &[XTick],
    series: &[Series],
) -> String {
    let (xlabel, ylabel) = labels;
    let drawn: Vec<&Series> = series.iter().filter(|s| !s.points.is_empty()).collect();
    let names: Vec<String> = drawn.iter().map(|s| s.name.clone()).collect();
    let top = header_height(subtitle) + 24.0;
    let left = 70.0;
    let bottom = top + PLOT_H;
    let xa = x_axis(ticks, left, left + PLOT_W);
    let ya = y_axis(series, bottom, top);
    let w = left + PLOT_W + 20.0 + legend_width(&names) + 10.0;
    let w = w.max(left + text_width(xlabel, SIZE));
    let mut d = Doc::new(w, bottom + 64.0, title, subtitle);
    for t in ya.ticks() {
        d.line(left, ya.px(t), left + PLOT_W, ya.px(t), palette::GRID);
        d.text(left - 6.0, ya.px(t) + 4.0, Anchor::End, &fmt_num(t));
    }
    for t in ticks {
        let x = xa.px(t.x);
        d.line(x, bottom, x, bottom + 4.0, palette::AXIS);
        d.text(x, bottom + 17.0, Anchor::Middle, &t.label);
        d.text_sized(x, bottom + 31.0, Anchor::Middle, &t.n, 10.0);
    }
    d.line(left, bottom, left + PLOT_W, bottom, palette::AXIS);
    d.line(left, top, left, bottom, palette::AXIS);
    d.text(left + PLOT_W / 2.0, bottom + 52.0, Anchor::Middle, xlabel);
    d.text(8.0, top - 10.0, Anchor::Start, ylabel);
    let mid = (drawn.len() as f64 - 1.0) / 2.0;
    for (k, s) in drawn.iter().enumerate() {
        let dx = (k as f64 - mid) * 5.0;
        draw_series(&mut d, s, |x| xa.px(x) + dx, |y| ya.px(y));
    }
    let entries: Vec<(String, &str)> = drawn.iter().map(|s| (s.name.clone(), s.colour)).collect();
    d.legend(left + PLOT_W + 20.0, top + 10.0, &entries);
    d.finish()
}

fn draw_series(d: &mut Doc, s: &Series, sx: impl Fn(f64) -> f64, sy: impl Fn(f64) -> f64) {
    let c = s.colour;
    let pts: Vec<String> = s
        .points
        .iter()
        .map(|p| format!("{:.1},{:.1}", sx(p.x), sy(p.y)))
        .collect();
    d.raw(&format!(
        r#"<polyline fill="none" stroke="{c}" stroke-width="1" stroke-opacity="0.6" points="{}"/>"#,
        pts.join(" ")
    ));
    for p in &s.points {
        let (x, lo, hi) = (sx(p.x), sy(p.lo), sy(p.hi));
        let mut m = String::new();
        let _ = write!(
            m,
            r#"<path d="M{x:.1},{lo:.1}V{hi:.1}M{:.1},{lo:.1}h6M{:.1},{hi:.1}h6" stroke="{c}" stroke-width="1.5" fill="none"/>"#,
            x - 3.0,
            x - 3.0
        );
        let _ = write!(
            m,
            r#"<circle cx="{x:.1}" cy="{:.1}" r="3.5" fill="{c}"><title>{}: {} ({}..{})</title></circle>"#,
            sy(p.y),
            super::esc(&s.name),
            fmt_num(p.y),
            fmt_num(p.lo),
            fmt_num(p.hi)
        );
        d.raw(&m);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tick(x: f64) -> XTick {
        XTick {
            x,
            label: fmt_num(x),
            n: "n=1".into(),
        }
    }

    #[test]
    fn ticks_sit_at_the_measured_x_and_wide_spans_are_logarithmic() {
        let pt = |x: f64, y: f64| Point {
            x,
            y,
            lo: y * 0.9,
            hi: y * 1.1,
        };
        let series = [
            Series {
                name: "a".into(),
                colour: "#111111",
                points: vec![pt(1.0, 1.0), pt(10.0, 2.0), pt(100.0, 3.0)],
            },
            Series {
                name: "empty".into(),
                colour: "#222222",
                points: vec![],
            },
        ];
        let ticks = [tick(1.0), tick(10.0), tick(100.0)];
        let s = points("t", &[], ("x", "y"), &ticks, &series);
        assert!(!s.contains("empty"));
        assert_eq!(s.matches("<circle").count(), 3);
        let xa = x_axis(&ticks, 0.0, 300.0);
        assert!(xa.log);
        let gap = |a: f64, b: f64| xa.px(b) - xa.px(a);
        assert!((gap(1.0, 10.0) - gap(10.0, 100.0)).abs() < 1e-6);
        for l in [">1<", ">10<", ">100<"] {
            assert!(s.contains(l), "{l}");
        }
        assert!(!s.contains("0.400"));
    }
}
