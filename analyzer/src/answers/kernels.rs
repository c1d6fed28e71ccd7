//! Per-kernel and per-agent figures of one run: which kernels' replay windows took the time
//! (windows, total, share, mean ± σ, p50/p90/p99/max, the phase that dominates them) and how the
//! windows fall on the agents (devices) that ran them.
//!
//! Kernel figures come from the run's stored summary (exact order statistics per kernel) or, when
//! it has none, from the same summary built from its windows; agent figures are sums over the
//! windows (no quantiles: one pass of SQL, no window read into memory).

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::basis::Basis;
use crate::db::phases::{PHASES, WINDOW};
use crate::db::summary::{self, PhaseSummary, tiles};
use crate::stats::ratio;

/// One kernel's replayed windows in a run.
#[derive(Debug, Clone, Serialize)]
pub struct KernelStats {
    /// The kernel's name (`?` for windows the tool could not name).
    pub kernel: String,
    /// Replayed windows of this kernel.
    pub windows: u64,
    /// Windows of this kernel declined or opted out (not replayed).
    pub declined: u64,
    pub total_ns: i64,
    /// Of the run's replayed window time.
    pub share_of_replay: Option<f64>,
    pub mean_ns: Option<f64>,
    /// Sample standard deviation (n − 1); `None` below two windows.
    pub sd_ns: Option<f64>,
    pub p50_ns: Option<i64>,
    pub p90_ns: Option<i64>,
    pub p99_ns: Option<i64>,
    pub max_ns: Option<i64>,
    /// The top-level phase with the largest total in these windows, and its share of them.
    pub top_phase: Option<String>,
    pub top_phase_share: Option<f64>,
    /// Where the window figures come from.
    pub basis: Vec<Basis>,
}

/// One agent's windows in a run.
#[derive(Debug, Clone, Serialize)]
pub struct AgentStats {
    /// The agent (device) handle the tool recorded; `None` when it recorded none.
    pub agent: Option<i64>,
    pub replayed: u64,
    pub declined: u64,
    /// Replayed window time on this agent.
    pub total_ns: i64,
    pub share_of_replay: Option<f64>,
    pub mean_ns: Option<f64>,
    pub sd_ns: Option<f64>,
    pub max_ns: Option<i64>,
    pub basis: Vec<Basis>,
}

/// Mean and sample standard deviation of `n` values with sum `total` and sum of squares `ss`.
pub fn mean_sd(n: u64, total: f64, ss: f64) -> (Option<f64>, Option<f64>) {
    if n == 0 {
        return (None, None);
    }
    let mean = total / n as f64;
    let sd = (n >= 2).then(|| ((ss - n as f64 * mean * mean).max(0.0) / (n - 1) as f64).sqrt());
    (Some(mean), sd)
}

/// The top-level phase with the largest total among `phases` (a kernel's summary, in the order
/// of [`PHASES`]), with its share of the window total.
fn top_phase(phases: &[PhaseSummary]) -> Option<(String, f64)> {
    let window = phases.get(WINDOW)?.positive_ns as f64;
    PHASES
        .iter()
        .zip(phases)
        .enumerate()
        .filter(|(k, (p, _))| *k != WINDOW && tiles(p))
        .max_by_key(|(_, (_, s))| s.positive_ns)
        .filter(|(_, (_, s))| s.positive_ns > 0)
        .and_then(|(_, (p, s))| Some((p.name.to_string(), ratio(s.positive_ns as f64, window)?)))
}

fn kernel_row(name: &str, phases: &[PhaseSummary], replay_ns: i64) -> KernelStats {
    let w = phases.get(WINDOW).cloned().unwrap_or_default();
    let q = |x: f64| w.quantile(x, true).map(|v| v.round() as i64);
    let (mean_ns, sd_ns) = mean_sd(w.windows, w.positive_ns as f64, w.sum_sq);
    let top = top_phase(phases);
    KernelStats {
        kernel: if name.is_empty() {
            "?".into()
        } else {
            crate::db::kernel_names::shown(name)
        },
        windows: w.windows,
        declined: 0,
        total_ns: w.positive_ns,
        share_of_replay: ratio(w.positive_ns as f64, replay_ns as f64),
        mean_ns,
        sd_ns,
        p50_ns: q(0.5),
        p90_ns: q(0.9),
        p99_ns: q(0.99),
        max_ns: q(1.0),
        top_phase: top.as_ref().map(|t| t.0.clone()),
        top_phase_share: top.map(|t| t.1),
        basis: w.bases.keys().copied().collect(),
    }
}

/// Declined (or opted-out) windows of `run` per kernel name.
fn declined_by_kernel(conn: &Connection, run: i64) -> Result<BTreeMap<String, u64>> {
    let mut stmt = conn.prepare_cached(
        "SELECT COALESCE(kernel, ''), COUNT(*) FROM krphase_window
         WHERE run_id = ?1 AND outcome <> 'replayed' GROUP BY 1",
    )?;
    let rows = stmt.query_map([run], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    let mut out = BTreeMap::new();
    for row in rows {
        let (k, n) = row?;
        out.insert(k, n.max(0) as u64);
    }
    Ok(out)
}

/// Every kernel of `run` that had a window, slowest total first.
pub fn kernel_stats(conn: &Connection, run: i64) -> Result<Vec<KernelStats>> {
    let s = match summary::load(conn, run)? {
        Some(s) => s,
        None => summary::build(conn, run)?,
    };
    let replay_ns = s.phases.get(WINDOW).map_or(0, |w| w.positive_ns);
    let mut declined = declined_by_kernel(conn, run)?;
    let mut out: Vec<KernelStats> = s
        .kernels
        .iter()
        .map(|(name, phases)| {
            let mut k = kernel_row(name, phases, replay_ns);
            k.declined = declined.remove(name).unwrap_or(0);
            k
        })
        .collect();
    for (name, n) in declined {
        let mut k = kernel_row(&name, &[], replay_ns);
        k.declined = n;
        out.push(k);
    }
    out.sort_by(|a, b| b.total_ns.cmp(&a.total_ns).then(a.kernel.cmp(&b.kernel)));
    Ok(out)
}

/// Every agent of `run` that had a window, in agent order, when it had several (none with one).
pub fn agent_stats(conn: &Connection, run: i64) -> Result<Vec<AgentStats>> {
    let Some((lo, hi)) = crate::db::phases::window_range(conn, run)? else {
        return Ok(Vec::new());
    };
    // With one agent the table would repeat the run's own window row, and reading every window
    // through the view to say so costs seconds at a million windows: only several agents get one.
    let agents: i64 = conn.query_row(
        "SELECT COUNT(*) FROM (SELECT DISTINCT agent FROM krphase_window
           WHERE id BETWEEN ?2 AND ?3 AND +run_id = ?1 AND agent IS NOT NULL LIMIT 2)",
        rusqlite::params![run, lo, hi],
        |r| r.get(0),
    )?;
    if agents < 2 {
        return Ok(Vec::new());
    }
    let mut stmt = conn.prepare_cached(
        "SELECT agent,
                SUM(outcome = 'replayed'), SUM(outcome <> 'replayed'),
                COALESCE(SUM(CASE WHEN outcome = 'replayed' THEN MAX(window_ns, 0) END), 0),
                COALESCE(SUM(CASE WHEN outcome = 'replayed'
                                  THEN 1.0 * MAX(window_ns, 0) * MAX(window_ns, 0) END), 0),
                MAX(CASE WHEN outcome = 'replayed' THEN window_ns END),
                GROUP_CONCAT(DISTINCT CASE WHEN outcome = 'replayed' THEN window_basis END)
         FROM krphase_window_phase WHERE window_id BETWEEN ?2 AND ?3 AND +run_id = ?1
         GROUP BY agent ORDER BY agent",
    )?;
    let rows = stmt.query_map(rusqlite::params![run, lo, hi], |r| {
        Ok((
            r.get::<_, Option<i64>>(0)?,
            r.get::<_, i64>(1)?.max(0) as u64,
            r.get::<_, i64>(2)?.max(0) as u64,
            r.get::<_, i64>(3)?,
            r.get::<_, f64>(4)?,
            r.get::<_, Option<i64>>(5)?,
            r.get::<_, Option<String>>(6)?,
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (agent, replayed, declined, total_ns, ss, max_ns, bases) = row?;
        let (mean_ns, sd_ns) = mean_sd(replayed, total_ns as f64, ss);
        let mut basis: Vec<Basis> = bases
            .unwrap_or_default()
            .split(',')
            .filter_map(Basis::parse)
            .collect();
        basis.sort_unstable();
        out.push(AgentStats {
            agent,
            replayed,
            declined,
            total_ns,
            share_of_replay: None,
            mean_ns,
            sd_ns,
            max_ns,
            basis,
        });
    }
    let all: i64 = out.iter().map(|a| a.total_ns).sum();
    for a in &mut out {
        a.share_of_replay = ratio(a.total_ns as f64, all as f64);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mean_and_sample_sd() {
        // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, sample sd sqrt(32 / 7).
        let v = [2.0f64, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
        let (m, sd) = mean_sd(8, v.iter().sum(), v.iter().map(|x| x * x).sum());
        assert_eq!(m, Some(5.0));
        assert!((sd.unwrap() - (32.0f64 / 7.0).sqrt()).abs() < 1e-12);
        assert_eq!(mean_sd(1, 3.0, 9.0), (Some(3.0), None));
        assert_eq!(mean_sd(0, 0.0, 0.0), (None, None));
    }
}
