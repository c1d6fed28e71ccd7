//! Windows, declines and plain dispatches reconstructed from the sample file and from event
//! streams: drive and observe mode, the pending bound, sticky placements and the observe-mode
//! byte estimate.

mod common;

use krphase_format::sample;
use krphase_format::{Event, FileReader};
use krphase_windows::{DeclineReason, Outcome, Output, Reconstructor, Source};

fn read_all(bytes: &[u8]) -> (Vec<Event>, FileReader<std::io::Cursor<&[u8]>>) {
    let mut r = FileReader::from_bytes(bytes).expect("open");
    let mut evs = Vec::new();
    for e in r.by_ref() {
        evs.push(e.expect("event"));
    }
    (evs, r)
}

#[test]
fn reconstructor_builds_window_decline_and_plain() {
    let bytes = sample::write_file();
    let (evs, _) = read_all(&bytes);
    let (mut out, after) = common::reconstruct(&evs);
    out.extend(after);
    assert_eq!(out.len(), 3, "{out:#?}");
    // The opt-out is complete at its CONFIG EXIT; the window waits for its late completions.
    let Output::Decline(d) = &out[0] else {
        panic!("decline first: {out:#?}")
    };
    assert_eq!(d.reason, DeclineReason::OptOut);
    assert_eq!(d.kernel_name.as_deref(), Some("saxpy"));
    let Output::Window(w) = &out[1] else {
        panic!("window second: {out:#?}")
    };
    assert_eq!(w.dispatch_id, 1);
    assert_eq!(w.source, Source::Drive);
    assert_eq!(w.outcome, Outcome::Replayed);
    assert_eq!(w.kernel_name.as_deref(), Some("stream_copy"));
    assert_eq!(w.executed_passes, 2);
    assert_eq!(w.pre_pass.map(|i| (i.start, i.end)), Some((1020, 2000)));
    assert_eq!(w.restores.len(), 1);
    assert_eq!((w.restores[0].start, w.restores[0].end), (3000, 3500));
    assert_eq!(w.tail.map(|i| i.duration()), Some(100));
    assert_eq!(w.passes[1].gpu_start, Some(3600));
    assert_eq!(w.bytes.map(|b| b.classified), Some(4096));
    let Output::Plain(p) = &out[2] else {
        panic!("plain third")
    };
    assert_eq!(p.dispatch_id, 2);
    assert!(p.had_config);
    assert_eq!(p.enqueue_cost(), Some(10));
    assert_eq!(p.gpu_end, Some(5200));
}

#[test]
fn observe_mode_passes_share_a_dispatch_id() {
    let t = 5;
    let mut evs = Vec::new();
    // Dispatch 10 replayed 3 times (3 enqueues), then dispatch 11 runs once.
    for (d, base, correlation) in [
        (10, 1000u64, 1),
        (10, 2000, 1),
        (10, 3000, 1),
        (11, 4000, 2),
    ] {
        evs.push(Event::EnqueueEnter {
            thread: t,
            ts: base,
            dispatch_id: d,
            kernel_id: 1,
        });
        evs.push(Event::DispatchInfo {
            thread: t,
            dispatch_id: d,
            agent: 1,
            queue: 9,
        });
        evs.push(Event::EnqueueExit {
            thread: t,
            ts: base + 5,
            dispatch_id: d,
            correlation,
        });
    }
    for (d, s, e) in [
        (10, 1100u64, 1800u64),
        (10, 2100, 2800),
        (10, 3100, 3800),
        (11, 4100, 4200),
    ] {
        evs.push(Event::Complete {
            thread: 6,
            dispatch_id: d,
            gpu_start: s,
            gpu_end: e,
        });
    }
    let (mut out, after) = common::reconstruct(&evs);
    assert_eq!(out.len(), 1, "window closes before the stream ends");
    out.extend(after);
    let Output::Window(w) = &out[0] else {
        panic!("{out:#?}")
    };
    assert_eq!(w.source, Source::Observe);
    assert_eq!(w.executed_passes, 3);
    let r: Vec<_> = w.restores.iter().map(|r| (r.start, r.end)).collect();
    assert_eq!(r, vec![(1800, 2000), (2800, 3000)]);
    assert!(matches!(&out[1], Output::Plain(p) if p.dispatch_id == 11));
}

#[test]
fn pending_limit_bounds_memory() {
    let mut rc = Reconstructor::with_max_pending(100);
    for d in 0..10_000u64 {
        rc.push(&Event::EnqueueEnter {
            thread: d as u32,
            ts: d,
            dispatch_id: d,
            kernel_id: 1,
        })
        .expect("within the limits");
        assert!(rc.pending() <= 100);
        while rc.pop().is_some() {}
    }
    assert_eq!(rc.evicted(), 9_900);
}

#[test]
fn an_enqueue_placement_applies_to_the_threads_later_enqueues() {
    let mut rc = Reconstructor::new();
    let t = 3;
    for d in 1..=3u64 {
        rc.push(&Event::EnqueueEnter {
            thread: t,
            ts: d * 100,
            dispatch_id: d,
            kernel_id: 1,
        })
        .expect("within the limits");
        if d == 1 {
            rc.push(&Event::DispatchInfo {
                thread: t,
                dispatch_id: d,
                agent: 2,
                queue: 7,
            })
            .expect("within the limits");
        }
        rc.push(&Event::EnqueueExit {
            thread: t,
            ts: d * 100 + 5,
            dispatch_id: d,
            correlation: d,
        })
        .expect("within the limits");
        rc.push(&Event::Complete {
            thread: 9,
            dispatch_id: d,
            gpu_start: d * 100 + 10,
            gpu_end: d * 100 + 20,
        })
        .expect("within the limits");
    }
    rc.finish();
    let mut n = 0;
    while let Some(o) = rc.pop() {
        let Output::Plain(p) = o else {
            panic!("plain dispatches only")
        };
        assert_eq!(
            (p.agent, p.queue),
            (Some(2), Some(7)),
            "dispatch {}",
            p.dispatch_id
        );
        n += 1;
    }
    assert_eq!(n, 3);
}

#[test]
fn observe_window_bytes_come_from_live_allocations_and_module_variables() {
    use krphase_format::event::{UNATTRIBUTED, alloc_class as c, attribution};
    use krphase_windows::ByteEstimate;
    let snap = c::CLASSIFIED | c::COARSE | c::AFTER_CONFIGURE | c::SNAPSHOT;
    let alloc = |address, size, agent, class| Event::Alloc {
        thread: 1,
        op: 1,
        class,
        address,
        size,
        agent,
    };
    let modvars = |agent, bytes, variables| Event::ModuleVars {
        thread: 1,
        ts: 1,
        agent,
        bytes,
        variables,
        attribution: attribution::CODE_OBJECT,
    };
    let mut evs = vec![
        alloc(0x1000, 1000, 1, snap),
        alloc(0x2000, 200, 1, c::CLASSIFIED | c::FINE | c::AFTER_CONFIGURE),
        alloc(0x3000, 5000, 2, snap),
        alloc(0x4000, 64, 1, snap),
        Event::Free {
            thread: 1,
            op: 3,
            class: snap,
            address: 0x4000,
            size: 64,
            agent: 1,
        },
        modvars(1, 24, 2),
        modvars(1, 8, 1), // a later walk replaces the agent's value
        modvars(UNATTRIBUTED, 16, 1),
    ];
    // Dispatch 10 replayed twice on agent 1; an allocation between the passes is not counted.
    for (pass, ts) in [(0u64, 100u64), (1, 300)] {
        evs.push(Event::EnqueueEnter {
            thread: 1,
            ts,
            dispatch_id: 10,
            kernel_id: 1,
        });
        if pass == 0 {
            evs.push(Event::DispatchInfo {
                thread: 1,
                dispatch_id: 10,
                agent: 1,
                queue: 4,
            });
        }
        evs.push(Event::EnqueueExit {
            thread: 1,
            ts: ts + 5,
            dispatch_id: 10,
            correlation: 1,
        });
        evs.push(Event::Complete {
            thread: 2,
            dispatch_id: 10,
            gpu_start: ts + 10,
            gpu_end: ts + 50,
        });
        evs.push(alloc(0x5000 + pass, 777, 1, snap));
    }
    let mut rc = Reconstructor::new();
    for e in &evs {
        rc.push(e).expect("within the limits");
    }
    assert_eq!(
        rc.footprint_estimate(2),
        ByteEstimate {
            classified: 5000,
            classified_regions: 1,
            upper_bound: 5016
        }
    );
    rc.finish();
    let Some(Output::Window(w)) = rc.pop() else {
        panic!("one observe window")
    };
    assert_eq!(w.source, Source::Observe);
    assert_eq!(
        w.bytes,
        Some(ByteEstimate {
            classified: 1000 + 8,
            classified_regions: 2,
            upper_bound: 1200 + 8 + 16
        })
    );
}
