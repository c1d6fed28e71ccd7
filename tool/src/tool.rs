//! The tool's state and its reactions to SDK callbacks (safe code; `abi` does the raw reads).

use crate::alloc::{AllocTracker, Live, PointerClass, classify};
use crate::config::{self, Config};
use crate::modvars::ModVars;
use crate::output;
use crate::recorder::{self, Flush, Recorder, Thread};
use crate::{say, say_once, sys};
use krphase_ffi::{
    CallbackTracingKind, ContextId, KernelDispatchInfo, MemoryAllocationData, PayloadLayout,
    ReplayContinueFn, ReplayPassCountFn, ReplayPayload, Sdk, Status, TracingOperation,
};
use krphase_format::event::{Decision, Notice, alloc_class, kind};
use krphase_format::{Header, Mode, NameSpace, RECORD_SIZE, Record};
use std::cell::Cell;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock, RwLock};

/// Layout state: not yet known, confirmed A or B, or driving stopped.
const LAYOUT_UNKNOWN: u8 = 0;
const LAYOUT_A: u8 = 1;
const LAYOUT_B: u8 = 2;
const LAYOUT_STOPPED: u8 = 3;

/// Offsets of `total_passes` in Layout B and Layout A (where the first PASS finds N).
fn total_offset(l: PayloadLayout) -> usize {
    l.offsets().total_passes
}

/// Offsets of `current_pass` in Layout B and Layout A (where an indefinite loop's second PASS
/// finds its index: `total_passes` is 0 in both candidate slots then).
fn current_offset(l: PayloadLayout) -> usize {
    l.offsets().current_pass
}

/// Operation numbers found by name.
#[derive(Debug, Clone, Copy, Default)]
pub struct Ops {
    pub replay_kind: Option<CallbackTracingKind>,
    pub config: Option<TracingOperation>,
    pub pass: Option<TracingOperation>,
    pub dispatch_kind: CallbackTracingKind,
    pub alloc_kind: CallbackTracingKind,
    pub code_object_kind: CallbackTracingKind,
}

/// What the tracing callback does with a record of a given kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Route {
    Ignore,
    Replay,
    Dispatch,
    Alloc,
    CodeObject,
}

/// Kind number → [`Route`], filled once from the numbers found by name, so the callback
/// dispatches with one indexed load instead of a chain of compares.
#[derive(Debug, Clone, Copy)]
pub struct Routes([Route; Routes::LEN]);

impl Routes {
    const LEN: usize = 64;

    pub fn new(ops: &Ops) -> Routes {
        let mut t = [Route::Ignore; Routes::LEN];
        let mut set = |k: CallbackTracingKind, r: Route| {
            if let Some(e) = t.get_mut(k.0 as usize) {
                *e = r;
            }
        };
        set(ops.code_object_kind, Route::CodeObject);
        set(ops.alloc_kind, Route::Alloc);
        set(ops.dispatch_kind, Route::Dispatch);
        if let Some(k) = ops.replay_kind {
            set(k, Route::Replay);
        }
        Routes(t)
    }

    #[inline(always)]
    pub fn get(&self, kind: CallbackTracingKind) -> Route {
        self.0
            .get(kind.0 as usize)
            .copied()
            .unwrap_or(Route::Ignore)
    }
}

pub struct Tool {
    pub cfg: Config,
    /// `None` only for the synthetic set-up benchmarks and tests use ([`install_synthetic`]).
    pub sdk: Option<Sdk>,
    pub ops: Ops,
    /// `ops` as a kind → route table.
    pub routes: Routes,
    /// The mode in effect (drive falls back to observe on status 15).
    mode: AtomicU8,
    layout: AtomicU8,
    layout_forced: bool,
    /// kernel id → matches the filter.
    kernels: RwLock<HashMap<u64, bool>>,
    allocs: AllocTracker,
    /// Writable module variables per agent (the snapshot bytes no tracing reports).
    pub modvars: ModVars,
    pub ctx: ContextId,
    replay_configured: AtomicBool,
    panicked: AtomicBool,
    header: Header,
}

static TOOL: OnceLock<Tool> = OnceLock::new();

/// The tool declined; the reason has been printed.
#[derive(Debug)]
pub struct Declined;

fn declined(msg: &str) -> Declined {
    say(msg);
    Declined
}

pub fn get() -> Option<&'static Tool> {
    TOOL.get()
}

fn env(k: &str) -> Option<String> {
    std::env::var(k).ok()
}

/// `rocprofiler_configure`: decide, set up the context and services, open the file.
/// `Err(Declined)` means decline (the reason has been printed).
pub fn configure(cb: krphase_ffi::CallbackTracingFn) -> Result<(), Declined> {
    if TOOL.get().is_some() {
        return Err(Declined); // configured already (a second copy in the tool list)
    }
    let cfg = match config::from_env(&env) {
        Ok(Some(c)) => c,
        Ok(None) => {
            say("KRPHASE_DISABLE is set; not recording");
            return Err(Declined);
        }
        Err(m) => {
            say(&format!("{m}; not recording"));
            return Err(Declined);
        }
    };
    let sdk = Sdk::load()
        .map_err(|e| declined(&format!("rocprofiler-sdk not usable: {e}; not recording")))?;
    let version = sdk
        .version()
        .map(|v| (v.major, v.minor, v.patch))
        .unwrap_or((0, 0, 0));
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
    let mut mode = cfg.effective_mode();
    let replay_ok = ops.replay_kind.is_some() && ops.config.is_some() && ops.pass.is_some();
    if mode == Mode::Drive && !replay_ok {
        if cfg.requested_mode == Mode::Drive {
            say(
                "KRPHASE_MODE=drive needs the SDK's KERNEL_REPLAY service (CONFIG and PASS), which this SDK lacks; not recording",
            );
            return Err(Declined);
        }
        say("this SDK has no KERNEL_REPLAY service; observing kernel dispatches only");
        mode = Mode::Observe;
    }

    let ctx = sdk.create_context().map_err(|s| {
        declined(&format!(
            "create_context failed: {}; not recording",
            status(&sdk, s)
        ))
    })?;
    for (kind, what) in [
        (ops.dispatch_kind, "KERNEL_DISPATCH"),
        (ops.alloc_kind, "MEMORY_ALLOCATION"),
        (ops.code_object_kind, "CODE_OBJECT"),
    ] {
        if let Err(s) = sdk.configure_callback_tracing(ctx, kind, &[], cb, std::ptr::null_mut()) {
            if kind == ops.dispatch_kind && mode == Mode::Observe {
                say(&format!(
                    "configuring {what} tracing failed: {}; observe mode needs it; not recording",
                    status(&sdk, s)
                ));
                return Err(Declined);
            }
            say(&format!(
                "configuring {what} tracing failed: {}; continuing without it",
                status(&sdk, s)
            ));
        }
    }

    let pid = sys::getpid();
    let hostname = sys::hostname();
    let path =
        output_path(&cfg, pid, &hostname).map_err(|m| declined(&format!("{m}; not recording")))?;
    let header = Header {
        tool_version: env!("CARGO_PKG_VERSION").into(),
        pid,
        ppid: sys::getppid(),
        hostname,
        command_line: std::env::args().collect::<Vec<_>>().join(" "),
        sdk_version: version,
        requested_mode: cfg.requested_mode,
        mode,
        payload_layout: match cfg.layout {
            None => 0,
            Some(PayloadLayout::A) => 1,
            Some(PayloadLayout::B) => 2,
        },
        on_full: u8::from(cfg.on_full == config::OnFull::Block),
        passes: cfg.passes,
        filter: cfg.filter_src(),
        boottime_ns: sys::boottime_ns(),
        realtime_ns: sys::realtime_ns(),
        record_size: RECORD_SIZE as u32,
        replay_kind: ops
            .replay_kind
            .map_or(krphase_format::header::NOT_FOUND, |k| k.0),
        config_op: ops
            .config
            .map_or(krphase_format::header::NOT_FOUND, |o| o as u32),
        pass_op: ops
            .pass
            .map_or(krphase_format::header::NOT_FOUND, |o| o as u32),
        output_path: path.display().to_string(),
    };
    let rec = open_recorder(&path, &header, cfg.on_full)?;
    recorder::install(rec);
    let tool = Tool::new(cfg, Some(sdk), ops, mode, ctx, false, header);
    if TOOL.set(tool).is_err() {
        return Err(Declined);
    }
    recorder::set_fork_factory(Box::new(fork_child_recorder));
    Ok(())
}

fn status(sdk: &Sdk, s: Status) -> String {
    match sdk.status_name(s.0) {
        Some(n) => format!("{n} ({})", s.0),
        None => format!("status {}", s.0),
    }
}

fn output_path(cfg: &Config, pid: u32, hostname: &str) -> Result<PathBuf, String> {
    let vars = output::Vars {
        pid,
        ppid: sys::getppid(),
        hostname,
        env: &env,
    };
    output::resolve(
        cfg.output_template.as_deref(),
        cfg.rocprof_output.as_deref(),
        &vars,
    )
}

fn open_recorder(
    path: &Path,
    header: &Header,
    on_full: config::OnFull,
) -> Result<Arc<Recorder>, Declined> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty())
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        say(&format!(
            "cannot create output directory {}: {e}; not recording",
            dir.display()
        ));
        return Err(Declined);
    }
    Recorder::create(path.to_path_buf(), header, on_full).map_err(|e| {
        declined(&format!(
            "cannot write {}: {e}; not recording",
            path.display()
        ))
    })
}

/// A fork child writes its own file, named from the template with its own pid.
fn fork_child_recorder() -> Option<Arc<Recorder>> {
    let t = get()?;
    let pid = sys::getpid();
    let mut h = t.header.clone();
    let parent = h.pid;
    h.pid = pid;
    h.ppid = sys::getppid();
    h.boottime_ns = sys::boottime_ns();
    h.realtime_ns = sys::realtime_ns();
    h.mode = t.mode();
    let path = output_path(&t.cfg, pid, &h.hostname)
        .map_err(|m| declined(&m))
        .ok()?;
    h.output_path = path.display().to_string();
    let rec = open_recorder(&path, &h, t.cfg.on_full).ok()?;
    // First record of the child's file: whose fork it is (recorded directly: this runs while
    // the calling thread's buffer is being re-attached).
    let ts = sys::boottime_ns();
    rec.send_records(&[Record::new(
        kind::NOTICE,
        Notice::ForkChild.to_u8(),
        0,
        sys::gettid(),
        ts,
        u64::from(parent),
        0,
    )]);
    Some(rec)
}

/// Per-thread state of the CONFIG … CONFIG EXIT span running on this thread.
#[derive(Clone, Copy)]
struct WindowTls {
    dispatch: u64,
    passes: u32,
    /// The pass-count callback was written at CONFIG ENTER.
    asked: bool,
    /// The SDK called it (so it found our write: the layout is right).
    called: bool,
}

impl WindowTls {
    const NONE: WindowTls = WindowTls {
        dispatch: u64::MAX,
        passes: 0,
        asked: false,
        called: false,
    };
}

thread_local! {
    /// The replay window running on this thread: (dispatch id, passes seen so far).
    static WINDOW: Cell<WindowTls> = const { Cell::new(WindowTls::NONE) };
}

impl Tool {
    fn new(
        cfg: Config,
        sdk: Option<Sdk>,
        ops: Ops,
        mode: Mode,
        ctx: ContextId,
        replay_configured: bool,
        header: Header,
    ) -> Tool {
        let layout = match cfg.layout {
            Some(PayloadLayout::A) => LAYOUT_A,
            Some(PayloadLayout::B) => LAYOUT_B,
            None => LAYOUT_UNKNOWN,
        };
        Tool {
            layout_forced: cfg.layout.is_some(),
            cfg,
            sdk,
            routes: Routes::new(&ops),
            ops,
            mode: AtomicU8::new(mode.to_u8()),
            layout: AtomicU8::new(layout),
            kernels: RwLock::new(HashMap::new()),
            allocs: AllocTracker::default(),
            modvars: ModVars::default(),
            ctx,
            replay_configured: AtomicBool::new(replay_configured),
            panicked: AtomicBool::new(false),
            header,
        }
    }

    pub fn mode(&self) -> Mode {
        Mode::from_u8(self.mode.load(Ordering::Relaxed)).unwrap_or(Mode::Observe)
    }

    pub fn replay_configured(&self) -> bool {
        self.replay_configured.load(Ordering::Relaxed)
    }

    /// A panic was caught at the C boundary: stop recording and driving.
    pub fn on_panic(&self) {
        if !self.panicked.swap(true, Ordering::AcqRel) {
            let what = PANIC_WHAT.lock().map(|g| g.clone()).unwrap_or_default();
            say(&format!(
                "internal error (panic caught{what}); recording stops, the application continues"
            ));
            if let Some(r) = recorder::peek() {
                r.stop();
            }
        }
    }

    pub fn panicked(&self) -> bool {
        self.panicked.load(Ordering::Relaxed)
    }

    fn notice(&self, n: Notice, a: u64, b: u64) {
        let ts = sys::boottime_ns();
        recorder::record(
            Record::new(kind::NOTICE, n.to_u8(), 0, 0, ts, a, b),
            ts,
            Flush::Now,
        );
    }

    fn kernel_matches(&self, kernel_id: u64) -> bool {
        if self.cfg.filter.is_none() {
            return true;
        }
        let g = self.kernels.read().unwrap_or_else(|p| p.into_inner());
        // A kernel whose name was never registered cannot match a name filter.
        g.get(&kernel_id).copied().unwrap_or(false)
    }

    /// KERNEL_REPLAY CONFIG ENTER: choose, set the pass-count (and continue) callback, record.
    pub fn on_config_enter(
        &self,
        p: &mut ReplayPayload,
        tid: u32,
        corr: (u64, u64),
        (pass_count, cont): (ReplayPassCountFn, ReplayContinueFn),
        ts: u64,
    ) {
        if INJECT_PANIC.swap(false, Ordering::Relaxed) {
            panic!("injected panic (test hook)");
        }
        let info = p.dispatch_info();
        let d = info.dispatch_id;
        let layout = self.layout.load(Ordering::Acquire);
        let mut decision = if self.panicked() || layout == LAYOUT_STOPPED {
            Decision::Stopped
        } else if !self.kernel_matches(info.kernel_id) {
            Decision::FilteredOut
        } else if self.cfg.passes == 1 {
            Decision::PassesOne
        } else if self.cfg.passes == 0 {
            Decision::Indefinite
        } else {
            Decision::Replay
        };
        if matches!(
            decision,
            Decision::Replay | Decision::PassesOne | Decision::Indefinite
        ) {
            if !p.has_pass_fields() {
                say_once(
                    &SMALL_PAYLOAD,
                    &format!(
                        "replay payload is only {} bytes; not driving replay",
                        p.size()
                    ),
                );
                decision = Decision::Stopped;
            } else {
                // The continue callback records every decision of a replaying loop (and ends
                // an indefinite one); a declining PASSES=1 leaves it NULL.
                let cont = if decision == Decision::PassesOne {
                    None
                } else {
                    cont
                };
                let layouts: &[PayloadLayout] = match layout {
                    LAYOUT_A => &[PayloadLayout::A],
                    LAYOUT_B => &[PayloadLayout::B],
                    // Not confirmed yet: both slots (§5.3). The other layout's slots are pass
                    // fields the SDK rewrites for every PASS.
                    _ => &[PayloadLayout::A, PayloadLayout::B],
                };
                for &l in layouts {
                    p.set_pass_count(l, pass_count);
                    p.set_continue(l, cont);
                }
            }
        }
        let asked = matches!(
            decision,
            Decision::Replay | Decision::PassesOne | Decision::Indefinite
        );
        WINDOW.with(|w| {
            w.set(WindowTls {
                dispatch: d,
                passes: 0,
                asked,
                called: false,
            })
        });
        // One thread-local access for the window's opening records.
        recorder::with_thread(|th| {
            th.record(
                Record::new(
                    kind::CONFIG_ENTER,
                    decision.to_u8(),
                    0,
                    tid,
                    ts,
                    d,
                    info.kernel_id,
                ),
                ts,
                Flush::Lazy,
            );
            th.record(
                Record::new(
                    kind::DISPATCH_INFO,
                    0,
                    0,
                    tid,
                    d,
                    info.agent_id.handle,
                    info.queue_id.handle,
                ),
                ts,
                Flush::Lazy,
            );
            th.record(
                Record::new(kind::CORRELATION, 0, 0, tid, d, corr.0, corr.1),
                ts,
                Flush::Lazy,
            );
        });
        if matches!(decision, Decision::Replay | Decision::Indefinite) {
            let agent = info.agent_id.handle;
            if self.modvars.is_dirty() {
                self.refresh_modvars(agent);
            }
            let e = self.allocs.estimate(agent);
            // Module variables: the attributed ones are in the snapshot; unattributed ones may be.
            let (mv, unattributed) = self.modvars.for_agent(agent);
            let regions = (e.classified_regions + mv.variables).min(u64::from(u16::MAX)) as u16;
            recorder::record(
                Record::new(
                    kind::WINDOW_BYTES,
                    0,
                    regions,
                    tid,
                    d,
                    e.classified + mv.bytes,
                    e.upper_bound + mv.bytes + unattributed.bytes,
                ),
                ts,
                Flush::Lazy,
            );
        }
    }

    /// The pass-count callback the SDK calls after CONFIG ENTER.
    pub fn on_pass_count(&self, info: &KernelDispatchInfo) -> u64 {
        let ts = sys::boottime_ns();
        let d = info.dispatch_id;
        WINDOW.with(|w| {
            let mut st = w.get();
            if st.dispatch == d {
                st.called = true;
                w.set(st);
            }
        });
        let n = if self.panicked() {
            1
        } else {
            u64::from(self.cfg.passes)
        };
        // One thread-local access for both records.
        recorder::with_thread(|th| {
            th.record(
                Record::new(kind::PASS_COUNT_ENTER, 0, 0, 0, ts, d, 0),
                ts,
                Flush::Lazy,
            );
            let ts2 = sys::boottime_ns();
            th.record(
                Record::new(kind::PASS_COUNT_RETURN, 0, 0, 0, ts2, d, n),
                ts2,
                Flush::Lazy,
            );
        });
        n
    }

    /// `replay_continue`, called by the SDK after PASS EXIT (never after the last pass of a
    /// fixed loop). A fixed loop always continues; an indefinite one stops once
    /// `KRPHASE_MAX_PASSES` passes have run. One CONTINUE record per call, no allocation.
    pub fn on_continue(&self, info: &KernelDispatchInfo, current: u64, total: u64) -> bool {
        let ts = sys::boottime_ns();
        let d = info.dispatch_id;
        let done = current.saturating_add(1);
        let more = !self.panicked()
            && if total > 0 {
                done < total
            } else {
                done < u64::from(self.cfg.max_passes)
            };
        let word = (current & u64::from(u32::MAX)) | (total.min(u64::from(u32::MAX)) << 32);
        let own = sys::boottime_ns()
            .saturating_sub(ts)
            .min(u64::from(u16::MAX)) as u16;
        recorder::record(
            Record::new(kind::CONTINUE, u8::from(more), own, 0, ts, d, word),
            ts,
            Flush::Lazy,
        );
        more
    }

    /// PASS ENTER/EXIT. At the first PASS the layout is confirmed by where N sits (an
    /// indefinite loop: at the second PASS, by where the pass index sits).
    pub fn on_pass(&self, p: &ReplayPayload, enter: bool, tid: u32, ts: u64) {
        let info = p.dispatch_info();
        let d = info.dispatch_id;
        let mut layout = self.layout.load(Ordering::Acquire);
        // One thread-local access: the passes seen so far in this window, counted up at ENTER.
        let own = WINDOW.with(|w| {
            let mut st = w.get();
            if st.dispatch != d {
                st = WindowTls {
                    dispatch: d,
                    ..WindowTls::NONE
                };
            }
            let seen = st.passes;
            if enter
                && (layout == LAYOUT_UNKNOWN
                    || (self.layout_forced && !LAYOUT_CONFIRMED.load(Ordering::Relaxed)))
            {
                if self.cfg.passes > 0 {
                    layout =
                        self.confirm_layout(p, layout, total_offset, u64::from(self.cfg.passes));
                } else if seen > 0 {
                    layout = self.confirm_layout(p, layout, current_offset, u64::from(seen));
                }
            }
            if enter {
                st.passes = seen + 1;
                w.set(st);
            }
            // Our own count numbers passes when the layout is unusable.
            match layout {
                LAYOUT_A | LAYOUT_B => None,
                _ if enter => Some(seen),
                _ => Some(seen.saturating_sub(1)),
            }
        });
        let (index, total) = match layout {
            LAYOUT_A | LAYOUT_B => {
                let l = if layout == LAYOUT_A {
                    PayloadLayout::A
                } else {
                    PayloadLayout::B
                };
                (
                    p.current_pass(l).unwrap_or(0) as u32,
                    p.total_passes(l).unwrap_or(0) as u32,
                )
            }
            _ => (own.unwrap_or(0), 0),
        };
        let k = if enter {
            kind::PASS_ENTER
        } else {
            kind::PASS_EXIT
        };
        let aux = if layout == LAYOUT_A || layout == LAYOUT_B {
            layout
        } else {
            0
        };
        let word = u64::from(index) | (u64::from(total) << 32);
        recorder::record(Record::new(k, aux, 0, tid, ts, d, word), ts, Flush::Lazy);
    }

    /// Confirms the layout by where the field at `field(layout)` holds `n`.
    fn confirm_layout(
        &self,
        p: &ReplayPayload,
        current: u8,
        field: fn(PayloadLayout) -> usize,
        n: u64,
    ) -> u8 {
        let at_b = p.slot(field(PayloadLayout::B));
        let at_a = p.slot(field(PayloadLayout::A));
        let found = match current {
            LAYOUT_A if at_a == Some(n) => LAYOUT_A,
            LAYOUT_B if at_b == Some(n) => LAYOUT_B,
            LAYOUT_A | LAYOUT_B => LAYOUT_STOPPED,
            _ if at_b == Some(n) && at_a != Some(n) => LAYOUT_B,
            _ if at_a == Some(n) && at_b != Some(n) => LAYOUT_A,
            _ => LAYOUT_STOPPED,
        };
        match self
            .layout
            .compare_exchange(current, found, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                LAYOUT_CONFIRMED.store(true, Ordering::Relaxed);
                if found == LAYOUT_STOPPED {
                    let what = if field(PayloadLayout::B) == total_offset(PayloadLayout::B) {
                        "total_passes"
                    } else {
                        "current_pass"
                    };
                    say(&format!(
                        "replay payload layout not recognised ({what}={n} at neither offset {} nor {}); driving stopped, later dispatches run once",
                        field(PayloadLayout::B),
                        field(PayloadLayout::A)
                    ));
                    self.notice(Notice::LayoutMismatch, at_b.unwrap_or(0), at_a.unwrap_or(0));
                } else {
                    self.notice(
                        Notice::LayoutConfirmed,
                        u64::from(found),
                        u64::from(self.layout_forced),
                    );
                }
                found
            }
            Err(now) => now,
        }
    }

    pub fn on_config_exit(&self, d: u64, tid: u32, ts: u64) {
        let st = WINDOW.with(|w| w.replace(WindowTls::NONE));
        let (passes, asked, called) = if st.dispatch == d {
            (st.passes, st.asked, st.called)
        } else {
            (0, false, false)
        };
        if asked && !called {
            // The SDK never called the pass-count callback we wrote: it reads another slot.
            let l = self.layout.load(Ordering::Acquire);
            if l != LAYOUT_STOPPED
                && self
                    .layout
                    .compare_exchange(l, LAYOUT_STOPPED, Ordering::AcqRel, Ordering::Acquire)
                    .is_ok()
            {
                say(&format!(
                    "the SDK did not call the pass-count callback written for payload layout {}; driving stopped, later dispatches run once",
                    match l {
                        LAYOUT_A => "a",
                        LAYOUT_B => "b",
                        _ => "a+b",
                    }
                ));
                self.notice(Notice::LayoutMismatch, u64::from(l), 0);
            }
        }
        recorder::count(if passes > 0 {
            |c| &c.windows
        } else {
            |c| &c.declines
        });
        recorder::record(
            Record::new(kind::CONFIG_EXIT, 0, 0, tid, ts, d, 0),
            ts,
            Flush::Now,
        );
    }

    /// ENQUEUE ENTER: the enqueue record, and the placement when it changed for this thread
    /// (the reader applies it to the thread's later enqueues).
    #[inline(always)]
    pub fn on_enqueue_enter(&self, th: Thread, info: &KernelDispatchInfo, tid: u32, ts: u64) {
        let d = info.dispatch_id;
        if self.modvars.is_dirty() {
            // Observe mode has no CONFIG ENTER: the walk runs before a dispatch's first record.
            self.refresh_modvars(info.agent_id.handle);
        }
        let (agent, queue) = (info.agent_id.handle, info.queue_id.handle);
        th.record_placed(
            Record::new(kind::ENQUEUE_ENTER, 0, 0, tid, ts, d, info.kernel_id),
            (agent, queue),
            Record::new(kind::DISPATCH_INFO, 1, 0, tid, d, agent, queue),
            ts,
        );
    }

    #[inline(always)]
    pub fn on_enqueue_exit(&self, th: Thread, d: u64, tid: u32, corr: u64, ts: u64) {
        th.record(
            Record::new(kind::ENQUEUE_EXIT, 0, 0, tid, ts, d, corr),
            ts,
            Flush::Lazy,
        );
    }

    #[inline(always)]
    pub fn on_complete(&self, th: Thread, d: u64, start: u64, end: u64, tid: u32) {
        th.record(
            Record::new(kind::COMPLETE, 0, 0, tid, d, start, end),
            end,
            Flush::Lazy,
        );
    }

    /// MEMORY_ALLOCATION EXIT (`ts`: the callback's clock reading).
    pub fn on_alloc(
        &self,
        op: i32,
        data: &MemoryAllocationData,
        info: Option<PointerClass>,
        tid: u32,
        ts: u64,
    ) {
        use krphase_ffi::memory_allocation_op as m;
        let (agent, address, size) = (data.agent_id.handle, data.address, data.allocation_size);
        match op {
            m::ALLOCATE | m::VMEM_ALLOCATE => {
                // Observe mode: the replay owner configured its service before the application
                // allocated (tools configure first), so every allocation seen is tracked.
                let after = self.replay_configured() || self.mode() == Mode::Observe;
                let class = classify(info, after, op == m::VMEM_ALLOCATE);
                self.allocs.on_alloc(address, Live { agent, size, class });
                if let Some(owner) = info.map(|i| i.agent_owner).filter(|&o| o != 0)
                    && class & alloc_class::COARSE != 0
                {
                    self.modvars.learn_pair(
                        owner,
                        agent,
                        krphase_format::event::attribution::ALLOCATION,
                    );
                }
                // Flushed at once: the reader's live-allocation state must precede the
                // dispatches of other threads that use it (allocations are rare).
                recorder::record(
                    Record::new(kind::ALLOC, class, op as u16, tid, address, size, agent),
                    ts,
                    Flush::Now,
                );
            }
            m::FREE | m::VMEM_FREE => {
                let old = self.allocs.on_free(address);
                let (class, size, agent) =
                    old.map_or((0, 0, agent), |l| (l.class, l.size, l.agent));
                let class = if op == m::VMEM_FREE {
                    class | alloc_class::VMEM
                } else {
                    class
                };
                recorder::record(
                    Record::new(kind::FREE, class, op as u16, tid, address, size, agent),
                    ts,
                    Flush::Now,
                );
            }
            _ => {}
        }
    }

    pub fn on_kernel_symbol(&self, kernel_id: u64, name: &str) {
        self.modvars.mark_dirty();
        let matches = self.cfg.filter.as_ref().is_none_or(|r| r.is_match(name));
        self.kernels
            .write()
            .unwrap_or_else(|p| p.into_inner())
            .insert(kernel_id, matches);
        if let Some(r) = recorder::current() {
            r.send_names(vec![(NameSpace::Kernel, kernel_id, name.to_string())]);
        }
    }

    /// Walks the loaded executables' module variables again and records what changed.
    #[cold]
    #[inline(never)]
    fn refresh_modvars(&self, agent: u64) {
        let fns = self.sdk.as_ref().and_then(Sdk::hsa_symbols);
        if fns.is_none() && self.sdk.is_some() {
            say_once(
                &NO_HSA_SYMBOLS,
                "ROCr's executable-symbol functions are not in this process; module-scope variables are left out of the byte estimate",
            );
        }
        let (changes, err) = self.modvars.refresh_if_dirty(fns.as_ref(), Some(agent));
        if let Some(e) = err {
            say_once(
                &NO_HSA_SYMBOLS,
                &format!(
                    "walking HSA executable symbols failed ({e}); module-scope variables are left out of the byte estimate"
                ),
            );
        }
        let ts = sys::boottime_ns();
        for c in changes {
            let n = c.bytes.variables.min(u64::from(u16::MAX)) as u16;
            recorder::record(
                Record::new(
                    kind::MODULE_VARS,
                    c.attribution,
                    n,
                    0,
                    ts,
                    c.agent,
                    c.bytes.bytes,
                ),
                ts,
                Flush::Now,
            );
        }
    }

    /// In `initialize` (drive mode): claim KERNEL_REPLAY. Claiming here rather than in
    /// `rocprofiler_configure` lets a replay owner that initializes earlier keep it; the tool
    /// then observes (status 15) instead of making that owner abort.
    pub fn claim_replay(&self, cb: krphase_ffi::CallbackTracingFn) {
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
        match sdk.configure_callback_tracing(self.ctx, k, &[c, p], cb, std::ptr::null_mut()) {
            Ok(()) => self.replay_configured.store(true, Ordering::Release),
            Err(s) => {
                if s == Status::SERVICE_ALREADY_CONFIGURED {
                    say("another tool owns KERNEL_REPLAY (status 15); observing instead");
                } else {
                    say(&format!(
                        "configuring KERNEL_REPLAY failed: {}; observing instead",
                        status(sdk, s)
                    ));
                }
                self.mode.store(Mode::Observe.to_u8(), Ordering::Release);
                self.notice(Notice::FellBackToObserve, u64::from(s.0), 0);
            }
        }
    }
}

static SMALL_PAYLOAD: AtomicBool = AtomicBool::new(false);
static NO_HSA_SYMBOLS: AtomicBool = AtomicBool::new(false);
/// Where the last panic happened, kept by the quiet panic hook for the one-line report.
static PANIC_WHAT: std::sync::Mutex<String> = std::sync::Mutex::new(String::new());

/// Replaces the default panic hook (which prints several lines) with one that only remembers
/// where the panic happened; `on_panic` prints the single line. In the cdylib the hook belongs
/// to the tool's own copy of std, so the application's panics are untouched.
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let loc = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        if let Ok(mut g) = PANIC_WHAT.lock() {
            *g = format!("{loc}: {msg}");
        }
    }));
}
/// Test hook: the next CONFIG ENTER panics (to prove panics stop at the C boundary).
static INJECT_PANIC: AtomicBool = AtomicBool::new(false);

#[doc(hidden)]
pub fn inject_panic_at_next_config() {
    INJECT_PANIC.store(true, Ordering::Relaxed);
}
/// A forced layout is checked once, at the first PASS.
static LAYOUT_CONFIRMED: AtomicBool = AtomicBool::new(false);

/// SDK finalize or the atexit safety net: flush and write the trailer (bounded).
pub fn finalize(flags: u64) {
    let Some(r) = recorder::peek() else { return };
    if r.pid != sys::getpid() {
        return; // a fork child that never recorded: the parent's file is not ours to close
    }
    if flags & krphase_format::trailer::flags::ATEXIT != 0
        && let Some(sdk) = get().and_then(|t| t.sdk.as_ref())
        && matches!(sdk.is_finalized(), Some(Ok(krphase_ffi::InitState::NotYet)))
    {
        // The SDK finalizes after this handler (its own exit hook or destructor) and will call
        // the tool's finalize, possibly delivering completions first: only flush this thread.
        recorder::flush_current_thread();
        return;
    }
    let mut flags = flags;
    if get().is_some_and(Tool::panicked) {
        flags |= krphase_format::trailer::flags::PANIC;
    }
    recorder::flush_current_thread();
    r.finish(flags);
}

/// Installs a tool without an SDK, recording to `path` with the given environment, so the
/// exported callbacks can be driven with synthetic records (benchmarks, tests). The operation
/// numbers are the conventional ones (KERNEL_REPLAY 25, CONFIG 1, PASS 2).
#[doc(hidden)]
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
        ..Header::default()
    };
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
    let replay_configured = mode == Mode::Drive;
    let tool = Tool::new(
        cfg,
        None,
        ops,
        mode,
        ContextId::default(),
        replay_configured,
        header,
    );
    TOOL.set(tool)
        .map_err(|_| "a tool is already installed".to_string())?;
    recorder::set_fork_factory(Box::new(fork_child_recorder));
    crate::abi::register_process_hooks();
    Ok(())
}
