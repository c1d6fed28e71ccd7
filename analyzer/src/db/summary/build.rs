//! Computing a run's summary from its windows: one pass over them through the
//! `krphase_window_phase` view (the one place the phases' arithmetic and bases are defined), the
//! same figures the report and compare take from each window, then the kept order statistics
//! picked out of each phase's values by selection (no full sort).
//!
//! Memory: the values of the one run being summarised (8 bytes per window and phase), as the
//! report held them before it read summaries.

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;

use super::{PhaseSummary, REST_INDEX, RowsSeen, RunSummary, Tallies, needed_ranks};
use crate::db::basis::Basis;
use crate::db::phases::{self, PHASES, WINDOW, WindowRow};

/// The GPU and host time of the passes of one pass index.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PassSummary {
    pub pass_index: i64,
    pub passes: u64,
    /// Passes with a host interval (drive mode), and its sum.
    pub host_passes: u64,
    pub host_ns: i64,
    pub gpu_ns: i64,
}

/// The run's plain dispatches (every dispatch that ran once).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PlainSummary {
    pub all: u64,
    /// Those with no CONFIG pair before them (the rest are a decline's run-once).
    pub without_config: u64,
    pub without_config_ns: i64,
    /// Those with both timestamps, and their summed enqueue time.
    pub timed: i64,
    pub timed_ns: Option<i64>,
}

/// One phase's values: 4 bytes each while every value fits an `i32` (durations under 2.1 s),
/// else 8. A run's values are held while their order statistics are picked.
#[derive(Debug)]
pub enum Column {
    Narrow(Vec<i32>),
    Wide(Vec<i64>),
}

impl Default for Column {
    fn default() -> Self {
        Column::Narrow(Vec::new())
    }
}

impl Column {
    fn widen(&mut self) {
        if let Column::Narrow(n) = self {
            *self = Column::Wide(n.iter().map(|&x| i64::from(x)).collect());
        }
    }

    pub fn push(&mut self, v: i64) {
        if let Column::Narrow(n) = self {
            match i32::try_from(v) {
                Ok(x) => return n.push(x),
                Err(_) => self.widen(),
            }
        }
        if let Column::Wide(w) = self {
            w.push(v);
        }
    }

    fn extend(&mut self, other: &Column) {
        if matches!(other, Column::Wide(_)) {
            self.widen();
        }
        match (self, other) {
            (Column::Narrow(a), Column::Narrow(b)) => a.extend_from_slice(b),
            (Column::Wide(a), Column::Narrow(b)) => a.extend(b.iter().map(|&x| i64::from(x))),
            (Column::Wide(a), Column::Wide(b)) => a.extend_from_slice(b),
            (Column::Narrow(_), Column::Wide(_)) => unreachable!("widened above"),
        }
    }

    /// Picks the kept ranks (reordering the values) and sums them.
    pub fn summarise(&mut self, bases: BTreeMap<Basis, u64>) -> PhaseSummary {
        match self {
            Column::Narrow(v) => summarise(v, bases),
            Column::Wide(v) => summarise(v, bases),
        }
    }
}

/// One phase's values of one kernel (or the rest), as read.
#[derive(Default)]
struct Values {
    values: Column,
    bases: BTreeMap<Basis, u64>,
}

impl Values {
    fn push(&mut self, v: i64, basis: Option<Basis>) {
        self.values.push(v);
        if let Some(b) = basis {
            *self.bases.entry(b).or_default() += 1;
        }
    }
}

/// Whether a phase is one of the top-level tiles of the window (not a part, not a bound).
pub fn tiles(p: &phases::Phase) -> bool {
    p.parent.is_none() && p.bound_of.is_none()
}

/// Whether phase `k` covers part of a window whose values are `phase_ns`: a top-level tile, or a
/// part inside the window whose parent the window does not time (observe mode's gpu, with no
/// PASS callbacks for pass exec), which then stands on its own and leaves the rest.
pub fn covers(k: usize, phase_ns: &[Option<i64>]) -> bool {
    let p = &PHASES[k];
    if k == WINDOW || p.bound_of.is_some() {
        return false;
    }
    match p.parent.and_then(phases::index) {
        None => true,
        Some(parent) => phase_ns[parent].is_none() && !phases::before_the_passes(p),
    }
}

/// What one pass over a run's windows gathers: fed window by window ([`Builder::add`]), then
/// summarised ([`Builder::finish`]).
#[derive(Default)]
pub struct Builder {
    tallies: Tallies,
    kernel_index: BTreeMap<String, usize>,
    /// Per kernel: each phase of [`PHASES`], then the rest.
    kernels: Vec<Vec<Values>>,
    /// The phases' summaries, once taken ([`Builder::summarise_phases`]).
    summarised: Option<Phases>,
    /// The run's other rows, when the caller saw them all ([`Builder::rows_seen`]).
    rows: Option<RowsSeen>,
}

/// The whole run's phase summaries, then each kernel's.
type Phases = (Vec<PhaseSummary>, BTreeMap<String, Vec<PhaseSummary>>);

impl Builder {
    /// Adds one window (replayed or declined) with its figures as the view gives them.
    pub fn add(&mut self, w: &WindowRow) {
        debug_assert!(
            self.summarised.is_none(),
            "a window added after the phases were summarised"
        );
        if w.replayed() {
            self.replayed(w);
        } else {
            self.declined(w);
        }
    }

    /// The summary of the windows added, with the run's passes and plain dispatches (read in
    /// SQL: they are not windows).
    pub fn finish(mut self, conn: &Connection, run: i64) -> Result<RunSummary> {
        let (without_plain, passes, plain) = match self.rows.take() {
            Some(r) => (r.declined_without_plain(), r.passes(), r.plain_summary()),
            None => (
                declined_without_plain(conn, run)?,
                pass_gpu(conn, run)?,
                plain_dispatches(conn, run)?,
            ),
        };
        self.tallies.declined_without_plain = without_plain;
        self.summarise_phases();
        let (phases, kernels) = self.summarised.take().expect("summarised");
        Ok(RunSummary {
            tallies: std::mem::take(&mut self.tallies),
            phases,
            kernels,
            passes,
            plain,
        })
    }

    /// Where the caller notes every pass, plain dispatch and declined window of the run as it
    /// writes them; [`Builder::finish`] then takes those figures from here instead of reading
    /// them back.
    pub fn rows_seen(&mut self) -> &mut RowsSeen {
        self.rows.get_or_insert_with(RowsSeen::default)
    }

    /// Takes the phases' exact quantiles now (the costly part of [`Builder::finish`], which needs
    /// no database): import does it on its decoding thread while the inserts finish. Windows
    /// added after it are not counted; idempotent.
    pub fn summarise_phases(&mut self) {
        if self.summarised.is_none() {
            self.summarised = Some(phase_summaries(self));
        }
    }

    fn declined(&mut self, w: &WindowRow) {
        let t = &mut self.tallies;
        t.declined += 1;
        if let Some(ns) = w.stuck_ns {
            t.stuck += 1;
            t.stuck_ns += ns.max(0);
        }
        *t.declines_by_reason.entry(w.reason.clone()).or_default() += 1;
        let ns = w.phase_ns[WINDOW].unwrap_or(0);
        t.declined_ns += ns;
        if w.outcome == "opt_out" {
            t.opt_out_windows += 1;
            t.opt_out_ns += ns;
        }
    }

    fn kernel(&mut self, name: &str) -> &mut Vec<Values> {
        let k = match self.kernel_index.get(name) {
            Some(&k) => k,
            None => {
                let k = self.kernels.len();
                self.kernel_index.insert(name.to_string(), k);
                self.kernels
                    .push((0..=PHASES.len()).map(|_| Values::default()).collect());
                k
            }
        };
        &mut self.kernels[k]
    }

    fn replayed(&mut self, w: &WindowRow) {
        let t = &mut self.tallies;
        t.replayed += 1;
        t.executed_passes += w.executed_passes.unwrap_or(0);
        t.restores += w.restores.unwrap_or(0);
        let basis = w.phase_basis[WINDOW];
        t.observed += u64::from(basis.is_some_and(|b| b != Basis::InProcess));
        t.spans += u64::from(basis == Some(Basis::Dispatch));
        if let Some(b) = w.bytes_basis {
            *t.bytes_bases.entry(b).or_default() += 1;
        }
        t.log_joined |= w.phase_ns[phases::index("snapshot").expect("phase")].is_some();
        let b = w.snapshot_bytes.unwrap_or(0);
        t.snapshot_bytes += b;
        t.restore_bytes += b * w.restores.unwrap_or(0);
        let vals = self.kernel(&w.kernel);
        let mut covered = 0;
        for (k, v) in w.phase_ns.iter().enumerate() {
            if let Some(v) = *v {
                vals[k].push(v, w.phase_basis[k]);
                if covers(k, &w.phase_ns) {
                    covered += v.max(0);
                }
            }
        }
        if let Some(window) = w.phase_ns[WINDOW] {
            vals[REST_INDEX].push(window.max(0) - covered, basis);
        }
    }
}

/// Picks the kept ranks out of `v` (reordered in place) and sums it.
fn summarise<T: Copy + Ord + Into<i64>>(v: &mut [T], bases: BTreeMap<Basis, u64>) -> PhaseSummary {
    let mut s = PhaseSummary {
        windows: v.len() as u64,
        bases,
        ..PhaseSummary::default()
    };
    for &x in v.iter() {
        let x: i64 = x.into();
        s.total_ns += x;
        s.positive_ns += x.max(0);
        s.sum_sq += (x as f64) * (x as f64);
    }
    let mut start = 0;
    for r in needed_ranks(v.len()) {
        // Everything before `start` is at most the last rank picked, everything after it at least.
        let (_, x, _) = v[start..].select_nth_unstable(r - start);
        s.ranks.push((r as u64, (*x).into()));
        start = r;
    }
    s
}

fn merge_bases(into: &mut BTreeMap<Basis, u64>, from: &BTreeMap<Basis, u64>) {
    for (b, n) in from {
        *into.entry(*b).or_default() += n;
    }
}

/// The whole run's phases (the kernels' values pooled), then each kernel's.
fn phase_summaries(g: &mut Builder) -> Phases {
    let whole = (0..=PHASES.len())
        .map(|k| {
            let mut pooled = Column::default();
            let mut bases = BTreeMap::new();
            for vals in &g.kernels {
                pooled.extend(&vals[k].values);
                merge_bases(&mut bases, &vals[k].bases);
            }
            pooled.summarise(bases)
        })
        .collect();
    let kernels = g
        .kernel_index
        .iter()
        .map(|(name, &i)| {
            let per = g.kernels[i]
                .iter_mut()
                .map(|v| v.values.summarise(std::mem::take(&mut v.bases)))
                .collect();
            (name.clone(), per)
        })
        .collect();
    (whole, kernels)
}

/// Declined windows of the run whose dispatch has no plain dispatch of its own (a decline usually
/// also ran once as one; counted once).
fn declined_without_plain(conn: &Connection, run: i64) -> Result<u64> {
    let Some((lo, hi)) = phases::window_range(conn, run)? else {
        return Ok(0);
    };
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM krphase_window w
         WHERE w.id BETWEEN ?2 AND ?3 AND +w.run_id = ?1 AND w.outcome <> 'replayed'
           AND NOT EXISTS (SELECT 1 FROM krphase_dispatch d
                           WHERE d.run_id = ?1 AND d.dispatch_id = w.dispatch_id)",
        [run, lo, hi],
        |r| r.get(0),
    )?;
    Ok(n as u64)
}

/// Summarises `run` from its windows (read through the view), passes and plain dispatches.
pub fn build(conn: &Connection, run: i64) -> Result<RunSummary> {
    let mut b = Builder::default();
    phases::for_each_window(conn, run, |w| {
        b.add(w);
        Ok(())
    })?;
    b.finish(conn, run)
}

/// The run's plain dispatches, counted in SQL.
pub fn plain_dispatches(conn: &Connection, run: i64) -> Result<PlainSummary> {
    Ok(conn.query_row(
        "SELECT COUNT(*), SUM(had_config = 0),
                SUM(CASE WHEN had_config = 0 THEN \"end\" - \"start\" END),
                COUNT(\"end\" - \"start\"), SUM(\"end\" - \"start\")
         FROM krphase_dispatch WHERE run_id = ?1",
        [run],
        |r| {
            Ok(PlainSummary {
                all: r.get::<_, i64>(0)? as u64,
                without_config: r.get::<_, Option<i64>>(1)?.unwrap_or(0) as u64,
                without_config_ns: r.get::<_, Option<i64>>(2)?.unwrap_or(0),
                timed: r.get(3)?,
                timed_ns: r.get(4)?,
            })
        },
    )?)
}

/// Per pass index: aggregated while scanning the clustered pass table in order (an SQL GROUP BY
/// would sort every pass row). A stuck pass (no PASS EXIT) is left out: its GPU interval spans
/// the SDK's drain wait, not a pass.
pub fn pass_gpu(conn: &Connection, run: i64) -> Result<Vec<PassSummary>> {
    let mut by_index: BTreeMap<i64, PassSummary> = BTreeMap::new();
    if let Some((lo, hi)) = phases::window_range(conn, run)? {
        let mut stmt = conn.prepare_cached(
            "SELECT pass_index, \"end\" - \"start\", gpu_end - gpu_start
             FROM krphase_pass WHERE window_id BETWEEN ?2 AND ?3 AND +run_id = ?1
               AND +incomplete = 0",
        )?;
        let mut rows = stmt.query([run, lo, hi])?;
        while let Some(r) = rows.next()? {
            let pass_index = r.get(0)?;
            let e = by_index.entry(pass_index).or_insert(PassSummary {
                pass_index,
                ..PassSummary::default()
            });
            e.passes += 1;
            if let Some(h) = r.get::<_, Option<i64>>(1)? {
                e.host_passes += 1;
                e.host_ns += h;
            }
            e.gpu_ns += r.get::<_, Option<i64>>(2)?.unwrap_or(0);
        }
    }
    Ok(by_index.into_values().collect())
}

/// The summary of `v` pushed in order into a [`Column`], for the tests of the kept ranks.
#[cfg(test)]
pub fn tests_summarise(v: &[i64]) -> PhaseSummary {
    let mut c = Column::default();
    for &x in v {
        c.push(x);
    }
    c.summarise(BTreeMap::new())
}
