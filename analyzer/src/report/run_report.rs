//! The figures of one run's report, gathered from the database: windows replayed and declined
//! (and why), per-phase statistics, bytes, GPU vs wall time, the non-replayed dispatch tax, and
//! the linked whole-run measurement.

use std::collections::BTreeMap;

use anyhow::{Result, bail};
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use super::stats::{quantile_ns, ratio};
use crate::db::basis::Basis;
use crate::db::phases::{self, PHASES, WINDOW, WindowRow};
use crate::db::summary::{self, PassSummary, PhaseSummary, PlainSummary, RunSummary, tiles};

/// The name of the row that holds window time no top-level phase covers.
pub const UNATTRIBUTED: &str = "unattributed";

/// Statistics of one phase over the replayed windows of a run.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseStats {
    pub phase: String,
    /// The phase this one is a part of (`pre-pass` for drain and snapshot, `pass exec` for gpu);
    /// `None` for a top-level phase. Top-level shares add up to 100% of window time.
    pub parent: Option<String>,
    /// The phase this figure bounds from above (`restore` for observe mode's `restore bound`):
    /// no part of the window's tiling, so it has no share.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound_of: Option<String>,
    /// Windows that carry this phase.
    pub samples: u64,
    pub total_ns: i64,
    /// Total over the replayed windows' total time.
    pub share_of_window: Option<f64>,
    /// Total over the parent phase's total (parts only).
    pub share_of_parent: Option<f64>,
    pub mean_ns: Option<f64>,
    /// The sample standard deviation of the windows' values (n − 1), beside the mean; `None`
    /// below two windows.
    pub sd_ns: Option<f64>,
    /// Exact quantiles of the windows' values (see [`super::stats`]), rounded to the nearest
    /// nanosecond, the unit the values are measured in.
    pub p50_ns: Option<i64>,
    pub p90_ns: Option<i64>,
    pub p99_ns: Option<i64>,
    pub max_ns: Option<i64>,
    /// Where the values come from (every basis any window's value has, in [`Basis`] order).
    pub basis: Vec<Basis>,
    /// Windows per basis.
    pub basis_windows: BTreeMap<Basis, u64>,
    /// Why there is no value, when no window carries the phase.
    pub missing: Option<String>,
}

/// A group of dispatches and its share of the run's wall time.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub group: String,
    pub count: u64,
    pub total_ns: i64,
    pub share_of_wall: Option<f64>,
    pub basis: Basis,
}

#[derive(Debug, Clone, Serialize)]
pub struct Windows {
    pub replayed: u64,
    pub declined: u64,
    pub total: u64,
    /// Declined windows whose last pass never exited (`pass_drain_stuck`); among `declined`.
    pub stuck: u64,
    /// Their stuck pass ENTER → CONFIG EXIT, summed.
    pub stuck_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bytes {
    pub snapshot_bytes_total: i64,
    pub snapshot_bytes_per_window: Option<f64>,
    /// Where the byte counts come from: the SDK's phase line, or the tool's estimate.
    pub snapshot_bytes_basis: Vec<Basis>,
    /// Snapshot bytes over snapshot time: the SDK's snapshot time when a log is joined,
    /// else the whole pre-pass (a lower bound on the copy rate).
    pub snapshot_gbps: Option<f64>,
    /// The interval the rate is over (`sdk snapshot time` or `pre-pass (lower bound)`).
    pub snapshot_gbps_over: &'static str,
    /// `sdk_log` over the SDK's snapshot time; `estimate` over the pre-pass.
    pub snapshot_gbps_basis: Basis,
    /// Snapshot bytes × restores: an estimate (each restore assumed to copy the snapshot back).
    pub restore_bytes_total: i64,
    pub restore_gbps: Option<f64>,
    pub restore_basis: Basis,
}

#[derive(Debug, Clone, Serialize)]
pub struct PassGpu {
    pub pass_index: i64,
    pub passes: u64,
    /// Mean PASS ENTER → EXIT; `None` in observe mode (no PASS callbacks).
    pub host_mean_ns: Option<f64>,
    pub gpu_mean_ns: f64,
    pub gpu_share: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Gpu {
    pub per_pass: Vec<PassGpu>,
    pub gpu_total_ns: i64,
    pub pass_total_ns: i64,
    pub window_total_ns: i64,
    pub gpu_share_of_pass: Option<f64>,
    pub gpu_share_of_window: Option<f64>,
    pub basis: Basis,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tax {
    pub plain_dispatches: u64,
    pub plain_enqueue_mean_ns: Option<f64>,
    pub opt_out_windows: u64,
    pub opt_out_config_mean_ns: Option<f64>,
    pub basis: Basis,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseShare {
    pub phase: String,
    pub share_of_wall: Option<f64>,
    pub share_of_overhead: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub measurement_id: i64,
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub mode: Option<String>,
    pub median_s: Option<f64>,
    pub reference_variant: Option<String>,
    pub reference_median_s: Option<f64>,
    pub overhead_s: Option<f64>,
    pub phases: Vec<PhaseShare>,
    /// P5: drain as a fraction of a window (needs a joined log).
    pub drain_fraction_of_window: Option<f64>,
    /// The shares put in-process phase totals over the harness's whole-run median.
    pub basis: Vec<Basis>,
    /// Why figures built on this measurement are invalid (its replay claim failed).
    pub invalid_reason: Option<String>,
}

/// Everything reported about one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub run_id: i64,
    pub label: Option<String>,
    pub pid: Option<i64>,
    pub host: Option<String>,
    pub command: Option<String>,
    pub mode: Option<String>,
    /// Passes the tool was configured for (drive mode).
    pub passes: Option<i64>,
    /// Passes actually executed per replayed window.
    pub passes_per_window: Option<f64>,
    pub truncated: bool,
    /// What the tool dropped (from the trailer; `None` for a run without one or imported by an
    /// older krphase).
    pub drops: Option<Drops>,
    pub log_joined: bool,
    /// A joined SDK log was joined with `--force`, past evidence that failed.
    pub log_join_forced: bool,
    pub wall_ns: Option<i64>,
    pub dispatches_seen: u64,
    pub windows: Windows,
    pub declines_by_reason: BTreeMap<String, u64>,
    pub groups: Vec<Group>,
    pub phases: Vec<PhaseStats>,
    pub bytes: Bytes,
    pub gpu: Gpu,
    pub dispatch_tax: Tax,
    pub measurement: Option<Measurement>,
    /// Counter values per window and pass (drive mode with `KRPHASE_PMC`), basis
    /// [`Basis::SdkCounting`].
    pub counters: Vec<crate::db::counters::CounterValue>,
    /// Per kernel: its windows, slowest total first.
    pub kernels: Vec<super::kernels::KernelStats>,
    /// Per agent (device): its windows.
    pub agents: Vec<super::kernels::AgentStats>,
    /// The process's rank in a parallel job, as its launcher announced it (format 3.1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<RankOf>,
}

/// A run's rank, the job's size and the launcher variable they came from.
#[derive(Debug, Clone, Serialize)]
pub struct RankOf {
    pub rank: i64,
    pub world_size: Option<i64>,
    pub var: Option<String>,
}

/// Records the tool dropped, by kind, and the application's wait on its output: the figures
/// built on a kind of record are incomplete when records of that kind were dropped.
#[derive(Debug, Clone, Copy, Default, Serialize)]
pub struct Drops {
    pub dispatch: u64,
    pub allocation: u64,
    pub window: u64,
    pub names: u64,
    pub stall_ns: u64,
    /// The tool's wait budget ran out.
    pub stalled: bool,
}

impl Drops {
    pub fn records(&self) -> u64 {
        self.dispatch + self.allocation + self.window
    }
}

fn drops(conn: &Connection, run_id: i64) -> Result<Option<Drops>> {
    let d = conn.query_row(
        "SELECT dropped_dispatch, dropped_allocation, dropped_window, dropped_names, stall_ns,
                stalled
         FROM krphase_run WHERE id = ?1",
        [run_id],
        |r| {
            let n = |i: usize| -> rusqlite::Result<Option<u64>> {
                Ok(r.get::<_, Option<i64>>(i)?.map(|v| v.max(0) as u64))
            };
            Ok(n(0)?.map(|dispatch| -> rusqlite::Result<Drops> {
                Ok(Drops {
                    dispatch,
                    allocation: n(1)?.unwrap_or(0),
                    window: n(2)?.unwrap_or(0),
                    names: n(3)?.unwrap_or(0),
                    stall_ns: n(4)?.unwrap_or(0),
                    stalled: r.get::<_, Option<i64>>(5)?.unwrap_or(0) != 0,
                })
            }))
        },
    )?;
    Ok(d.transpose()?)
}

/// The `krphase_run` columns a report shows.
struct RunInfo {
    label: Option<String>,
    pid: Option<i64>,
    host: Option<String>,
    command: Option<String>,
    mode: Option<String>,
    passes: Option<i64>,
    truncated: bool,
    wall_ns: Option<i64>,
    rank: Option<RankOf>,
}

fn run_info(conn: &Connection, run_id: i64) -> Result<RunInfo> {
    let info = conn
        .query_row(
            "SELECT label, pid, host, command, mode, passes, truncated, \"end\" - \"start\",
                    rank, world_size, rank_var
             FROM krphase_run WHERE id = ?1",
            [run_id],
            |r| {
                Ok(RunInfo {
                    label: r.get(0)?,
                    pid: r.get(1)?,
                    host: r.get(2)?,
                    command: r.get(3)?,
                    mode: r.get(4)?,
                    passes: r.get(5)?,
                    truncated: r.get::<_, i64>(6)? != 0,
                    wall_ns: r.get(7)?,
                    rank: r.get::<_, Option<i64>>(8)?.map(|rank| RankOf {
                        rank,
                        world_size: r.get(9).ok().flatten(),
                        var: r.get(10).ok().flatten(),
                    }),
                })
            },
        )
        .optional()?;
    match info {
        Some(i) => Ok(i),
        None => bail!("unknown run id {run_id}"),
    }
}

/// The values of one phase over a run's replayed windows: read window by window (then sorted),
/// or a stored summary's exact order statistics (clamped at zero when `clamp`, as the values
/// read are).
enum Order {
    Values(Vec<i64>),
    Stored { summary: PhaseSummary, clamp: bool },
}

impl Default for Order {
    fn default() -> Self {
        Order::Values(Vec::new())
    }
}

impl Order {
    fn push(&mut self, v: i64) {
        if let Order::Values(values) = self {
            values.push(v);
        }
    }

    fn len(&self) -> usize {
        match self {
            Order::Values(v) => v.len(),
            Order::Stored { summary, .. } => summary.windows as usize,
        }
    }

    fn quantile(&self, q: f64) -> Option<i64> {
        match self {
            Order::Values(v) => quantile_ns(v, q),
            Order::Stored { summary, clamp } => {
                summary.quantile(q, *clamp).map(|v| v.round() as i64)
            }
        }
    }

    fn max(&self) -> Option<i64> {
        match self {
            Order::Values(v) => v.last().copied(),
            Order::Stored { summary, clamp } => {
                let top = summary.at((summary.windows as usize).checked_sub(1)?)?;
                Some(if *clamp { top.max(0) } else { top })
            }
        }
    }

    fn sort(&mut self) {
        if let Order::Values(v) = self {
            v.sort_unstable();
        }
    }

    /// Whether any value is not zero.
    fn any_nonzero(&self) -> bool {
        match self {
            Order::Values(v) => v.iter().any(|x| *x != 0),
            Order::Stored { summary, clamp } => {
                let n = summary.windows as usize;
                let c = |x: i64| if *clamp { x.max(0) } else { x };
                n > 0
                    && [0, n - 1]
                        .iter()
                        .any(|&r| summary.at(r).is_some_and(|x| c(x) != 0))
            }
        }
    }
}

/// One phase's values over the replayed windows of a run.
#[derive(Default)]
struct PhaseSamples {
    values: Order,
    total: i64,
    /// The values' sum and sum of squares before any clamping: the standard deviation is of
    /// the values as measured (what a stored summary keeps), whichever path reads them.
    raw_total: i64,
    raw_sum_sq: f64,
    bases: BTreeMap<Basis, u64>,
}

impl PhaseSamples {
    fn stored(p: PhaseSummary, clamp: bool) -> PhaseSamples {
        PhaseSamples {
            total: if clamp { p.positive_ns } else { p.total_ns },
            raw_total: p.total_ns,
            raw_sum_sq: p.sum_sq,
            bases: p.bases.clone(),
            values: Order::Stored { summary: p, clamp },
        }
    }

    /// Counts one measured value `raw`.
    fn add_raw(&mut self, raw: i64) {
        self.raw_total += raw;
        self.raw_sum_sq += (raw as f64) * (raw as f64);
    }

    /// The sample standard deviation of the values as measured; `None` below two.
    fn sd(&self) -> Option<f64> {
        let n = self.values.len() as u64;
        super::kernels::mean_sd(n, self.raw_total as f64, self.raw_sum_sq).1
    }
}

/// What one pass over a run's windows counts (or its stored summary holds).
#[derive(Default)]
struct WindowTally {
    /// In the order of [`PHASES`].
    phases: Vec<PhaseSamples>,
    /// Per window: window time minus its top-level phases (the time no phase covers).
    unattributed: PhaseSamples,
    bytes_bases: BTreeMap<Basis, u64>,
    replayed: u64,
    declined: u64,
    /// Declined windows with no plain dispatch of their own (counted once as a dispatch).
    declined_without_plain: u64,
    stuck: u64,
    stuck_ns: i64,
    by_reason: BTreeMap<String, u64>,
    declined_ns: i64,
    opt_out_windows: u64,
    opt_out_ns: i64,
    snapshot_bytes: i64,
    restore_bytes: i64,
    log_joined: bool,
    executed_passes: i64,
}

impl WindowTally {
    fn add_declined(&mut self, w: &WindowRow, has_plain: bool) {
        self.declined_without_plain += u64::from(!has_plain);
        self.declined += 1;
        if let Some(ns) = w.stuck_ns {
            self.stuck += 1;
            self.stuck_ns += ns.max(0);
        }
        *self.by_reason.entry(w.reason.clone()).or_default() += 1;
        let ns = w.phase_ns[WINDOW].unwrap_or(0);
        self.declined_ns += ns;
        if w.outcome == "opt_out" {
            self.opt_out_windows += 1;
            self.opt_out_ns += ns;
        }
    }

    fn add_replayed(&mut self, w: &WindowRow) {
        self.replayed += 1;
        self.executed_passes += w.executed_passes.unwrap_or(0);
        let mut covered = 0;
        for (k, (p, v)) in self.phases.iter_mut().zip(w.phase_ns).enumerate() {
            if let Some(v) = v {
                p.add_raw(v);
                let v = v.max(0);
                p.total += v;
                p.values.push(v);
                if let Some(b) = w.phase_basis[k] {
                    *p.bases.entry(b).or_default() += 1;
                }
                if k != WINDOW && tiles(&PHASES[k]) {
                    covered += v;
                }
            }
        }
        if let Some(window) = w.phase_ns[WINDOW] {
            let u = &mut self.unattributed;
            let rest = window.max(0) - covered;
            u.add_raw(rest);
            u.values.push(rest);
            if let Some(b) = w.phase_basis[WINDOW] {
                *u.bases.entry(b).or_default() += 1;
            }
        }
        if let Some(b) = w.bytes_basis {
            *self.bytes_bases.entry(b).or_default() += 1;
        }
        self.log_joined |= w.phase_ns[phases::index("snapshot").expect("phase")].is_some();
        let b = w.snapshot_bytes.unwrap_or(0);
        self.snapshot_bytes += b;
        self.restore_bytes += b * w.restores.unwrap_or(0);
    }
}

/// Streams the run's windows once, counting replayed and declined ones.
fn tally_windows(conn: &Connection, run_id: i64) -> Result<WindowTally> {
    let mut t = WindowTally {
        phases: PHASES.iter().map(|_| PhaseSamples::default()).collect(),
        ..WindowTally::default()
    };
    // A declined dispatch usually also ran once as a plain dispatch; count it once.
    let mut has_plain = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM krphase_dispatch WHERE run_id = ?1 AND dispatch_id = ?2)",
    )?;
    phases::for_each_window(conn, run_id, |w| {
        if w.replayed() {
            t.add_replayed(w);
        } else {
            let plain: bool = has_plain.query_row([run_id, w.dispatch_id], |r| r.get(0))?;
            t.add_declined(w, plain);
        }
        Ok(())
    })?;
    Ok(t)
}

/// The tally a stored summary holds: the same figures, without reading a window.
fn tally_stored(s: RunSummary) -> WindowTally {
    let t = s.tallies;
    let mut phases = s.phases;
    let rest = phases.pop().unwrap_or_default();
    WindowTally {
        phases: phases
            .into_iter()
            .map(|p| PhaseSamples::stored(p, true))
            .collect(),
        unattributed: PhaseSamples::stored(rest, false),
        bytes_bases: t.bytes_bases,
        replayed: t.replayed,
        declined: t.declined,
        declined_without_plain: t.declined_without_plain,
        stuck: t.stuck,
        stuck_ns: t.stuck_ns,
        by_reason: t.declines_by_reason,
        declined_ns: t.declined_ns,
        opt_out_windows: t.opt_out_windows,
        opt_out_ns: t.opt_out_ns,
        snapshot_bytes: t.snapshot_bytes,
        restore_bytes: t.restore_bytes,
        log_joined: t.log_joined,
        executed_passes: t.executed_passes,
    }
}

/// Statistics of one set of per-window values (unsorted on entry).
fn stats_of(
    name: &str,
    parent: Option<&str>,
    s: &mut PhaseSamples,
    total: i64,
    window_total: i64,
    parent_total: Option<i64>,
) -> PhaseStats {
    s.values.sort();
    let n = s.values.len() as u64;
    let q = |x: f64| s.values.quantile(x);
    let some = |v: Option<f64>| v.filter(|_| n > 0);
    PhaseStats {
        phase: name.to_string(),
        parent: parent.map(String::from),
        bound_of: None,
        samples: n,
        total_ns: total,
        share_of_window: some(ratio(total as f64, window_total as f64)),
        share_of_parent: parent_total.and_then(|t| some(ratio(total as f64, t as f64))),
        mean_ns: (n > 0).then(|| total as f64 / n as f64),
        sd_ns: s.sd(),
        p50_ns: q(0.5),
        p90_ns: q(0.9),
        p99_ns: q(0.99),
        max_ns: s.values.max(),
        basis: s.bases.keys().copied().collect(),
        basis_windows: std::mem::take(&mut s.bases),
        missing: None,
    }
}

/// Per-phase statistics; shares are of the replayed windows' total time, a part's also of its
/// parent's. When the top-level phases do not cover the window time (observe mode has no PASS
/// callbacks, older files no CONTINUE records), an `unattributed` row holds the rest, so the
/// top-level shares add up to 100%.
fn phase_stats(samples: &mut [PhaseSamples], unattributed: &mut PhaseSamples) -> Vec<PhaseStats> {
    let window_total = samples[WINDOW].total;
    let totals: Vec<i64> = samples.iter().map(|s| s.total).collect();
    let mut out: Vec<PhaseStats> = PHASES
        .iter()
        .zip(samples)
        .enumerate()
        .map(|(k, (p, s))| {
            let parent_total = p.parent.and_then(phases::index).map(|i| totals[i]);
            let mut st = stats_of(p.name, p.parent, s, totals[k], window_total, parent_total);
            if st.samples == 0 {
                st.missing = Some(p.missing.to_string());
            }
            if let Some(b) = p.bound_of {
                st.bound_of = Some(b.to_string());
                st.share_of_window = None;
            }
            st
        })
        .collect();
    let covered: i64 = PHASES
        .iter()
        .enumerate()
        .filter(|(k, p)| *k != WINDOW && tiles(p))
        .map(|(k, _)| totals[k])
        .sum();
    let rest = window_total - covered;
    if rest != 0 || unattributed.values.any_nonzero() {
        let st = stats_of(UNATTRIBUTED, None, unattributed, rest, window_total, None);
        out.insert(WINDOW, st);
    }
    out
}

/// Says why a phase is missing in the run's mode; and, where the window is the passes' span
/// (observe mode without an SDK phase line), gives the phases before the passes no share of it:
/// they lie outside it.
fn in_mode(stats: &mut [PhaseStats], observe: bool) {
    let span = stats
        .iter()
        .find(|s| s.phase == PHASES[WINDOW].name)
        .is_some_and(|w| phases::window_is_span(w.basis.iter()));
    for (st, p) in stats
        .iter_mut()
        .filter(|s| s.phase != UNATTRIBUTED)
        .zip(PHASES)
    {
        if st.samples == 0 {
            st.missing = Some(phases::missing_reason(p, observe).to_string());
        }
        if span && phases::before_the_passes(p) {
            st.share_of_window = None;
        }
    }
}

fn groups(t: &WindowTally, window_total: i64, plain: &PlainSummary, wall: f64) -> Vec<Group> {
    let group = |name: &str, count: u64, total_ns: i64| Group {
        group: name.into(),
        count,
        total_ns,
        share_of_wall: ratio(total_ns as f64, wall),
        basis: Basis::InProcess,
    };
    vec![
        group("replayed", t.replayed, window_total),
        group("declined", t.declined, t.declined_ns),
        group("no CONFIG", plain.without_config, plain.without_config_ns),
    ]
}

fn bytes(t: &WindowTally, total_of: impl Fn(&str) -> i64) -> Bytes {
    let snapshot_time = if t.log_joined {
        total_of("snapshot")
    } else {
        total_of("pre-pass")
    };
    Bytes {
        snapshot_bytes_total: t.snapshot_bytes,
        snapshot_bytes_per_window: (t.replayed > 0)
            .then(|| t.snapshot_bytes as f64 / t.replayed as f64),
        snapshot_bytes_basis: t.bytes_bases.keys().copied().collect(),
        snapshot_gbps: ratio(t.snapshot_bytes as f64, snapshot_time as f64),
        snapshot_gbps_over: if t.log_joined {
            "sdk snapshot time"
        } else {
            "pre-pass (lower bound)"
        },
        snapshot_gbps_basis: if t.log_joined {
            Basis::SdkLog
        } else {
            Basis::Estimate
        },
        restore_bytes_total: t.restore_bytes,
        restore_gbps: ratio(t.restore_bytes as f64, total_of("restore") as f64),
        restore_basis: Basis::Estimate,
    }
}

/// Per pass index: mean host and GPU time of its passes.
fn per_pass_gpu(passes: &[PassSummary]) -> Vec<PassGpu> {
    passes
        .iter()
        .map(|p| {
            let host = (p.host_passes > 0).then(|| p.host_ns as f64 / p.host_passes as f64);
            let gpu = p.gpu_ns as f64 / p.passes as f64;
            PassGpu {
                pass_index: p.pass_index,
                passes: p.passes,
                host_mean_ns: host,
                gpu_mean_ns: gpu,
                gpu_share: host.and_then(|h| ratio(gpu, h)),
            }
        })
        .collect()
}

fn gpu(per_pass: Vec<PassGpu>, total_of: impl Fn(&str) -> i64) -> Gpu {
    let gpu_total = total_of("gpu");
    let pass_total = total_of("pass exec");
    let window_total = total_of("window");
    Gpu {
        per_pass,
        gpu_total_ns: gpu_total,
        pass_total_ns: pass_total,
        window_total_ns: window_total,
        gpu_share_of_pass: ratio(gpu_total as f64, pass_total as f64),
        gpu_share_of_window: ratio(gpu_total as f64, window_total as f64),
        basis: Basis::InProcess,
    }
}

fn dispatch_tax(t: &WindowTally, plain: &PlainSummary) -> Tax {
    Tax {
        plain_dispatches: plain.all,
        plain_enqueue_mean_ns: (plain.timed > 0)
            .then(|| plain.timed_ns.unwrap_or(0) as f64 / plain.timed as f64),
        opt_out_windows: t.opt_out_windows,
        opt_out_config_mean_ns: (t.opt_out_windows > 0)
            .then(|| t.opt_out_ns as f64 / t.opt_out_windows as f64),
        basis: Basis::InProcess,
    }
}

/// Builds the report of one run.
pub fn run_report(conn: &Connection, run_id: i64) -> Result<RunReport> {
    let info = run_info(conn, run_id)?;
    // The stored summary when the run has a current one; else every window, pass and plain
    // dispatch is read (the same figures: `db/summary`).
    let (mut t, passes, plain) = match summary::load(conn, run_id)? {
        Some(mut s) => {
            let (passes, plain) = (std::mem::take(&mut s.passes), s.plain);
            (tally_stored(s), passes, plain)
        }
        None => (
            tally_windows(conn, run_id)?,
            summary::pass_gpu(conn, run_id)?,
            summary::plain_dispatches(conn, run_id)?,
        ),
    };
    let mut phase_stats = phase_stats(&mut t.phases, &mut t.unattributed);
    in_mode(&mut phase_stats, info.mode.as_deref() == Some("observe"));
    let total_of = |name: &str| {
        phase_stats
            .iter()
            .find(|p| p.phase == name)
            .map_or(0, |p| p.total_ns)
    };
    let window_total = total_of("window");
    let wall = info.wall_ns.unwrap_or(0) as f64;
    let measurement = linked_measurement(conn, run_id, &phase_stats, window_total)?;
    Ok(RunReport {
        run_id,
        label: info.label,
        rank: info.rank,
        pid: info.pid,
        host: info.host,
        command: info.command,
        mode: info.mode,
        passes: info.passes,
        passes_per_window: (t.replayed > 0).then(|| t.executed_passes as f64 / t.replayed as f64),
        truncated: info.truncated,
        drops: drops(conn, run_id)?,
        log_joined: t.log_joined,
        log_join_forced: log_join_forced(conn, run_id)?,
        wall_ns: info.wall_ns,
        dispatches_seen: t.replayed + plain.all + t.declined_without_plain,
        windows: Windows {
            replayed: t.replayed,
            declined: t.declined,
            total: t.replayed + t.declined,
            stuck: t.stuck,
            stuck_ns: t.stuck_ns,
        },
        groups: groups(&t, window_total, &plain, wall),
        bytes: bytes(&t, total_of),
        gpu: gpu(per_pass_gpu(&passes), total_of),
        dispatch_tax: dispatch_tax(&t, &plain),
        declines_by_reason: std::mem::take(&mut t.by_reason),
        phases: phase_stats,
        measurement,
        counters: crate::db::counters::run_counters(conn, run_id)?,
        kernels: super::kernels::kernel_stats(conn, run_id)?,
        agents: super::kernels::agent_stats(conn, run_id)?,
    })
}

/// Whether a log joined to one of the run's windows was forced past failed evidence.
fn log_join_forced(conn: &Connection, run_id: i64) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT EXISTS (SELECT 1 FROM krphase_sdk_log l JOIN krphase_log_file f ON f.id = l.log_file_id
           WHERE l.run_id = ?1 AND l.window_id IS NOT NULL AND f.forced <> 0)",
        [run_id],
        |r| r.get(0),
    )?)
}

/// The whole-run measurement linked to the run, with a single-pass reference from the same
/// source (same experiment first) to measure the overhead against.
fn linked_measurement(
    conn: &Connection,
    run_id: i64,
    phase_stats: &[PhaseStats],
    window_total: i64,
) -> Result<Option<Measurement>> {
    type Row = (
        i64,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<f64>,
        Option<String>,
    );
    let row: Option<Row> = conn
        .query_row(
            "SELECT measurement_id, experiment, variant, mode, median_s, source
             FROM krphase_run_measurement WHERE run_id = ?1 ORDER BY measurement_id DESC LIMIT 1",
            [run_id],
            |r| Row::try_from(r),
        )
        .optional()?;
    let Some((id, experiment, variant, mode, median_s, source)) = row else {
        return Ok(None);
    };
    let reference: Option<(Option<String>, Option<f64>)> = conn
        .query_row(
            "SELECT variant, median_s FROM krphase_measurement
             WHERE mode = 'single-pass' AND median_s IS NOT NULL AND source IS ?1
             ORDER BY (experiment IS ?2) DESC, id DESC LIMIT 1",
            rusqlite::params![source, experiment],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (reference_variant, reference_median_s) = reference.unwrap_or((None, None));
    let overhead_s = match (median_s, reference_median_s) {
        (Some(m), Some(r)) => Some(m - r),
        _ => None,
    };
    let phases = phase_stats
        .iter()
        .filter(|p| p.samples > 0)
        .map(|p| {
            let s = p.total_ns as f64 / 1e9;
            PhaseShare {
                phase: p.phase.clone(),
                share_of_wall: median_s.and_then(|m| ratio(s, m)),
                share_of_overhead: overhead_s.and_then(|o| ratio(s, o)),
            }
        })
        .collect();
    let drain = phase_stats
        .iter()
        .find(|p| p.phase == "drain")
        .expect("every phase has a row");
    Ok(Some(Measurement {
        measurement_id: id,
        experiment,
        variant,
        mode,
        median_s,
        reference_variant,
        reference_median_s,
        overhead_s,
        phases,
        drain_fraction_of_window: (drain.samples > 0)
            .then(|| ratio(drain.total_ns as f64, window_total as f64))
            .flatten(),
        basis: vec![Basis::InProcess, Basis::Harness],
        invalid_reason: crate::db::measurements::read_measurements(
            conn,
            &crate::db::measurements::MeasurementFilter::Id(id),
        )?
        .first()
        .and_then(|m| m.invalid_reason()),
    }))
}
