//! One histogram file per shown phase, a panel per run label (runs sharing a label pooled).

use super::stats::{RunStats, SHOWN, by_label, runs_text};
use crate::db::quantiles::quantile_sorted_f64;
use crate::export::palette::phase_colour;
use crate::export::svg::{self, axis::fmt_num, histogram};

/// The title of phase `name`'s histogram.
fn title(name: &str) -> String {
    match name {
        "window" => "Window duration (CONFIG ENTER to EXIT) per replayed window".into(),
        "pre-pass" => "Pre-pass time (lock, drain, snapshot) per replayed window".into(),
        "pass exec" => "Pass execution time per replayed window (its passes summed)".into(),
        "restore" => "Restore time per replayed window (its restores summed)".into(),
        other => format!("{other} time per replayed window"),
    }
}

/// The file name of phase `name`'s histogram.
pub fn file_name(name: &str) -> String {
    format!("hist-{}.svg", name.replace(' ', "-"))
}

/// The heading of one panel: label, runs, n, median and maximum.
fn heading(label: &str, runs: usize, sorted: &[f64]) -> String {
    let p50 = quantile_sorted_f64(sorted, 0.5).unwrap_or(f64::NAN);
    let max = sorted.last().copied().unwrap_or(f64::NAN);
    format!(
        "{label} · {} · n={} · p50 {} · max {} ms",
        runs_text(runs),
        sorted.len(),
        fmt_num(p50),
        fmt_num(max)
    )
}

/// Phase `SHOWN[i]`'s histogram: one panel per label with values; a message when none has.
pub fn render_histogram(stats: &[RunStats], i: usize) -> String {
    let name = SHOWN[i];
    let mut panels = Vec::new();
    for (label, runs) in by_label(stats) {
        let mut v: Vec<f64> = runs
            .iter()
            .flat_map(|s| s.samples[i].iter().copied())
            .filter(|x| x.is_finite())
            .collect();
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        panels.push(histogram::Panel {
            heading: heading(&label, runs.len(), &v),
            values: v,
        });
    }
    if panels.is_empty() {
        return svg::message(
            &title(name),
            &[format!(
                "No replayed window of the {} selected has a {name} time.",
                runs_text(stats.len())
            )],
        );
    }
    let mut subtitle = vec![
        "One panel per run label (its runs pooled); all panels share the x axis.".to_string(),
        histogram::x_axis_note(&panels, "ms"),
    ];
    subtitle.extend(super::stats::emulated_line(stats));
    histogram::small_multiples(&title(name), &subtitle, "ms", phase_colour(name), &panels)
}
