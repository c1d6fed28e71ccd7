//! `krphase report`: the runs chosen by `--run` / `--label`, the whole-run measurements linked to
//! them and the bench summary, each run's answers (`answers/`) written in one format: a table,
//! CSV, JSON, Markdown or an HTML page ([`formats`]; the run's own sections in [`text`] and
//! [`csv`]), or with `--by rank` one row per rank ([`by_rank`]).

pub mod by_rank;
pub mod csv;
pub mod fidelity;
pub mod formats;
pub mod text;

#[cfg(test)]
mod tests;

use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::Connection;

use crate::answers::{RunReport, run_report};
use crate::db::measurements::MeasurementFilter;
use crate::render::Format;
pub use formats::{PlotFn, render, render_answer, render_html, render_with_bench, summary_screen};

/// What `report`'s detail is made of.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// One section per run.
    Run,
    /// One row per rank, after the cross-rank summary.
    Rank,
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
        let text = by_rank::render(&reports, format)?;
        return write_or_print(text, output, &reports);
    }
    let m = crate::answers::measurements::gather(&conn, &filter)?;
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
    print!("{}", summary_screen(reports));
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
