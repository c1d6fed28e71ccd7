//! The record-kind table: every kind of the `.krp` file described once. Each entry gives the
//! kind number, its constant in [`kind`], its [`Record`] constructor, its [`Event`] variant and
//! drop class, and where each field is stored (see `define.rs` for the slots). Encoding,
//! decoding, the constructors and the drop class are all generated from it.
//!
//! `ts` fields are host times in the header's clock ([`crate::header::Clock`]): CLOCK_BOOTTIME
//! nanoseconds (the SDK's clock; GPU start/end are always in it), or raw TSC ticks in a 3.0 file
//! that says so, which [`crate::read::FileReader`] converts to BOOTTIME nanoseconds through the
//! CLOCK_PAIR records before any reader sees them.

use super::codes::{CounterValue, Decision, DropClass, NameSpace, Notice};
use super::define::RawField;
use crate::record::Record;
use serde::{Deserialize, Serialize};

record_kinds! {
    /// KERNEL_REPLAY CONFIG ENTER: a replay window opens, with the tool's decision.
    1 CONFIG_ENTER config_enter ConfigEnter (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        kernel_id: u64 => payload2,
        decision: Decision => small8,
    }
    /// Dispatch placement (agent and queue handles). Taken at CONFIG ENTER, or at ENQUEUE ENTER
    /// (`at_enqueue`, which the typed event omits); at an enqueue it is written only when the
    /// thread's placement changes: it also applies to that thread's later enqueues. Never
    /// dropped.
    2 DISPATCH_INFO dispatch_info DispatchInfo (Window) {
        thread: u32 => thread,
        dispatch_id: u64 => payload0,
        agent: u64 => payload1,
        queue: u64 => payload2,
    } record_only {
        at_enqueue: bool => small8,
    }
    /// Correlation ids of a replay window's dispatch.
    3 CORRELATION correlation Correlation (Window) {
        thread: u32 => thread,
        dispatch_id: u64 => payload0,
        internal: u64 => payload1,
        ancestor: u64 => payload2,
    }
    /// `replay_pass_count` entered.
    4 PASS_COUNT_ENTER pass_count_enter PassCountEnter (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
    }
    /// `replay_pass_count` about to return `passes`.
    5 PASS_COUNT_RETURN pass_count_return PassCountReturn (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        passes: u64 => payload2,
    }
    /// KERNEL_REPLAY CONFIG EXIT: the replay window closes.
    6 CONFIG_EXIT config_exit ConfigExit (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
    }
    /// PASS ENTER: pass `pass` of `total` begins; `layout` is the payload layout the numbers
    /// were read with (0 unknown: the tool's own count, 1 A, 2 B).
    7 PASS_ENTER pass_enter PassEnter (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        pass: u32 => payload2_low,
        total: u32 => payload2_high,
        layout: u8 => small8,
    }
    /// PASS EXIT; fields as PASS ENTER.
    8 PASS_EXIT pass_exit PassExit (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        pass: u32 => payload2_low,
        total: u32 => payload2_high,
        layout: u8 => small8,
    }
    /// One `replay_continue` call and its result.
    9 CONTINUE replay_continue Continue (Window) {
        thread: u32 => thread,
        /// Entry of the continue callback.
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        /// The pass just finished (0-based), as the SDK passed it (its low 32 bits are stored).
        pass: u64 => payload2_low,
        /// Non-zero returned: the loop continues.
        result: bool => small8,
        /// Total passes as the SDK passed it (0: indefinite loop).
        #[serde(default)]
        total: u32 => payload2_high,
        /// The callback's own time, entry → just before returning, buffer hand-over included,
        /// encoded by [`super::own_time`] (ns below 32 768 ns, µs above, to 32.767 ms).
        #[serde(default)]
        own_time: u16 => small16,
    }
    /// KERNEL_DISPATCH ENQUEUE ENTER.
    10 ENQUEUE_ENTER enqueue_enter EnqueueEnter (Dispatch) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        kernel_id: u64 => payload2,
    }
    /// KERNEL_DISPATCH ENQUEUE EXIT, with the correlation internal id.
    11 ENQUEUE_EXIT enqueue_exit EnqueueExit (Dispatch) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        correlation: u64 => payload2,
    }
    /// KERNEL_DISPATCH COMPLETE (one per pass): the GPU interval.
    12 COMPLETE complete Complete (Dispatch) {
        thread: u32 => thread,
        dispatch_id: u64 => payload0,
        gpu_start: u64 => payload1,
        gpu_end: u64 => payload2,
    }
    /// Allocation: `class` holds [`super::alloc_class`] bits, `op` the SDK operation.
    13 ALLOC alloc Alloc (Allocation) {
        thread: u32 => thread,
        op: u16 => small16,
        class: u8 => small8,
        address: u64 => payload0,
        size: u64 => payload1,
        agent: u64 => payload2,
    }
    /// Free; fields as ALLOC (size is the tracked size, 0 if unknown).
    14 FREE free Free (Allocation) {
        thread: u32 => thread,
        op: u16 => small16,
        class: u8 => small8,
        address: u64 => payload0,
        size: u64 => payload1,
        agent: u64 => payload2,
    }
    /// Snapshot byte estimate at window start: classified bytes and regions (saturating), and
    /// an upper bound.
    15 WINDOW_BYTES window_bytes WindowBytes (Window) {
        thread: u32 => thread,
        dispatch_id: u64 => payload0,
        classified: u64 => payload1,
        regions: u16 => small16,
        upper_bound: u64 => payload2,
    }
    /// Tool notice: its code and two notice-specific values.
    16 NOTICE notice Notice (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        notice: Notice => small8,
        a: u64 => payload1,
        b: u64 => payload2,
    }
    /// Writable module-variable bytes the snapshot copies for one agent, from a walk of the
    /// loaded executables' symbols; replaces the agent's previous value. `agent` is
    /// [`super::UNATTRIBUTED`] when no agent is known; `variables` saturates; `attribution` is
    /// an [`super::attribution`] value.
    17 MODULE_VARS module_vars ModuleVars (Window) {
        thread: u32 => thread,
        ts: u64 => payload0,
        agent: u64 => payload1,
        bytes: u64 => payload2,
        variables: u16 => small16,
        attribution: u8 => small8,
    }
    /// Host time at a KERNEL_DISPATCH COMPLETE callback, written just before that completion's
    /// COMPLETE record (`gpu_end` names it: a dispatch has one completion per pass). In observe
    /// mode it is the last host time of a pass the process can see: the gap from it to the next
    /// pass's ENQUEUE ENTER holds the SDK's restore.
    18 COMPLETE_HOST complete_host CompleteHost (Dispatch) {
        thread: u32 => thread,
        ts: u64 => payload0,
        dispatch_id: u64 => payload1,
        gpu_end: u64 => payload2,
    }
    /// One counter of one pass of a dispatch, from the SDK's dispatch counting service (drive
    /// mode with `KRPHASE_PMC`): the value summed over the counter's dimension instances.
    /// `counter` is the SDK's counter id, named in the string table ([`NameSpace::Counter`]);
    /// `pass` is the pass the tool saved at PASS ENTER for the counted dispatch (0 when it was
    /// not replayed; saturating at 65535); `instances` the records summed (saturating at 255).
    /// Written from the SDK's record callback, which may run on any thread and after the
    /// dispatch's COMPLETE.
    19 COUNTER_VALUE counter_value CounterValue (Dispatch) {
        thread: u32 => thread,
        dispatch_id: u64 => payload0,
        counter: u64 => payload1,
        value: CounterValue => payload2,
        pass: u16 => small16,
        instances: u8 => small8,
    }
    /// A calibration pair of a TSC-clock file, taken by the writer thread at its start, every
    /// [`crate::clock::PAIR_INTERVAL_MS`] ms and at finish: the TSC (midpoint of the two reads
    /// around the clock read), CLOCK_BOOTTIME ns read between them, and the ticks between the
    /// two TSC reads (the pair's uncertainty; the narrowest of several tries). `when` is a
    /// [`crate::clock::pair_when`] value. Never converted itself.
    20 CLOCK_PAIR clock_pair ClockPair (Window) {
        thread: u32 => thread,
        tsc: u64 => payload0,
        boottime_ns: u64 => payload1,
        width: u64 => payload2,
        when: u8 => small8,
    }
    /// KERNEL_DISPATCH COMPLETE with its host time, in one record (3.0): the host time at the
    /// callback's entry, the GPU interval, and the dispatch id in the 56 bits after the kind (no
    /// thread id). A dispatch id of 2^56 or more is written as COMPLETE_HOST + COMPLETE instead.
    21 COMPLETE_AT complete_at CompleteAt (Dispatch) {
        ts: u64 => payload0,
        dispatch_id: u64 => head56,
        gpu_start: u64 => payload1,
        gpu_end: u64 => payload2,
    }
}
