//! Counters from rocpd beside phase costs: per kernel of a run with an imported rocpd database
//! (`import-rocpd`), the replay overhead of its windows (window − the passes' GPU time, as
//! krphase measured it) next to the counter values rocprofv3 stored for the same dispatches.
//! Written as one table per run (the report's section) or per compared side (`compare`).
//!
//! rocpd stores no pass, so a counter collected in several passes has several rows per dispatch;
//! the value shown is their mean, with the rows per dispatch beside it (rocpd's own
//! `counters_collection` view sums them instead, which multiplies such a counter).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::basis::Basis;
use crate::render::fmt::{duration_short, markers};
use crate::render::table::{push_table, table};

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

/// One replayed window with a rocpd dispatch row: its kernel and figures.
struct Window {
    kernel: String,
    window_ns: Option<i64>,
    gpu_ns: Option<i64>,
    basis: Option<Basis>,
}

/// The run's replayed windows that rocpd rows attach to, by window id (one pass over the
/// window view, one over the rocpd rows: the report stays linear in windows).
fn windows(conn: &Connection, run: i64) -> Result<HashMap<i64, Window>> {
    let mut names: HashMap<i64, Option<String>> = HashMap::new();
    let mut st = conn.prepare_cached(
        "SELECT window_id, kernel FROM krphase_rocpd_dispatch
         WHERE run_id = ?1 AND window_id IS NOT NULL ORDER BY rowid",
    )?;
    let mut rows = st.query([run])?;
    while let Some(r) = rows.next()? {
        names.entry(r.get(0)?).or_insert(r.get(1)?);
    }
    let mut out = HashMap::new();
    let mut st = conn.prepare_cached(
        "SELECT window_id, kernel, window_ns, gpu_ns, window_basis FROM krphase_window_phase
         WHERE run_id = ?1 AND outcome = 'replayed'",
    )?;
    let mut rows = st.query([run])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let Some(rocpd_name) = names.get(&id) else {
            continue;
        };
        let kernel = rocpd_name
            .clone()
            .or(r.get::<_, Option<String>>(1)?)
            .unwrap_or_else(|| "?".into());
        out.insert(
            id,
            Window {
                kernel,
                window_ns: r.get(2)?,
                gpu_ns: r.get(3)?,
                basis: Basis::from_sql(r.get_ref(4)?),
            },
        );
    }
    Ok(out)
}

fn mean(sum: f64, n: u64) -> Option<f64> {
    (n > 0).then(|| sum / n as f64)
}

/// Per kernel: (windows, Σ window, n window, Σ gpu, n gpu, Σ overhead, n overhead, bases).
#[derive(Default)]
struct Tally {
    windows: u64,
    sums: [(f64, u64); 3],
    bases: Vec<Basis>,
    /// Per counter: Σ value, rows, windows with a row.
    counters: BTreeMap<String, (f64, u64, HashSet<i64>)>,
}

fn kernels(conn: &Connection, run: i64) -> Result<Vec<RocpdKernel>> {
    let ws = windows(conn, run)?;
    let mut by_kernel: BTreeMap<&str, Tally> = BTreeMap::new();
    for w in ws.values() {
        let t = by_kernel.entry(&w.kernel).or_default();
        t.windows += 1;
        let overhead = w.window_ns.zip(w.gpu_ns).map(|(a, b)| a - b);
        for (slot, v) in t.sums.iter_mut().zip([w.window_ns, w.gpu_ns, overhead]) {
            if let Some(v) = v {
                slot.0 += v as f64;
                slot.1 += 1;
            }
        }
        if let Some(b) = w.basis.filter(|b| !t.bases.contains(b)) {
            t.bases.push(b);
        }
    }
    let mut st = conn.prepare_cached(
        "SELECT window_id, counter, value FROM krphase_rocpd_counter
         WHERE run_id = ?1 AND window_id IS NOT NULL",
    )?;
    let mut rows = st.query([run])?;
    while let Some(r) = rows.next()? {
        let id: i64 = r.get(0)?;
        let Some(w) = ws.get(&id) else { continue };
        let t = by_kernel.get_mut(w.kernel.as_str()).expect("tallied above");
        let c = t.counters.entry(r.get(1)?).or_default();
        c.0 += r.get::<_, f64>(2)?;
        c.1 += 1;
        c.2.insert(id);
    }
    let mut out: Vec<RocpdKernel> = by_kernel
        .into_iter()
        .map(|(kernel, t)| {
            let overhead = mean(t.sums[2].0, t.sums[2].1);
            RocpdKernel {
                kernel: crate::db::kernel_names::shown(kernel),
                windows: t.windows,
                window_mean_ns: mean(t.sums[0].0, t.sums[0].1),
                gpu_mean_ns: mean(t.sums[1].0, t.sums[1].1),
                overhead_mean_ns: overhead,
                overhead_basis: t.bases,
                counters: t
                    .counters
                    .into_iter()
                    .map(|(counter, (sum, rows, wins))| {
                        let m = sum / rows as f64;
                        RocpdCounter {
                            counter,
                            mean: m,
                            rows_per_dispatch: rows as f64 / wins.len() as f64,
                            overhead_ns_per_count: overhead.filter(|_| m > 0.0).map(|o| o / m),
                            basis: Basis::Rocpd,
                        }
                    })
                    .collect(),
            }
        })
        .collect();
    // Largest total overhead first.
    let total = |k: &RocpdKernel| k.overhead_mean_ns.unwrap_or(0.0) * k.windows as f64;
    out.sort_by(|a, b| total(b).total_cmp(&total(a)));
    Ok(out)
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
    Ok(Some(RocpdSection {
        databases,
        kernels: kernels(conn, run)?,
    }))
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

/// Counters from rocpd beside each kernel's replay overhead: one row per kernel and counter.
pub fn render_rocpd(s: &RocpdSection, markdown: bool, out: &mut String) {
    let mut bases: Vec<Basis> = s
        .kernels
        .iter()
        .flat_map(|k| k.overhead_basis.iter().copied())
        .collect();
    bases.sort();
    bases.dedup();
    let _ = writeln!(
        out,
        "counters from rocpd [{}] beside replay overhead [{}] (window − its passes' GPU time), per \
         kernel; rows: rocpd rows per dispatch (one per pass that collected the counter); per \
         count: overhead / value; from {}:",
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
            "GPU",
            "overhead",
            "counter",
            "value",
            "rows",
            "per count",
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

/// Each compared run's table, headed by its side and run.
pub fn render_rocpd_sides(sides: &[SideRocpd], markdown: bool, out: &mut String) {
    for s in sides {
        let _ = writeln!(out, "\n{} (run {}):", s.side, s.run_id);
        render_rocpd(&s.section, markdown, out);
    }
}
