//! The rocprofiler-sdk C ABI subset krphase needs, and safe wrappers over it.
//!
//! Nothing here links against ROCm: the SDK's functions are resolved at run time from the
//! running process ([`sdk::Sdk`]). Types are declared once, in [`types`]; the kernel-replay
//! payload, whose field order differs between SDK builds, is reached through [`ReplayPayload`];
//! the dispatch counting service's types are in [`counting`]; ROCr's loader table, which a tool
//! gets through `hsa_system_get_major_extension_table`, is in [`hsa_loader`]; whether rocprofv3's
//! tool library is loaded in the process is [`loaded_objects`].

pub mod agent;
pub mod buffer;
pub mod counting;
pub mod executables;
#[cfg(feature = "bindgen")]
pub mod header_check;
pub mod hsa_loader;
pub mod loaded_objects;
pub mod payload;
pub mod sdk;
pub mod status;
pub mod tool_library;
pub mod types;

pub use agent::*;
pub use buffer::*;
pub use counting::*;
pub use executables::{HsaError, HsaSymbolFns, SymbolInfo, WalkUnavailable};
pub use hsa_loader::{HsaVenAmdLoader1_03, LoaderMissing};
pub use payload::{FieldOffsets, PayloadLayout, ReplayPayload};
pub use sdk::{CounterInfo, InitState, LoadError, Need, Sdk, SdkSource};
pub use status::Status;
pub use tool_library::check_tool_library;
pub use types::*;
