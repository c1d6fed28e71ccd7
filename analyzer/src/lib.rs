//! krphase-analyzer: imports krphase phase files, SDK log lines and whole-run measurements into
//! SQLite, and reports, compares, exports and plots them.
//!
//! One folder per step of the data's path: [`import`] (files into the database) → [`db`]
//! (schema, views, whole-run measurement rows) → [`report`] (answers, statistics, formatting) and
//! [`export`] (traces, plots). [`bench`] runs the whole-run experiments and records them through
//! `import` and `db`; [`demo`] drives everything end to end on the emulator; [`synth`] writes
//! synthetic phase files.

pub mod bench;
pub mod calendar;
pub mod cli;
pub mod db;
pub mod demo;
pub mod demo_stack;
pub mod demo_stack_markdown;
pub mod demo_stack_pacing;
pub mod doctor;
pub mod export;
pub mod import;
pub mod order_stats;
pub mod report;
pub mod rocpd;
pub mod synth;
pub mod synth_benchmark;

#[cfg(test)]
mod continue_tests;
#[cfg(test)]
mod pipeline_tests;
#[cfg(test)]
mod summary_tests;
#[cfg(test)]
mod test_files;
