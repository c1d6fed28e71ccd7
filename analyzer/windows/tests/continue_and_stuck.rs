//! Window reconstruction with continue decisions (the gap after a pass split into the continue
//! call and the restore) and with a pass that never exits (`pass_drain_stuck`).

mod common;

use common::reconstruct;
use krphase_format::Event;
use krphase_format::event::Decision;
use krphase_format::synthetic::Synthetic;
use krphase_windows::{DeclineReason, Interval, Outcome, Output, Window};

const T: u32 = 7;
const AGENT: u64 = 1;
const QUEUE: u64 = 3;

/// Dispatches of kernel 9 from thread `T` on queue `QUEUE` of agent `AGENT`, payload layout 2.
const S: Synthetic = Synthetic {
    thread: T,
    kernel_id: 9,
    agent: AGENT,
    queue: QUEUE,
    layout: 2,
};

fn only_window(out: &[Output]) -> &Window {
    let w: Vec<&Window> = out
        .iter()
        .filter_map(|o| match o {
            Output::Window(w) => Some(w),
            _ => None,
        })
        .collect();
    assert_eq!(w.len(), 1, "{out:#?}");
    w[0]
}

#[test]
fn continue_records_split_each_gap_into_continue_and_restore() {
    let d = 5;
    let mut evs = S.open(d, 1_000, Decision::Replay, 3);
    evs.extend(S.pass(d, 0, 3, 2_000, Some(3_000)));
    evs.push(S.cont(d, 0, 3, 3_100, 40, true));
    evs.extend(S.pass(d, 1, 3, 4_000, Some(5_000)));
    evs.push(S.cont(d, 1, 3, 5_200, 60, true));
    evs.extend(S.pass(d, 2, 3, 6_500, Some(7_000)));
    evs.push(S.config_exit(d, 7_300));
    for (s, e) in [(2_100, 2_900), (4_100, 4_900), (6_600, 6_900)] {
        evs.push(S.complete(d, s, e));
    }
    let (out, rest) = reconstruct(&evs);
    assert!(rest.is_empty(), "emitted once every pass completed");
    let w = only_window(&out);
    assert_eq!(w.outcome, Outcome::Replayed);
    assert_eq!(w.executed_passes, 3);
    assert_eq!(w.continues.len(), 2);
    assert_eq!(
        w.continues[1].call,
        Interval {
            start: 5_200,
            end: 5_260
        }
    );
    assert!(w.continues.iter().all(|c| c.result && c.total == 3));
    assert_eq!(w.restores.len(), 2);
    let r0 = w.restores[0];
    assert_eq!(
        r0.continue_phase,
        Some(Interval {
            start: 3_000,
            end: 3_140
        })
    );
    assert_eq!((r0.start, r0.end), (3_140, 4_000));
    let r1 = w.restores[1];
    assert_eq!(r1.continue_phase.map(|i| i.duration()), Some(260));
    assert_eq!((r1.start, r1.end), (5_260, 6_500));
    // The two parts tile the gap exactly.
    for (r, p) in w.restores.iter().zip(w.passes.windows(2)) {
        let c = r.continue_phase.expect("continue phase");
        assert_eq!(c.start, p[0].exit.unwrap());
        assert_eq!(c.end, r.start);
        assert_eq!(r.end, p[1].enter.unwrap());
    }
    assert_eq!(w.tail.map(|t| t.duration()), Some(300));
    assert!(w.stuck.is_none() && w.passes.iter().all(|p| !p.incomplete));
}

#[test]
fn without_continue_records_the_whole_gap_is_the_restore() {
    let d = 6;
    let mut evs = S.open(d, 1_000, Decision::Replay, 2);
    evs.extend(S.pass(d, 0, 2, 2_000, Some(3_000)));
    evs.extend(S.pass(d, 1, 2, 4_000, Some(5_000)));
    evs.push(S.config_exit(d, 5_100));
    evs.push(S.complete(d, 2_100, 2_900));
    evs.push(S.complete(d, 4_100, 4_900));
    let (out, _) = reconstruct(&evs);
    let w = only_window(&out);
    assert!(w.continues.is_empty());
    assert_eq!(w.restores.len(), 1);
    assert_eq!((w.restores[0].start, w.restores[0].end), (3_000, 4_000));
    assert_eq!(w.restores[0].continue_phase, None);
}

#[test]
fn indefinite_loop_ends_with_a_stop_decision_in_the_tail() {
    let d = 7;
    let mut evs = S.open(d, 1_000, Decision::Indefinite, 0);
    let mut t = 2_000;
    for i in 0..3u32 {
        evs.extend(S.pass(d, i, 0, t, Some(t + 500)));
        evs.push(S.cont(d, u64::from(i), 0, t + 600, 30, i < 2));
        evs.push(S.complete(d, t + 100, t + 400));
        t += 1_000;
    }
    evs.push(S.config_exit(d, t));
    let (out, _) = reconstruct(&evs);
    let w = only_window(&out);
    assert_eq!(w.requested_passes, Some(0));
    assert_eq!(w.executed_passes, 3);
    assert_eq!(w.restores.len(), 2);
    assert_eq!(
        w.continues.iter().map(|c| c.result).collect::<Vec<_>>(),
        [true, true, false]
    );
    // The last (stop) decision sits in the tail, not in a restore.
    let last = w.continues[2].call;
    let tail = w.tail.expect("tail");
    assert!(tail.start <= last.start && last.end <= tail.end);
}

#[test]
fn an_indefinite_loop_the_sdk_declined_is_a_declined_window_not_an_opt_out() {
    let d = 8;
    let mut evs = S.open(d, 1_000, Decision::Indefinite, 0);
    evs.push(S.config_exit(d, 1_500));
    let (out, _) = reconstruct(&evs);
    let w = only_window(&out);
    assert_eq!(w.outcome, Outcome::Declined);
    assert_eq!(w.executed_passes, 0);
    // The same without a continue callback is the tool's own opt-out.
    let mut evs = S.open(d, 1_000, Decision::Replay, 0);
    evs.push(S.config_exit(d, 1_500));
    let (out, _) = reconstruct(&evs);
    assert!(
        matches!(&out[..], [Output::Decline(x)] if x.reason == DeclineReason::ZeroWithoutContinue),
        "{out:#?}"
    );
}

/// Passes 0..k complete, pass k enters and never exits; CONFIG EXIT follows.
fn stuck_window(d: u64, k: u32, n: u32) -> Vec<Event> {
    let mut evs = S.open(d, 1_000, Decision::Replay, u64::from(n));
    let mut t = 2_000;
    for i in 0..k {
        evs.extend(S.pass(d, i, n, t, Some(t + 500)));
        evs.push(S.cont(d, u64::from(i), n, t + 550, 20, true));
        evs.push(S.complete(d, t + 100, t + 400));
        t += 1_000;
    }
    evs.extend(S.pass(d, k, n, t, None));
    evs.push(S.config_exit(d, t + 50_000));
    evs
}

#[test]
fn a_pass_without_exit_is_kept_incomplete_and_not_counted() {
    for k in [0u32, 1, 2] {
        let d = 20 + u64::from(k);
        let evs = stuck_window(d, k, 4);
        let (before, after) = reconstruct(&evs);
        let all: Vec<Output> = before.into_iter().chain(after).collect();
        let w = only_window(&all);
        assert_eq!(w.dispatch_id, d);
        assert_eq!(w.outcome, Outcome::Declined, "the SDK broke the loop");
        assert_eq!(w.requested_passes, Some(4));
        assert_eq!(w.executed_passes, u64::from(k), "completed passes only");
        assert_eq!(w.passes.len(), k as usize + 1);
        let stuck = w.passes.last().unwrap();
        assert!(stuck.incomplete && stuck.enter.is_some() && stuck.exit.is_none());
        assert!(w.passes[..k as usize].iter().all(|p| !p.incomplete));
        assert_eq!(
            w.restores.len(),
            k as usize,
            "a restore before every pass but the first"
        );
        assert!(w.tail.is_none(), "no PASS EXIT ends the loop");
        assert_eq!(w.stuck.map(|s| s.duration()), Some(50_000));
        assert_eq!(w.pre_pass.map(|p| p.end), Some(2_000));
        for (p, i) in w.passes.iter().zip(0u64..u64::from(k)) {
            assert_eq!(p.gpu_start, Some(2_100 + i * 1_000));
        }
    }
}

#[test]
fn a_stuck_window_closes_when_a_later_dispatch_on_its_queue_completes() {
    let d = 30;
    let mut evs = stuck_window(d, 1, 2);
    // The next dispatch on the same queue (not replayed) runs and completes.
    evs.push(Event::EnqueueEnter {
        thread: T,
        ts: 100_000,
        dispatch_id: d + 1,
        kernel_id: 9,
    });
    evs.push(Event::DispatchInfo {
        thread: T,
        dispatch_id: d + 1,
        agent: AGENT,
        queue: QUEUE,
    });
    evs.push(S.complete(d + 1, 100_100, 100_200));
    let (before, _) = reconstruct(&evs);
    let w = only_window(&before);
    assert_eq!((w.dispatch_id, w.executed_passes), (d, 1));
}

#[test]
fn a_late_completion_of_the_stuck_pass_fills_its_gpu_times() {
    let d = 40;
    let mut evs = stuck_window(d, 1, 3);
    evs.push(S.complete(d, 80_000, 90_000));
    let (before, after) = reconstruct(&evs);
    assert!(after.is_empty());
    let w = only_window(&before);
    let stuck = w.passes.last().unwrap();
    assert!(stuck.incomplete);
    assert_eq!(
        (stuck.gpu_start, stuck.gpu_end),
        (Some(80_000), Some(90_000))
    );
    assert_eq!(w.executed_passes, 1);
}

/// The continue call's end after pass 0 of a two-pass window whose CONTINUE own time is `raw`,
/// read with the meaning of `version`.
fn continue_end(version: krphase_format::FormatVersion, raw: u16) -> u64 {
    let d = 6;
    let mut evs = S.open(d, 1_000, Decision::Replay, 2);
    evs.extend(S.pass(d, 0, 2, 2_000, Some(3_000)));
    evs.push(S.cont(d, 0, 2, 3_100, raw, true));
    evs.extend(S.pass(d, 1, 2, 9_000_000, Some(9_100_000)));
    evs.push(S.config_exit(d, 9_200_000));
    for (s, e) in [(2_100, 2_900), (9_000_100, 9_099_000)] {
        evs.push(S.complete(d, s, e));
    }
    let (out, rest) = common::reconstruct_as(version, &evs);
    assert!(rest.is_empty());
    only_window(&out).continues[0].call.end
}

#[test]
fn a_long_continue_keeps_its_length_in_2_0_and_a_1_x_own_time_reads_as_plain_ns() {
    use krphase_format::FormatVersion;
    use krphase_format::event::own_time;
    // 2 ms of own time (a buffer hand-over inside the call): µs units in 2.0.
    let raw = own_time::encode(2_000_000);
    assert_eq!(continue_end(FormatVersion::V2_0, raw), 3_100 + 2_000_000);
    assert_eq!(continue_end(FormatVersion::V2_0, 35), 3_135);
    // A 1.x writer stored plain ns, saturating at 65 535.
    assert_eq!(continue_end(FormatVersion::V1_0, 40_000), 3_100 + 40_000);
    assert_eq!(continue_end(FormatVersion::V2_0, 40_000), 3_100 + 7_232_000);
}
