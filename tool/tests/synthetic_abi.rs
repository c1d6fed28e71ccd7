//! The tool driven through its C callbacks with synthetic SDK records (no emulator): a replay
//! window in each payload layout, then a fork whose child writes its own file.
//! One test function: the tool is a process-wide singleton.

mod common;

use common::{Payload, call, call_pass_count};
use krphase_ffi::CallbackPhase;
use krphase_format::{Event, FileReader};
use krphase_windows::{Outcome, Output, Reconstructor};

/// One replay window as the SDK runs it, with pass fields at `pass_off` (136 for B, 152 for A).
fn window(cb: common::Cb, d: u64, size: u64, pass_off: usize, count_off: usize) -> bool {
    let mut p = Payload::new(size, d);
    call(cb, 1, CallbackPhase::ENTER, &mut p);
    let f = p.slot(count_off);
    if f == 0 {
        call(cb, 1, CallbackPhase::EXIT, &mut Payload::new(size, d));
        return false;
    }
    let n = call_pass_count(f, d);
    for i in 0..n {
        let mut pp = Payload::new(size, d);
        pp.set(pass_off, i);
        pp.set(pass_off + 8, n);
        call(cb, 2, CallbackPhase::ENTER, &mut pp);
        call(cb, 2, CallbackPhase::EXIT, &mut pp);
    }
    call(cb, 1, CallbackPhase::EXIT, &mut Payload::new(size, d));
    true
}

#[test]
fn windows_through_the_c_abi_and_fork_child_file() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("syn.krp");
    let tmpl = dir.path().join("fork-%pid%.krp");
    let tmpl = tmpl.to_str().expect("utf-8");
    krphase::test_support::install_synthetic(
        &[
            ("KRPHASE_MODE", "drive"),
            ("KRPHASE_PASSES", "3"),
            ("KRPHASE_OUTPUT", tmpl),
        ],
        &path,
    )
    .expect("install");
    let (cb, _) = krphase::test_support::synthetic_entry_points();
    let cb = cb.expect("callback");
    // Layout B (pass fields at 136): dual write at 136 and 152, the SDK reads 152.
    assert!(window(cb, 1, 184, 136, 152));
    // Confirmed B: a second window uses 152 only.
    assert!(window(cb, 2, 184, 136, 152));
    let mut p = Payload::new(184, 3);
    call(cb, 1, CallbackPhase::ENTER, &mut p);
    assert_ne!(p.slot(152), 0, "B slot written");
    assert_eq!(
        p.slot(136),
        0,
        "no write through the other layout once confirmed"
    );
    // The SDK calls the pass count, then declines (no PASS): a declined window.
    assert_eq!(call_pass_count(p.slot(152), 3), 3);
    call(cb, 1, CallbackPhase::EXIT, &mut Payload::new(184, 3));

    // Fork: the child records one window and finalizes into its own file.
    // SAFETY: fork in a test process; the child only runs the tool's callbacks and exits.
    let pid = unsafe { libc::fork() };
    assert!(pid >= 0, "fork");
    if pid == 0 {
        let ok = window(cb, 100, 184, 136, 152);
        krphase::finalize(0);
        // SAFETY: leave the child without running the parent's test harness.
        unsafe { libc::_exit(if ok { 0 } else { 3 }) };
    }
    let mut status = 0;
    // SAFETY: waiting for our own child.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "child status {status}"
    );
    krphase::finalize(0);

    let read = |p: &std::path::Path| {
        let mut r = FileReader::open(p).expect("open");
        let mut rc = Reconstructor::new();
        let mut out = Vec::new();
        let mut notices = 0;
        for e in r.by_ref() {
            let e = e.expect("event");
            if matches!(e, Event::Notice { .. }) {
                notices += 1;
            }
            rc.push(&e).expect("within the reconstruction limits");
        }
        rc.finish();
        while let Some(o) = rc.pop() {
            out.push(o);
        }
        (r.header().clone(), r.trailer().copied(), out, notices)
    };
    let (h, t, out, notices) = read(&path);
    assert_eq!(notices, 1, "layout confirmed once");
    let wins: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Window(w) if w.outcome == Outcome::Replayed => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(wins.len(), 2);
    assert!(
        wins.iter()
            .all(|w| w.outcome == Outcome::Replayed && w.executed_passes == 3)
    );
    assert_eq!(wins[0].restores.len(), 2);
    let t = t.expect("trailer");
    assert_eq!((t.windows, t.declines), (2, 1));
    assert_eq!(h.pid, std::process::id());

    let child = dir.path().join(format!("fork-{pid}.krp"));
    let (hc, tc, outc, child_notices) = read(&child);
    assert_eq!(child_notices, 1, "the fork-child notice");
    assert_eq!(hc.pid, pid as u32);
    assert_eq!(hc.ppid, std::process::id());
    assert_eq!(tc.expect("child trailer").windows, 1);
    assert!(
        outc.iter()
            .any(|o| matches!(o, Output::Window(w) if w.dispatch_id == 100))
    );
}
