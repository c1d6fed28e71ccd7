//! What leaves the database for other tools: a Perfetto trace ([`perfetto`]) and SVG plots
//! ([`plot`], drawn by [`svg`]).

pub mod perfetto;
pub mod plot;
pub mod svg;

use std::path::Path;

use anyhow::Result;

use crate::db;

/// `krphase export perfetto RUN -o FILE`.
pub fn perfetto_command(db_path: &Path, run: &str, output: &Path) -> Result<()> {
    let conn = db::open_existing(db_path)?;
    let run = db::runs::resolve_run(&conn, run)?;
    let n = perfetto::export_perfetto(&conn, run, output)?;
    println!("{}: {n} trace events of run {run}", output.display());
    Ok(())
}

/// `krphase plot [RUN...] -o DIR`.
pub fn plot_command(db_path: &Path, runs: &[String], output: &Path) -> Result<()> {
    let conn = db::open_existing(db_path)?;
    let ids = runs
        .iter()
        .map(|r| db::runs::resolve_run(&conn, r))
        .collect::<Result<Vec<_>>>()?;
    for f in plot::plot(&conn, &ids, output)? {
        println!("{}", f.display());
    }
    Ok(())
}
