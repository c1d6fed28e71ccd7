//! The whole-run measurements in an answer: every imported benchmark-database row, harness CSV
//! row and `krphase bench` row the selection covers (config, mode, groups, median, samples, the
//! seed's own projection and speedup, the runs it is linked to), with the check of its replay
//! claim. Rendered as a table (≤ 100 columns), Markdown, CSV rows and JSON.

use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::basis::Basis;
use crate::db::benchmark::CollectionMode;
use crate::db::measurements::{
    MeasurementFilter, SOURCE_BENCH, SOURCE_BENCHMARK_DB, SOURCE_REPLAY_PERF, StoredMeasurement,
    read_measurements,
};
use crate::render::fmt::{factor, seconds, wrap};
use crate::render::table::{push_table, table};

/// One measurement as an answer shows it.
#[derive(Debug, Clone, Serialize)]
pub struct MeasurementAnswer {
    #[serde(flatten)]
    pub stored: StoredMeasurement,
    /// False when the row claims kernel replay and the evidence says it did not run.
    pub valid: bool,
    pub invalid_reason: Option<String>,
    /// Median, min and max: measured by the harness around the whole run.
    pub median_basis: Basis,
    /// The seed's projection and speedup: estimates (a single-group reference × groups).
    pub projection_basis: Option<Basis>,
}

/// The measurements of one answer.
#[derive(Debug, Clone, Serialize, Default)]
pub struct MeasurementSection {
    pub measurements: Vec<MeasurementAnswer>,
}

impl MeasurementSection {
    /// One warning per row whose figures are invalid.
    pub fn warnings(&self) -> Vec<String> {
        self.measurements
            .iter()
            .filter_map(|m| m.stored.warning())
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.measurements.is_empty()
    }
}

fn short_source(s: Option<&str>) -> &str {
    match s {
        Some(SOURCE_REPLAY_PERF) => "csv",
        Some(SOURCE_BENCH) => "bench",
        Some(SOURCE_BENCHMARK_DB) => "db",
        Some(other) => other,
        None => "?",
    }
}

/// The measurements `filter` selects, checked.
pub fn gather(conn: &Connection, filter: &MeasurementFilter) -> Result<MeasurementSection> {
    let measurements = read_measurements(conn, filter)?
        .into_iter()
        .map(|mut m| {
            let invalid_reason = m.invalid_reason();
            // The seed's view projects every multi-group config from its single-group reference;
            // only for kernel replay is that ratio a speedup of anything.
            if m.mode.as_deref() != Some(CollectionMode::KernelReplay.as_str()) {
                m.projected_s = None;
                m.speedup = None;
            }
            MeasurementAnswer {
                valid: invalid_reason.is_none(),
                invalid_reason,
                median_basis: Basis::Harness,
                projection_basis: (m.projected_s.is_some() || m.speedup.is_some())
                    .then_some(Basis::Estimate),
                stored: m,
            }
        })
        .collect();
    Ok(MeasurementSection { measurements })
}

/// Linked run ids in a narrow cell: `7,8`, or `12 runs`.
fn runs_cell(ids: &[i64]) -> String {
    match ids.len() {
        0 => "-".into(),
        1..=3 => crate::db::runs::id_list(ids).replace(' ', ""),
        n => format!("{n} runs"),
    }
}

/// A figure of an invalid row: the value followed by ` !` (the table's mark of an invalid
/// figure; the reason follows the table).
fn flagged(v: String, valid: bool) -> String {
    if valid || v == "-" {
        v
    } else {
        format!("{v} !")
    }
}

/// Appends the measurement table and its warnings (nothing when there are none).
pub fn render_text(s: &MeasurementSection, markdown: bool, out: &mut String) {
    if s.is_empty() {
        return;
    }
    let h = if markdown { "## " } else { "== " };
    let _ = writeln!(out, "{h}whole-run measurements ({})", s.measurements.len());
    if markdown {
        out.push('\n');
    }
    let mut t = table(
        markdown,
        &[
            "id", "config", "mode", "groups", "median", "n", "proj.", "speedup", "runs",
        ],
    );
    for i in [1, 2] {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(comfy_table::CellAlignment::Left);
        }
    }
    for a in &s.measurements {
        let m = &a.stored;
        let config = format!(
            "{}/{}{}",
            m.experiment.as_deref().unwrap_or("?"),
            m.variant.as_deref().unwrap_or("?"),
            match m.metric.as_deref() {
                Some("wall_time") | None => String::new(),
                Some(other) => format!(" ({other})"),
            }
        );
        t.add_row(vec![
            format!("{} {}", m.measurement_id, short_source(m.source.as_deref())),
            config,
            flagged(m.mode.clone().unwrap_or_else(|| "-".into()), a.valid),
            m.counter_groups.map_or("-".into(), |g| g.to_string()),
            seconds(m.median_s),
            m.samples.map_or("-".into(), |n| n.to_string()),
            flagged(seconds(m.projected_s), a.valid),
            flagged(factor(m.speedup), a.valid),
            runs_cell(&m.linked_runs),
        ]);
    }
    push_table(out, &t, markdown);
    let warnings = s.warnings();
    let caveats: Vec<String> = s
        .measurements
        .iter()
        .filter_map(|m| m.stored.caveat())
        .collect();
    let _ = writeln!(
        out,
        "basis: median H; proj. (projected) and speedup E, the seed's replay view (single-group\n\
         reference x groups) of a benchmark database's kernel-replay rows, '-' for other rows{}",
        flag_legend(!warnings.is_empty(), !caveats.is_empty())
    );
    for w in warnings {
        out.push_str(&wrap(&w, 98, "  ! ", "    "));
    }
    for c in caveats {
        out.push_str(&wrap(&c, 98, "  ? ", "    "));
    }
    out.push('\n');
}

/// The legend of the row flags, naming only the flags some row carries (each followed by the
/// rows' reasons); empty when no row is flagged.
fn flag_legend(invalid: bool, unverifiable: bool) -> &'static str {
    match (invalid, unverifiable) {
        (false, false) => "",
        (true, false) => ";\n! = invalid:",
        (false, true) => ";\n? = unverifiable:",
        (true, true) => ";\n! = invalid, ? = unverifiable:",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_invalid_row_is_flagged_in_the_table_and_warned_once() {
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch(
            "INSERT INTO krphase_measurement (id, source, experiment, variant, mode, median_s,
               samples, command, counter_groups) VALUES
               (1, 'replay_perf', 'P1', 'replay-all-groups', 'kernel-replay', 2.0, 3,
                'rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled -- app', 2),
               (2, 'rocprofv3-benchmark', 'tool-runtime-overhead', 'replay_4_groups',
                'kernel-replay', 2.2, 3, 'transpose', 4);
             UPDATE krphase_measurement SET projected_s = 6.0, speedup = 2.727 WHERE id = 2;",
        )
        .unwrap();
        let s = gather(&c, &MeasurementFilter::All).unwrap();
        assert_eq!(s.warnings().len(), 1);
        assert!(s.warnings()[0].contains("--replay-mode kernel"));
        let mut out = String::new();
        render_text(&s, false, &mut out);
        // The flag follows the mode in its cell (wrapped onto the cell's next line when the
        // table is narrow: cells wrap between words only).
        assert!(
            out.contains("kernel-replay !") || out.contains("┆ !"),
            "{out}"
        );
        assert!(out.contains("2.73x"), "{out}");
        assert!(out.lines().all(|l| l.chars().count() <= 100), "{out}");
        assert!(s.measurements[1].valid);
        assert_eq!(s.measurements[1].projection_basis, Some(Basis::Estimate));
    }
}
