//! rocprofv3's rocpd SQLite databases, read and extended: which schema versions krphase knows
//! and how a database is checked against the views it reads ([`schema`]), and how a rocpd
//! process is proven to be an imported run ([`proof`]). `import-rocpd` and `export rocpd` build
//! on both.
//!
//! krphase follows rocpd schema 3.0.3. It reads a database through the un-suffixed views
//! (`rocpd_metadata`, `processes`, `kernels`, `pmc_events`, `rocpd_kernel_dispatch`,
//! `rocpd_info_kernel_symbol`), never through the per-run `_<uuid>` tables, so the versions whose
//! views carry the same columns read alike, whether their tables stamp times inline or not.

pub mod proof;
pub mod schema;
