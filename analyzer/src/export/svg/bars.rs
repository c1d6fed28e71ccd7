//! Horizontal bars of shares: each row normalised to 100 %, so a row whose total is a
//! thousandth of another's stays as readable; each row's absolute total is printed beside it.

use super::axis::fmt_num;
use super::{Anchor, Doc, SIZE, header_height, legend_width, palette, text_width};

/// One bar: its label, a value per series (≥ 0), and the note printed after it.
pub struct BarRow {
    pub label: String,
    pub values: Vec<f64>,
    pub note: String,
}

const BAR_H: f64 = 20.0;
const GAP: f64 = 8.0;
const PLOT_W: f64 = 420.0;

/// The share bars of `rows` over `series` (name, colour). Only series with a positive value
/// in some row are drawn and named in the legend.
pub fn share_bars(
    title: &str,
    subtitle: &[String],
    rows: &[BarRow],
    series: &[(String, &str)],
) -> String {
    let drawn: Vec<usize> = (0..series.len())
        .filter(|&k| {
            rows.iter()
                .any(|r| r.values.get(k).is_some_and(|v| *v > 0.0))
        })
        .collect();
    let names: Vec<String> = drawn.iter().map(|&k| series[k].0.clone()).collect();
    let widest = |f: &dyn Fn(&BarRow) -> &str| {
        rows.iter()
            .map(|r| text_width(f(r), SIZE))
            .fold(0.0, f64::max)
    };
    let left = widest(&|r| &r.label) + 20.0;
    let note_w = widest(&|r| &r.note) + 20.0;
    let top = header_height(subtitle) + 8.0;
    let legend_x = left + PLOT_W + note_w;
    let bottom = top + rows.len() as f64 * (BAR_H + GAP);
    let h = (bottom + 46.0).max(top + drawn.len() as f64 * 18.0 + 20.0);
    let mut d = Doc::new(legend_x + legend_width(&names) + 10.0, h, title, subtitle);
    let sx = |f: f64| left + f * PLOT_W;
    for k in 0..=4 {
        let f = f64::from(k) / 4.0;
        d.line(sx(f), top, sx(f), bottom, palette::GRID);
        d.text(
            sx(f),
            bottom + 16.0,
            Anchor::Middle,
            &format!("{}%", k * 25),
        );
    }
    d.text(
        sx(0.5),
        bottom + 36.0,
        Anchor::Middle,
        "share of the row's mean window",
    );
    for (i, row) in rows.iter().enumerate() {
        let y = top + i as f64 * (BAR_H + GAP) + GAP / 2.0;
        d.text(left - 8.0, y + BAR_H * 0.7, Anchor::End, &row.label);
        d.text(sx(1.0) + 8.0, y + BAR_H * 0.7, Anchor::Start, &row.note);
        let total: f64 = row.values.iter().filter(|v| **v > 0.0).sum();
        if total <= 0.0 {
            continue;
        }
        let mut acc = 0.0;
        for &k in &drawn {
            let v = row.values.get(k).copied().unwrap_or(0.0).max(0.0);
            if v <= 0.0 {
                continue;
            }
            let tip = format!(
                "{} {}: {} ({}%)",
                row.label,
                series[k].0,
                fmt_num(v),
                fmt_num(v / total * 100.0)
            );
            d.rect(sx(acc), y, v / total * PLOT_W, BAR_H, series[k].1, &tip);
            acc += v / total;
        }
    }
    let entries: Vec<(String, &str)> = drawn
        .iter()
        .map(|&k| (series[k].0.clone(), series[k].1))
        .collect();
    d.legend(legend_x + 8.0, top + 12.0, &entries);
    d.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn undrawn_series_stay_out_of_the_legend_and_thin_rows_fill_the_width() {
        let rows = [
            BarRow {
                label: "big".into(),
                values: vec![1000.0, 0.0, 3000.0],
                note: "4 ms".into(),
            },
            BarRow {
                label: "small".into(),
                values: vec![0.001, 0.0, 0.003],
                note: "4 ns".into(),
            },
        ];
        let series = [
            ("a".to_string(), "#111111"),
            ("never".to_string(), "#222222"),
            ("b".to_string(), "#333333"),
        ];
        let s = share_bars("t", &[], &rows, &series);
        assert!(!s.contains("never"), "{s}");
        assert_eq!(s.matches("legend-entry").count(), 2);
        // The small row's segments are as wide as the big row's.
        assert_eq!(s.matches(r#"width="105.00""#).count(), 2, "{s}");
        assert_eq!(s.matches(r#"width="315.00""#).count(), 2, "{s}");
    }
}
