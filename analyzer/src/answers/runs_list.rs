//! `krphase runs`: every imported run, one line each — id, label, pid, host, mode, replayed
//! windows, declines, wall time, file and import time — as a table, CSV, JSON or Markdown.

use std::path::Path;

use anyhow::Result;

use crate::db::runs::{RunRow, list_runs};
use crate::render::Format;
use crate::render::fmt::duration_or_dash;
use crate::render::table::table;

/// The run list in `format`.
pub fn render_runs(rows: &[RunRow], format: Format) -> Result<String> {
    Ok(match format {
        Format::Html => crate::render::html::page(
            "krphase runs",
            &[crate::render::html::Part::Markdown(render_runs(
                rows,
                Format::Markdown,
            )?)],
        ),
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&serde_json::json!({ "runs": rows }))?;
            s.push('\n');
            s
        }
        Format::Csv => {
            let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
            w.write_record([
                "run_id",
                "label",
                "pid",
                "host",
                "mode",
                "windows",
                "declines",
                "wall_ns",
                "file",
                "imported_at",
                "truncated",
                "emulated",
            ])?;
            let o = |v: Option<i64>| v.map_or(String::new(), |v| v.to_string());
            for r in rows {
                w.write_record([
                    r.run_id.to_string(),
                    r.label.clone().unwrap_or_default(),
                    o(r.pid),
                    r.host.clone().unwrap_or_default(),
                    r.mode.clone().unwrap_or_default(),
                    r.windows.to_string(),
                    r.declines.to_string(),
                    o(r.wall_ns),
                    r.file.clone(),
                    r.imported_at.clone(),
                    r.truncated.to_string(),
                    r.emulated.to_string(),
                ])?;
            }
            String::from_utf8(w.into_inner()?)?
        }
        Format::Table | Format::Markdown => render_table(rows, format == Format::Markdown),
    })
}

/// The run list as a table; the terminal's leaves out the host and the import time (CSV and
/// JSON carry them) so that it fits 100 columns without breaking a file name or a timestamp.
fn render_table(rows: &[RunRow], markdown: bool) -> String {
    let mut header = vec![
        "id", "label", "pid", "host", "mode", "windows", "declines", "wall",
    ];
    header.extend(["file", "imported"]);
    let keep = |h: &str| markdown || !matches!(h, "host" | "imported");
    let shown: Vec<&str> = header.iter().copied().filter(|h| keep(h)).collect();
    let mut t = table(markdown, &shown);
    let dash = |v: Option<String>| v.unwrap_or_else(|| "-".into());
    for r in rows {
        let cells = [
            r.run_id.to_string(),
            dash(r.label.clone()),
            dash(r.pid.map(|p| p.to_string())),
            dash(r.host.clone()),
            dash(r.mode.clone()) + if r.emulated { " EMULATED" } else { "" },
            r.windows.to_string(),
            r.declines.to_string(),
            duration_or_dash(r.wall_ns.map(|w| w as f64))
                + if r.truncated { " (truncated)" } else { "" },
            file_name(&r.file),
            r.imported_at.clone(),
        ];
        let row: Vec<String> = header
            .iter()
            .zip(cells)
            .filter(|(h, _)| keep(h))
            .map(|(_, c)| c)
            .collect();
        t.add_row(row);
    }
    if markdown {
        return format!("{t}\n");
    }
    crate::render::term_table::fit(&mut t);
    format!("{t}\nhost and import time: `krphase runs --format csv` (or json, markdown)\n")
}

/// `krphase runs [--format F]`. An empty database prints an empty list.
pub fn runs_command(db: &Path, format: Format) -> Result<()> {
    let conn = crate::db::open_existing(db)?;
    print!("{}", render_runs(&list_runs(&conn)?, format)?);
    Ok(())
}

/// The file's own name: the table shows it (a path would not fit the terminal); CSV and JSON
/// carry the whole path.
fn file_name(path: &str) -> String {
    std::path::Path::new(path)
        .file_name()
        .map_or_else(|| path.to_string(), |n| n.to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_lists_every_run() {
        let c = crate::answers::fixture::fixture();
        let rows = list_runs(&c).unwrap();
        assert_eq!((rows[0].windows, rows[0].declines), (2, 1));
        for f in [Format::Table, Format::Csv, Format::Json, Format::Markdown] {
            let s = render_runs(&rows, f).unwrap();
            assert!(s.contains('x') && s.contains("10"), "{f:?}: {s}");
        }
        let csv = render_runs(&rows, Format::Csv).unwrap();
        assert_eq!(csv.lines().count(), 2);
        let v: serde_json::Value =
            serde_json::from_str(&render_runs(&rows, Format::Json).unwrap()).unwrap();
        assert_eq!(v["runs"][0]["label"], "x");
        assert_eq!(v["runs"][0]["wall_ns"], 1_000_000);
    }
}
