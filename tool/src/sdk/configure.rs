//! Registration: `rocprofiler_configure`'s work (read the environment, resolve the SDK, find
//! the kinds and operations by name, choose the mode and the clock, set up tracing with one
//! callback per kind and the tool as its `callback_args`, open the file) and, in `initialize`,
//! the claim on KERNEL_REPLAY.

use super::output_file::{Declined, declined, env, open_recorder, output_path, set_fork_factory};
use super::tracing::{self, Callbacks};
use crate::config::{self, Config, OnFull};
use crate::events::counting::Counting;
use crate::events::layout::layout_code;
use crate::events::routes::Ops;
use crate::events::tool::{self, Tool};
use crate::{recorder, say, sys};
use krphase_ffi::{
    CallbackTracingKind, DispatchCountingRecordFn, DispatchCountingServiceFn, Sdk, Status,
};
use krphase_format::event::Notice;
use krphase_format::header::NOT_FOUND;
use krphase_format::{Header, Mode, RECORD_SIZE};
use std::path::Path;

/// `rocprofiler_configure`: decide, set up the context and services, open the file.
/// `Err(Declined)` means decline (the reason has been printed).
pub fn configure(counting: CountingFns) -> Result<(), Declined> {
    if tool::get().is_some() {
        return Err(Declined); // configured already (a second copy in the tool list)
    }
    let cfg = read_config()?;
    let sdk = Sdk::load()
        .map_err(|e| declined(&format!("rocprofiler-sdk not usable: {e}; not recording")))?;
    let ops = find_ops(&sdk);
    let mode = choose_mode(&cfg, &ops)?;
    let ctx = sdk.create_context().map_err(|s| {
        declined(&format!(
            "create_context failed: {}; not recording",
            status(&sdk, s)
        ))
    })?;
    let pid = sys::getpid();
    let hostname = sys::hostname();
    let path = output_path(&cfg, pid, &hostname, &env)
        .map_err(|m| declined(&format!("{m}; not recording")))?;
    // The header decides the clock, which the dispatch callback is chosen for.
    let header = build_header(&cfg, &sdk, &ops, mode, pid, hostname, &path);
    let clock = header.clock;
    // The tool is made before tracing is set up: each callback is registered with it. It lives
    // for the process (a decline below leaves it unused: configure runs once).
    let t: &'static Tool = Box::leak(Box::new(Tool::new(cfg, Some(sdk), ops, mode, ctx, header)));
    let sdk = t.sdk.as_ref().ok_or(Declined)?;
    configure_tracing(t, sdk, &tracing::callbacks(clock, t.mode()))?;
    recorder::set_caps(t.cfg.wait);
    let rec = open_recorder(&path, &t.header, t.cfg.on_full)?;
    recorder::install(rec);
    if let Some(c) = counting_service(&t.cfg, sdk, mode, counting) {
        let _ = t.counting.set(c);
    }
    if !tool::install(t) {
        return Err(Declined);
    }
    set_fork_factory();
    // From now on a fork child must know it is one (before the SDK's initialize).
    super::process_hooks::register_fork_child();
    Ok(())
}

/// The SDK's two dispatch-counting callbacks (dispatch, record).
pub type CountingFns = (DispatchCountingServiceFn, DispatchCountingRecordFn);

/// The counting service for `KRPHASE_PMC`'s groups: drive mode only (in observe mode the replay
/// owner collects its own counters).
fn counting_service(cfg: &Config, sdk: &Sdk, mode: Mode, fns: CountingFns) -> Option<Counting> {
    if let Some(w) = &cfg.pmc_warning {
        say(w);
    }
    let groups = cfg.pmc.clone()?;
    if mode != Mode::Drive {
        say(
            "KRPHASE_PMC applies to drive mode only (another tool owns replay); running without counters",
        );
        return None;
    }
    Counting::configure(sdk, (groups, cfg.reference.clone()), fns.0, fns.1)
}

/// The environment as a [`Config`]; declines on `KRPHASE_DISABLE` or a bad value.
fn read_config() -> Result<Config, Declined> {
    let names: Vec<String> = std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .collect();
    for w in config::unknown_variables(names.iter().map(String::as_str)) {
        crate::say(&w);
    }
    match config::from_env(&env) {
        Ok(Some(mut c)) => {
            // rocprofv3 preloads its tool, so it is in the process by now in any client order.
            c.rocprof_tool = krphase_ffi::loaded_objects::rocprofv3_tool_loaded();
            Ok(c)
        }
        Ok(None) => Err(declined("KRPHASE_DISABLE is set; not recording")),
        Err(m) => Err(declined(&format!("{m}; not recording"))),
    }
}

/// The kinds and operations the tool uses, by name (the numbers differ between SDK builds).
fn find_ops(sdk: &Sdk) -> Ops {
    let find = |name: &str, fallback: CallbackTracingKind| {
        sdk.find_kind(name).ok().flatten().unwrap_or(fallback)
    };
    let mut ops = Ops {
        dispatch_kind: find("KERNEL_DISPATCH", CallbackTracingKind::KERNEL_DISPATCH),
        alloc_kind: find("MEMORY_ALLOCATION", CallbackTracingKind::MEMORY_ALLOCATION),
        code_object_kind: find("CODE_OBJECT", CallbackTracingKind::CODE_OBJECT),
        ..Ops::default()
    };
    ops.replay_kind = sdk.find_kind("KERNEL_REPLAY").ok().flatten();
    if let Some(k) = ops.replay_kind {
        ops.config = sdk.find_operation(k, "CONFIG").ok().flatten();
        ops.pass = sdk.find_operation(k, "PASS").ok().flatten();
    }
    ops
}

/// The mode: auto observes when rocprofv3 owns replay (its tool library is loaded, or
/// `ROCPROF_KERNEL_REPLAY` is set); drive needs the KERNEL_REPLAY service; auto falls back to
/// observe without it, an explicit drive declines.
fn choose_mode(cfg: &Config, ops: &Ops) -> Result<Mode, Declined> {
    let mode = cfg.effective_mode();
    // Said when the library is the only sign (under ROCPROF_KERNEL_REPLAY observing is expected).
    if let (Mode::Auto, Some(p), false) =
        (cfg.requested_mode, &cfg.rocprof_tool, cfg.rocprof_replay)
    {
        say(&format!(
            "rocprofv3's tool library is loaded ({p}); auto observes, leaving replay to it"
        ));
    }
    let replay_ok = ops.replay_kind.is_some() && ops.config.is_some() && ops.pass.is_some();
    if mode != Mode::Drive || replay_ok {
        return Ok(mode);
    }
    if cfg.requested_mode == Mode::Drive {
        return Err(declined(
            "KRPHASE_MODE=drive needs the SDK's KERNEL_REPLAY service (CONFIG and PASS), which this SDK lacks; not recording",
        ));
    }
    say("this SDK has no KERNEL_REPLAY service; observing kernel dispatches only");
    Ok(Mode::Observe)
}

/// Callback tracing for dispatches, allocations and code objects, each kind with its own
/// callback and the tool as its `callback_args`; only observe mode needs dispatch tracing to
/// succeed.
fn configure_tracing(t: &'static Tool, sdk: &Sdk, cbs: &Callbacks) -> Result<(), Declined> {
    let ops = &t.ops;
    let trace_dispatches = dispatch_tracing_wanted(&t.cfg, t.mode());
    for (kind, cb, what) in [
        (ops.dispatch_kind, cbs.dispatch, "KERNEL_DISPATCH"),
        (ops.alloc_kind, cbs.alloc, "MEMORY_ALLOCATION"),
        (ops.code_object_kind, cbs.code_object, "CODE_OBJECT"),
    ] {
        if kind == ops.dispatch_kind && !trace_dispatches {
            continue;
        }
        if let Err(s) = sdk.configure_callback_tracing(t.ctx, kind, &[], cb, tracing::args(t)) {
            if kind == ops.dispatch_kind && t.mode() == Mode::Observe {
                return Err(declined(&format!(
                    "configuring {what} tracing failed: {}; observe mode needs it; not recording",
                    status(sdk, s)
                )));
            }
            say(&format!(
                "configuring {what} tracing failed: {}; continuing without it",
                status(sdk, s)
            ));
        }
    }
    Ok(())
}

/// Whether dispatches are traced: always in observe mode (it sees dispatches only so, and
/// says once that `KRPHASE_GPU_TIMES=0` is ignored there); in drive mode unless
/// `KRPHASE_GPU_TIMES=0`.
fn dispatch_tracing_wanted(cfg: &Config, mode: Mode) -> bool {
    if cfg.gpu_times {
        return true;
    }
    if mode == Mode::Observe {
        say(
            "KRPHASE_GPU_TIMES=0 applies to drive mode only (observe mode sees dispatches through dispatch tracing); ignored",
        );
        return true;
    }
    false
}

fn build_header(
    cfg: &Config,
    sdk: &Sdk,
    ops: &Ops,
    mode: Mode,
    pid: u32,
    hostname: String,
    path: &Path,
) -> Header {
    let version = sdk
        .version()
        .map(|v| (v.major, v.minor, v.patch))
        .unwrap_or((0, 0, 0));
    let (boottime_ns, realtime_ns) = (sys::boottime_ns(), sys::realtime_ns());
    Header {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        pid,
        ppid: sys::getppid(),
        hostname,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        sdk_version: version,
        requested_mode: cfg.requested_mode,
        mode,
        payload_layout: layout_code(cfg.layout),
        on_full: u8::from(cfg.on_full == OnFull::Block),
        passes: cfg.passes,
        filter: cfg.filter_src(),
        boottime_ns,
        realtime_ns,
        record_size: RECORD_SIZE as u32,
        replay_kind: ops.replay_kind.map_or(NOT_FOUND, |k| k.0),
        config_op: ops.config.map_or(NOT_FOUND, |o| o as u32),
        pass_op: ops.pass.map_or(NOT_FOUND, |o| o as u32),
        output_path: path.display().to_string(),
        // glog stamps are local time without a zone: the offset lets a reader place them.
        utc_offset_s: sys::utc_offset_s(realtime_ns),
        // Decided here, before the first record; the writer adds the calibration pairs.
        clock: crate::clock::init(cfg.force_boottime),
        rank: crate::output::rank::from_env(&|k| std::env::var(k).ok()),
    }
}

/// A status as the SDK names it.
fn status(sdk: &Sdk, s: Status) -> String {
    match sdk.status_name(s.0) {
        Some(n) => format!("{n} ({})", s.0),
        None => format!("status {}", s.0),
    }
}

impl Tool {
    /// In `initialize` (drive mode): claim KERNEL_REPLAY. Claiming here rather than in
    /// `rocprofiler_configure` lets a replay owner that initializes earlier keep it; the tool
    /// then observes (status 15) instead of making that owner abort.
    pub fn claim_replay(&'static self) {
        if self.mode() != Mode::Drive {
            return;
        }
        let (Some(k), Some(c), Some(p), Some(sdk)) = (
            self.ops.replay_kind,
            self.ops.config,
            self.ops.pass,
            self.sdk.as_ref(),
        ) else {
            return;
        };
        let cb = tracing::callbacks(self.header.clock, Mode::Drive).replay;
        match sdk.configure_callback_tracing(self.ctx, k, &[c, p], cb, tracing::args(self)) {
            Ok(()) => {
                self.set_replay_configured();
                if !self.cfg.gpu_times {
                    recorder::notice(Notice::GpuTimesOff, 0, 0);
                }
            }
            Err(s) => {
                if s == Status::SERVICE_ALREADY_CONFIGURED {
                    say("another tool owns KERNEL_REPLAY (status 15); observing instead");
                } else {
                    say(&format!(
                        "configuring KERNEL_REPLAY failed: {}; observing instead",
                        status(sdk, s)
                    ));
                }
                self.set_mode(Mode::Observe);
                recorder::notice(Notice::FellBackToObserve, u64::from(s.0), 0);
                if !self.cfg.gpu_times {
                    self.trace_dispatches_after_all(sdk);
                }
            }
        }
    }
}

impl Tool {
    /// Drive mode with `KRPHASE_GPU_TIMES=0` fell back to observe: observing needs dispatch
    /// tracing, which configure left off, so it is set up now (the context has not started).
    fn trace_dispatches_after_all(&'static self, sdk: &Sdk) {
        let cb = tracing::callbacks(self.header.clock, Mode::Observe).dispatch;
        let kind = self.ops.dispatch_kind;
        match sdk.configure_callback_tracing(self.ctx, kind, &[], cb, tracing::args(self)) {
            Ok(()) => say(
                "KRPHASE_GPU_TIMES=0 applies to drive mode only; observing, so dispatches are traced",
            ),
            Err(s) => say(&format!(
                "configuring KERNEL_DISPATCH tracing failed: {}; observing without dispatches",
                status(sdk, s)
            )),
        }
    }
}
