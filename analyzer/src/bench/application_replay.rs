//! P1's application-replay total: one whole-run row derived from the single-group runs.

use crate::db::benchmark::CollectionMode;
use crate::db::measurements::{Failures, MeasurementRow, Timing};

/// P1's application-replay row: the sum of the G single-group medians (min and max summed too),
/// the largest peak RSS, the smallest sample count; `all` when any single-group run always
/// failed.
pub fn application_replay_row(base: &[&MeasurementRow], g: u32) -> Option<MeasurementRow> {
    if base.is_empty() {
        return None;
    }
    let timings: Option<Vec<Timing>> = base.iter().map(|r| r.timing).collect();
    let failures: u32 = base
        .iter()
        .map(|r| match r.failures {
            Failures::Count(n) => n,
            Failures::All => 0,
        })
        .sum();
    let (timing, samples, failures) = match timings {
        Some(t) => (
            Some(Timing {
                median_s: t.iter().map(|t| t.median_s).sum(),
                min_s: t.iter().map(|t| t.min_s).sum(),
                max_s: t.iter().map(|t| t.max_s).sum(),
                peak_child_rss_kib: t.iter().map(|t| t.peak_child_rss_kib).max().unwrap_or(0),
            }),
            base.iter().map(|r| r.samples).min().unwrap_or(0),
            Failures::Count(failures),
        ),
        None => (None, 0, Failures::All),
    };
    Some(MeasurementRow {
        experiment: "P1".into(),
        variant: "application-replay-all-groups".into(),
        mode: CollectionMode::ApplicationReplay,
        detail: format!("sum of the {g} single-group runs"),
        timing,
        samples,
        failures,
        command: base
            .iter()
            .map(|r| r.command.as_str())
            .collect::<Vec<_>>()
            .join(" ; "),
    })
}
