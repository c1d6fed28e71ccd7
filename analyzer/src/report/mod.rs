//! `krphase report`: per-run answers — what was replayed or declined and why, where each
//! window's time went (per phase: total, share, p50/p90/p99/max), bytes moved and at what rate,
//! GPU vs wall time, the non-replayed dispatch tax, and the whole-run share when a measurement is
//! linked. Renders as a table, CSV, JSON or Markdown. Also home of `krphase compare` and the
//! bench summary, and of the statistics ([`stats`]) and figure formatting ([`fmt`]) every answer
//! uses.

pub mod attribution;
pub mod bench_summary;
#[cfg(test)]
pub mod bootstrap;
pub mod compare;
pub mod compare_builds;
pub mod compare_markdown;
pub mod compare_measurements;
pub mod csv;
pub mod evidence_notes;
pub mod findings;
pub mod fmt;
pub mod html;
pub mod interval;
pub mod kernels;
pub mod measurements;
pub mod overview;
pub mod provenance;
pub mod ranks;
pub mod ranks_report;
pub mod run_report;
pub mod run_test;
pub mod runs_list;
pub mod stats;
pub mod term_table;
pub mod text;
pub mod verdict;

use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::Connection;

use crate::db::measurements::MeasurementFilter;
use measurements::MeasurementSection;
pub use run_report::{RunReport, run_report};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
    Markdown,
    /// One self-contained page (tables, plots inlined, no network needed).
    Html,
}

/// What `report`'s detail is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// One section per run.
    Run,
    /// One row per rank, after the cross-rank summary.
    Rank,
}

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
type Bench = Option<(bench_summary::BenchSummary, bench_summary::BenchJson)>;

/// The summary screen and the findings (`markdown`: as Markdown, under the report's title).
fn head_text(o: &overview::Overview, found: &[findings::Finding], md: bool) -> String {
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
        s.push_str(&bench_summary::render_summary(b));
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
    Ok(match bench_summary::summarize(conn)? {
        Some(s) => bench_summary::report_json(conn)?.map(|j| (s, j)),
        None => None,
    })
}

/// Draws the plots of runs as `(file name, SVG text)` (the export module's plots; handed in, as
/// export depends on this module).
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

/// What `--run SEL` selects for the report: its runs (the selection rule, `db/runs.rs`) and the
/// measurements linked to them or carrying the label; a label that names only measurements
/// selects those. No selector: everything.
fn selection(conn: &Connection, sel: Option<&str>) -> Result<(Vec<i64>, MeasurementFilter)> {
    let Some(sel) = sel else {
        return Ok((crate::db::runs::all_runs(conn)?, MeasurementFilter::All));
    };
    let by_label = MeasurementFilter::Label(sel.to_string());
    match crate::db::runs::select(conn, sel) {
        Ok(ids) => {
            let linked = MeasurementFilter::LinkedTo(ids.clone());
            Ok((ids, MeasurementFilter::Any(vec![linked, by_label])))
        }
        Err(e) => {
            let labels = crate::db::measurements::measurement_labels(conn)?;
            if labels.iter().any(|l| l == sel) {
                Ok((Vec::new(), by_label))
            } else {
                Err(e)
            }
        }
    }
}

/// `krphase report`: the runs chosen by `--run` / `--label` (default: every run), the
/// whole-run measurements linked to them, and the bench experiments (P1-P6) when the database
/// holds any, in `format`: on stdout, or with `output` into that file, the summary screen then
/// printed on stdout. A database holding only measurements gets those. Rows whose
/// kernel-replay claim fails get one warning each on stderr.
pub fn report_command(
    db: &Path,
    (run, label, by): (Option<&str>, Option<&str>, By),
    (format, plots): (Format, PlotFn),
    output: Option<&Path>,
) -> Result<()> {
    let conn = crate::db::open_existing(db)?;
    let (ids, filter) = selection(&conn, run.or(label))?;
    if by == By::Rank {
        let reports = ids
            .iter()
            .map(|&id| run_report(&conn, id))
            .collect::<Result<Vec<_>>>()?;
        let text = ranks_report::render(&reports, format)?;
        return write_or_print(text, output, &reports);
    }
    let m = measurements::gather(&conn, &filter)?;
    if ids.is_empty() && m.is_empty() {
        bail!(
            "the database holds no runs and no whole-run measurements (run `krphase import`, \
             `import-harness` or `import-benchmark` first)"
        );
    }
    let reports = ids
        .iter()
        .map(|&id| run_report(&conn, id))
        .collect::<Result<Vec<_>>>()?;
    for w in m.warnings() {
        eprintln!("krphase: warning: {w}");
    }
    let text = match format {
        Format::Html => render_html(&conn, &reports, &m, (Vec::new(), plots), &this_command())?,
        _ => render_answer(&conn, &reports, &m, format)?,
    };
    write_or_print(text, output, &reports)
}

/// Prints `text`, or writes it into `output` and prints the summary screen and the file's name.
fn write_or_print(text: String, output: Option<&Path>, reports: &[RunReport]) -> Result<()> {
    let Some(path) = output else {
        print!("{text}");
        return Ok(());
    };
    std::fs::write(path, text).with_context(|| format!("cannot write {}", path.display()))?;
    let o = overview::Overview::of(reports);
    print!("{}", head_text(&o, &findings::findings(&o), false));
    println!("the whole report: {}", path.display());
    Ok(())
}

/// This process's command line, for the provenance block.
pub fn this_command() -> String {
    let args: Vec<String> = std::env::args().collect();
    let mut cmd = shlex::try_join(args.iter().map(String::as_str)).unwrap_or_default();
    if let Some(rest) = cmd
        .split_once(' ')
        .map(|(exe, rest)| (exe.rsplit('/').next(), rest))
    {
        cmd = format!("{} {}", rest.0.unwrap_or("krphase"), rest.1);
    }
    cmd
}

/// `krphase compare A B`: builds the comparison and prints it in `format` (or, with `output`,
/// writes it into that file and says so).
pub fn compare_command(
    db: &std::path::Path,
    a: &str,
    b: &str,
    what: compare_builds::CompareWhat,
    format: Format,
    margin_pct: f64,
    output: Option<&Path>,
) -> Result<()> {
    if !(margin_pct > 0.0 && margin_pct < 100.0) {
        anyhow::bail!("--margin must be a percentage between 0 and 100, not {margin_pct}");
    }
    let conn = crate::db::open_existing(db)?;
    let c = compare_builds::compare_builds(&conn, a, b, what, margin_pct)?;
    let text = match format {
        Format::Table => compare_builds::render_text(&c),
        Format::Csv => compare_builds::render_csv(&c)?,
        Format::Json => serde_json::to_string_pretty(&c)? + "\n",
        Format::Markdown => compare_markdown::render_markdown(&c),
        Format::Html => html::page(
            &format!("krphase compare {a} {b}"),
            &[html::Part::Markdown(compare_markdown::render_markdown(&c))],
        ),
    };
    match output {
        None => print!("{text}"),
        Some(path) => {
            std::fs::write(path, text)
                .with_context(|| format!("cannot write {}", path.display()))?;
            println!("wrote {}", path.display());
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::{Connection, params};

    /// A run with two replayed 2-pass windows and one decline, all times known.
    pub(crate) fn fixture() -> Connection {
        let c = crate::db::open_in_memory().unwrap();
        c.execute(
            "INSERT INTO krphase_run (id, path, file_hash, label, pid, \"start\", \"end\", truncated, imported_at)
             VALUES (1, 'f', 'h', 'x', 10, 0, 1000000, 0, 'now')",
            [],
        )
        .unwrap();
        // window: start, pcr, first enter, last exit, end, pass, gpu, restore, restores, bytes
        let ws: [[i64; 10]; 2] = [
            [1000, 1100, 2100, 4100, 4200, 1500, 1000, 500, 1, 1_000_000],
            [
                10000, 10100, 12100, 15100, 15300, 2000, 1200, 1000, 1, 1_000_000,
            ],
        ];
        for (i, w) in ws.iter().enumerate() {
            c.execute(
                "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, executed_passes,
                   \"start\", pass_count_return, first_pass_enter, last_pass_exit, \"end\",
                   pass_ns, gpu_ns, restore_ns, restores, bytes_estimate)
                 VALUES (1, ?1, 'k', 'replayed', 'none', 2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![i as i64 + 1, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9]],
            )
            .unwrap();
        }
        c.execute(
            "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, \"start\", \"end\")
             VALUES (1, 3, 'k', 'declined', 'untracked_memory', 20000, 20400)",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO krphase_dispatch (run_id, dispatch_id, \"start\", \"end\") VALUES (1, 4, 30000, 30050)",
            [],
        )
        .unwrap();
        c
    }

    #[test]
    fn report_figures_match_the_fixture() {
        let c = fixture();
        let r = run_report(&c, 1).unwrap();
        assert_eq!(
            (r.windows.replayed, r.windows.declined, r.dispatches_seen),
            (2, 1, 4)
        );
        assert_eq!(r.declines_by_reason.get("untracked_memory"), Some(&1));
        let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
        assert_eq!(p("pre-pass").total_ns, 1000 + 2000);
        assert_eq!(p("window").total_ns, 3200 + 5300);
        assert_eq!(p("restore").total_ns, 1500);
        assert_eq!(p("tail").total_ns, 100 + 200);
        assert_eq!(p("drain").samples, 0, "no log joined");
        assert_eq!(p("pre-pass").max_ns, Some(2000));
        assert_eq!(p("window").p50_ns, Some(4250));
        assert_eq!(p("window").p99_ns, Some(5279));
        assert_eq!(r.bytes.snapshot_bytes_total, 2_000_000);
        assert_eq!(r.bytes.restore_bytes_total, 2_000_000);
        let gbps = r.bytes.restore_gbps.unwrap();
        assert!((gbps - 2_000_000.0 / 1500.0).abs() < 1e-9);
        assert_eq!(r.dispatch_tax.plain_enqueue_mean_ns, Some(50.0));
        let g = &r.groups[0];
        assert!((g.share_of_wall.unwrap() - 8500.0 / 1_000_000.0).abs() < 1e-12);
        for f in [Format::Table, Format::Csv, Format::Json, Format::Markdown] {
            let s = render(std::slice::from_ref(&r), f).unwrap();
            assert!(s.contains("pre-pass"), "{f:?}");
        }
        let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
        for line in table.lines() {
            assert!(line.chars().count() <= 100, "too wide: {line}");
        }
        assert!(run_report(&c, 2).is_err());
    }

    #[test]
    fn linked_measurement_gives_whole_run_and_overhead_shares() {
        let c = fixture();
        c.execute_batch(
            "INSERT INTO krphase_measurement (id, source, experiment, variant, mode, median_s)
               VALUES (1, 'replay_perf', 'P2', 'passes-1', 'single-pass', 0.000010),
                      (2, 'replay_perf', 'P2', 'passes-2', 'kernel-replay', 0.000020);
             INSERT INTO krphase_measurement_run (measurement_id, run_id) VALUES (2, 1);",
        )
        .unwrap();
        let r = run_report(&c, 1).unwrap();
        let m = r.measurement.clone().expect("linked");
        assert_eq!(m.reference_variant.as_deref(), Some("passes-1"));
        let overhead = m.overhead_s.unwrap();
        assert!((overhead - 0.000010).abs() < 1e-12);
        let window = m.phases.iter().find(|p| p.phase == "window").unwrap();
        // 8500 ns of windows over a 20 µs run and a 10 µs overhead.
        assert!((window.share_of_wall.unwrap() - 0.425).abs() < 1e-9);
        assert!((window.share_of_overhead.unwrap() - 0.85).abs() < 1e-9);
        assert_eq!(m.drain_fraction_of_window, None, "no log joined");
        let text = render(std::slice::from_ref(&r), Format::Table).unwrap();
        assert!(
            text.contains("share of overhead") && text.contains("P5"),
            "{text}"
        );
    }

    #[test]
    fn joined_log_splits_the_pre_pass() {
        let c = fixture();
        c.execute(
            "INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at) VALUES (1, 'l', 'h', 1, 'now')",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id, snapshot_ns, snapshot_bytes)
             VALUES (1, 1, 1, 1, 600, 1000000)",
            [],
        )
        .unwrap();
        let r = run_report(&c, 1).unwrap();
        let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
        assert_eq!((p("snapshot").total_ns, p("drain").total_ns), (600, 400));
        assert!(r.log_joined);
    }

    /// Sum of the top-level shares (every phase without a parent, except the window itself).
    fn top_level_share_sum(r: &RunReport) -> f64 {
        r.phases
            .iter()
            .filter(|p| p.parent.is_none() && p.phase != "window")
            .filter_map(|p| p.share_of_window)
            .sum()
    }

    #[test]
    fn shares_nest_and_top_level_shares_sum_to_the_window() {
        use crate::db::basis::Basis;
        let c = fixture();
        c.execute_batch(
            "INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at)
               VALUES (1, 'l', 'h', 1, 'now');
             INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id, snapshot_ns)
               VALUES (1, 1, 1, 1, 600);",
        )
        .unwrap();
        let r = run_report(&c, 1).unwrap();
        let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
        assert!(
            (top_level_share_sum(&r) - 1.0).abs() < 1e-12,
            "{:?}",
            r.phases
        );
        assert!(r.phases.iter().all(|p| p.phase != run_report::UNATTRIBUTED));
        assert_eq!(p("drain").parent.as_deref(), Some("pre-pass"));
        assert_eq!(p("gpu").parent.as_deref(), Some("pass exec"));
        // GPU 2200 of pass exec 3500; snapshot 600 of pre-pass 1000 (the one joined window).
        assert!((p("gpu").share_of_parent.unwrap() - 2200.0 / 3500.0).abs() < 1e-12);
        assert!((p("snapshot").share_of_parent.unwrap() - 600.0 / 3000.0).abs() < 1e-12);
        assert_eq!(p("pre-pass").basis, vec![Basis::InProcess]);
        // The snapshot time comes from the phase line, whose format the SDK has not published.
        assert_eq!(p("snapshot").basis, vec![Basis::SdkPhaseLine]);
        assert_eq!(p("drain").basis, vec![Basis::InProcessMinusSdkLog]);
        assert_eq!(
            p("continue")
                .missing
                .as_deref()
                .map(|m| m.contains("CONTINUE")),
            Some(true)
        );
        assert_eq!(r.bytes.snapshot_gbps_basis, Basis::SdkLog);
        assert_eq!(r.bytes.snapshot_bytes_basis, vec![Basis::Estimate]);
        let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
        assert!(
            table.contains("  drain") && table.contains("M-L"),
            "{table}"
        );
        assert!(table.contains("basis of each figure"), "{table}");
        assert!(table.contains("continue: no CONTINUE records"), "{table}");
        let csv = render(std::slice::from_ref(&r), Format::Csv).unwrap();
        assert!(
            csv.starts_with("run_id,label,section,name,metric,value,basis\n"),
            "{csv}"
        );
        assert!(
            csv.contains("1,x,phase,drain,total_ns,400,in_process_minus_sdk_log"),
            "{csv}"
        );
        let v: serde_json::Value =
            serde_json::from_str(&render(std::slice::from_ref(&r), Format::Json).unwrap()).unwrap();
        let snap = &v["runs"][0]["phases"].as_array().unwrap()[3];
        assert_eq!(snap["phase"], "snapshot");
        assert_eq!(snap["basis"], serde_json::json!(["sdk_phase_line"]));
        assert_eq!(snap["parent"], "pre-pass");
    }

    /// An observe-mode window (no CONFIG or PASS callbacks): the window from the SDK's phase
    /// line, the restore from its outcome line, the dispatch-record gap as the restore's upper
    /// bound (no share: it overlaps the restore), and an `unattributed` row for the rest, so the
    /// top-level shares still add up to 100%.
    #[test]
    fn observe_mode_figures_name_their_basis_and_the_rest_is_unattributed() {
        use crate::db::basis::Basis;
        let c = crate::db::open_in_memory().unwrap();
        c.execute_batch(
            "INSERT INTO krphase_run (id, path, file_hash, mode, \"start\", \"end\", imported_at)
               VALUES (1, 'f', 'h', 'observe', 0, 100000, 'now');
             INSERT INTO krphase_window (id, run_id, dispatch_id, outcome, executed_passes,
               \"start\", \"end\", gpu_ns, restore_ns, restores)
               VALUES (1, 1, 1, 'replayed', 2, 1000, 9000, 3000, 2500, 1);
             INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at)
               VALUES (1, 'l', 'h', 1, 'now');
             INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id,
               lock_drain_ns, snapshot_ns, window_ns, restore_ns)
               VALUES (1, 1, 1, 1, 1500, 500, 10000, 2000);",
        )
        .unwrap();
        let r = run_report(&c, 1).unwrap();
        let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
        assert_eq!(p("window").total_ns, 10000);
        assert_eq!(p("window").basis, vec![Basis::SdkPhaseLine]);
        assert_eq!(
            (p("restore").total_ns, p("restore").basis.clone()),
            (2000, vec![Basis::SdkLog])
        );
        let bound = p("restore bound");
        assert_eq!(
            (bound.total_ns, bound.basis.clone()),
            (2500, vec![Basis::Dispatch])
        );
        assert_eq!(
            (bound.bound_of.as_deref(), bound.share_of_window),
            (Some("restore"), None)
        );
        assert_eq!(p("pre-pass").basis, vec![Basis::SdkPhaseLine]);
        assert_eq!(p("drain").basis, vec![Basis::SdkPhaseLine]);
        assert_eq!(p("config").samples, 0);
        assert!(p("config").missing.unwrap().contains("observe"));
        let u = p(run_report::UNATTRIBUTED);
        assert_eq!(u.total_ns, 10000 - 2000 - 2000);
        let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
        // The bound's share cell says what it bounds (a narrow terminal may wrap it).
        assert!(
            table
                .lines()
                .any(|l| l.contains("restore") && l.contains(">=")),
            "{table}"
        );
        assert!(
            (top_level_share_sum(&r) - 1.0).abs() < 1e-12,
            "{:?}",
            r.phases
        );
    }

    #[test]
    fn counter_values_per_pass_in_table_csv_and_json_with_their_basis() {
        let c = fixture();
        c.execute_batch(
            "INSERT INTO krphase_counter (run_id, window_id, dispatch_id, pass_index, counter_id,
               name, value, instances)
             VALUES (1, 1, 1, 0, 7, 'SQ_WAVES', 4096, 1), (1, 1, 1, 1, 8, 'GRBM_COUNT', 1234.5, 2),
                    (1, 2, 2, 0, 7, 'SQ_WAVES', 4096, 1), (1, 2, 2, 1, 9, NULL, 3, 1);",
        )
        .unwrap();
        let r = run_report(&c, 1).unwrap();
        assert_eq!(r.counters.len(), 4);
        assert_eq!(
            r.counters[3].counter, "counter 9",
            "an unnamed counter by its id"
        );
        let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
        assert!(table.contains("counters per pass [C]"), "{table}");
        assert!(
            table.contains("GRBM_COUNT") && table.contains("1234.5"),
            "{table}"
        );
        assert!(
            table.contains("C   measured in process (SDK counting service)"),
            "{table}"
        );
        let csv = render(std::slice::from_ref(&r), Format::Csv).unwrap();
        assert!(
            csv.contains("1,x,counter,1/1/GRBM_COUNT,value,1234.5,sdk_counting"),
            "{csv}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&render(std::slice::from_ref(&r), Format::Json).unwrap()).unwrap();
        let first = &json["runs"][0]["counters"][0];
        assert_eq!(first["counter"], "SQ_WAVES");
        assert_eq!(first["basis"], "sdk_counting");
    }
}
