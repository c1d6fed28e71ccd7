//! `krphase-emu run` options and the SDK variants they select (`docs/emulator.md` lists them).

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
    /// Threads dispatch while the main thread forks `--children` children.
    Fork,
    /// `--churn-threads` short-lived threads, each dispatching once.
    Churn,
    /// Threads dispatch until one of them calls `exit()` or `abort()` (`--exit-how`).
    ExitWorker,
    /// The SDK kernel-replay samples' application: `bump<<<1, 67>>>` then `nudge<<<1, 64>>>`
    /// on two 4-byte counters; fails unless both read 1.
    Samples,
    /// Kernels whose names need a real demangler (`names.hip`): `krp::saxpy`, `step<unsigned
    /// long long>` and `step<long long>`, the overloaded `touch` pair and `extern "C"`
    /// `names_plain`, each once per iteration on its own array.
    Names,
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
            Workload::Fork => "fork",
            Workload::Churn => "churn",
            Workload::ExitWorker => "exit-worker",
            Workload::Samples => "samples",
            Workload::Names => "names",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DriverOrder {
    First,
    Last,
}

/// What a fork child does after its CPU work (HSA does not follow a fork onto the device, so
/// it never dispatches).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ChildDoes {
    /// `exit(0)`: atexit handlers run (the SDK's finalize, the tool's safety net).
    Exit,
    /// `execv("/bin/true")`: the process image is replaced; no handler runs.
    Exec,
    /// One `hipMalloc`, which fails in the child (its MEMORY_ALLOCATION callbacks still reach
    /// the tools, with address 0), then `exit(0)`.
    #[value(name = "alloc-exit")]
    AllocExit,
}

impl ChildDoes {
    pub fn name(self) -> &'static str {
        match self {
            ChildDoes::Exit => "exit",
            ChildDoes::Exec => "exec",
            ChildDoes::AllocExit => "alloc-exit",
        }
    }
}

/// How the exit-worker workload's worker ends the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExitHow {
    /// `exit(--exit-code)` from the worker thread while the others dispatch.
    Exit,
    /// `abort()`: SIGABRT, no atexit handler runs.
    Abort,
}

/// Which field order of the kernel-replay payload the emulated SDK was built with (the two
/// orders and their offsets are defined in `ffi/src/payload.rs`).
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

impl LayoutOpt {
    /// The field order a tool reads: the 168-byte variant keeps Layout B's order.
    pub fn ffi(self) -> krphase_ffi::PayloadLayout {
        match self {
            LayoutOpt::A => krphase_ffi::PayloadLayout::A,
            LayoutOpt::B | LayoutOpt::C168 => krphase_ffi::PayloadLayout::B,
        }
    }
}

/// Which `user_data` the SDK passes to `replay_continue`. Both contracts exist in SDK versions
/// (ROCm/rocm-systems, `projects/rocprofiler-sdk/`); the default is what the newest public
/// header says, since the header is the contract a tool author reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ContinueUserData {
    /// The value stored at CONFIG ENTER, even after PASS ENTER or EXIT rewrote the pass's copy:
    /// headers c02152fd and 81d118a2 ("the same user_data is threaded through all callbacks"),
    /// the user-data sample at dc5877e3, `replay_callbacks.cpp` at 08db4711.
    Config,
    /// The pass's own copy, with whatever PASS ENTER and EXIT wrote into it: header 02c1fdd9
    /// ("receives that pass's copy ..., not the CONFIG value"), the user-data sample and
    /// `replay_callbacks.cpp` of the js-pooja fork (4613ac25, 7428c991).
    Pass,
}

/// What a pass count of 1 means. The default is what the newest public header says.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PassCountOne {
    /// Not replayed: the dispatch runs once, no snapshot, no PASS callbacks (header 02c1fdd9;
    /// `replay_callbacks.cpp` at 08db4711 and the js-pooja fork's 7428c991 replay only N > 1).
    #[value(name = "no-replay")]
    NoReplay,
    /// A fixed loop of one pass: snapshot, one PASS ENTER/EXIT pair, no continue call, no
    /// restore (headers c02152fd and 81d118a2: "returns N > 0 => fixed loop of N passes").
    #[value(name = "one-pass")]
    OnePass,
}

/// How big the kernel-dispatch callback data is: the 152-byte record, or newer headers' 160
/// bytes with `int32_t pipe_id` appended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DispatchRecordOpt {
    #[value(name = "152")]
    Plain,
    #[value(name = "160")]
    PipeId,
}

/// Which loader extension table `hsa_system_get_major_extension_table` serves: the 1.03 table of
/// today's ROCr, an older runtime's shorter table (no `iterate_executables` before 1.03), or none
/// (the call answers HSA_STATUS_ERROR, as for an extension a runtime does not serve).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LoaderTableOpt {
    #[value(name = "1.03")]
    V1_03,
    #[value(name = "1.02")]
    V1_02,
    #[value(name = "1.01")]
    V1_01,
    #[value(name = "1.00")]
    V1_00,
    None,
}

impl LoaderTableOpt {
    /// The bytes of the 1.03 table the runtime copies at most (0: none served).
    pub fn bytes(self) -> usize {
        let minor = match self {
            LoaderTableOpt::V1_03 => 3,
            LoaderTableOpt::V1_02 => 2,
            LoaderTableOpt::V1_01 => 1,
            LoaderTableOpt::V1_00 => 0,
            LoaderTableOpt::None => return 0,
        };
        krphase_ffi::hsa_loader::LOADER_TABLE_SIZES
            .iter()
            .find(|(m, _)| *m == minor)
            .map_or(0, |&(_, size)| size)
    }
}

/// What makes one replay pass of a dispatch differ from another (`replay/pass_model.rs`
/// documents each model).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum PassModel {
    /// Every pass runs and counts the same.
    Uniform,
    /// Passes after the first find the kernel's data partly cached.
    #[value(name = "warm-cache")]
    WarmCache,
    /// Atomic order differs per pass: seeded time, cycle and hit-rate differences.
    Nondeterministic,
    /// The kernel grows a worklist in untracked memory the snapshot does not hold.
    #[value(name = "incomplete-restore")]
    IncompleteRestore,
}

impl PassModel {
    pub fn name(self) -> &'static str {
        match self {
            PassModel::Uniform => "uniform",
            PassModel::WarmCache => "warm-cache",
            PassModel::Nondeterministic => "nondeterministic",
            PassModel::IncompleteRestore => "incomplete-restore",
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RestoreOrder {
    /// Host-copy snapshot: restore between PASS EXIT and the next PASS ENTER.
    Host,
    /// Device-blit snapshot: restore after the next PASS ENTER, ahead of the pass's kernel.
    Device,
}

/// SDK declines that `--decline` can force (`reentrant_dispatch` arises only from a real
/// condition). `pass_drain_stuck` holds the kernel of pass `--stuck-pass` until the pass drain
/// has given up.
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
    #[value(name = "pass_drain_stuck")]
    PassDrainStuck,
}

impl DeclineOpt {
    pub fn reason(self) -> &'static str {
        match self {
            DeclineOpt::UntrackedMemory => "untracked_memory",
            DeclineOpt::FootprintBudget => "footprint_budget",
            DeclineOpt::QueueDrainStuck => "queue_drain_stuck",
            DeclineOpt::AgentDrainStuck => "agent_drain_stuck",
            DeclineOpt::SnapshotFailed => "snapshot_failed",
            DeclineOpt::PassDrainStuck => "pass_drain_stuck",
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
    /// The driver client playing rocprofv3's tool (libkrphase_emu_driver.so, preloaded: the run
    /// re-executes itself with it): claims KERNEL_REPLAY with N passes, counts one
    /// ROCPROF_COUNTER_GROUPS group per pass, aborts the process if its claim is refused; sets
    /// ROCPROF_KERNEL_REPLAY=1.
    #[arg(long)]
    pub driver_passes: Option<u64>,
    /// Whether the driver client's ROCP_TOOL_LIBRARIES entry comes before or after the others.
    #[arg(long, value_enum)]
    pub driver_order: Option<DriverOrder>,
    /// The driver client's kernel include regex.
    #[arg(long)]
    pub driver_filter: Option<String>,
    /// KERNEL_REPLAY kind number: 23 (after HIP_GRAPH), 25 (after HIPFILE_API), 26 (HIP_EVENT first).
    #[arg(long, default_value_t = 25, value_parser = parse_kind)]
    pub replay_kind: u32,
    /// Kernel replay payload layout.
    #[arg(long, value_enum, default_value_t = LayoutOpt::B)]
    pub payload_layout: LayoutOpt,
    /// Where restores happen relative to PASS ENTER (default host; `--sdk-build` with
    /// device-side always uses device).
    #[arg(long, value_enum)]
    pub restore_order: Option<RestoreOrder>,
    /// Which user_data replay_continue receives. pass (default): that pass's own copy, as the
    /// header at 02c1fdd9 states (the js-pooja fork's sample 4613ac25 and replay_callbacks.cpp
    /// 7428c991 follow it); config: the value stored at CONFIG ENTER, as headers c02152fd and
    /// 81d118a2, the user-data sample at dc5877e3 and replay_callbacks.cpp at 08db4711 have it
    /// (commits of ROCm/rocm-systems).
    #[arg(long, value_enum, default_value_t = ContinueUserData::Pass)]
    pub continue_user_data: ContinueUserData,
    /// What replay_pass_count returning 1 means. no-replay (default): the dispatch runs once,
    /// as the header at 02c1fdd9 states and replay_callbacks.cpp at 08db4711 (and the js-pooja
    /// fork's 7428c991) does; one-pass: a fixed loop of one pass, as headers c02152fd and
    /// 81d118a2 state ("N > 0 => fixed loop of N passes").
    #[arg(long, value_enum, default_value_t = PassCountOne::NoReplay)]
    pub pass_count_one: PassCountOne,
    /// Print the per-window phase line `kernel replay: dispatch <id> phases: lock+drain ...,
    /// window ...` (INFO). Off by default: no published SDK prints it; its text is our guess
    /// at an unpublished SDK change (#12608), modelled on range replay's phase line. The SDK's
    /// only kernel-replay timings are snap_seconds and restore_seconds in the outcome line.
    #[arg(long)]
    pub phase_line: bool,
    /// Size of the KERNEL_DISPATCH callback data: 152, or 160 with `pipe_id` (newer headers).
    #[arg(long, value_enum, default_value_t = DispatchRecordOpt::Plain)]
    pub dispatch_record: DispatchRecordOpt,
    /// The HSA loader extension table served: 1.03 (today's ROCr), an older runtime's 1.02, 1.01
    /// or 1.00 (no `iterate_executables`), or none.
    #[arg(long, value_enum, default_value_t = LoaderTableOpt::V1_03)]
    pub loader_table: LoaderTableOpt,
    /// SDK version reported by rocprofiler_get_version(_triplet).
    #[arg(long, default_value = "1.4.1", value_parser = parse_version)]
    pub sdk_version: (u32, u32, u32),
    /// Force this SDK decline for every accepted dispatch (`pass_drain_stuck`: every window
    /// reaching pass `--stuck-pass`, up to `--stuck-windows` of them).
    #[arg(long, value_enum)]
    pub decline: Option<DeclineOpt>,
    /// With `--decline pass_drain_stuck`: the 0-based pass whose drain never completes (default
    /// 1). A window that ends before reaching this pass replays normally.
    #[arg(long, value_name = "K")]
    pub stuck_pass: Option<u64>,
    /// With `--decline pass_drain_stuck`: only the first N windows that reach the stuck pass get
    /// stuck; later ones replay normally (default: every one).
    #[arg(long, value_name = "N")]
    pub stuck_windows: Option<u64>,
    /// With `--decline pass_drain_stuck`: how long the stuck pass's drain waits before it gives
    /// up, in 12 equal slices (the SDK: 60000, 5 s x 12). Healthy drains keep the SDK's limit.
    #[arg(long, value_name = "MS", default_value_t = DEFAULT_DRAIN_TIMEOUT_MS)]
    pub drain_timeout_ms: u64,
    /// Snapshot byte budget (footprint over it declines with footprint_budget).
    #[arg(long)]
    pub footprint_budget: Option<u64>,
    /// Emulated host link bandwidth in GB/s; snapshot and restore copies are paced to it
    /// (default 12; not with --sdk-build, whose cost model paces every copy).
    #[arg(long)]
    pub link_gbps: Option<f64>,
    /// Emulate an SDK build: comma-separated switches, combinable: baseline (none: the
    /// pre-staging-pool host copy), signal-pool (#12607), skip-cu-markers (#12609),
    /// keep-staging (#12610), device-side (#10916). Turns on the build's cost model, paced
    /// from this machine's memcpy rate; without it copies are paced to --link-gbps alone.
    /// Env: KRPHASE_EMU_SDK_BUILD (the command line wins).
    #[arg(long, value_name = "LIST")]
    pub sdk_build: Option<String>,
    /// With --sdk-build: the memcpy rate (GB/s) that stands for the GPU's device-local copies
    /// (default: measured at start). Env: KRPHASE_EMU_DEVICE_GBPS.
    #[arg(long, value_name = "GBPS")]
    pub device_gbps: Option<f64>,
    /// With --sdk-build: HIP compilation-unit markers (1-byte `__hip_cuid_*` variables, one
    /// per compilation unit) in the loaded code objects (default 8).
    #[arg(long, value_name = "N")]
    pub cu_markers: Option<u32>,
    /// With --sdk-build device-side: the device's memory in bytes, which the application's
    /// regions and the kept GPU-local snapshot backing share (default 192 GiB).
    #[arg(long, value_name = "BYTES")]
    pub device_memory: Option<u64>,
    /// With --sdk-build device-side: what a region whose backing does not fit does (default
    /// host: host staging for that region; decline: the snapshot fails, `snapshot_failed`).
    #[arg(long, value_enum)]
    pub device_fallback: Option<DeviceFallback>,
    /// What makes replay passes differ: uniform (default: every pass runs and counts the same),
    /// warm-cache, nondeterministic, incomplete-restore. The others need --sdk-build (only a
    /// paced kernel's time can follow them); each writes a `pass_model` truth line per pass.
    #[arg(long, value_enum, default_value_t = PassModel::Uniform)]
    pub pass_model: PassModel,
    /// warm-cache: the cache the footprint is compared with, bytes (default 268435456: the
    /// MI300X's 256 MB Infinity Cache).
    #[arg(long, value_name = "BYTES")]
    pub cache_bytes: Option<u64>,
    /// warm-cache: the share of a pass's time a fully cached footprint saves (default 0.30:
    /// pass 1 at 0.7x pass 0, as measured on an H200 below its L2).
    #[arg(long, value_name = "F")]
    pub warm_speedup: Option<f64>,
    /// nondeterministic: each pass's time and cycles vary by up to this share (default 0.25).
    #[arg(long, value_name = "F")]
    pub pass_spread: Option<f64>,
    /// nondeterministic: the seed of the per-pass differences (default 1).
    #[arg(long, value_name = "N")]
    pub pass_seed: Option<u64>,
    /// incomplete-restore: how much each execution grows the worklist, as a share of its
    /// length (default 0.5).
    #[arg(long, value_name = "F")]
    pub worklist_growth: Option<f64>,
    /// The kernels --pass-model applies to, comma-separated names (e.g. stream_triad,stream_dot);
    /// the others' passes stay uniform. Default: every kernel.
    #[arg(long, value_name = "LIST")]
    pub pass_model_kernels: Option<String>,
    /// fork: children forked by the main thread while the other threads dispatch (the storm).
    #[arg(long, default_value_t = 8)]
    pub children: usize,
    /// fork: what each child does after its CPU work.
    #[arg(long, value_enum, default_value_t = ChildDoes::Exit)]
    pub child_does: ChildDoes,
    /// churn: short-lived threads in all, `--threads` of them alive at a time.
    #[arg(long, default_value_t = 10_000)]
    pub churn_threads: usize,
    /// exit-worker: how the worker ends the process.
    #[arg(long, value_enum, default_value_t = ExitHow::Exit)]
    pub exit_how: ExitHow,
    /// exit-worker: the worker's `exit()` status.
    #[arg(long, default_value_t = 3)]
    pub exit_code: i32,
    /// exit-worker: dispatches the worker completes before it ends the process.
    #[arg(long, default_value_t = 20)]
    pub exit_after: usize,
    /// Time every call into a tool (callbacks, configure, initialize, finalize, pass-count and
    /// continue calls) and write the longest in a `tool_time` truth line.
    #[arg(long)]
    pub time_callbacks: bool,
    /// Register the kernels from this directory's code objects (`<source>.co` for each HIP
    /// source, e.g. kernels/hip/code-objects/gfx90a-v4) instead of the built-in gfx940 v5 set.
    #[arg(long, value_name = "DIR")]
    pub code_objects: Option<std::path::PathBuf>,
    /// The real SDK's tool-list rule: only ROCP_TOOL_LIBRARIES entries followed by ':' are kept
    /// (the last entry of a ':'-separated list is dropped). On by default; `off` keeps every entry.
    #[arg(long, value_name = "on|off", default_value = "on", num_args = 0..=1,
          default_missing_value = "on", value_parser = parse_on_off)]
    pub tool_list_quirk: bool,
}

/// `--link-gbps` when not given.
pub const DEFAULT_LINK_GBPS: f64 = 12.0;

/// The SDK's drain limit: 12 slices of 5 s.
pub const DEFAULT_DRAIN_TIMEOUT_MS: u64 = 60_000;
/// Longest accepted `--drain-timeout-ms` (one hour).
pub const MAX_DRAIN_TIMEOUT_MS: u64 = 3_600_000;

fn parse_kind(s: &str) -> Result<u32, String> {
    match s {
        "23" | "25" | "26" => Ok(s.parse().expect("digits")),
        _ => Err(format!("{s:?} is not one of 23, 25, 26")),
    }
}

fn parse_on_off(s: &str) -> Result<bool, String> {
    match s {
        "on" => Ok(true),
        "off" => Ok(false),
        _ => Err(format!("{s:?} is not on or off")),
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

/// `--decline pass_drain_stuck`: which pass sticks, and in how many windows (None: every one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StuckSettings {
    pub pass: u64,
    pub windows: Option<u64>,
}

/// The driver client's settings, resolved from the command line and env.
#[derive(Debug, Clone)]
pub struct DriverSettings {
    pub passes: u64,
    pub order: DriverOrder,
    pub filter: Option<regex::Regex>,
}

impl RunOpts {
    /// Checks the drain options: the timeout's range, and that the stuck-pass options come with
    /// `--decline pass_drain_stuck`.
    pub fn stuck(&self) -> Result<Option<StuckSettings>, String> {
        if self.drain_timeout_ms == 0 || self.drain_timeout_ms > MAX_DRAIN_TIMEOUT_MS {
            return Err(format!(
                "--drain-timeout-ms must be 1 to {MAX_DRAIN_TIMEOUT_MS}, got {}",
                self.drain_timeout_ms
            ));
        }
        if self.stuck_windows == Some(0) {
            return Err("--stuck-windows must be at least 1".into());
        }
        if self.decline != Some(DeclineOpt::PassDrainStuck) {
            if self.stuck_pass.is_some() || self.stuck_windows.is_some() {
                return Err(
                    "--stuck-pass and --stuck-windows need --decline pass_drain_stuck".into(),
                );
            }
            return Ok(None);
        }
        Ok(Some(StuckSettings {
            pass: self.stuck_pass.unwrap_or(1),
            windows: self.stuck_windows,
        }))
    }

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

/// What the device-side build (#10916) does with a region whose GPU-local backing does not fit
/// in the device's free memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DeviceFallback {
    /// Copy that region through host staging (the device variant's code, per region).
    Host,
    /// Fail the snapshot, so the dispatch declines with `snapshot_failed` and runs once (the
    /// device-only snapshot #10916 describes: it "fails if device memory is full").
    Decline,
}
