//! The events, the step after the C boundary: what the tool does with each callback the SDK
//! makes, as values the boundary has already read out of the raw payloads, and the records each
//! reaction hands to the recorder.
//!
//! [`tool`] is the state every reaction shares (configuration, SDK handle, mode, kernel filter,
//! live allocations, module variables), [`routes`] the kind and operation numbers found by name
//! (each kind gets a callback of its own). The reactions, each an `impl Tool` block:
//! [`window`] the replay window (CONFIG, pass count,
//! continue, PASS), with [`layout`] detecting the payload layout; [`dispatch`] the per-dispatch
//! hot path; [`alloc_events`] allocations, tracked for the snapshot byte estimate in [`alloc`];
//! [`code_object_events`] kernel names and the walk of module variables in [`modvars`];
//! [`counter_records`] the dispatch counting service, whose state is in [`counting`];
//! [`plan_note`] the pass plan note (warm-up, verification, groups per pass).
//! `panic_injector` (test support only) makes CONFIG ENTER panic on purpose.

pub mod alloc;
pub mod alloc_events;
pub mod code_object_events;
pub mod counter_records;
pub mod counting;
pub mod dispatch;
pub mod layout;
pub mod modvars;
#[cfg(feature = "test-support")]
pub(crate) mod panic_injector;
pub mod plan_note;
pub mod routes;
pub mod tool;
pub mod window;
