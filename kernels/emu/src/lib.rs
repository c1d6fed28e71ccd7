//! An emulated rocprofiler-sdk and GPU that run the krphase workloads with the kernel replay
//! protocol, rule for rule (see `docs/emulator.md`). The binary `krphase-emu` exports the SDK's
//! C functions (`src/exports.rs`) over the safe state kept here.

pub mod agent_info;
pub mod agents;
pub mod buffers;
pub mod build_settings;
pub mod clock;
pub mod code_objects;
pub mod counting;
pub mod device;
pub mod device_backing;
pub mod driver_client;
pub mod faults;
pub mod hsa_runtime;
pub mod ids;
pub mod kinds;
pub mod loaded_tools;
pub mod log;
pub mod memcpy_rate;
pub mod memory;
pub mod opts;
pub mod outcome;
mod pacing;
pub mod process;
pub mod program;
pub mod registration;
pub mod replay;
pub mod run;
pub mod sdk;
pub mod shutdown;
pub mod stack_demo;
pub mod status_text;
pub mod symbols;
pub mod tool_time;
pub mod truth;
pub mod workloads;
