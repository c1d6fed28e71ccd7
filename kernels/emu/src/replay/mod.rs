//! The intercepted packet write and the kernel replay window. An eligible dispatch runs this
//! timeline on the submitting thread: dispatch-id reservation, CONFIG ENTER, the pass-count
//! call, opt-outs, reentrancy, the per-agent writer lock, admission, queue drain, agent drain,
//! snapshot, the pass loop (PASS ENTER, submit, completion records, PASS EXIT, continue,
//! restore), the outcome line, CONFIG EXIT and the application's single completion
//! (`docs/emulator.md` describes every step).
//!
//! Files follow the timeline: `intercept` (the write and its eligibility) → `window` (the
//! steps in order) → `pre_pass`, `passes` (the steps) over `open_window` (the state each step
//! takes); below them `tool_calls` and `payload` (the owner's callbacks), `submit` (packets on
//! a queue), `drain`, `record` and `phase_clock` (what is measured), `thread_window`, `config`;
//! the `--sdk-build` cost model: `sdk_build` (the switches) → `cost_model` (durations per copy
//! kind and latency) → `copy_plan` (one snapshot's or restore's copies), paced by the crate's
//! `pacing`; `pass_model` (what makes passes differ, `--pass-model`), and `totals` (the per-run
//! truth totals).

mod config;
mod copy_plan;
pub mod cost_model;
mod drain;
mod intercept;
mod open_window;
mod pass_model;
mod passes;
mod payload;
mod phase_clock;
mod pre_pass;
mod record;
pub mod sdk_build;
mod submit;
mod thread_window;
mod tool_calls;
mod totals;
mod window;

pub use config::{DEFAULT_CACHE_BYTES, PassModelSettings, ReplayConfig, configure};
pub use intercept::write_packets;

pub use submit::Launch;
pub use totals::write_truth as write_totals_truth;
