//! Forks while other threads dispatch, allocate and register kernel names (so the tool's locks
//! are taken at every moment): every child finishes (never waits on a lock a parent thread held
//! at the fork) and writes its own file, a template without `%pid%` gets the child's pid as a
//! suffix, an existing file is never overwritten, and the parent's file is complete. What a
//! writer starved of CPU past the wait budget loses is counted: a dropped window in the trailer,
//! a missing trailer by the process's own wait counter at the whole budget. One test function:
//! the tool is a process-wide singleton.

mod common;

use common::{Payload, call, call_pass_count};
use krphase_ffi::{
    CallbackPhase, CallbackTracingKind, CallbackTracingRecord, KernelSymbolData,
    MemoryAllocationData, UserData, code_object_op, memory_allocation_op,
};
use krphase_format::{Event, FileReader};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const FORKS: usize = 20;

fn window(cb: common::Cb, d: u64) {
    let mut p = Payload::new(184, d);
    call(cb, 1, CallbackPhase::ENTER, &mut p);
    let f = p.slot(152).max(p.slot(136));
    let n = call_pass_count(f, d);
    for i in 0..n {
        let mut pp = Payload::new(184, d);
        pp.set(136, i);
        pp.set(144, n);
        call(cb, 2, CallbackPhase::ENTER, &mut pp);
        call(cb, 2, CallbackPhase::EXIT, &mut pp);
    }
    call(cb, 1, CallbackPhase::EXIT, &mut Payload::new(184, d));
}

fn raw(cb: common::Cb, kind: CallbackTracingKind, op: i32, phase: CallbackPhase, p: *mut u8) {
    let rec = CallbackTracingRecord {
        context_id: Default::default(),
        thread_id: 5,
        correlation_id: Default::default(),
        kind,
        operation: op,
        phase,
        payload: p.cast(),
    };
    // SAFETY: the payload is live and of the kind's type for the call, as the SDK guarantees.
    unsafe { cb(rec, &mut UserData::default(), std::ptr::null_mut()) };
}

/// Allocations, frees and kernel names: the allocation tracker, the kernel-filter map and the
/// module-variable state are locked all the time.
fn churn_locks(cb: common::Cb, i: u64) {
    let mut m = MemoryAllocationData {
        size: 48,
        address: 0x1000 + i,
        allocation_size: 64,
        ..Default::default()
    };
    let pm = (&mut m as *mut MemoryAllocationData).cast();
    raw(
        cb,
        CallbackTracingKind::MEMORY_ALLOCATION,
        memory_allocation_op::ALLOCATE,
        CallbackPhase::EXIT,
        pm,
    );
    raw(
        cb,
        CallbackTracingKind::MEMORY_ALLOCATION,
        memory_allocation_op::FREE,
        CallbackPhase::EXIT,
        pm,
    );
    let name = c"kernel_x";
    let mut k = KernelSymbolData {
        size: 88,
        kernel_id: 100 + i % 16,
        code_object_id: 1,
        kernel_name: name.as_ptr(),
        kernel_object: 0,
        kernarg_segment_size: 0,
        kernarg_segment_alignment: 0,
        group_segment_size: 0,
        private_segment_size: 0,
        sgpr_count: 0,
        arch_vgpr_count: 0,
        accum_vgpr_count: 0,
        kernel_code_entry_byte_offset: 0,
        kernel_address: 0,
    };
    raw(
        cb,
        CallbackTracingKind::CODE_OBJECT,
        code_object_op::DEVICE_KERNEL_SYMBOL_REGISTER,
        CallbackPhase::LOAD,
        (&mut k as *mut KernelSymbolData).cast(),
    );
}

/// Waits for `pid` at most `limit`; its exit status, or `None` (killed) when it hung.
fn wait_for(pid: libc::pid_t, limit: Duration) -> Option<i32> {
    let t0 = Instant::now();
    loop {
        let mut status = 0;
        // SAFETY: waiting for our own child without blocking.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            return Some(status);
        }
        if t0.elapsed() > limit {
            // SAFETY: our own child.
            unsafe { libc::kill(pid, libc::SIGKILL) };
            return None;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn fork_storm_children_finish_with_their_own_files_and_the_parent_file_is_complete() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("run.krp");
    std::fs::write(&path, b"an earlier run").expect("earlier file");
    let tmpl = path.to_str().expect("utf-8").to_string();
    krphase::test_support::install_synthetic(
        &[
            ("KRPHASE_MODE", "drive"),
            ("KRPHASE_PASSES", "2"),
            ("KRPHASE_OUTPUT", &tmpl),
        ],
        &path,
    )
    .expect("install");
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    static STOP: AtomicBool = AtomicBool::new(false);
    let busy: Vec<_> = (0..2u64)
        .map(|t| {
            std::thread::spawn(move || {
                let mut i = 0;
                while !STOP.load(Ordering::Relaxed) {
                    window(cb, 1_000_000 * (t + 1) + i);
                    churn_locks(cb, i);
                    i += 1;
                }
            })
        })
        .collect();
    let mut children = Vec::new();
    for f in 0..FORKS {
        std::thread::sleep(Duration::from_millis(3));
        // SAFETY: fork in a test process; the child runs the tool's callbacks and `_exit`s.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork");
        if pid == 0 {
            churn_locks(cb, 7);
            window(cb, 500 + f as u64);
            krphase::finalize(0);
            // SAFETY: leave the child without running the parent's test harness.
            unsafe { libc::_exit(child_code()) };
        }
        children.push(pid);
    }
    STOP.store(true, Ordering::Relaxed);
    for h in busy {
        h.join().expect("busy thread");
    }
    krphase::finalize(0);

    for &pid in &children {
        // A hang guard: a child's work is one window and its finalize (milliseconds, its wait on
        // the output at most the 50 ms budget); 30 s is only reached by a child that hangs.
        let st = wait_for(pid, Duration::from_secs(30));
        let st = st.unwrap_or_else(|| panic!("child {pid} hung (killed)"));
        assert!(libc::WIFEXITED(st), "child {pid}: {st}");
        match libc::WEXITSTATUS(st) {
            0 => {}
            // Its writer did not get through the file within the budget (on a loaded machine):
            // the child finished all the same, and its own counter says it waited the budget.
            BUDGET_SPENT => continue,
            code => panic!("child {pid}: exit {code}"),
        }
        let own = dir.path().join(format!("run-{pid}.krp"));
        let mut r = FileReader::open(&own).unwrap_or_else(|e| panic!("{}: {e}", own.display()));
        let windows = r
            .by_ref()
            .filter(|e| matches!(e, Ok(Event::ConfigExit { .. })))
            .count();
        assert!(r.trailer().is_some(), "child {pid}: trailer");
        assert_eq!(windows, 1, "child {pid}: its window");
    }
    assert_eq!(
        std::fs::read(&path).expect("earlier"),
        b"an earlier run",
        "an existing file is never overwritten"
    );
    let parent = dir.path().join("run-1.krp");
    let mut r = FileReader::open(&parent).expect("parent file");
    assert_eq!(r.header().output_path, parent.display().to_string());
    let n = r
        .by_ref()
        .filter(|e| matches!(e, Ok(Event::ConfigExit { .. })))
        .count();
    let Some(&t) = r.trailer() else {
        // The writer did not get to the trailer within the budget: the parent's own counter
        // says its threads waited the whole of it.
        assert_eq!(krphase::recorder::stall_ns(), process_cap(), "no trailer");
        return;
    };
    assert!(!r.truncated(), "the parent's file is complete");
    // Two threads make windows as fast as they can, faster than the writer on a loaded
    // machine: once the wait budget is spent the rest is dropped. Every window the tool
    // counted is in the file, or a record of it was dropped and counted.
    let lost = (t.windows as usize)
        .checked_sub(n)
        .expect("no window twice") as u64;
    assert!(lost <= t.dropped_window, "{n} windows in the file, {t:?}");
    if t.dropped_window > 0 {
        let spent =
            krphase_format::trailer::flags::STALLED | krphase_format::trailer::flags::UNFLUSHED;
        assert_ne!(
            t.flags & spent,
            0,
            "dropped only once a budget is spent: {t:?}"
        );
    }
}

/// A child's exit code when its threads waited the whole wait budget (the tool's own counter).
const BUDGET_SPENT: i32 = 3;

fn process_cap() -> u64 {
    krphase::recorder::DEFAULT_PROCESS.as_nanos() as u64
}

/// A fork child's exit code after its finalize: 0, or [`BUDGET_SPENT`] when it waited the whole
/// budget, so its file may lack its window or its trailer.
fn child_code() -> i32 {
    if krphase::recorder::stall_ns() >= process_cap() {
        BUDGET_SPENT
    } else {
        0
    }
}
