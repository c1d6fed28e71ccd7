//! The figures of one run's report, gathered from the database: windows replayed and declined
//! (and why), per-phase statistics, bytes, GPU vs wall time, the non-replayed dispatch tax, and
//! the linked whole-run measurement. The figures are defined here and put together by
//! [`run_report`]: one pass over the run's windows (or its stored summary) counts them
//! (`tally.rs`), per-phase statistics come from `per_phase.rs`, the other figures from
//! `figures.rs`, the run's own row from `run.rs` and the linked measurement from
//! `measurement.rs`.

mod figures;
mod measurement;
mod per_phase;
mod restores;
mod run;
mod tally;

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::basis::Basis;
use crate::db::summary;
use figures::{bytes, dispatch_tax, gpu, groups, per_pass_gpu};
use measurement::linked_measurement;
use per_phase::{in_mode, phase_stats};
pub use restores::RestorePlacement;
use restores::restore_placement;
use run::{drops, log_join_forced, run_info};
use tally::{tally_stored, tally_windows};

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
    /// Drive mode ran without dispatch tracing (`KRPHASE_GPU_TIMES=0`): no dispatch records and
    /// no GPU times, by request (nothing failed).
    pub gpu_times_off: bool,
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
    /// Where the restores ran (drive mode): between passes, or inside them.
    pub restore_placement: RestorePlacement,
    pub bytes: Bytes,
    pub gpu: Gpu,
    pub dispatch_tax: Tax,
    pub measurement: Option<Measurement>,
    /// Counter values per window and pass (drive mode with `KRPHASE_PMC`), basis
    /// [`Basis::SdkCounting`].
    pub counters: Vec<crate::db::counters::CounterValue>,
    /// Per kernel: its windows, slowest total first.
    pub kernels: Vec<super::kernels::KernelStats>,
    /// Counters from imported rocpd databases beside the kernels' replay overhead.
    pub rocpd: Option<super::rocpd_counters::RocpdSection>,
    /// Per agent (device): its windows.
    pub agents: Vec<super::kernels::AgentStats>,
    /// How far each kernel's passes stray from each other (`answers/fidelity`).
    #[serde(skip_serializing_if = "super::fidelity::RunFidelity::is_empty")]
    pub fidelity: super::fidelity::RunFidelity,
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
    if info.gpu_times_off {
        // No completion records by request, not by loss: say so where the GPU phase would be.
        for p in phase_stats
            .iter_mut()
            .filter(|p| p.phase == "gpu" && p.samples == 0)
        {
            p.missing = Some("GPU times off (KRPHASE_GPU_TIMES=0)".into());
        }
    }
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
        gpu_times_off: info.gpu_times_off,
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
        restore_placement: restore_placement(conn, run_id)?,
        measurement,
        counters: crate::db::counters::run_counters(conn, run_id)?,
        kernels: super::kernels::kernel_stats(conn, run_id)?,
        rocpd: super::rocpd_counters::rocpd_section(conn, run_id)?,
        agents: super::kernels::agent_stats(conn, run_id)?,
        fidelity: super::fidelity::of_run(conn, run_id)?,
    })
}
