//! The small coded values records carry: the tool's decision at CONFIG ENTER, notice codes (and
//! why module variables were left out), string-table name spaces, allocation class bits and
//! module-variable attribution.

use serde::{Deserialize, Serialize};

/// `agent` of a MODULE_VARS record whose HSA agent maps to no known agent handle.
pub const UNATTRIBUTED: u64 = u64::MAX;

/// How a MODULE_VARS record's HSA agent was mapped to the agent handle (its `attribution`).
pub mod attribution {
    /// No mapping known: the bytes count only in upper bounds.
    pub const NONE: u8 = 0;
    /// From a CODE_OBJECT LOAD record (it carries both the agent id and the `hsa_agent_t`).
    pub const CODE_OBJECT: u8 = 1;
    /// From an allocation: its agent and `hsa_amd_pointer_info`'s `agentOwner`.
    pub const ALLOCATION: u8 = 2;
    /// The only GPU agent the tool has seen.
    pub const SINGLE_AGENT: u8 = 3;
}

/// Bits of the `class` of ALLOC/FREE records.
pub mod alloc_class {
    /// `hsa_amd_pointer_info` answered for this address.
    pub const CLASSIFIED: u8 = 1;
    pub const COARSE: u8 = 2;
    pub const FINE: u8 = 4;
    pub const KERNARG: u8 = 8;
    /// Allocated after the replay service was configured.
    pub const AFTER_CONFIGURE: u8 = 16;
    /// A vmem handle (VMEM_ALLOCATE/VMEM_FREE).
    pub const VMEM: u8 = 32;
    /// Counted in the classified snapshot estimate.
    pub const SNAPSHOT: u8 = 64;
}

/// The tool's decision at CONFIG ENTER.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// The pass-count callback was set and returns N > 1.
    Replay,
    /// Kernel name did not match the filter: pass-count left NULL.
    FilteredOut,
    /// Driving stopped (payload layout not confirmed): pass-count left NULL.
    Stopped,
    /// KRPHASE_PASSES=1: the pass-count callback returns 1.
    PassesOne,
    /// KRPHASE_PASSES=0: the pass-count callback returns 0 and the continue callback is set (an
    /// indefinite loop, ended by the continue callback).
    Indefinite,
    /// A value this reader does not know.
    Unknown(u8),
}

impl Decision {
    pub fn to_u8(self) -> u8 {
        match self {
            Decision::Replay => 0,
            Decision::FilteredOut => 1,
            Decision::Stopped => 2,
            Decision::PassesOne => 3,
            Decision::Indefinite => 4,
            Decision::Unknown(v) => v,
        }
    }
    pub fn from_u8(v: u8) -> Decision {
        match v {
            0 => Decision::Replay,
            1 => Decision::FilteredOut,
            2 => Decision::Stopped,
            3 => Decision::PassesOne,
            4 => Decision::Indefinite,
            v => Decision::Unknown(v),
        }
    }
}

/// Tool notices (the `notice` of a NOTICE record; `a` and `b` are its two values).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Notice {
    /// KERNEL_REPLAY already owned (status 15): observing instead. a = status.
    FellBackToObserve,
    /// Payload layout confirmed at the first PASS. a = 1 (A) or 2 (B), b = 1 if forced by env.
    LayoutConfirmed,
    /// Neither layout matched: driving stopped. a = value at 144, b = value at 160.
    LayoutMismatch,
    /// A panic was caught at the C boundary; recording stops.
    Panic,
    /// This process is a fork child of a (parent pid).
    ForkChild,
    /// Module variables are left out of every byte estimate from here on: ROCr's loader or
    /// symbol functions could not be had, or the walk failed. a = the `hsa_status_t` (0 when a
    /// function is missing), b = a [`module_vars_left_out`] reason.
    ModuleVarsLeftOut,
    /// Drive mode runs without dispatch tracing (`KRPHASE_GPU_TIMES=0`): the file has no
    /// dispatch records and no GPU times, by request. Written once replay is claimed.
    GpuTimesOff,
    Unknown(u8),
}

/// Why module variables are left out (`b` of a [`Notice::ModuleVarsLeftOut`] record).
pub mod module_vars_left_out {
    /// `hsa_system_get_major_extension_table` is not in the process.
    pub const NO_TABLE_FUNCTION: u64 = 1;
    /// It answered the status in `a` for the loader's 1.03 table.
    pub const TABLE_STATUS: u64 = 2;
    /// The table came back without `hsa_ven_amd_loader_iterate_executables`.
    pub const NO_ITERATE_EXECUTABLES: u64 = 3;
    /// ROCr's symbol functions (`hsa_executable_symbol_get_info` or both iterators) are missing.
    pub const NO_SYMBOL_FUNCTIONS: u64 = 4;
    /// The walk itself failed with the status in `a`.
    pub const WALK_FAILED: u64 = 5;
}

impl Notice {
    pub fn to_u8(self) -> u8 {
        match self {
            Notice::FellBackToObserve => 1,
            Notice::LayoutConfirmed => 2,
            Notice::LayoutMismatch => 3,
            Notice::Panic => 4,
            Notice::ForkChild => 5,
            Notice::ModuleVarsLeftOut => 6,
            Notice::GpuTimesOff => 7,
            Notice::Unknown(v) => v,
        }
    }
    pub fn from_u8(v: u8) -> Notice {
        match v {
            1 => Notice::FellBackToObserve,
            2 => Notice::LayoutConfirmed,
            3 => Notice::LayoutMismatch,
            4 => Notice::Panic,
            5 => Notice::ForkChild,
            6 => Notice::ModuleVarsLeftOut,
            7 => Notice::GpuTimesOff,
            v => Notice::Unknown(v),
        }
    }
}

/// Which name table a string-table entry belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NameSpace {
    /// key = kernel id.
    Kernel,
    /// key = OS thread id.
    Thread,
    /// Free-form tool note; key = sequence number.
    Note,
    /// key = the SDK's counter id (`rocprofiler_counter_id_t` handle) of a COUNTER_VALUE.
    Counter,
    Unknown(u8),
}

impl NameSpace {
    pub fn to_u8(self) -> u8 {
        match self {
            NameSpace::Kernel => 1,
            NameSpace::Thread => 2,
            NameSpace::Note => 3,
            NameSpace::Counter => 4,
            NameSpace::Unknown(v) => v,
        }
    }
    pub fn from_u8(v: u8) -> NameSpace {
        match v {
            1 => NameSpace::Kernel,
            2 => NameSpace::Thread,
            3 => NameSpace::Note,
            4 => NameSpace::Counter,
            v => NameSpace::Unknown(v),
        }
    }
}

/// Which class of event a record is, for drop accounting (`KRPHASE_ON_FULL=drop` may drop
/// dispatch and allocation events, never replay-window events).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DropClass {
    Window,
    Dispatch,
    Allocation,
}

/// A counter value as the SDK reports it (`double`), stored as its IEEE-754 bits. Two values are
/// equal when their bits are, so records and windows stay comparable (`Eq`) even with NaN.
#[derive(Debug, Clone, Copy, Default, Serialize, Deserialize)]
#[serde(transparent)]
pub struct CounterValue(pub f64);

impl PartialEq for CounterValue {
    fn eq(&self, other: &Self) -> bool {
        self.0.to_bits() == other.0.to_bits()
    }
}

impl Eq for CounterValue {}
