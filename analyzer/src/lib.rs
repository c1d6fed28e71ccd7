//! krphase-analyzer: imports krphase phase files, SDK log lines and whole-run measurements into
//! SQLite, and reports, compares, exports and plots them.
//!
//! One folder per step of the data's path: [`import`] (files into the database) → [`db`]
//! (schema, views, whole-run measurement rows, the quantiles every figure uses) → [`answers`]
//! (the figures of runs and measurements) → [`compare`] (two builds side by side) and [`report`]
//! (runs' answers in one format), and [`export`] (traces, plots). Under them, for every step:
//! [`stats`] (the test, intervals and verdict words behind `compare`) and [`render`] (how
//! figures, tables and pages are written). [`bench`] runs the whole-run experiments, records them
//! through `import` and `db` and summarises them (the report prints that summary too); [`demo`]
//! drives everything end to end on the emulator; [`synth`] writes synthetic phase files.

pub mod answers;
pub mod bench;
pub mod cli;
pub mod compare;
pub mod db;
pub mod demo;
pub mod doctor;
pub mod export;
pub mod import;
pub mod render;
pub mod report;
pub mod rocpd;
pub mod run;
pub mod stats;
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
