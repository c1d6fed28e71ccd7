//! What leaves the database for other tools: a Perfetto trace ([`perfetto`]), a Parquet dataset
//! ([`parquet`]) and plots ([`plot`], drawn as SVG by [`svg`] in the colours of [`palette`],
//! rasterized by [`png`]).

pub mod palette;
pub mod parquet;
pub mod perfetto;
pub mod plot;
pub mod png;
pub mod svg;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};

use crate::db;

/// Where the trace of `run` goes when a selector picks `n` runs: `output` itself for one run,
/// else `output` with `-run<ID>` before its extension (`trace.json` → `trace-run7.json`).
pub fn trace_path(output: &Path, run: i64, n: usize) -> PathBuf {
    if n <= 1 {
        return output.to_path_buf();
    }
    let stem = output
        .file_stem()
        .map_or_else(|| "trace".into(), |s| s.to_string_lossy().into_owned());
    let name = match output.extension() {
        Some(ext) => format!("{stem}-run{run}.{}", ext.to_string_lossy()),
        None => format!("{stem}-run{run}"),
    };
    output.with_file_name(name)
}

/// `krphase export perfetto RUN -o FILE`: a run id writes `FILE`; a label writes one trace per
/// run it selects (`FILE` for one run, `STEM-runID.EXT` for several), one line each.
pub fn perfetto_command(db_path: &Path, run: &str, output: &Path) -> Result<()> {
    let conn = db::open_existing(db_path)?;
    let ids = db::runs::select(&conn, run)?;
    for &id in &ids {
        let path = trace_path(output, id, ids.len());
        let n = perfetto::export_perfetto(&conn, id, &path)?;
        println!("{}: {n} trace events of run {id}", path.display());
    }
    Ok(())
}

/// `krphase plot [RUN...] -o DIR [--png]`: the plots of the selected runs (a label: all of
/// them; every run when none is given), one file path a line; with `png`, each also as PNG.
pub fn plot_command(db_path: &Path, runs: &[String], output: &Path, png: bool) -> Result<()> {
    let conn = db::open_existing(db_path)?;
    let ids = db::runs::select_all(&conn, runs)?;
    let mut files = plot::plot(&conn, &ids, output)?;
    if png {
        files.extend(png::write_pngs(&files)?);
    }
    for f in files {
        println!("{}", f.display());
    }
    Ok(())
}

/// The plots of `runs` as `(file name, SVG text)`, drawn into a scratch directory (removed
/// after) for a page that inlines them.
pub fn inline_plots(conn: &rusqlite::Connection, runs: &[i64]) -> Result<Vec<(String, String)>> {
    let dir = tempfile::tempdir()?;
    let mut plots = Vec::new();
    for p in plot::plot(conn, runs, dir.path())? {
        let name = p
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
        let svg =
            std::fs::read_to_string(&p).with_context(|| format!("cannot read {}", p.display()))?;
        plots.push((name, svg));
    }
    Ok(plots)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn several_runs_get_one_trace_file_each() {
        let o = Path::new("out/trace.json");
        assert_eq!(trace_path(o, 7, 1), PathBuf::from("out/trace.json"));
        assert_eq!(trace_path(o, 7, 2), PathBuf::from("out/trace-run7.json"));
        assert_eq!(trace_path(Path::new("t"), 3, 2), PathBuf::from("t-run3"));
    }
}
