//! Per-run summaries kept in the database: for each run, what `report`, `compare` and the
//! attribution print of its windows, so that they read a few rows per run instead of every window
//! through the `krphase_window_phase` view.
//!
//! A summary holds, over the run's replayed windows, per phase (and the window rest: the window
//! minus its top-level phases), for the whole run and for each kernel: the windows carrying the
//! phase, the sum of its values, the sum clamped at zero (the report's totals), the sum of squares,
//! the windows per basis, and *selected order statistics* — the exact values at the ranks every
//! quantile in [`QUANTILES`] and a median's distribution-free bounds read (`db/quantiles.rs`). So
//! every quantile a summary answers is exact, not binned; a quantile outside that list, or one
//! over several runs pooled (not derivable from per-run order statistics), is not answered from
//! here. Beside the phases: the run's tallies (declines by reason, bytes, stuck windows, ...), its
//! per-pass-index GPU figures and its plain dispatches.
//!
//! **Kept right.** The rows are a cache of what the windows say, with one rule: a run's summary is
//! used only when its row exists at [`SUMMARY_VERSION`]; otherwise readers compute the same figures
//! from the windows (and write nothing). Writers keep it present: `import` summarises a run in the
//! transaction that stores it; `import-log` in the one that joins its lines (the view's figures of
//! those windows change); migrating a database summarises every run that lacks one. Triggers
//! (migration 12) delete a run's summary whenever what it summarises changes afterwards: an SDK
//! log record joined, unjoined or removed, a window, pass or plain dispatch updated or deleted, the
//! run's window range moved; deleting the run deletes it. Only `import` adds windows, passes and
//! dispatches to a run, and it summarises the run after it has added them all.

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;

use super::basis::Basis;
use super::phases::PHASES;
use super::quantiles::{interpolated, median_bound_ranks, quantile_ranks};

mod build;
mod fresh;
mod rows;
mod rows_seen;

pub use build::{
    Builder, PassSummary, PlainSummary, build, covers, pass_gpu, plain_dispatches, tiles,
};
pub use fresh::{FreshWindow, fill};
pub use rows_seen::RowsSeen;

/// The summaries' layout; a row of another version is ignored (and replaced by the next writer or
/// migration).
pub const SUMMARY_VERSION: i64 = 2;

/// Quantiles a summary answers exactly (besides the median's bounds).
pub const QUANTILES: &[f64] = &[0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 1.0];

/// The name of the window rest's summary (the window minus its top-level phases).
pub const REST: &str = "rest";

/// Index of the window rest in [`RunSummary::phases`] (after every phase of [`PHASES`]).
pub const REST_INDEX: usize = PHASES.len();

/// One phase's values over a set of replayed windows.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PhaseSummary {
    pub windows: u64,
    /// Sum of the values (ns).
    pub total_ns: i64,
    /// Sum of the values clamped at zero.
    pub positive_ns: i64,
    /// Sum of the squared values (for a standard deviation).
    pub sum_sq: f64,
    /// `(rank, value)` of the sorted values, ascending rank: every rank [`needed_ranks`] names.
    pub ranks: Vec<(u64, i64)>,
    /// Windows per basis of the value.
    pub bases: BTreeMap<Basis, u64>,
}

impl PhaseSummary {
    /// The value of rank `rank` (0: the smallest), when kept.
    pub fn at(&self, rank: usize) -> Option<i64> {
        let i = self
            .ranks
            .binary_search_by_key(&(rank as u64), |(r, _)| *r)
            .ok()?;
        Some(self.ranks[i].1)
    }

    /// The exact `q` quantile of the values (each clamped at zero when `clamp`), as
    /// `db/quantiles.rs` defines it; `None` without values. Every rank it reads is kept
    /// ([`RunSummary`]s are checked when read).
    pub fn quantile(&self, q: f64, clamp: bool) -> Option<f64> {
        let n = self.windows as usize;
        interpolated(n, q, |i| {
            let v = self.at(i).unwrap_or(0);
            (if clamp { v.max(0) } else { v }) as f64
        })
    }

    /// Whether every rank the quantiles of [`QUANTILES`] and the median's bounds read is kept.
    fn complete(&self) -> bool {
        needed_ranks(self.windows as usize)
            .iter()
            .all(|&r| self.at(r).is_some())
    }
}

/// The ranks a summary of `n` values keeps, ascending and distinct.
pub fn needed_ranks(n: usize) -> Vec<usize> {
    if n == 0 {
        return Vec::new();
    }
    let (lo, hi) = median_bound_ranks(n);
    let mut r: Vec<usize> = QUANTILES
        .iter()
        .flat_map(|&q| quantile_ranks(n, q))
        .chain([0, n - 1, lo, hi])
        .collect();
    r.sort_unstable();
    r.dedup();
    r
}

/// What a run's replayed and declined windows add up to, beside the phases.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Tallies {
    pub replayed: u64,
    pub declined: u64,
    /// Declined windows whose dispatch did not also run once as a plain dispatch.
    pub declined_without_plain: u64,
    pub stuck: u64,
    pub stuck_ns: i64,
    /// Window time of the declined windows, and of the tool's opt-outs among them.
    pub declined_ns: i64,
    pub opt_out_windows: u64,
    pub opt_out_ns: i64,
    /// Replayed windows' snapshot bytes, and those times their restores.
    pub snapshot_bytes: i64,
    pub restore_bytes: i64,
    /// A replayed window carries an SDK snapshot time.
    pub log_joined: bool,
    pub executed_passes: i64,
    pub restores: i64,
    /// Replayed windows whose window is not measured in process, and those that are the passes'
    /// span (dispatch records).
    pub observed: u64,
    pub spans: u64,
    pub declines_by_reason: BTreeMap<String, u64>,
    /// Replayed windows per basis of their snapshot bytes.
    pub bytes_bases: BTreeMap<Basis, u64>,
}

/// Everything kept about one run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    pub tallies: Tallies,
    /// The whole run: each phase of [`PHASES`], then the window rest ([`REST_INDEX`]).
    pub phases: Vec<PhaseSummary>,
    /// The same per kernel (`""`: windows without a kernel name).
    pub kernels: BTreeMap<String, Vec<PhaseSummary>>,
    pub passes: Vec<PassSummary>,
    pub plain: PlainSummary,
}

/// The stored summary of `run`, when present, of this version and complete; `None` tells the
/// caller to compute its figures from the windows.
pub fn load(conn: &Connection, run: i64) -> Result<Option<RunSummary>> {
    let Some(s) = rows::read(conn, run)? else {
        return Ok(None);
    };
    let complete = s.phases.len() == PHASES.len() + 1 && s.phases.iter().all(|p| p.complete());
    Ok(complete.then_some(s))
}

/// Summarises `run` from its windows and stores the summary, replacing any other.
pub fn refresh(conn: &Connection, run: i64) -> Result<()> {
    let s = build(conn, run)?;
    rows::write(conn, run, &s)
}

/// Stores the summary `import` gathered of the windows it wrote for `run` ([`fill`]), unless an
/// SDK log record already points into the run's window ids (rows a deleted run left behind): the
/// view joins those, so the run is then summarised through the view. Debug builds check the
/// summary against the view's and refuse the import when they differ.
pub fn store_imported(conn: &Connection, run: i64, gathered: Builder) -> Result<()> {
    let joined = match super::phases::window_range(conn, run)? {
        Some((lo, hi)) => conn.query_row(
            "SELECT EXISTS (SELECT 1 FROM krphase_sdk_log WHERE window_id BETWEEN ?1 AND ?2)",
            [lo, hi],
            |r| r.get::<_, bool>(0),
        )?,
        None => false,
    };
    if joined {
        return refresh(conn, run);
    }
    let s = gathered.finish(conn, run)?;
    if cfg!(debug_assertions) && s != build(conn, run)? {
        anyhow::bail!("run {run}: the summary import gathered differs from the view's");
    }
    rows::write(conn, run, &s)
}

/// Summarises every run that has no summary of this version (a migration; `import-log` for the
/// runs whose windows it joined).
pub fn refresh_missing(conn: &Connection) -> Result<usize> {
    let runs: Vec<i64> = conn
        .prepare(
            "SELECT r.id FROM krphase_run r LEFT JOIN krphase_run_stat s ON s.run_id = r.id
             WHERE s.version IS NOT ?1 ORDER BY r.id",
        )?
        .query_map([SUMMARY_VERSION], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for &r in &runs {
        refresh(conn, r)?;
    }
    Ok(runs.len())
}

/// Whether `run` has a usable summary (tests, benchmarks).
pub fn present(conn: &Connection, run: i64) -> Result<bool> {
    Ok(load(conn, run)?.is_some())
}

#[cfg(test)]
mod tests;
