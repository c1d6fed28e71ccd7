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
//! a queue), `drain`, `record` and `phase_clock` (what is measured), `thread_window`, `config`.

mod config;
mod drain;
mod intercept;
mod open_window;
mod passes;
mod payload;
mod phase_clock;
mod pre_pass;
mod record;
mod submit;
mod thread_window;
mod tool_calls;
mod window;

pub use config::{ReplayConfig, configure};
pub use intercept::write_packets;
pub use submit::Launch;
