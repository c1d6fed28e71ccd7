//! Every kind survives encode → bytes → decode.

use super::*;
use crate::Record;

#[test]
fn every_kind_round_trips() {
    let evs = vec![
        Event::ConfigEnter {
            thread: 1,
            ts: 2,
            dispatch_id: 3,
            kernel_id: 4,
            decision: Decision::FilteredOut,
        },
        Event::DispatchInfo {
            thread: 1,
            dispatch_id: 3,
            agent: 9,
            queue: 10,
        },
        Event::Correlation {
            thread: 1,
            dispatch_id: 3,
            internal: 11,
            ancestor: 0,
        },
        Event::PassCountEnter {
            thread: 1,
            ts: 5,
            dispatch_id: 3,
        },
        Event::PassCountReturn {
            thread: 1,
            ts: 6,
            dispatch_id: 3,
            passes: 4,
        },
        Event::PassEnter {
            thread: 1,
            ts: 7,
            dispatch_id: 3,
            pass: 2,
            total: 4,
            layout: 2,
        },
        Event::PassExit {
            thread: 1,
            ts: 8,
            dispatch_id: 3,
            pass: 3,
            total: 4,
            layout: 1,
        },
        Event::Continue {
            thread: 1,
            ts: 9,
            dispatch_id: 3,
            pass: 1,
            result: true,
            total: 4,
            own_time: 35,
        },
        Event::ConfigExit {
            thread: 1,
            ts: 10,
            dispatch_id: 3,
        },
        Event::EnqueueEnter {
            thread: 2,
            ts: 11,
            dispatch_id: 4,
            kernel_id: 5,
        },
        Event::EnqueueExit {
            thread: 2,
            ts: 12,
            dispatch_id: 4,
            correlation: 7,
        },
        Event::Complete {
            thread: 3,
            dispatch_id: 4,
            gpu_start: 13,
            gpu_end: 14,
        },
        Event::Alloc {
            thread: 2,
            op: 1,
            class: 0x53,
            address: 0x1000,
            size: 64,
            agent: 1,
        },
        Event::Free {
            thread: 2,
            op: 3,
            class: 0,
            address: 0x1000,
            size: 64,
            agent: 1,
        },
        Event::WindowBytes {
            thread: 1,
            dispatch_id: 3,
            classified: 100,
            regions: 2,
            upper_bound: 200,
        },
        Event::Notice {
            thread: 1,
            ts: 1,
            notice: Notice::LayoutMismatch,
            a: 5,
            b: 6,
        },
        Event::ModuleVars {
            thread: 1,
            ts: 2,
            agent: 3,
            bytes: 8,
            variables: 1,
            attribution: attribution::CODE_OBJECT,
        },
        Event::CompleteHost {
            thread: 3,
            ts: 15,
            dispatch_id: 4,
            gpu_end: 14,
        },
        Event::Unknown {
            kind: 200,
            small8: 1,
            small16: 2,
            thread: 3,
            payload: [4, 5, 6],
        },
    ];
    for e in evs {
        let r = e.to_record().expect("record event");
        assert_eq!(Event::from_record(&Record::decode(&r.encode())), e);
    }
}

#[test]
fn constructors_and_record_only_fields() {
    let e = Event::PassEnter {
        thread: 4,
        ts: 5,
        dispatch_id: 6,
        pass: 1,
        total: 3,
        layout: 2,
    };
    assert_eq!(e.to_record(), Some(Record::pass_enter(4, 5, 6, 1, 3, 2)));
    let r = Record::pass_enter(4, 5, 6, 1, 3, 2);
    assert_eq!((r.small8, r.payload), (2, [5, 6, 1 | 3 << 32]));
    // The enqueue-time placement sets its flag; the typed event omits it.
    let at_enqueue = Record::dispatch_info(1, 2, 3, 4, true);
    assert_eq!(
        (at_enqueue.kind, at_enqueue.small8),
        (kind::DISPATCH_INFO, 1)
    );
    assert_eq!(
        Event::from_record(&at_enqueue).to_record(),
        Some(Record::dispatch_info(1, 2, 3, 4, false))
    );
    // A continue's pass keeps its low 32 bits.
    let c = Record::replay_continue(0, 1, 2, (7u64 << 32) | 9, true, 5, 35);
    assert_eq!((c.small8, c.small16, c.payload[2]), (1, 35, 9 | 5 << 32));
    assert_eq!(drop_class(&c), DropClass::Window);
    assert_eq!(
        drop_class(&Record::complete(0, 1, 2, 3)),
        DropClass::Dispatch
    );
    assert_eq!(
        drop_class(&Record::free(0, 1, 0, 2, 3, 4)),
        DropClass::Allocation
    );
}
