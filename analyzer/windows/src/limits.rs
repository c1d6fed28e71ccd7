//! Bounds on what the window reconstruction holds, so that no input, however crafted, makes it
//! allocate without limit. Each bound is far above what a real run produces (the reasons are in
//! the field docs and `docs/file-format.md`). Exceeding one of the error bounds is a
//! [`LimitError`] naming the file offset of the record that broke it; the two bounds on held
//! dispatches evict the oldest instead (emitted incomplete and counted), because a real run with
//! dropped completion records does exceed them.

use std::fmt;

/// The bounds of one [`crate::Reconstructor`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Passes (the PASS index), enqueues, completions and continue calls of one dispatch, each.
    /// The tool runs at most 4096 passes; an SDK's counter groups are far fewer. Error.
    pub passes_per_dispatch: usize,
    /// Dispatches held while waiting for their records. Eviction.
    pub held_dispatches: usize,
    /// Passes, enqueues, completions and continue calls held over all held dispatches. Eviction.
    pub held_entries: usize,
    /// Distinct recording threads (Linux thread ids are below 2^22). Error.
    pub threads: usize,
    /// Distinct queues. Error.
    pub queues: usize,
    /// Distinct agents with allocations or module variables. Error.
    pub agents: usize,
    /// Live allocations (ALLOC without FREE). Error.
    pub live_allocations: usize,
    /// Kernel names in the string table. Error.
    pub kernel_names: usize,
    /// Bytes of all kernel names together. Error.
    pub kernel_name_bytes: usize,
}

impl Limits {
    /// The bounds every reader uses unless told otherwise.
    pub const DEFAULT: Limits = Limits {
        passes_per_dispatch: 1 << 16,
        held_dispatches: 1 << 16,
        held_entries: 1 << 20,
        threads: 1 << 22,
        queues: 1 << 16,
        agents: 1 << 16,
        live_allocations: 1 << 22,
        kernel_names: 1 << 20,
        kernel_name_bytes: 256 << 20,
    };
}

/// Default bound on dispatches held while waiting for their records.
pub const DEFAULT_MAX_PENDING: usize = Limits::DEFAULT.held_dispatches;

impl Default for Limits {
    fn default() -> Self {
        Limits::DEFAULT
    }
}

/// Which error bound was exceeded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Limit {
    PassesPerDispatch,
    Threads,
    Queues,
    Agents,
    LiveAllocations,
    KernelNames,
    KernelNameBytes,
}

impl Limit {
    fn what(self) -> &'static str {
        match self {
            Limit::PassesPerDispatch => {
                "passes, enqueues, completions or continue calls of one dispatch"
            }
            Limit::Threads => "distinct threads",
            Limit::Queues => "distinct queues",
            Limit::Agents => "distinct agents",
            Limit::LiveAllocations => "live allocations",
            Limit::KernelNames => "kernel names",
            Limit::KernelNameBytes => "bytes of kernel names",
        }
    }
}

/// A reconstruction bound exceeded by the record at `offset` (when the caller gave one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitError {
    pub offset: Option<u64>,
    pub limit: Limit,
    /// The bound.
    pub max: usize,
    /// The dispatch it concerns, for the per-dispatch bound.
    pub dispatch_id: Option<u64>,
}

impl fmt::Display for LimitError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(o) = self.offset {
            write!(f, "offset {o}: ")?;
        }
        write!(f, "more than {} {}", self.max, self.limit.what())?;
        if let Some(d) = self.dispatch_id {
            write!(f, " (dispatch {d})")?;
        }
        write!(
            f,
            ": a reconstruction limit; the file is not one the tool writes"
        )
    }
}

impl std::error::Error for LimitError {}
