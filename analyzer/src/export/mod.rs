//! What leaves the database for other tools: a Perfetto trace ([`perfetto`]), a Parquet dataset
//! ([`parquet`]) and plots ([`plot`], drawn as SVG by [`svg`] in the colours of [`palette`],
//! rasterized by [`png`]).

pub mod palette;
pub mod parquet;
pub mod perfetto;
pub mod plot;
pub mod png;
pub mod rocpd;
pub mod svg;

use std::path::Path;

use anyhow::{Context, Result};

use crate::db;

/// `krphase export perfetto [RUNS...] -o FILE [--format F]`: ONE trace of every selected run
/// (a label: all its runs; none given: every run), in `format` or, when none is given, the one
/// the file's extension asks for (`.json`: JSON; anything else: Perfetto protobuf).
pub fn perfetto_command(
    db_path: &Path,
    runs: &[String],
    output: &Path,
    format: Option<perfetto::TraceFormat>,
) -> Result<()> {
    let conn = db::open_existing(db_path)?;
    let ids = db::runs::select_all(&conn, runs)?;
    let format = format.unwrap_or_else(|| perfetto::TraceFormat::for_path(output));
    let w = perfetto::export(&conn, &ids, output, format)?;
    let what = match format {
        perfetto::TraceFormat::Pftrace => "Perfetto protobuf",
        perfetto::TraceFormat::Json => "Chrome JSON",
    };
    println!(
        "{}: {what}, {} bytes, {} {} of {} run{} ({})",
        output.display(),
        w.bytes,
        w.events,
        if format == perfetto::TraceFormat::Json {
            "trace events"
        } else {
            "packets"
        },
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        db::runs::id_list(&ids)
    );
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
