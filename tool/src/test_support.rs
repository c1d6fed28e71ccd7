//! Test support (`test-support` feature only): a tool installed without an SDK, and the
//! callbacks the SDK would call, so benchmarks and tests drive the tool with synthetic records.
//! The shipped library never enables the feature.

use crate::events::routes::Ops;
use crate::events::tool::{self, Tool};
use crate::recorder::{self, Recorder};
use crate::sdk::output_file::set_fork_factory;
use crate::sdk::tracing::{self, pass_count, replay_continue, routed_callback};
use crate::{config, sdk::process_hooks, sys};
use krphase_ffi::{CallbackTracingKind, ContextId};
use krphase_format::{Header, Mode, RECORD_SIZE};
use std::path::Path;

pub use crate::events::panic_injector::inject_panic_at_next_config;
pub use crate::recorder::handover_delay::delay_hand_overs;
pub use crate::recorder::slots_made;

/// Installs a tool without an SDK, recording to `path` with the given environment, so the
/// exported callbacks can be driven with synthetic records. The operation numbers are the
/// conventional ones (KERNEL_REPLAY 25, CONFIG 1, PASS 2).
pub fn install_synthetic(vars: &[(&str, &str)], path: &Path) -> Result<(), String> {
    let get = |k: &str| {
        vars.iter()
            .find(|(n, _)| *n == k)
            .map(|(_, v)| v.to_string())
    };
    let cfg = config::from_env(&get)?.ok_or("disabled")?;
    let mode = cfg.effective_mode();
    let header = Header {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        pid: sys::getpid(),
        mode,
        requested_mode: cfg.requested_mode,
        passes: cfg.passes,
        record_size: RECORD_SIZE as u32,
        boottime_ns: sys::boottime_ns(),
        realtime_ns: sys::realtime_ns(),
        output_path: path.display().to_string(),
        clock: crate::clock::init(cfg.force_boottime),
        rank: None,
        ..Header::default()
    };
    recorder::set_caps(cfg.wait);
    let rec =
        Recorder::create(path.to_path_buf(), &header, cfg.on_full).map_err(|e| e.to_string())?;
    recorder::install(rec);
    let ops = Ops {
        replay_kind: Some(CallbackTracingKind(25)),
        config: Some(1),
        pass: Some(2),
        dispatch_kind: CallbackTracingKind::KERNEL_DISPATCH,
        alloc_kind: CallbackTracingKind::MEMORY_ALLOCATION,
        code_object_kind: CallbackTracingKind::CODE_OBJECT,
    };
    let t: &'static Tool = Box::leak(Box::new(Tool::new(
        cfg,
        None,
        ops,
        mode,
        ContextId::default(),
        header,
    )));
    if mode == Mode::Drive {
        t.set_replay_configured();
    }
    if !tool::install(t) {
        return Err("a tool is already installed".to_string());
    }
    set_fork_factory();
    process_hooks::register();
    Ok(())
}

/// The callbacks the SDK would call: a tracing callback for every kind (it hands each record
/// to its kind's callback with the installed tool as `callback_args`, so callers pass NULL),
/// and the pass-count callback.
pub fn synthetic_entry_points() -> (
    krphase_ffi::CallbackTracingFn,
    krphase_ffi::ReplayPassCountFn,
) {
    (Some(routed_callback), Some(pass_count))
}

/// The KERNEL_DISPATCH and KERNEL_REPLAY callbacks as the SDK calls them in the shipped library
/// (the dispatch one for the clock and mode in effect), with the `callback_args` configure
/// would register; the dispatch callback without its panic boundary, for measuring what the
/// boundary costs; and drive mode's dispatch callback, which writes each enqueue callback as a
/// record of its own (observe mode's pairs an ENTER with its EXIT). `None` before
/// [`install_synthetic`].
pub fn entry_points() -> Option<EntryPoints> {
    let t = tool::get()?;
    let (dispatch, dispatch_unguarded) = tracing::dispatch_callbacks(t.mode());
    let (dispatch_plain, dispatch_plain_unguarded) =
        tracing::dispatch_callbacks(krphase_format::Mode::Drive);
    Some(EntryPoints {
        dispatch,
        dispatch_unguarded,
        dispatch_plain,
        dispatch_plain_unguarded,
        replay: tracing::replay_callback,
        args: tracing::args(t),
    })
}

/// See [`entry_points`].
#[derive(Clone, Copy)]
pub struct EntryPoints {
    pub dispatch: Callback,
    pub dispatch_unguarded: Callback,
    pub dispatch_plain: Callback,
    pub dispatch_plain_unguarded: Callback,
    pub replay: Callback,
    pub args: *mut std::ffi::c_void,
}

/// A tracing callback's signature.
pub type Callback = unsafe extern "C" fn(
    krphase_ffi::CallbackTracingRecord,
    *mut krphase_ffi::UserData,
    *mut std::ffi::c_void,
);

/// The continue callback.
pub fn synthetic_continue() -> krphase_ffi::ReplayContinueFn {
    Some(replay_continue)
}
