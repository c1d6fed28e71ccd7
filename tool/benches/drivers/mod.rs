//! The SDK's side of the tool benches: the synthetically installed tool's callbacks called
//! through the C ABI as the SDK calls them, each kind's own callback with the tool as its
//! `callback_args` (a dispatch's ENQUEUE and COMPLETE, a drive-mode replay window).
#![allow(dead_code)]

use krphase::test_support::Callback;
use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, KernelDispatchData, UserData,
    kernel_dispatch_op,
};
use std::ffi::c_void;

use std::path::{Path, PathBuf};
use std::process::Command;

#[path = "../../tests/common/mod.rs"]
mod common;
use common::Payload;

fn dispatch_record(
    op: i32,
    phase: CallbackPhase,
    data: &mut KernelDispatchData,
) -> CallbackTracingRecord {
    CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 7,
        correlation_id: Default::default(),
        kind: CallbackTracingKind::KERNEL_DISPATCH,
        operation: op,
        phase,
        payload: (data as *mut KernelDispatchData).cast(),
    }
}

pub struct Driver {
    cb: Callback,
    args: *mut c_void,
    data: KernelDispatchData,
    ud: UserData,
}

impl Driver {
    /// The same driver calling the dispatch callback without its panic boundary.
    pub fn unguarded(mut self) -> Driver {
        self.cb = entry_points().dispatch_unguarded;
        self
    }

    /// The same driver calling drive mode's dispatch callback, which writes each enqueue
    /// callback as a record of its own (`unguarded`: without its panic boundary).
    pub fn plain(mut self, unguarded: bool) -> Driver {
        let e = entry_points();
        self.cb = if unguarded {
            e.dispatch_plain_unguarded
        } else {
            e.dispatch_plain
        };
        self
    }

    pub fn call(&mut self, op: i32, phase: CallbackPhase) {
        let rec = dispatch_record(op, phase, &mut self.data);
        // SAFETY: the record's payload points to a live KernelDispatchData for the call, as
        // the SDK guarantees; user data is a valid pointer; the args are the tool's.
        unsafe { (self.cb)(rec, &mut self.ud, self.args) };
    }
    pub fn enqueue_exit(&mut self) {
        self.call(kernel_dispatch_op::ENQUEUE, CallbackPhase::EXIT);
    }
    pub fn complete(&mut self) {
        self.data.start_timestamp += 10;
        self.data.end_timestamp += 10;
        self.call(kernel_dispatch_op::COMPLETE, CallbackPhase::NONE);
    }
    pub fn dispatch(&mut self) {
        self.data.dispatch_info.dispatch_id += 1;
        self.call(kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER);
        self.call(kernel_dispatch_op::ENQUEUE, CallbackPhase::EXIT);
        self.complete();
    }
}

/// One drive-mode replay window as the SDK delivers it (Layout B, N = 2): CONFIG ENTER, the
/// pass-count call, per pass PASS ENTER + ENQUEUE ENTER/EXIT + COMPLETE + PASS EXIT and (but
/// after the last pass) the continue call, CONFIG EXIT. Only the tool's callbacks run, so the time is the tool's whole per-window cost.
pub struct WindowDriver {
    cb: Callback,
    args: *mut c_void,
    payload: Payload,
    d: Driver,
    id: u64,
}

impl WindowDriver {
    fn replay(&mut self, op: i32, phase: CallbackPhase) {
        let rec = CallbackTracingRecord {
            context_id: Default::default(),
            thread_id: 77,
            correlation_id: Default::default(),
            kind: CallbackTracingKind(25),
            operation: op,
            phase,
            payload: self.payload.0.as_mut_ptr().cast(),
        };
        let mut ud = UserData::default();
        // SAFETY: the payload is live, 8-aligned and at least `size` bytes, as the SDK
        // guarantees; the args are the tool's.
        unsafe { (self.cb)(rec, &mut ud, self.args) };
    }

    pub fn window(&mut self) {
        self.id += 1;
        self.payload = Payload([0; 32]);
        self.payload.0[0] = 184;
        self.payload.0[5] = self.id;
        self.replay(1, CallbackPhase::ENTER);
        let f = self.payload.0[19];
        assert_ne!(f, 0, "the tool set the pass-count callback");
        let info = common::dispatch_info(self.id);
        let c = self.payload.0[20];
        assert_ne!(c, 0, "the tool set the continue callback");
        type Continue =
            unsafe extern "C" fn(krphase_ffi::KernelDispatchInfo, u64, u64, UserData) -> i32;
        // SAFETY: the slot holds the tool's continue callback of this signature.
        let cont: Continue = unsafe { std::mem::transmute::<usize, Continue>(c as usize) };
        let n = common::call_pass_count(f, self.id);
        self.d.data.dispatch_info.dispatch_id = self.id;
        for i in 0..n {
            self.payload.0[17] = i;
            self.payload.0[18] = n;
            self.payload.0[19] = 0;
            self.payload.0[20] = 0;
            self.replay(2, CallbackPhase::ENTER);
            self.d
                .call(kernel_dispatch_op::ENQUEUE, CallbackPhase::ENTER);
            self.d
                .call(kernel_dispatch_op::ENQUEUE, CallbackPhase::EXIT);
            self.d.complete();
            self.payload.0[20] = c;
            self.replay(2, CallbackPhase::EXIT);
            // SAFETY: called as the SDK calls it, never after the last pass of a fixed loop.
            if i + 1 < n && unsafe { cont(info, i, n, UserData::default()) } == 0 {
                break;
            }
        }
        self.replay(1, CallbackPhase::EXIT);
    }
}

/// The installed tool's entry points.
fn entry_points() -> krphase::test_support::EntryPoints {
    krphase::test_support::entry_points().expect("a tool is installed")
}

pub fn driver() -> Driver {
    let e = entry_points();
    let mut data = KernelDispatchData {
        size: 152,
        ..Default::default()
    };
    data.dispatch_info.kernel_id = 1;
    data.dispatch_info.agent_id.handle = 2;
    data.dispatch_info.queue_id.handle = 3;
    // GPU timestamps are in the BOOTTIME domain, like the host's: the recorder's buffer-age
    // check compares them.
    data.start_timestamp = krphase::boottime_ns();
    data.end_timestamp = data.start_timestamp + 5;
    Driver {
        cb: e.dispatch,
        args: e.args,
        data,
        ud: UserData::default(),
    }
}

/// Installs the synthetic tool: drive mode with N = 2, or observe mode; block policy.
pub fn install(path: &std::path::Path, drive: bool) {
    install_with(path, drive, &[]);
}

/// [`install`] with more variables.
pub fn install_with(path: &std::path::Path, drive: bool, more: &[(&str, &str)]) {
    let vars: &[(&str, &str)] = if drive {
        &[
            ("KRPHASE_MODE", "drive"),
            ("KRPHASE_PASSES", "2"),
            ("KRPHASE_ON_FULL", "block"),
        ]
    } else {
        &[("KRPHASE_MODE", "observe"), ("KRPHASE_ON_FULL", "block")]
    };
    let vars: Vec<(&str, &str)> = vars.iter().chain(more).copied().collect();
    krphase::test_support::install_synthetic(&vars, path).expect("install");
}

pub fn window_driver() -> WindowDriver {
    let e = entry_points();
    WindowDriver {
        cb: e.replay,
        args: e.args,
        payload: Payload([0; 32]),
        d: driver(),
        id: 0,
    }
}

fn profile_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("exe");
    let deps = exe.parent().expect("deps");
    deps.parent().expect("profile").to_path_buf()
}

/// Builds `krphase-emu`, the shipped `libkrphase.so` and the emulator's bare driver client in
/// the release profile (into this bench's target directory); the emulator's and the library's
/// paths.
pub fn release_build() -> (PathBuf, PathBuf) {
    let dir = profile_dir();
    let target = dir.parent().expect("target");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let ws = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace");
    let st = Command::new(cargo)
        .current_dir(ws)
        .args([
            "build",
            "--release",
            "-p",
            "krphase-emu",
            "-p",
            "krphase-tool",
            // The bare driver is a client library `krphase-emu` preloads.
            "-p",
            "krphase-emu-driver",
        ])
        .env("CARGO_TARGET_DIR", target)
        .status()
        .expect("cargo build");
    assert!(st.success());
    let rel = target.join("release");
    (rel.join("krphase-emu"), rel.join("libkrphase.so"))
}
