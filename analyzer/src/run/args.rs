//! `krphase run`'s arguments.

use std::path::PathBuf;

use clap::Args;

/// `krphase run [OPTIONS] -d DIR -- APP [ARGS...]`.
#[derive(Debug, Clone, Args)]
pub struct RunArgs {
    /// Directory for the run's files: the phase files, the application's stderr (with the SDK's
    /// log lines), rocprofv3's outputs under --rocprofv3, and the database krphase.db (--db
    /// names another). Created if missing.
    #[arg(
        short = 'd',
        long = "output-directory",
        default_value = "krphase-run",
        value_name = "DIR"
    )]
    pub dir: PathBuf,
    /// Run the application under rocprofv3 (this command, e.g. "rocprofv3" or
    /// "krphase-emu rocprofv3"): rocprofv3 owns kernel replay, krphase observes.
    #[arg(long, value_name = "COMMAND")]
    pub rocprofv3: Option<String>,
    /// Counter group: one per pass (repeat the option for more groups). Drive mode hands them
    /// to libkrphase.so (KRPHASE_PMC); under --rocprofv3 each becomes a --pmc of rocprofv3.
    #[arg(long = "pmc", value_name = "COUNTERS")]
    pub pmc: Vec<String>,
    /// Passes per replayed dispatch in drive mode (KRPHASE_PASSES; default: one per --pmc
    /// group, at least 2). Under --rocprofv3 the passes are rocprofv3's: one per --pmc group.
    #[arg(long, value_name = "N", conflicts_with = "rocprofv3")]
    pub passes: Option<u32>,
    /// Only kernels whose name this regex finds are replayed (drive mode; KRPHASE_KERNEL_FILTER).
    #[arg(long, value_name = "REGEX", conflicts_with = "rocprofv3")]
    pub kernel_filter: Option<String>,
    /// libkrphase.so to load (default: beside this krphase executable, or in ../lib).
    #[arg(long, value_name = "FILE")]
    pub tool: Option<PathBuf>,
    /// Label the imported run(s) (e.g. `baseline`); `report --label` and `compare` select by it.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// Run even when `krphase doctor` finds a trap that would lose the run.
    #[arg(long)]
    pub force: bool,
    /// The application and its arguments.
    #[arg(last = true, required = true, value_name = "APP")]
    pub app: Vec<String>,
}
