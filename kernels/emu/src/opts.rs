//! `krphase-emu run` options (contract C2) and the SDK variants they select.

use clap::{Parser, ValueEnum};

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Workload {
    Stream,
    Saxpy,
    QueueDepth,
    MultiQueue,
    Graph,
    MultiPacket,
    Vmem,
}

impl Workload {
    pub fn name(self) -> &'static str {
        match self {
            Workload::Stream => "stream",
            Workload::Saxpy => "saxpy",
            Workload::QueueDepth => "queue-depth",
            Workload::MultiQueue => "multi-queue",
            Workload::Graph => "graph",
            Workload::MultiPacket => "multi-packet",
            Workload::Vmem => "vmem",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriverOrder {
    First,
    Last,
}

/// Which payload field order (ABI reference §5.2) the emulated SDK was built with.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LayoutOpt {
    /// Older ROCm: callbacks at 136/144, pass fields at 152/160, sizeof 248, size field 184.
    A,
    /// Newest ROCm: pass fields at 136/144, callbacks at 152/160, size 184.
    B,
    /// Proposed: Layout B without the context toggles, size 168.
    #[value(name = "c168")]
    C168,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RestoreOrder {
    /// Host-copy snapshot: restore between PASS EXIT and the next PASS ENTER.
    Host,
    /// Device-blit snapshot: restore after the next PASS ENTER, ahead of the pass's kernel.
    Device,
}

/// SDK declines that `--decline` can force (the `reentrant_dispatch` and `pass_drain_stuck`
/// reasons arise only from real conditions).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeclineOpt {
    #[value(name = "untracked_memory")]
    UntrackedMemory,
    #[value(name = "footprint_budget")]
    FootprintBudget,
    #[value(name = "queue_drain_stuck")]
    QueueDrainStuck,
    #[value(name = "agent_drain_stuck")]
    AgentDrainStuck,
    #[value(name = "snapshot_failed")]
    SnapshotFailed,
}

impl DeclineOpt {
    pub fn reason(self) -> &'static str {
        match self {
            DeclineOpt::UntrackedMemory => "untracked_memory",
            DeclineOpt::FootprintBudget => "footprint_budget",
            DeclineOpt::QueueDrainStuck => "queue_drain_stuck",
            DeclineOpt::AgentDrainStuck => "agent_drain_stuck",
            DeclineOpt::SnapshotFailed => "snapshot_failed",
        }
    }
}

/// Runs one workload as a HIP application would, with the emulated SDK loading the tools in
/// ROCP_TOOL_LIBRARIES. Env equivalents (the command line wins): KRPHASE_EMU_DRIVER_PASSES,
/// KRPHASE_EMU_DRIVER_ORDER, KRPHASE_EMU_DRIVER_FILTER. Also reads ROCP_TOOL_LIBRARIES,
/// ROCPROFILER_LOG_LEVEL and KRPHASE_EMU_TRUTH (ground-truth JSON Lines, appended).
#[derive(Debug, Clone, Parser)]
#[command(name = "krphase-emu run")]
pub struct RunOpts {
    /// The workload to run.
    #[arg(value_enum)]
    pub workload: Workload,
    /// Elements per array.
    #[arg(long, default_value_t = 1_048_576)]
    pub elements: usize,
    /// Iterations (rounds between synchronizations).
    #[arg(long, default_value_t = 10)]
    pub iterations: usize,
    /// queue-depth: dispatches enqueued between synchronizations.
    #[arg(long, default_value_t = 10)]
    pub depth: usize,
    /// multi-queue: host threads, one queue each.
    #[arg(long, default_value_t = 4)]
    pub threads: usize,
    /// multi-queue: GPU agents the threads' queues are spread over (1-4); windows on different
    /// agents run concurrently.
    #[arg(long, default_value_t = 1)]
    pub agents: u64,
    /// Internal client playing rocprofv3's tool: claims KERNEL_REPLAY with N passes, aborts the
    /// process if its claim is refused; sets ROCPROF_KERNEL_REPLAY=1.
    #[arg(long)]
    pub driver_passes: Option<u64>,
    /// Whether the internal client registers before or after the ROCP_TOOL_LIBRARIES tools.
    #[arg(long, value_enum)]
    pub driver_order: Option<DriverOrder>,
    /// The internal client's kernel include regex.
    #[arg(long)]
    pub driver_filter: Option<String>,
    /// KERNEL_REPLAY kind number: 23 (after HIP_GRAPH), 25 (after HIPFILE_API), 26 (HIP_EVENT first).
    #[arg(long, default_value_t = 25, value_parser = parse_kind)]
    pub replay_kind: u32,
    /// Kernel replay payload layout.
    #[arg(long, value_enum, default_value_t = LayoutOpt::B)]
    pub payload_layout: LayoutOpt,
    /// Where restores happen relative to PASS ENTER.
    #[arg(long, value_enum, default_value_t = RestoreOrder::Host)]
    pub restore_order: RestoreOrder,
    /// SDK version reported by rocprofiler_get_version(_triplet).
    #[arg(long, default_value = "1.4.1", value_parser = parse_version)]
    pub sdk_version: (u32, u32, u32),
    /// Force this SDK decline for every accepted dispatch.
    #[arg(long, value_enum)]
    pub decline: Option<DeclineOpt>,
    /// Snapshot byte budget (footprint over it declines with footprint_budget).
    #[arg(long)]
    pub footprint_budget: Option<u64>,
    /// Emulated host link bandwidth in GB/s; snapshot and restore copies are paced to it.
    #[arg(long, default_value_t = 12.0)]
    pub link_gbps: f64,
    /// Drop the last ROCP_TOOL_LIBRARIES entry when the value has a ':' (as the real SDK does).
    #[arg(long)]
    pub tool_list_quirk: bool,
}

fn parse_kind(s: &str) -> Result<u32, String> {
    match s {
        "23" | "25" | "26" => Ok(s.parse().expect("digits")),
        _ => Err(format!("{s:?} is not one of 23, 25, 26")),
    }
}

fn parse_version(s: &str) -> Result<(u32, u32, u32), String> {
    let parts: Vec<&str> = s.split('.').collect();
    if parts.len() != 3 {
        return Err(format!("expected X.Y.Z, got {s:?}"));
    }
    let p = |x: &str| {
        x.parse::<u32>()
            .map_err(|_| format!("{x:?} is not a number in {s:?}"))
    };
    Ok((p(parts[0])?, p(parts[1])?, p(parts[2])?))
}

/// The internal driver client's settings, resolved from the command line and env.
#[derive(Debug, Clone)]
pub struct DriverSettings {
    pub passes: u64,
    pub order: DriverOrder,
    pub filter: Option<regex::Regex>,
}

impl RunOpts {
    /// Resolves the driver options: CLI first, then KRPHASE_EMU_DRIVER_* env vars.
    pub fn driver(&self) -> Result<Option<DriverSettings>, String> {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.trim().is_empty());
        let passes = match self.driver_passes {
            Some(n) => Some(n),
            None => match env("KRPHASE_EMU_DRIVER_PASSES") {
                Some(v) => Some(v.trim().parse::<u64>().map_err(|_| {
                    format!("KRPHASE_EMU_DRIVER_PASSES={v:?} is not a non-negative integer")
                })?),
                None => None,
            },
        };
        let Some(passes) = passes else {
            return Ok(None);
        };
        let order = match self.driver_order {
            Some(o) => o,
            None => match env("KRPHASE_EMU_DRIVER_ORDER").as_deref().map(str::trim) {
                None => DriverOrder::Last,
                Some("first") => DriverOrder::First,
                Some("last") => DriverOrder::Last,
                Some(v) => {
                    return Err(format!(
                        "KRPHASE_EMU_DRIVER_ORDER={v:?} is not first or last"
                    ));
                }
            },
        };
        let filter_src = self
            .driver_filter
            .clone()
            .or_else(|| env("KRPHASE_EMU_DRIVER_FILTER"));
        let filter = match filter_src {
            Some(f) => Some(
                regex::Regex::new(&f)
                    .map_err(|e| format!("driver filter {f:?} is not a valid regex: {e}"))?,
            ),
            None => None,
        };
        Ok(Some(DriverSettings {
            passes,
            order,
            filter,
        }))
    }
}
