//! Shared by the format tests: the writers of the golden files.

pub mod golden_files;
