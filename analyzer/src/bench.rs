//! `krphase bench`: the seed's whole-run experiments with in-process phase files, and
//! `krphase import-benchmark`.

pub mod import_benchmark;
