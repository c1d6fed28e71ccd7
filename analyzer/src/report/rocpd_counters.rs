//! Counters from rocpd beside phase costs: per kernel of a run with an imported rocpd database
//! (`import-rocpd`), the replay overhead of its windows (window − the passes' GPU time, as
//! krphase measured it) next to the counter values rocprofv3 stored for the same dispatches.
//!
//! rocpd stores no pass, so a counter collected in several passes has several rows per dispatch;
//! the value shown is their mean, with the rows per dispatch beside it (rocpd's own
//! `counters_collection` view sums them instead, which multiplies such a counter).

use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use super::fmt::{duration_short, markers};
use super::text::{push_table, table};
use crate::db::basis::Basis;

/// One counter of one kernel, from rocpd.
#[derive(Debug, Clone, Serialize)]
pub struct RocpdCounter {
    pub counter: String,
    /// Mean over its rocpd rows on the kernel's windows.
    pub mean: f64,
    /// rocpd rows per dispatch (above 1: the counter was collected in that many passes).
    pub rows_per_dispatch: f64,
    /// The kernel's mean replay overhead per unit of this counter (ns).
    pub overhead_ns_per_count: Option<f64>,
    pub basis: Basis,
}

/// One kernel: its replay overhead and its counters.
#[derive(Debug, Clone, Serialize)]
pub struct RocpdKernel {
    pub kernel: String,
    /// Replayed windows with a rocpd dispatch row.
    pub windows: u64,
    pub window_mean_ns: Option<f64>,
    /// Mean of the windows' summed pass GPU time.
    pub gpu_mean_ns: Option<f64>,
    /// Mean of window − GPU time.
    pub overhead_mean_ns: Option<f64>,
    /// Basis of the window (and so of the overhead); the GPU time is in process.
    pub overhead_basis: Vec<Basis>,
    pub counters: Vec<RocpdCounter>,
}

/// The rocpd databases imported for a run, and its kernels.
#[derive(Debug, Clone, Serialize)]
pub struct RocpdSection {
    /// `path (schema version)` of each imported database.
    pub databases: Vec<String>,
    pub kernels: Vec<RocpdKernel>,
}

fn kernels(conn: &Connection, run: i64) -> Result<Vec<RocpdKernel>> {
    let mut st = conn.prepare_cached(
        "SELECT COALESCE(d.kernel, v.kernel, '?'), COUNT(*), AVG(v.window_ns), AVG(v.gpu_ns),
                AVG(v.window_ns - v.gpu_ns), GROUP_CONCAT(DISTINCT v.window_basis)
         FROM (SELECT DISTINCT window_id, kernel FROM krphase_rocpd_dispatch
               WHERE run_id = ?1 AND window_id IS NOT NULL) d
         JOIN krphase_window_phase v ON v.window_id = d.window_id
         WHERE v.outcome = 'replayed'
         GROUP BY 1 ORDER BY SUM(v.window_ns - v.gpu_ns) DESC, 1",
    )?;
    let rows = st.query_map([run], |r| {
        let bases: Option<String> = r.get(5)?;
        Ok(RocpdKernel {
            kernel: r.get(0)?,
            windows: r.get::<_, i64>(1)? as u64,
            window_mean_ns: r.get(2)?,
            gpu_mean_ns: r.get(3)?,
            overhead_mean_ns: r.get(4)?,
            overhead_basis: bases
                .unwrap_or_default()
                .split(',')
                .filter_map(Basis::parse)
                .collect(),
            counters: Vec::new(),
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

fn counters(conn: &Connection, run: i64, k: &RocpdKernel) -> Result<Vec<RocpdCounter>> {
    let mut st = conn.prepare_cached(
        "SELECT c.counter, AVG(c.value), COUNT(*) * 1.0 / COUNT(DISTINCT c.window_id)
         FROM krphase_rocpd_counter c
         JOIN krphase_window_phase v ON v.window_id = c.window_id AND v.outcome = 'replayed'
         WHERE c.run_id = ?1 AND COALESCE((SELECT d.kernel FROM krphase_rocpd_dispatch d
                 WHERE d.rocpd_file_id = c.rocpd_file_id AND d.dispatch_id = c.dispatch_id
                 LIMIT 1), v.kernel, '?') = ?2
         GROUP BY c.counter ORDER BY c.counter",
    )?;
    let rows = st.query_map(rusqlite::params![run, k.kernel], |r| {
        let mean: f64 = r.get(1)?;
        Ok(RocpdCounter {
            counter: r.get(0)?,
            mean,
            rows_per_dispatch: r.get(2)?,
            overhead_ns_per_count: k.overhead_mean_ns.filter(|_| mean > 0.0).map(|o| o / mean),
            basis: Basis::Rocpd,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The section of run `run`, `None` when no rocpd database was imported for it.
pub fn rocpd_section(conn: &Connection, run: i64) -> Result<Option<RocpdSection>> {
    let mut st = conn.prepare_cached(
        "SELECT path || ' (rocpd schema ' || schema_version || ')' FROM krphase_rocpd_file
         WHERE run_id = ?1 ORDER BY id",
    )?;
    let databases: Vec<String> = st
        .query_map([run], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if databases.is_empty() {
        return Ok(None);
    }
    let mut ks = kernels(conn, run)?;
    for k in &mut ks {
        k.counters = counters(conn, run, k)?;
    }
    Ok(Some(RocpdSection {
        databases,
        kernels: ks,
    }))
}

/// The table: one row per kernel and counter.
pub fn render(s: &RocpdSection, markdown: bool, out: &mut String) {
    let bases: Vec<Basis> = s
        .kernels
        .iter()
        .flat_map(|k| k.overhead_basis.iter().copied())
        .collect();
    let _ = writeln!(
        out,
        "counters from rocpd [{}] beside replay overhead [{}] (window − pass GPU time), per kernel; \
         from {}:",
        Basis::Rocpd.marker(),
        markers(&bases),
        s.databases.join(", ")
    );
    if markdown {
        out.push('\n');
    }
    let mut t = table(
        markdown,
        &[
            "kernel",
            "n",
            "window",
            "pass GPU",
            "overhead",
            "counter",
            "value",
            "rows/dispatch",
            "overhead/count",
        ],
    );
    let ns = |v: Option<f64>| v.map_or("-".into(), duration_short);
    for k in &s.kernels {
        let head = [
            k.kernel.clone(),
            k.windows.to_string(),
            ns(k.window_mean_ns),
            ns(k.gpu_mean_ns),
            ns(k.overhead_mean_ns),
        ];
        if k.counters.is_empty() {
            let mut row = head.to_vec();
            row.extend(["-".into(), "-".into(), "-".into(), "-".into()]);
            t.add_row(row);
        }
        for c in &k.counters {
            let mut row = head.to_vec();
            row.extend([
                c.counter.clone(),
                format!("{}", c.mean),
                format!("{:.2}", c.rows_per_dispatch),
                c.overhead_ns_per_count.map_or("-".into(), duration_short),
            ]);
            t.add_row(row);
        }
    }
    push_table(out, &t, markdown);
    out.push('\n');
}

/// One run of one side of a comparison, with its rocpd section.
#[derive(Debug, Clone, Serialize)]
pub struct SideRocpd {
    /// `A` or `B`.
    pub side: String,
    pub run_id: i64,
    pub section: RocpdSection,
}

/// The rocpd sections of the compared runs (those with an imported rocpd database).
pub fn sides(conn: &Connection, a: &[i64], b: &[i64]) -> Result<Vec<SideRocpd>> {
    let mut out = Vec::new();
    for (side, runs) in [("A", a), ("B", b)] {
        for &run_id in runs {
            if let Some(section) = rocpd_section(conn, run_id)? {
                out.push(SideRocpd {
                    side: side.into(),
                    run_id,
                    section,
                });
            }
        }
    }
    Ok(out)
}

/// Each compared run's table, headed by its side and run.
pub fn render_sides(sides: &[SideRocpd], markdown: bool, out: &mut String) {
    for s in sides {
        let _ = writeln!(out, "\n{} (run {}):", s.side, s.run_id);
        render(&s.section, markdown, out);
    }
}
