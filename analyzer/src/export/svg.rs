//! A minimal SVG writer for the plots: stacked horizontal bars, histograms and line charts.
//! Hand-written because plotters' SVG backend needs a font-metrics feature (font-kit or a bundled
//! TTF) to lay out text; these charts need only positioned `<text>` elements.

use std::fmt::Write as _;

/// Distinct colours for series, in order.
pub const PALETTE: &[&str] = &[
    "#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7",
    "#9c755f", "#bab0ac",
];

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
}

/// A "nice" upper bound and tick step for an axis from 0 to `max`.
fn nice(max: f64) -> (f64, f64) {
    if max <= 0.0 || !max.is_finite() {
        return (1.0, 0.25);
    }
    let raw = max / 5.0;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 2.5, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    ((max / step).ceil() * step, step)
}

fn fmt_tick(v: f64) -> String {
    if (v == v.round() && v.abs() < 1e15) || v.abs() >= 100.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.3}")
    }
}

struct Doc {
    s: String,
    w: f64,
    h: f64,
}

impl Doc {
    fn new(w: f64, h: f64, title: &str) -> Doc {
        let mut s = String::new();
        let _ = write!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="12">"#
        );
        let _ = write!(s, r#"<rect width="{w}" height="{h}" fill="white"/>"#);
        let _ = write!(
            s,
            r#"<text x="{}" y="22" text-anchor="middle" font-size="15" font-weight="bold">{}</text>"#,
            w / 2.0,
            esc(title)
        );
        Doc { s, w, h }
    }
    fn text(&mut self, x: f64, y: f64, anchor: &str, t: &str) {
        let _ = write!(
            self.s,
            r#"<text x="{x:.1}" y="{y:.1}" text-anchor="{anchor}">{}</text>"#,
            esc(t)
        );
    }
    fn rect(&mut self, x: f64, y: f64, w: f64, h: f64, fill: &str, tip: &str) {
        let _ = write!(
            self.s,
            r#"<rect x="{x:.1}" y="{y:.1}" width="{:.1}" height="{:.1}" fill="{fill}"><title>{}</title></rect>"#,
            w.max(0.0),
            h.max(0.0),
            esc(tip)
        );
    }
    fn line(&mut self, x1: f64, y1: f64, x2: f64, y2: f64, stroke: &str) {
        let _ = write!(
            self.s,
            r#"<line x1="{x1:.1}" y1="{y1:.1}" x2="{x2:.1}" y2="{y2:.1}" stroke="{stroke}"/>"#
        );
    }
    fn legend(&mut self, x: f64, y: f64, names: &[String]) {
        for (i, n) in names.iter().enumerate() {
            let yy = y + i as f64 * 18.0;
            self.rect(x, yy - 10.0, 12.0, 12.0, PALETTE[i % PALETTE.len()], n);
            self.text(x + 18.0, yy, "start", n);
        }
    }
    fn finish(mut self) -> String {
        let _ = (self.w, self.h);
        self.s.push_str("</svg>\n");
        self.s
    }
}

/// Horizontal stacked bars: one bar per label, one segment per series (values ≥ 0).
pub fn stacked_bars(
    title: &str,
    unit: &str,
    labels: &[String],
    series: &[String],
    values: &[Vec<f64>],
) -> String {
    let (left, right, top) = (260.0, 150.0, 40.0);
    let bar_h = 22.0;
    let h = top + labels.len() as f64 * (bar_h + 10.0) + 60.0;
    let w = 900.0;
    let mut d = Doc::new(w, h.max(160.0), title);
    let max = values
        .iter()
        .map(|r| r.iter().sum::<f64>())
        .fold(0.0, f64::max);
    let (top_v, step) = nice(max);
    let plot_w = w - left - right;
    let sx = |v: f64| left + v / top_v * plot_w;
    let bottom = top + labels.len() as f64 * (bar_h + 10.0);
    let mut t = 0.0;
    while t <= top_v + 1e-9 {
        d.line(sx(t), top, sx(t), bottom, "#ddd");
        d.text(sx(t), bottom + 16.0, "middle", &fmt_tick(t));
        t += step;
    }
    d.text(left + plot_w / 2.0, bottom + 36.0, "middle", unit);
    for (i, (label, row)) in labels.iter().zip(values).enumerate() {
        let y = top + i as f64 * (bar_h + 10.0) + 5.0;
        d.text(left - 6.0, y + bar_h * 0.7, "end", label);
        let mut acc = 0.0;
        for (k, v) in row.iter().enumerate() {
            let tip = format!("{label} {}: {}", series[k], fmt_tick(*v));
            d.rect(
                sx(acc),
                y,
                sx(acc + v) - sx(acc),
                bar_h,
                PALETTE[k % PALETTE.len()],
                &tip,
            );
            acc += v;
        }
    }
    d.legend(w - right + 15.0, top + 10.0, series);
    d.finish()
}

/// Vertical-bar histogram of `counts` over bins starting at `edges[i]` (len = counts + 1).
pub fn histogram(title: &str, unit: &str, edges: &[f64], counts: &[u64]) -> String {
    let (w, h) = (800.0, 420.0);
    let (left, right, top, bottom) = (60.0, 20.0, 40.0, 360.0);
    let mut d = Doc::new(w, h, title);
    let maxc = counts.iter().copied().max().unwrap_or(0) as f64;
    let (top_c, step) = nice(maxc);
    let sy = |c: f64| bottom - c / top_c * (bottom - top);
    let lo = edges.first().copied().unwrap_or(0.0);
    let hi = edges.last().copied().unwrap_or(1.0).max(lo + 1e-12);
    let sx = |v: f64| left + (v - lo) / (hi - lo) * (w - left - right);
    let mut t = 0.0;
    while t <= top_c + 1e-9 {
        d.line(left, sy(t), w - right, sy(t), "#ddd");
        d.text(left - 6.0, sy(t) + 4.0, "end", &fmt_tick(t));
        t += step;
    }
    for (i, c) in counts.iter().enumerate() {
        let (x0, x1) = (sx(edges[i]), sx(edges[i + 1]));
        let tip = format!("{}..{}: {c}", fmt_tick(edges[i]), fmt_tick(edges[i + 1]));
        d.rect(
            x0,
            sy(*c as f64),
            (x1 - x0 - 1.0).max(0.5),
            bottom - sy(*c as f64),
            PALETTE[0],
            &tip,
        );
    }
    for k in 0..=4 {
        let v = lo + (hi - lo) * k as f64 / 4.0;
        d.text(sx(v), bottom + 16.0, "middle", &fmt_tick(v));
    }
    d.text((left + w - right) / 2.0, bottom + 38.0, "middle", unit);
    d.text(14.0, top - 10.0, "start", "windows");
    d.finish()
}

/// Line chart: one polyline per series over shared x values (`None` = no point).
pub fn lines(
    title: &str,
    xlabel: &str,
    ylabel: &str,
    xs: &[f64],
    series: &[String],
    ys: &[Vec<Option<f64>>],
) -> String {
    let (w, h) = (860.0, 440.0);
    let (left, right, top, bottom) = (70.0, 170.0, 40.0, 370.0);
    let mut d = Doc::new(w, h, title);
    let xmax = xs.iter().copied().fold(0.0, f64::max);
    let ymax = ys.iter().flatten().flatten().copied().fold(0.0, f64::max);
    let (top_x, step_x) = nice(xmax);
    let (top_y, step_y) = nice(ymax);
    let sx = |v: f64| left + v / top_x * (w - left - right);
    let sy = |v: f64| bottom - v / top_y * (bottom - top);
    let mut t = 0.0;
    while t <= top_y + 1e-9 {
        d.line(left, sy(t), w - right, sy(t), "#ddd");
        d.text(left - 6.0, sy(t) + 4.0, "end", &fmt_tick(t));
        t += step_y;
    }
    let mut t = 0.0;
    while t <= top_x + 1e-9 {
        d.text(sx(t), bottom + 16.0, "middle", &fmt_tick(t));
        t += step_x;
    }
    d.line(left, bottom, w - right, bottom, "#333");
    d.line(left, top, left, bottom, "#333");
    d.text((left + w - right) / 2.0, bottom + 38.0, "middle", xlabel);
    d.text(14.0, top - 10.0, "start", ylabel);
    for (k, row) in ys.iter().enumerate() {
        let colour = PALETTE[k % PALETTE.len()];
        let pts: Vec<String> = xs
            .iter()
            .zip(row)
            .filter_map(|(x, y)| y.map(|y| format!("{:.1},{:.1}", sx(*x), sy(y))))
            .collect();
        let _ = write!(
            d.s,
            r#"<polyline fill="none" stroke="{colour}" stroke-width="2" points="{}"/>"#,
            pts.join(" ")
        );
        for p in &pts {
            let (x, y) = p.split_once(',').expect("point");
            let _ = write!(d.s, r#"<circle cx="{x}" cy="{y}" r="3" fill="{colour}"/>"#);
        }
    }
    d.legend(w - right + 15.0, top + 10.0, series);
    d.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nice_axes() {
        assert_eq!(nice(9.0), (10.0, 2.0));
        assert_eq!(nice(0.0), (1.0, 0.25));
        let (top, step) = nice(1234.0);
        assert!(top >= 1234.0 && step > 0.0);
    }

    #[test]
    fn charts_are_well_formed_svg() {
        let s = stacked_bars(
            "t <&>",
            "ms",
            &["a".into()],
            &["x".into(), "y".into()],
            &[vec![1.0, 2.0]],
        );
        assert!(s.starts_with("<svg") && s.trim_end().ends_with("</svg>"));
        assert!(s.contains("t &lt;&amp;&gt;"));
        assert_eq!(
            s.matches("<rect").count(),
            1 + 2 + 2,
            "background, segments, legend"
        );
        let h = histogram("h", "ms", &[0.0, 1.0, 2.0], &[3, 5]);
        assert_eq!(h.matches("<title>").count(), 2);
        let l = lines(
            "l",
            "x",
            "y",
            &[1.0, 2.0],
            &["s".into()],
            &[vec![Some(1.0), None]],
        );
        assert_eq!(l.matches("<circle").count(), 1);
    }
}
