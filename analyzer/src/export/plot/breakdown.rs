//! The phase breakdown: one bar per run label and kernel (runs sharing a label pooled), each
//! normalised to its mean replayed window, with that mean and its sample size beside it.

use super::stats::{RunStats, STACK, by_label, runs_text};
use crate::export::palette::phase_colour;
use crate::export::svg::{self, axis::fmt_num, bars};

pub const TITLE: &str = "Where a replayed window's time goes, per run label and kernel";

/// The breakdown's SVG; a message when no run has a replayed window.
pub fn render_breakdown(stats: &[RunStats]) -> String {
    let mut rows = Vec::new();
    for (label, runs) in by_label(stats) {
        let mut kernels: Vec<(String, Vec<f64>, u64)> = Vec::new();
        for s in &runs {
            for (k, (sums, n)) in &s.kernels {
                match kernels.iter_mut().find(|e| e.0 == *k) {
                    Some(e) => {
                        e.1.iter_mut().zip(sums).for_each(|(a, x)| *a += x);
                        e.2 += n;
                    }
                    None => kernels.push((k.clone(), sums.clone(), *n)),
                }
            }
        }
        for (kernel, sums, n) in kernels {
            let means: Vec<f64> = sums.iter().map(|v| v / n as f64 / 1e6).collect();
            let total: f64 = means.iter().sum();
            rows.push(bars::BarRow {
                label: format!("{label}  {kernel}"),
                note: format!("{} ms · n={n} · {}", fmt_num(total), runs_text(runs.len())),
                values: means,
            });
        }
    }
    if rows.is_empty() {
        return svg::message(
            TITLE,
            &[
                format!(
                    "No replayed window in the {} selected: nothing to break down.",
                    runs_text(stats.len())
                ),
                "Declined and opted-out dispatches have no phases; `krphase report` counts them."
                    .into(),
            ],
        );
    }
    let series: Vec<(String, &str)> = STACK
        .iter()
        .map(|p| (p.to_string(), phase_colour(p)))
        .collect();
    let mut subtitle = vec![
        "Each bar is 100 % of its row's mean replayed window (per-row normalisation, so short \
         windows stay visible);"
            .to_string(),
        "beside it: that mean window in ms, n = replayed windows, and the runs pooled. Pre-pass \
         is split into drain + snapshot where an SDK log is joined."
            .to_string(),
    ];
    subtitle.extend(super::stats::emulated_line(stats));
    bars::share_bars(TITLE, &subtitle, &rows, &series)
}
