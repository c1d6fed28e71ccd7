//! Reconstruction limits on crafted input (each an error naming the record's offset, or for the
//! held-dispatch bounds an eviction) and the 1.x reading of enqueue placements.

mod common;

use krphase_format::{Event, FormatVersion};
use krphase_windows::limits::{Limit, LimitError, Limits};
use krphase_windows::{Output, Reconstructor};

/// Small bounds, so each test crosses one with a handful of records.
const SMALL: Limits = Limits {
    passes_per_dispatch: 4,
    held_dispatches: 8,
    held_entries: 12,
    threads: 3,
    queues: 2,
    agents: 2,
    live_allocations: 3,
    kernel_names: 2,
    kernel_name_bytes: 10,
};

/// Pushes `evs` at offsets 1000, 1001, …; the first error.
fn push_all(rc: &mut Reconstructor, evs: &[Event]) -> Result<(), LimitError> {
    for (i, e) in evs.iter().enumerate() {
        rc.push_at(e, 1000 + i as u64)?;
        while rc.pop().is_some() {}
    }
    Ok(())
}

fn broken(evs: &[Event]) -> LimitError {
    let mut rc = Reconstructor::with_limits(SMALL);
    push_all(&mut rc, evs).expect_err("a limit is exceeded")
}

fn enqueue(thread: u32, d: u64) -> Event {
    Event::EnqueueEnter {
        thread,
        ts: d,
        dispatch_id: d,
        kernel_id: 1,
    }
}

fn info(thread: u32, d: u64, agent: u64, queue: u64) -> Event {
    Event::DispatchInfo {
        thread,
        dispatch_id: d,
        agent,
        queue,
    }
}

fn pass(d: u64, pass: u32) -> Event {
    Event::PassEnter {
        thread: 1,
        ts: 10,
        dispatch_id: d,
        pass,
        total: 2,
        layout: 2,
    }
}

fn alloc(address: u64, agent: u64) -> Event {
    Event::Alloc {
        thread: 1,
        op: 1,
        class: 0x57,
        address,
        size: 64,
        agent,
    }
}

fn complete(d: u64) -> Event {
    Event::Complete {
        thread: 9,
        dispatch_id: d,
        gpu_start: 1,
        gpu_end: 2,
    }
}

#[test]
fn passes_per_dispatch_limit_names_the_offset_of_the_breaking_record() {
    // One PASS ENTER claiming a huge index would allocate that many passes.
    let e = broken(&[pass(1, 0), pass(1, 4)]);
    assert_eq!(
        (e.limit, e.offset, e.max, e.dispatch_id),
        (Limit::PassesPerDispatch, Some(1001), 4, Some(1))
    );
    assert_eq!(
        e.to_string(),
        "offset 1001: more than 4 passes, enqueues, completions or continue calls of one \
         dispatch (dispatch 1): a reconstruction limit; the file is not one the tool writes"
    );
    // The same bound for enqueues, completions and continue calls of one dispatch.
    let e = broken(&vec![enqueue(1, 5); 5]);
    assert_eq!((e.limit, e.offset), (Limit::PassesPerDispatch, Some(1004)));
    let e = broken(&vec![complete(5); 5]);
    assert_eq!((e.limit, e.offset), (Limit::PassesPerDispatch, Some(1004)));
    let cont = Event::Continue {
        thread: 1,
        ts: 1,
        dispatch_id: 5,
        pass: 0,
        result: true,
        total: 0,
        own_time: 1,
    };
    let e = broken(&vec![cont; 5]);
    assert_eq!((e.limit, e.offset), (Limit::PassesPerDispatch, Some(1004)));
    // The default bound: an index the tool can never write (it runs at most 4096 passes).
    let mut rc = Reconstructor::new();
    rc.push(&pass(1, (1 << 16) - 1))
        .expect("within the default");
    let e = rc.push_at(&pass(2, 1 << 16), 77).expect_err("beyond");
    assert_eq!((e.offset, e.max), (Some(77), 1 << 16));
}

#[test]
fn thread_queue_agent_allocation_and_name_limits_are_errors() {
    let threads: Vec<_> = (0..4).map(|t| enqueue(t, u64::from(t))).collect();
    let e = broken(&threads);
    assert_eq!((e.limit, e.offset), (Limit::Threads, Some(1003)));

    let queues: Vec<_> = (0..3)
        .flat_map(|q| [enqueue(1, q), info(1, q, 1, 100 + q)])
        .collect();
    let e = broken(&queues);
    assert_eq!((e.limit, e.offset), (Limit::Queues, Some(1005)));

    let e = broken(&[alloc(1, 1), alloc(2, 2), alloc(3, 3)]);
    assert_eq!((e.limit, e.offset), (Limit::Agents, Some(1002)));
    let module_vars = |agent| Event::ModuleVars {
        thread: 1,
        ts: 1,
        agent,
        bytes: 8,
        variables: 1,
        attribution: 1,
    };
    let e = broken(&[
        module_vars(1),
        module_vars(2),
        module_vars(1),
        module_vars(3),
    ]);
    assert_eq!((e.limit, e.offset), (Limit::Agents, Some(1003)));

    // A FREE makes room; a fourth live allocation does not fit.
    let frees = [
        alloc(1, 1),
        alloc(2, 1),
        alloc(3, 1),
        Event::Free {
            thread: 1,
            op: 3,
            class: 0,
            address: 2,
            size: 64,
            agent: 1,
        },
        alloc(4, 1),
        alloc(5, 1),
    ];
    let e = broken(&frees);
    assert_eq!((e.limit, e.offset), (Limit::LiveAllocations, Some(1005)));

    let name = |key, name: &str| Event::Name {
        space: krphase_format::NameSpace::Kernel,
        key,
        name: name.into(),
    };
    let e = broken(&[name(1, "a"), name(2, "b"), name(1, "c"), name(3, "d")]);
    assert_eq!((e.limit, e.offset), (Limit::KernelNames, Some(1003)));
    let e = broken(&[name(1, "abcdef"), name(2, "ghijk")]);
    assert_eq!((e.limit, e.offset), (Limit::KernelNameBytes, Some(1001)));
}

#[test]
fn held_dispatch_bounds_evict_the_oldest_and_count_them() {
    // Dispatches whose completions never come (dropped): held until evicted.
    let mut rc = Reconstructor::with_limits(SMALL);
    let many: Vec<_> = (0..20).map(|d| enqueue(1, d)).collect();
    push_all(&mut rc, &many).expect("evictions are not errors");
    assert!(rc.pending() <= SMALL.held_dispatches);
    // Each pushed dispatch after the first closes its predecessor's thread turn; none has its
    // completion, so all but the held ones were evicted.
    assert_eq!(rc.evicted(), 20 - rc.pending() as u64);

    // Entries: three dispatches of four passes each exceed 12 held entries together.
    let mut rc = Reconstructor::with_limits(SMALL);
    let passes: Vec<_> = (1..=4u64)
        .flat_map(|d| (0..4).map(move |p| pass(d, p)))
        .collect();
    push_all(&mut rc, &passes).expect("evictions are not errors");
    assert_eq!(rc.evicted(), 1);
    assert_eq!(rc.pending(), 3);
}

/// Records of a 1.0-era writer: every enqueue records its placement; dispatch 3's placement
/// record was dropped (`KRPHASE_ON_FULL=drop` could drop it then), and the thread had moved to
/// queue 9 for it.
fn per_enqueue_placements() -> Vec<Event> {
    let mut v = Vec::new();
    for d in 1..=3u64 {
        v.push(enqueue(1, d));
        if d < 3 {
            v.push(info(1, d, 1, 4));
        }
        v.push(complete(d));
    }
    v.push(enqueue(1, 4));
    v
}

fn queues_of(version: FormatVersion, evs: &[Event]) -> Vec<(u64, Option<u64>)> {
    let (mut out, rest) = common::reconstruct_as(version, evs);
    out.extend(rest);
    let mut q: Vec<_> = out
        .iter()
        .filter_map(|o| match o {
            Output::Plain(p) => Some((p.dispatch_id, p.queue)),
            _ => None,
        })
        .collect();
    q.sort_unstable();
    q
}

#[test]
fn a_1_x_file_that_records_every_placement_is_not_read_as_sticky() {
    let evs = per_enqueue_placements();
    // Dispatch 2 repeats the thread's placement: only the first writer does that, so in 1.x
    // dispatch 3 (its record dropped) has no placement rather than the thread's earlier one.
    assert_eq!(
        queues_of(FormatVersion::V1_0, &evs),
        [(1, Some(4)), (2, Some(4)), (3, None), (4, None)]
    );
    // 2.0 never repeats a placement; the thread's placement applies.
    assert_eq!(
        queues_of(FormatVersion::V2_0, &evs),
        [(1, Some(4)), (2, Some(4)), (3, Some(4)), (4, Some(4))]
    );
    // A 1.x file from the later writer (placement only on change) reads as sticky.
    let sticky: Vec<_> = evs
        .iter()
        .filter(|e| !matches!(e, Event::DispatchInfo { dispatch_id: 2, .. }))
        .cloned()
        .collect();
    assert_eq!(
        queues_of(FormatVersion::V1_0, &sticky),
        [(1, Some(4)), (2, Some(4)), (3, Some(4)), (4, Some(4))]
    );
}

#[test]
fn a_dispatch_that_moves_queue_is_sealed_only_by_its_new_queue() {
    // Observe-mode window 2 first inherits the thread's queue 4, then its own record moves it to
    // queue 5. A completion on queue 4 must not take it for finished between its two passes.
    let exit = |d| Event::EnqueueExit {
        thread: 1,
        ts: 3,
        dispatch_id: d,
        correlation: d,
    };
    let evs = [
        enqueue(1, 1),
        info(1, 1, 1, 4),
        complete(1),
        enqueue(1, 2),
        info(1, 2, 1, 5),
        exit(2),
        complete(2),
        enqueue(2, 3),
        info(2, 3, 1, 4),
        complete(3),
    ];
    let mut rc = Reconstructor::new();
    let mut out = Vec::new();
    for e in &evs {
        rc.push(e).expect("within the limits");
        while let Some(o) = rc.pop() {
            out.push(o);
        }
    }
    let ids = |out: &[Output]| -> Vec<u64> {
        out.iter()
            .map(|o| match o {
                Output::Plain(p) => p.dispatch_id,
                Output::Window(w) => w.dispatch_id,
                Output::Decline(d) => d.dispatch_id,
                Output::Counter(c) => c.dispatch_id,
            })
            .collect()
    };
    assert_eq!(ids(&out), [1], "dispatch 2 is between its passes: {out:?}");
    for e in [enqueue(1, 2), exit(2), complete(2), enqueue(1, 9)] {
        rc.push(&e).expect("within the limits");
    }
    let o = rc
        .pop()
        .expect("window 2 complete once its thread moved on");
    let Output::Window(w) = o else {
        panic!("a two-pass window: {o:?}")
    };
    assert_eq!((w.dispatch_id, w.executed_passes, w.queue), (2, 2, Some(5)));
}
