//! `krphase plot [RUN...] -o DIR`: SVG plots — where a replayed window's time goes per label
//! and kernel ([`breakdown`]), a histogram per shown phase with a panel per label
//! ([`histograms`]), and phase time against pass count, footprint and queue depth where runs
//! form a sweep ([`sweeps`]). Every plot takes its colours from [`crate::export::palette`].
//!
//! [`render_all`] returns each plot as an SVG string (for reports that inline them);
//! [`plot`] writes them as files.

pub mod breakdown;
pub mod histograms;
pub mod stats;
pub mod sweeps;

use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rusqlite::Connection;

pub use breakdown::render_breakdown;
pub use histograms::render_histogram;
pub use stats::{RunStats, run_stats};
pub use sweeps::render_sweeps;

/// The figures of `runs` (every run when empty).
pub fn collect(conn: &Connection, runs: &[i64]) -> Result<Vec<RunStats>> {
    let runs: Vec<i64> = if runs.is_empty() {
        crate::db::runs::select_all(conn, &[])?
    } else {
        runs.to_vec()
    };
    runs.iter().map(|&r| run_stats(conn, r)).collect()
}

/// Every plot of `runs` (every run when empty): (file name, SVG), the breakdown first, then a
/// histogram per shown phase, then the sweeps there are.
pub fn render_all(conn: &Connection, runs: &[i64]) -> Result<Vec<(String, String)>> {
    let stats = collect(conn, runs)?;
    let mut plots = vec![("breakdown.svg".to_string(), render_breakdown(&stats))];
    for (i, name) in stats::SHOWN.iter().enumerate() {
        plots.push((histograms::file_name(name), render_histogram(&stats, i)));
    }
    plots.extend(render_sweeps(&stats));
    Ok(plots)
}

/// Writes the plots of `runs` (every run when empty) into `dir`; returns the files written.
pub fn plot(conn: &Connection, runs: &[i64], dir: &Path) -> Result<Vec<PathBuf>> {
    let plots = render_all(conn, runs)?;
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut written = Vec::new();
    for (name, svg) in plots {
        let p = dir.join(name);
        std::fs::write(&p, svg).with_context(|| format!("cannot write {}", p.display()))?;
        written.push(p);
    }
    Ok(written)
}
