//! krphase-analyzer: imports krphase phase files, SDK log lines and whole-run measurements into
//! SQLite, and reports, compares, exports and plots them.

pub mod bench;
pub mod benchdb;
pub mod compare;
pub mod db;
pub mod demo;
pub mod export;
pub mod harness;
pub mod import;
pub mod logparse;
pub mod phases;
pub mod plot;
pub mod report;
pub mod svg;
pub mod synth;
