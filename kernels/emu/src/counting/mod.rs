//! The dispatch counting service: the counters each GPU agent supports, counter configs, and
//! the per-dispatch (per-pass under replay) dispatch and record callbacks, with values from a
//! deterministic model of the workload (`model.rs`, documented in `docs/emulator.md`).
//!
//! Data path: `catalogue` (which counters exist) → `configs` (sets of them per agent) →
//! `model` (what a dispatch counts) → `service` (the callbacks around one kernel packet).

pub mod catalogue;
pub mod configs;
pub mod model;
pub mod service;
