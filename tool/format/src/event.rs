//! What every record kind means: constructors for the writer and the typed decoding for readers.
//!
//! Timestamps are CLOCK_BOOTTIME nanoseconds (the SDK's clock; GPU start/end share the domain).

use crate::record::Record;
use serde::{Deserialize, Serialize};

/// Record kind numbers (byte 0 of a record). Never renumber; add new kinds at the end.
pub mod kind {
    /// CONFIG ENTER. aux = [`super::Decision`], w0 = ts, w1 = dispatch id, w2 = kernel id.
    pub const CONFIG_ENTER: u8 = 1;
    /// Dispatch placement. aux = 0 taken at CONFIG ENTER, 1 at ENQUEUE ENTER (the typed event
    /// omits it); w0 = dispatch id, w1 = agent handle, w2 = queue handle. At an enqueue it is
    /// written only when the thread's placement changes: it also applies to that thread's later
    /// enqueues. Never dropped.
    pub const DISPATCH_INFO: u8 = 2;
    /// Correlation ids. w0 = dispatch id, w1 = internal, w2 = ancestor.
    pub const CORRELATION: u8 = 3;
    /// `replay_pass_count` entered. w0 = ts, w1 = dispatch id.
    pub const PASS_COUNT_ENTER: u8 = 4;
    /// `replay_pass_count` about to return. w0 = ts, w1 = dispatch id, w2 = returned N.
    pub const PASS_COUNT_RETURN: u8 = 5;
    /// CONFIG EXIT. w0 = ts, w1 = dispatch id.
    pub const CONFIG_EXIT: u8 = 6;
    /// PASS ENTER. aux = layout (0 unknown, 1 A, 2 B), w0 = ts, w1 = dispatch id,
    /// w2 = current pass (low 32 bits) | total passes << 32.
    pub const PASS_ENTER: u8 = 7;
    /// PASS EXIT; fields as [`PASS_ENTER`].
    pub const PASS_EXIT: u8 = 8;
    /// One `replay_continue` call. aux = 1 continue / 0 stop, x = the callback's own time in ns
    /// (entry → just before returning; saturating), w0 = ts at entry, w1 = dispatch id,
    /// w2 = current pass (low 32 bits) | total passes << 32 (0 total: indefinite loop).
    pub const CONTINUE: u8 = 9;
    /// KERNEL_DISPATCH ENQUEUE ENTER. w0 = ts, w1 = dispatch id, w2 = kernel id.
    pub const ENQUEUE_ENTER: u8 = 10;
    /// KERNEL_DISPATCH ENQUEUE EXIT. w0 = ts, w1 = dispatch id, w2 = correlation internal id.
    pub const ENQUEUE_EXIT: u8 = 11;
    /// KERNEL_DISPATCH COMPLETE (one per pass). w0 = dispatch id, w1 = GPU start, w2 = GPU end.
    pub const COMPLETE: u8 = 12;
    /// Allocation. aux = [`super::alloc_class`] bits, x = SDK operation, w0 = address,
    /// w1 = size, w2 = agent handle.
    pub const ALLOC: u8 = 13;
    /// Free; fields as [`ALLOC`] (size is the tracked size, 0 if unknown).
    pub const FREE: u8 = 14;
    /// Snapshot byte estimate at window start. x = classified regions (saturating),
    /// w0 = dispatch id, w1 = classified bytes, w2 = upper bound bytes.
    pub const WINDOW_BYTES: u8 = 15;
    /// Tool notice. aux = [`super::Notice`] code, w0 = ts, w1/w2 = notice-specific.
    pub const NOTICE: u8 = 16;
    /// Writable module-variable bytes the snapshot copies for one agent, from a walk of the
    /// loaded executables' symbols; replaces the agent's previous value. aux =
    /// [`super::attribution`], x = variables counted (saturating), w0 = ts, w1 = agent handle
    /// ([`super::UNATTRIBUTED`] when no agent is known), w2 = bytes.
    pub const MODULE_VARS: u8 = 17;
}

/// `agent` of a MODULE_VARS record whose HSA agent maps to no known agent handle.
pub const UNATTRIBUTED: u64 = u64::MAX;

/// How a MODULE_VARS record's HSA agent was mapped to the agent handle (aux).
pub mod attribution {
    /// No mapping known: the bytes count only in upper bounds.
    pub const NONE: u8 = 0;
    /// From a CODE_OBJECT LOAD record (it carries both the agent id and the `hsa_agent_t`).
    pub const CODE_OBJECT: u8 = 1;
    /// From an allocation: its agent and `hsa_amd_pointer_info`'s `agentOwner`.
    pub const ALLOCATION: u8 = 2;
    /// The only GPU agent the tool has seen.
    pub const SINGLE_AGENT: u8 = 3;
}

/// Bits of `aux` in ALLOC/FREE records.
pub mod alloc_class {
    /// `hsa_amd_pointer_info` answered for this address.
    pub const CLASSIFIED: u8 = 1;
    pub const COARSE: u8 = 2;
    pub const FINE: u8 = 4;
    pub const KERNARG: u8 = 8;
    /// Allocated after the replay service was configured.
    pub const AFTER_CONFIGURE: u8 = 16;
    /// A vmem handle (VMEM_ALLOCATE/VMEM_FREE).
    pub const VMEM: u8 = 32;
    /// Counted in the classified snapshot estimate.
    pub const SNAPSHOT: u8 = 64;
}

/// The tool's decision at CONFIG ENTER (aux of CONFIG_ENTER).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The pass-count callback was set and returns N > 1.
    Replay,
    /// Kernel name did not match the filter: pass-count left NULL.
    FilteredOut,
    /// Driving stopped (payload layout not confirmed): pass-count left NULL.
    Stopped,
    /// KRPHASE_PASSES=1: the pass-count callback returns 1.
    PassesOne,
    /// KRPHASE_PASSES=0: the pass-count callback returns 0 and the continue callback is set (an
    /// indefinite loop, ended by the continue callback).
    Indefinite,
    /// A value this reader does not know.
    Unknown(u8),
}

impl Decision {
    pub fn to_u8(self) -> u8 {
        match self {
            Decision::Replay => 0,
            Decision::FilteredOut => 1,
            Decision::Stopped => 2,
            Decision::PassesOne => 3,
            Decision::Indefinite => 4,
            Decision::Unknown(v) => v,
        }
    }
    pub fn from_u8(v: u8) -> Decision {
        match v {
            0 => Decision::Replay,
            1 => Decision::FilteredOut,
            2 => Decision::Stopped,
            3 => Decision::PassesOne,
            4 => Decision::Indefinite,
            v => Decision::Unknown(v),
        }
    }
}

/// Tool notices (aux of NOTICE).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// KERNEL_REPLAY already owned (status 15): observing instead. w1 = status.
    FellBackToObserve,
    /// Payload layout confirmed at the first PASS. w1 = 1 (A) or 2 (B), w2 = 1 if forced by env.
    LayoutConfirmed,
    /// Neither layout matched: driving stopped. w1 = value at 144, w2 = value at 160.
    LayoutMismatch,
    /// A panic was caught at the C boundary; recording stops.
    Panic,
    /// This process is a fork child of w1 (parent pid).
    ForkChild,
    Unknown(u8),
}

impl Notice {
    pub fn to_u8(self) -> u8 {
        match self {
            Notice::FellBackToObserve => 1,
            Notice::LayoutConfirmed => 2,
            Notice::LayoutMismatch => 3,
            Notice::Panic => 4,
            Notice::ForkChild => 5,
            Notice::Unknown(v) => v,
        }
    }
    pub fn from_u8(v: u8) -> Notice {
        match v {
            1 => Notice::FellBackToObserve,
            2 => Notice::LayoutConfirmed,
            3 => Notice::LayoutMismatch,
            4 => Notice::Panic,
            5 => Notice::ForkChild,
            v => Notice::Unknown(v),
        }
    }
}

/// Which name table a string-table entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameSpace {
    /// key = kernel id.
    Kernel,
    /// key = OS thread id.
    Thread,
    /// Free-form tool note; key = sequence number.
    Note,
    Unknown(u8),
}

impl NameSpace {
    pub fn to_u8(self) -> u8 {
        match self {
            NameSpace::Kernel => 1,
            NameSpace::Thread => 2,
            NameSpace::Note => 3,
            NameSpace::Unknown(v) => v,
        }
    }
    pub fn from_u8(v: u8) -> NameSpace {
        match v {
            1 => NameSpace::Kernel,
            2 => NameSpace::Thread,
            3 => NameSpace::Note,
            v => NameSpace::Unknown(v),
        }
    }
}

/// Which class of event a record is, for drop accounting (`KRPHASE_ON_FULL=drop` may drop
/// dispatch and allocation events, never replay-window events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropClass {
    Window,
    Dispatch,
    Allocation,
}

/// The drop class of a record.
#[inline]
pub fn drop_class(r: &crate::Record) -> DropClass {
    match r.kind {
        kind::ENQUEUE_ENTER | kind::ENQUEUE_EXIT | kind::COMPLETE => DropClass::Dispatch,
        kind::ALLOC | kind::FREE => DropClass::Allocation,
        _ => DropClass::Window,
    }
}

/// A decoded event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    ConfigEnter {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        kernel_id: u64,
        decision: Decision,
    },
    DispatchInfo {
        thread: u32,
        dispatch_id: u64,
        agent: u64,
        queue: u64,
    },
    Correlation {
        thread: u32,
        dispatch_id: u64,
        internal: u64,
        ancestor: u64,
    },
    PassCountEnter {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
    },
    PassCountReturn {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        passes: u64,
    },
    ConfigExit {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
    },
    PassEnter {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        pass: u32,
        total: u32,
        layout: u8,
    },
    PassExit {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        pass: u32,
        total: u32,
        layout: u8,
    },
    Continue {
        thread: u32,
        /// Entry of the continue callback.
        ts: u64,
        dispatch_id: u64,
        /// The pass just finished (0-based), as the SDK passed it.
        pass: u64,
        /// Non-zero returned: the loop continues.
        result: bool,
        /// Total passes as the SDK passed it (0: indefinite loop).
        #[serde(default)]
        total: u32,
        /// The callback's own time, entry → just before returning (saturating at 65535 ns).
        #[serde(default)]
        duration_ns: u16,
    },
    EnqueueEnter {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        kernel_id: u64,
    },
    EnqueueExit {
        thread: u32,
        ts: u64,
        dispatch_id: u64,
        correlation: u64,
    },
    Complete {
        thread: u32,
        dispatch_id: u64,
        gpu_start: u64,
        gpu_end: u64,
    },
    Alloc {
        thread: u32,
        op: u16,
        class: u8,
        address: u64,
        size: u64,
        agent: u64,
    },
    Free {
        thread: u32,
        op: u16,
        class: u8,
        address: u64,
        size: u64,
        agent: u64,
    },
    WindowBytes {
        thread: u32,
        dispatch_id: u64,
        classified: u64,
        regions: u16,
        upper_bound: u64,
    },
    Notice {
        thread: u32,
        ts: u64,
        notice: Notice,
        a: u64,
        b: u64,
    },
    ModuleVars {
        thread: u32,
        ts: u64,
        /// Agent handle, or [`UNATTRIBUTED`].
        agent: u64,
        bytes: u64,
        variables: u16,
        /// [`attribution`] value.
        attribution: u8,
    },
    /// A string-table entry.
    Name {
        space: NameSpace,
        key: u64,
        name: String,
    },
    /// A record kind this reader does not know (newer writer); kept raw.
    Unknown {
        kind: u8,
        aux: u8,
        x: u16,
        thread: u32,
        w: [u64; 3],
    },
}

#[inline]
fn pass_word(pass: u32, total: u32) -> u64 {
    u64::from(pass) | (u64::from(total) << 32)
}

/// Inverse of [`pass_word`]: (pass, total).
#[inline]
fn split_pass_word(w: u64) -> (u32, u32) {
    (w as u32, (w >> 32) as u32)
}

impl Event {
    /// The raw record for this event (`None` for [`Event::Name`], which lives in a string block).
    pub fn to_record(&self) -> Option<Record> {
        use kind::*;
        Some(match *self {
            Event::ConfigEnter {
                thread,
                ts,
                dispatch_id,
                kernel_id,
                decision,
            } => Record::new(
                CONFIG_ENTER,
                decision.to_u8(),
                0,
                thread,
                ts,
                dispatch_id,
                kernel_id,
            ),
            Event::DispatchInfo {
                thread,
                dispatch_id,
                agent,
                queue,
            } => Record::new(DISPATCH_INFO, 0, 0, thread, dispatch_id, agent, queue),
            Event::Correlation {
                thread,
                dispatch_id,
                internal,
                ancestor,
            } => Record::new(CORRELATION, 0, 0, thread, dispatch_id, internal, ancestor),
            Event::PassCountEnter {
                thread,
                ts,
                dispatch_id,
            } => Record::new(PASS_COUNT_ENTER, 0, 0, thread, ts, dispatch_id, 0),
            Event::PassCountReturn {
                thread,
                ts,
                dispatch_id,
                passes,
            } => Record::new(PASS_COUNT_RETURN, 0, 0, thread, ts, dispatch_id, passes),
            Event::ConfigExit {
                thread,
                ts,
                dispatch_id,
            } => Record::new(CONFIG_EXIT, 0, 0, thread, ts, dispatch_id, 0),
            Event::PassEnter {
                thread,
                ts,
                dispatch_id,
                pass,
                total,
                layout,
            } => Record::new(
                PASS_ENTER,
                layout,
                0,
                thread,
                ts,
                dispatch_id,
                pass_word(pass, total),
            ),
            Event::PassExit {
                thread,
                ts,
                dispatch_id,
                pass,
                total,
                layout,
            } => Record::new(
                PASS_EXIT,
                layout,
                0,
                thread,
                ts,
                dispatch_id,
                pass_word(pass, total),
            ),
            Event::Continue {
                thread,
                ts,
                dispatch_id,
                pass,
                result,
                total,
                duration_ns,
            } => Record::new(
                CONTINUE,
                u8::from(result),
                duration_ns,
                thread,
                ts,
                dispatch_id,
                pass_word(pass as u32, total),
            ),
            Event::EnqueueEnter {
                thread,
                ts,
                dispatch_id,
                kernel_id,
            } => Record::new(ENQUEUE_ENTER, 0, 0, thread, ts, dispatch_id, kernel_id),
            Event::EnqueueExit {
                thread,
                ts,
                dispatch_id,
                correlation,
            } => Record::new(ENQUEUE_EXIT, 0, 0, thread, ts, dispatch_id, correlation),
            Event::Complete {
                thread,
                dispatch_id,
                gpu_start,
                gpu_end,
            } => Record::new(COMPLETE, 0, 0, thread, dispatch_id, gpu_start, gpu_end),
            Event::Alloc {
                thread,
                op,
                class,
                address,
                size,
                agent,
            } => Record::new(ALLOC, class, op, thread, address, size, agent),
            Event::Free {
                thread,
                op,
                class,
                address,
                size,
                agent,
            } => Record::new(FREE, class, op, thread, address, size, agent),
            Event::WindowBytes {
                thread,
                dispatch_id,
                classified,
                regions,
                upper_bound,
            } => Record::new(
                WINDOW_BYTES,
                0,
                regions,
                thread,
                dispatch_id,
                classified,
                upper_bound,
            ),
            Event::Notice {
                thread,
                ts,
                notice,
                a,
                b,
            } => Record::new(NOTICE, notice.to_u8(), 0, thread, ts, a, b),
            Event::ModuleVars {
                thread,
                ts,
                agent,
                bytes,
                variables,
                attribution,
            } => Record::new(
                MODULE_VARS,
                attribution,
                variables,
                thread,
                ts,
                agent,
                bytes,
            ),
            Event::Name { .. } => return None,
            Event::Unknown {
                kind,
                aux,
                x,
                thread,
                w,
            } => Record {
                kind,
                aux,
                x,
                thread,
                w,
            },
        })
    }

    /// Decodes a raw record.
    pub fn from_record(r: &Record) -> Event {
        use kind::*;
        let t = r.thread;
        let [w0, w1, w2] = r.w;
        match r.kind {
            CONFIG_ENTER => Event::ConfigEnter {
                thread: t,
                ts: w0,
                dispatch_id: w1,
                kernel_id: w2,
                decision: Decision::from_u8(r.aux),
            },
            DISPATCH_INFO => Event::DispatchInfo {
                thread: t,
                dispatch_id: w0,
                agent: w1,
                queue: w2,
            },
            CORRELATION => Event::Correlation {
                thread: t,
                dispatch_id: w0,
                internal: w1,
                ancestor: w2,
            },
            PASS_COUNT_ENTER => Event::PassCountEnter {
                thread: t,
                ts: w0,
                dispatch_id: w1,
            },
            PASS_COUNT_RETURN => Event::PassCountReturn {
                thread: t,
                ts: w0,
                dispatch_id: w1,
                passes: w2,
            },
            CONFIG_EXIT => Event::ConfigExit {
                thread: t,
                ts: w0,
                dispatch_id: w1,
            },
            PASS_ENTER => {
                let (pass, total) = split_pass_word(w2);
                Event::PassEnter {
                    thread: t,
                    ts: w0,
                    dispatch_id: w1,
                    pass,
                    total,
                    layout: r.aux,
                }
            }
            PASS_EXIT => {
                let (pass, total) = split_pass_word(w2);
                Event::PassExit {
                    thread: t,
                    ts: w0,
                    dispatch_id: w1,
                    pass,
                    total,
                    layout: r.aux,
                }
            }
            CONTINUE => {
                let (pass, total) = split_pass_word(w2);
                Event::Continue {
                    thread: t,
                    ts: w0,
                    dispatch_id: w1,
                    pass: u64::from(pass),
                    result: r.aux != 0,
                    total,
                    duration_ns: r.x,
                }
            }
            ENQUEUE_ENTER => Event::EnqueueEnter {
                thread: t,
                ts: w0,
                dispatch_id: w1,
                kernel_id: w2,
            },
            ENQUEUE_EXIT => Event::EnqueueExit {
                thread: t,
                ts: w0,
                dispatch_id: w1,
                correlation: w2,
            },
            COMPLETE => Event::Complete {
                thread: t,
                dispatch_id: w0,
                gpu_start: w1,
                gpu_end: w2,
            },
            ALLOC => Event::Alloc {
                thread: t,
                op: r.x,
                class: r.aux,
                address: w0,
                size: w1,
                agent: w2,
            },
            FREE => Event::Free {
                thread: t,
                op: r.x,
                class: r.aux,
                address: w0,
                size: w1,
                agent: w2,
            },
            WINDOW_BYTES => Event::WindowBytes {
                thread: t,
                dispatch_id: w0,
                classified: w1,
                regions: r.x,
                upper_bound: w2,
            },
            NOTICE => Event::Notice {
                thread: t,
                ts: w0,
                notice: Notice::from_u8(r.aux),
                a: w1,
                b: w2,
            },
            MODULE_VARS => Event::ModuleVars {
                thread: t,
                ts: w0,
                agent: w1,
                bytes: w2,
                variables: r.x,
                attribution: r.aux,
            },
            k => Event::Unknown {
                kind: k,
                aux: r.aux,
                x: r.x,
                thread: t,
                w: r.w,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
                duration_ns: 35,
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
            Event::Unknown {
                kind: 200,
                aux: 1,
                x: 2,
                thread: 3,
                w: [4, 5, 6],
            },
        ];
        for e in evs {
            let r = e.to_record().expect("record event");
            assert_eq!(Event::from_record(&Record::decode(&r.encode())), e);
        }
    }
}
