//! The answers krphase gives about runs, each gathered from the database into plain figures: one
//! run's report ([`run_report`]: replays and declines, where the windows' time went per phase,
//! bytes, GPU vs wall time, the dispatch tax, the linked measurement) with its kernels and agents
//! ([`kernels`]) and rocpd's counters ([`rocpd_counters`]); over many runs, the opening screen
//! ([`overview`]), the findings it supports ([`findings`]) and the ranks of a parallel job
//! ([`ranks`]); the whole-run measurements a selection covers ([`measurements`]); and the list of
//! imported runs ([`runs_list`]). The report (`report/`) and `compare` write them out.

pub mod fidelity;
pub mod findings;
#[cfg(test)]
pub mod fixture;
pub mod kernels;
pub mod measurements;
pub mod overview;
pub mod ranks;
pub mod rocpd_counters;
pub mod run_report;
pub mod runs_list;

pub use run_report::{RunReport, run_report};
