//! The report in each format: the summary screen and the findings, then each run's sections, the
//! measurements, the bench summary and the basis legend, as a table, Markdown, CSV, JSON or one
//! HTML page (with the plots and the provenance block).

use anyhow::Result;
use rusqlite::Connection;

use super::{csv, text};
use crate::answers::RunReport;
use crate::answers::findings;
use crate::answers::measurements::{self, MeasurementSection};
use crate::answers::overview;
use crate::bench::summary;
use crate::compare::provenance;
use crate::db::measurements::MeasurementFilter;
use crate::render::{Format, fmt, html};

/// Renders run reports alone in `format` (no measurements).
pub fn render(reports: &[RunReport], format: Format) -> Result<String> {
    render_parts(
        reports,
        &MeasurementSection::default(),
        None,
        format,
        Vec::new(),
    )
}

/// The bench summary and its JSON, when the database holds bench experiments.
type Bench = Option<(summary::BenchSummary, summary::BenchJson)>;

/// The summary screen and the findings (`markdown`: as Markdown, under the report's title).
pub(super) fn head_text(o: &overview::Overview, found: &[findings::Finding], md: bool) -> String {
    let mut s = String::new();
    if md {
        s.push_str("# krphase report\n\n");
    }
    if o.runs > 0 {
        s.push_str(&overview::render(o, md));
        s.push_str(&findings::render(found, md));
    }
    s
}

/// The detail after the summary: each run, the measurements, the bench summary, the legend.
fn body_text(
    reports: &[RunReport],
    measurements: &MeasurementSection,
    bench: &Bench,
    md: bool,
) -> String {
    let mut s = String::new();
    for r in reports {
        text::render_run(r, md, &mut s);
    }
    measurements::render_text(measurements, md, &mut s);
    if let Some((b, _)) = bench {
        s.push_str(&summary::render_summary(b));
        s.push('\n');
    }
    let fence = if md { "```\n" } else { "" };
    s.push_str(fence);
    s.push_str(&fmt::basis_legend());
    s.push_str(fence);
    s
}

/// Renders the runs, the measurements and the bench summary in `format`; `tail` is what an HTML
/// page adds after them (plots, comparisons, provenance; ignored by the other formats).
fn render_parts(
    reports: &[RunReport],
    measurements: &MeasurementSection,
    bench: Bench,
    format: Format,
    tail: Vec<html::Part>,
) -> Result<String> {
    let o = overview::Overview::of(reports);
    let found = findings::findings(&o);
    Ok(match format {
        Format::Json => {
            let mut v = serde_json::json!({ "summary": o, "findings": found, "runs": reports });
            if !measurements.is_empty() {
                v["measurements"] = serde_json::to_value(&measurements.measurements)?;
                v["warnings"] = serde_json::to_value(measurements.warnings())?;
            }
            if let Some((_, j)) = &bench {
                v["bench"] = serde_json::to_value(j)?;
            }
            let mut s = serde_json::to_string_pretty(&v)?;
            s.push('\n');
            s
        }
        Format::Csv => {
            let mut s = csv::render_csv(reports, measurements, bench.as_ref().map(|b| &b.0))?;
            s.push_str(&csv::findings_rows(&found)?);
            s
        }
        Format::Table | Format::Markdown => {
            let md = format == Format::Markdown;
            head_text(&o, &found, md) + &body_text(reports, measurements, &bench, md)
        }
        Format::Html => {
            let runs: Vec<(i64, Option<String>)> = reports
                .iter()
                .map(|r| (r.run_id, r.label.clone()))
                .collect();
            let mut parts = vec![
                html::Part::Markdown(head_text(&o, &found, true)),
                html::Part::Html(html::runs_nav(&runs)),
                html::Part::Markdown(body_text(reports, measurements, &bench, true)),
            ];
            parts.extend(tail);
            html::page("krphase report", &parts)
        }
    })
}

/// The summary screen and the findings of `reports`, as terminal text.
pub fn summary_screen(reports: &[RunReport]) -> String {
    let o = overview::Overview::of(reports);
    head_text(&o, &findings::findings(&o), false)
}

/// The bench summary of the database, when it holds bench experiments.
fn bench_of(conn: &Connection) -> Result<Bench> {
    Ok(match summary::summarize(conn)? {
        Some(s) => summary::report_json(conn)?.map(|j| (s, j)),
        None => None,
    })
}

/// Draws the plots of runs as `(file name, SVG text)`: the export module's plots, handed in by
/// the caller so that the report and export stay apart.
pub type PlotFn = fn(&Connection, &[i64]) -> Result<Vec<(String, String)>>;

/// The HTML page of `reports` with the measurements, the bench summary, the plots of the runs
/// (drawn by `plots` and inlined), `extra` sections (comparisons, the stack) and the
/// provenance block.
pub fn render_html(
    conn: &Connection,
    reports: &[RunReport],
    measurements: &MeasurementSection,
    (extra, plots): (Vec<html::Part>, PlotFn),
    command: &str,
) -> Result<String> {
    let ids: Vec<i64> = reports.iter().map(|r| r.run_id).collect();
    let mut tail = Vec::new();
    if !ids.is_empty() {
        tail.push(html::Part::Plots("plots".into(), plots(conn, &ids)?));
    }
    tail.extend(extra);
    let prov = provenance::Provenance::of_runs(conn, &ids, command)?;
    tail.push(html::Part::Html(format!(
        "<h2>provenance</h2>\n{}",
        prov.to_html()
    )));
    render_parts(reports, measurements, bench_of(conn)?, Format::Html, tail)
}

/// Renders reports in `format` together with the database's measurements and whole-run bench
/// summary (P1-P6), when it holds any: the `measurements` and `bench` keys of the JSON, their
/// tables after a table or Markdown report, `measurement` and `bench` rows in CSV.
pub fn render_with_bench(
    conn: &Connection,
    reports: &[RunReport],
    format: Format,
) -> Result<String> {
    let m = measurements::gather(conn, &MeasurementFilter::All)?;
    render_answer(conn, reports, &m, format)
}

/// As [`render_with_bench`], with the measurements given.
pub fn render_answer(
    conn: &Connection,
    reports: &[RunReport],
    measurements: &MeasurementSection,
    format: Format,
) -> Result<String> {
    render_parts(reports, measurements, bench_of(conn)?, format, Vec::new())
}
