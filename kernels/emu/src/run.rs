//! `krphase-emu run WORKLOAD [options]`: start the SDK (tools, driver), load the code object,
//! run the workload, finalize, print the result line.

use crate::build_settings::{self, BuildSettings};
use crate::opts::{PassModel, RestoreOrder, RunOpts, StuckSettings};
use crate::registration;
use crate::replay::{self, PassModelSettings, ReplayConfig};
use crate::sdk::sdk;
use crate::{driver_client, hsa_runtime, kinds, program, shutdown, tool_time, truth, workloads};
use clap::Parser;
use serde_json::json;
use std::ffi::OsString;

/// Default snapshot budget: half of MemAvailable (as `ROCPROFILER_KERNEL_REPLAY_MAX_SNAPSHOT_BYTES`).
fn default_budget() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("MemAvailable:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<u64>().ok())
        })
        .map_or(u64::MAX, |kb| kb * 1024 / 2)
}

/// An SDK policy switch from the environment: 0/false/off/no or 1/true/on/yes.
fn env_switch(name: &str, default: bool) -> Result<bool, String> {
    match std::env::var(name) {
        Err(_) => Ok(default),
        Ok(v) => match v.trim().to_ascii_lowercase().as_str() {
            "" => Ok(default),
            "1" | "true" | "on" | "yes" => Ok(true),
            "0" | "false" | "off" | "no" => Ok(false),
            _ => Err(format!(
                "{name}={v:?} is not a boolean (0/1, true/false, on/off)"
            )),
        },
    }
}

/// `ROCPROFILER_KERNEL_REPLAY_MAX_SNAPSHOT_BYTES`, if set.
fn env_budget() -> Result<Option<u64>, String> {
    const NAME: &str = "ROCPROFILER_KERNEL_REPLAY_MAX_SNAPSHOT_BYTES";
    match std::env::var(NAME) {
        Ok(v) if !v.trim().is_empty() => v
            .trim()
            .parse::<u64>()
            .map(Some)
            .map_err(|_| format!("{NAME}={v:?} is not a byte count")),
        _ => Ok(None),
    }
}

fn fail(msg: &str) -> i32 {
    eprintln!("krphase-emu: {msg}");
    2
}

/// The checks on sizes and rates that clap's types do not make.
fn check_ranges(o: &RunOpts) -> Result<(), String> {
    if o.elements == 0 {
        return Err("--elements must be at least 1".into());
    }
    if o.agents == 0 || o.agents > crate::agents::MAX_GPU_AGENTS {
        return Err(format!(
            "--agents must be 1 to {}",
            crate::agents::MAX_GPU_AGENTS
        ));
    }
    if o.threads == 0 || o.depth == 0 || o.churn_threads == 0 {
        return Err("--threads, --depth and --churn-threads must be at least 1".into());
    }
    if o.link_gbps.is_some_and(|g| !(g > 0.0 && g.is_finite())) {
        return Err("--link-gbps must be a positive number".into());
    }
    Ok(())
}

/// The window's variant and policy: the options, then the SDK's policy env vars.
fn replay_config(
    o: &RunOpts,
    stuck: Option<StuckSettings>,
    build: Option<&BuildSettings>,
) -> Result<ReplayConfig, String> {
    let decline_on_vmem = env_switch("ROCPROFILER_KERNEL_REPLAY_DECLINE_ON_VMEM", true)?;
    let decline_on_untracked_pool =
        env_switch("ROCPROFILER_KERNEL_REPLAY_DECLINE_ON_UNTRACKED_POOL", false)?;
    let env_budget = env_budget()?;
    Ok(ReplayConfig {
        layout: o.payload_layout,
        restore_order: match build {
            Some(b) if b.model.build.device_side => RestoreOrder::Device,
            _ => o.restore_order.unwrap_or(RestoreOrder::Host),
        },
        continue_user_data: o.continue_user_data,
        pass_count_one: o.pass_count_one,
        phase_line: o.phase_line,
        decline: o.decline,
        budget: o
            .footprint_budget
            .or(env_budget)
            .unwrap_or_else(default_budget),
        gbps: o.link_gbps.unwrap_or(crate::opts::DEFAULT_LINK_GBPS),
        decline_on_vmem,
        decline_on_untracked_pool,
        stuck,
        drain_timeout: std::time::Duration::from_millis(o.drain_timeout_ms),
        model: build.map(|b| b.model),
        device_memory: build.map_or(crate::device_backing::DEFAULT_DEVICE_MEMORY, |b| {
            b.device_memory
        }),
        device_fallback: build.map_or(crate::opts::DeviceFallback::Host, |b| b.device_fallback),
        pass_model: pass_model(o, build.is_some())?,
    })
}

/// `--pass-model-kernels`: one bit per named kernel (bit id − 1); an unknown or missing name is
/// an error.
fn kernel_bits(list: &str) -> Result<u64, String> {
    let mut bits = 0u64;
    for name in list.split(',').map(str::trim) {
        let id = krphase_kernels::kernel_id(name)
            .filter(|&id| id <= 64)
            .ok_or_else(|| format!("--pass-model-kernels: {name:?} is not a workload kernel"))?;
        bits |= 1 << (id - 1);
    }
    Ok(bits)
}

/// `--pass-model` and its parameters, checked: a share in [0, 1), a cache of at least a byte,
/// and `--sdk-build` for a model that changes pass times.
fn pass_model(o: &RunOpts, paced: bool) -> Result<PassModelSettings, String> {
    let d = PassModelSettings::UNIFORM;
    let share = |name: &str, v: Option<f64>, default: f64| match v {
        None => Ok(default),
        Some(f) if (0.0..1.0).contains(&f) => Ok(f),
        Some(f) => Err(format!("--{name} must be at least 0 and below 1, got {f}")),
    };
    let s = PassModelSettings {
        model: o.pass_model,
        cache_bytes: o.cache_bytes.unwrap_or(d.cache_bytes),
        warm_speedup: share("warm-speedup", o.warm_speedup, d.warm_speedup)?,
        spread: share("pass-spread", o.pass_spread, d.spread)?,
        seed: o.pass_seed.unwrap_or(d.seed),
        growth: match o.worklist_growth {
            None => d.growth,
            Some(g) if g > 0.0 && g <= 10.0 => g,
            Some(g) => {
                return Err(format!(
                    "--worklist-growth must be above 0 and at most 10, got {g}"
                ));
            }
        },
        kernels: o
            .pass_model_kernels
            .as_deref()
            .map(kernel_bits)
            .transpose()?,
    };
    if s.cache_bytes == 0 {
        return Err("--cache-bytes must be at least 1".into());
    }
    if s.model != PassModel::Uniform && !paced {
        return Err(format!(
            "--pass-model {} needs --sdk-build: only a kernel paced to its modelled time can follow the model",
            s.model.name()
        ));
    }
    Ok(s)
}

/// This process's peak resident set so far (`VmHWM` in `/proc/self/status`), in KiB; 0 if
/// unreadable.
fn peak_rss_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse().ok())
        })
        .unwrap_or(0)
}

/// The result line (and its truth line); returns the exit code.
fn report(o: &RunOpts, result: Result<workloads::Outcome, String>, dispatches: u64) -> i32 {
    let w = o.workload.name();
    match result {
        Ok(r) => {
            truth::write(
                &json!({"type": "result", "pid": std::process::id(), "workload": w,
                "checksum": r.checksum.hex(), "counter": r.counter, "dispatches": dispatches,
                "peak_rss_kib": peak_rss_kib()}),
            );
            println!(
                "result {w} ok checksum={} counter={} dispatches={dispatches}",
                r.checksum.hex(),
                r.counter
            );
            0
        }
        Err(e) => {
            println!("result {w} FAILED {e}");
            1
        }
    }
}

/// Entry point; `args[0]` is the subcommand name.
pub fn main(args: &[OsString]) -> i32 {
    let o = match RunOpts::try_parse_from(args) {
        Ok(o) => o,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if let Err(e) = check_ranges(&o) {
        return fail(&e);
    }
    crate::agents::set_gpu_count(o.agents);
    let stuck = match o.stuck() {
        Ok(s) => s,
        Err(e) => return fail(&e),
    };
    let driver = match o.driver() {
        Ok(d) => d,
        Err(e) => return fail(&e),
    };
    // The rocprofv3 stand-in's tool is a client library of its own, loaded as rocprofv3 loads
    // its tool; a run asked to include it starts again with it preloaded.
    if let Some(d) = &driver
        && !driver_client::loaded()
    {
        return fail(&driver_client::reexec_with(d));
    }
    let build = match build_settings::resolve(&o) {
        Ok(b) => b,
        Err(e) => return fail(&e),
    };
    if let Err(e) = truth::init_from_env() {
        return fail(&e);
    }
    if let Err(e) = crate::code_objects::select(o.code_objects.as_deref()) {
        return fail(&e);
    }
    let config = match replay_config(&o, stuck, build.as_ref()) {
        Ok(c) => c,
        Err(e) => return fail(&e),
    };
    if let Some(b) = &build {
        build_settings::announce(b);
        program::set_cu_markers(b.cu_markers);
    }
    kinds::init(o.replay_kind);
    sdk().set_version(o.sdk_version);
    replay::configure(config);
    crate::device::set_pipe_id_records(o.dispatch_record == crate::opts::DispatchRecordOpt::PipeId);
    hsa_runtime::serve(o.loader_table.bytes());

    if o.time_callbacks {
        tool_time::enable();
    }
    shutdown::register_at_exit();
    // Tools built against this SDK's header read its payload layout (the driver client does).
    // SAFETY: no other thread exists yet (tools are not loaded, no queue is created).
    unsafe {
        std::env::set_var(
            "KRPHASE_EMU_PAYLOAD_LAYOUT",
            format!("{:?}", o.payload_layout.ffi()).to_ascii_lowercase(),
        )
    };
    let tool_list = std::env::var("ROCP_TOOL_LIBRARIES").unwrap_or_default();
    let sources = registration::sources(&tool_list, o.tool_list_quirk);
    if let Err(e) = registration::initialize(sources, o.sdk_version) {
        eprintln!("krphase-emu: {e}");
        std::process::abort(); // ROCP_FATAL, as in the SDK
    }
    // The runtime is up: the tools were configured while it started; code objects load now.
    hsa_runtime::open();
    program::load_code_object();

    let result = workloads::run(&o);
    program::device_synchronize();
    let (dispatches, completion_problem) = program::check_completions();

    shutdown::finalize_sdk();
    tool_time::write_truth("end");
    if build.is_some() {
        replay::write_totals_truth();
    }

    let result = result.and_then(|r| match completion_problem {
        Some(p) => Err(p),
        None => Ok(r),
    });
    report(&o, result, dispatches)
}
