//! A small deterministic `.krp` file for tests of the writer, the reader and what reads windows
//! from a file: a replayed 2-pass window (dispatch 1), an opt-out (dispatch 2) and a plain
//! completion, in two event blocks between a header, the names and a trailer.

use crate::event::Decision;
use crate::{Event, FileWriter, Header, Mode, NameSpace, RECORD_SIZE, Trailer};

/// The sample file's header: a drive-mode run of 2 passes.
pub fn header() -> Header {
    Header {
        tool_version: "0.1.0".into(),
        pid: 4242,
        ppid: 1,
        hostname: "node01".into(),
        command_line: "krphase-emu run stream --iterations 1".into(),
        sdk_version: (1, 4, 1),
        requested_mode: Mode::Auto,
        mode: Mode::Drive,
        payload_layout: 0,
        on_full: 0,
        passes: 2,
        filter: "^stream_".into(),
        boottime_ns: 1_000_000,
        realtime_ns: 1_764_000_000_000_000_000,
        record_size: RECORD_SIZE as u32,
        replay_kind: 25,
        config_op: 1,
        pass_op: 2,
        output_path: "krphase-node01-4242.krp".into(),
        // The 1.0 golden predates the field; the 2.0 writers set it (the golden writers in
        // `tests/common/golden_files.rs`).
        utc_offset_s: None,
        clock: crate::header::Clock::Boottime,
        rank: None,
    }
}

/// A replayed window (dispatch 1, 2 passes), an opt-out (dispatch 2) and a plain completion.
#[allow(clippy::too_many_lines)] // reason: test fixture, one literal list of events
pub fn events() -> Vec<Event> {
    let t = 100;
    vec![
        Event::Alloc {
            thread: t,
            op: 1,
            class: 0x57,
            address: 0x10000,
            size: 4096,
            agent: 1,
        },
        Event::ConfigEnter {
            thread: t,
            ts: 1000,
            dispatch_id: 1,
            kernel_id: 7,
            decision: Decision::Replay,
        },
        Event::DispatchInfo {
            thread: t,
            dispatch_id: 1,
            agent: 1,
            queue: 3,
        },
        Event::Correlation {
            thread: t,
            dispatch_id: 1,
            internal: 11,
            ancestor: 0,
        },
        Event::WindowBytes {
            thread: t,
            dispatch_id: 1,
            classified: 4096,
            regions: 1,
            upper_bound: 8192,
        },
        Event::PassCountEnter {
            thread: t,
            ts: 1010,
            dispatch_id: 1,
        },
        Event::PassCountReturn {
            thread: t,
            ts: 1020,
            dispatch_id: 1,
            passes: 2,
        },
        Event::PassEnter {
            thread: t,
            ts: 2000,
            dispatch_id: 1,
            pass: 0,
            total: 2,
            layout: 2,
        },
        Event::EnqueueEnter {
            thread: t,
            ts: 2010,
            dispatch_id: 1,
            kernel_id: 7,
        },
        Event::EnqueueExit {
            thread: t,
            ts: 2020,
            dispatch_id: 1,
            correlation: 11,
        },
        Event::PassExit {
            thread: t,
            ts: 3000,
            dispatch_id: 1,
            pass: 0,
            total: 2,
            layout: 2,
        },
        Event::PassEnter {
            thread: t,
            ts: 3500,
            dispatch_id: 1,
            pass: 1,
            total: 2,
            layout: 2,
        },
        Event::EnqueueEnter {
            thread: t,
            ts: 3510,
            dispatch_id: 1,
            kernel_id: 7,
        },
        Event::EnqueueExit {
            thread: t,
            ts: 3520,
            dispatch_id: 1,
            correlation: 11,
        },
        Event::PassExit {
            thread: t,
            ts: 4500,
            dispatch_id: 1,
            pass: 1,
            total: 2,
            layout: 2,
        },
        Event::ConfigExit {
            thread: t,
            ts: 4600,
            dispatch_id: 1,
        },
        Event::ConfigEnter {
            thread: t,
            ts: 5000,
            dispatch_id: 2,
            kernel_id: 8,
            decision: Decision::FilteredOut,
        },
        Event::ConfigExit {
            thread: t,
            ts: 5010,
            dispatch_id: 2,
        },
        Event::EnqueueEnter {
            thread: t,
            ts: 5020,
            dispatch_id: 2,
            kernel_id: 8,
        },
        Event::DispatchInfo {
            thread: t,
            dispatch_id: 2,
            agent: 1,
            queue: 3,
        },
        Event::EnqueueExit {
            thread: t,
            ts: 5030,
            dispatch_id: 2,
            correlation: 12,
        },
        Event::Free {
            thread: t,
            op: 3,
            class: 0x57,
            address: 0x10000,
            size: 4096,
            agent: 1,
        },
        // Completions arrive late, from the completion thread.
        Event::Complete {
            thread: 200,
            dispatch_id: 1,
            gpu_start: 2100,
            gpu_end: 2900,
        },
        Event::Complete {
            thread: 200,
            dispatch_id: 1,
            gpu_start: 3600,
            gpu_end: 4400,
        },
        Event::Complete {
            thread: 200,
            dispatch_id: 2,
            gpu_start: 5100,
            gpu_end: 5200,
        },
    ]
}

/// The kernel names of the sample file's dispatches.
pub fn names() -> Vec<(NameSpace, u64, &'static str)> {
    vec![
        (NameSpace::Kernel, 7, "stream_copy"),
        (NameSpace::Kernel, 8, "saxpy"),
    ]
}

/// The sample file's trailer.
pub fn trailer() -> Trailer {
    Trailer {
        windows: 1,
        declines: 1,
        finalize_ns: 9999,
        flags: 1,
        ..Trailer::default()
    }
}

/// Writes the sample file: header, names, two event blocks, trailer.
pub fn write_file() -> Vec<u8> {
    let recs: Vec<_> = events()
        .iter()
        .map(|e| e.to_record().expect("record"))
        .collect();
    let mut w = FileWriter::new(Vec::new(), &header()).expect("header");
    let names = names();
    w.write_names(&names).expect("names");
    w.write_records(&recs[..12]).expect("block 1");
    w.write_records(&recs[12..]).expect("block 2");
    w.write_trailer(&trailer()).expect("trailer");
    w.into_inner()
}
