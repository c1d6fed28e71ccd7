//! `krphase bench`'s arguments: replay_perf.py's options plus `--tool`, and the experiments.

use std::path::PathBuf;

/// Experiments, in their default (sorted) order. `p4` names P3: one footprint sweep covers both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, clap::ValueEnum)]
pub enum Experiment {
    P1,
    P2,
    #[value(alias = "p4")]
    P3,
    P5,
    P6,
}

impl Experiment {
    pub const ALL: [Experiment; 5] = [
        Experiment::P1,
        Experiment::P2,
        Experiment::P3,
        Experiment::P5,
        Experiment::P6,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Experiment::P1 => "P1",
            Experiment::P2 => "P2",
            Experiment::P3 => "P3",
            Experiment::P5 => "P5",
            Experiment::P6 => "P6",
        }
    }
}

/// `krphase bench` options (replay_perf.py's, plus `--tool`; `--db` is the global option).
#[derive(Debug, Clone, clap::Args)]
pub struct BenchArgs {
    /// rocprofv3 launcher to run; may hold several words (e.g. "krphase-emu rocprofv3").
    /// Default: rocprofv3 on PATH.
    #[arg(long, value_name = "COMMAND")]
    pub rocprofv3: Option<String>,
    /// Application and its arguments (an argument beginning with `-` goes in `--app-arg`).
    #[arg(long = "app", num_args = 1.., required = true, value_name = "APP")]
    pub app: Vec<String>,
    /// One more argument for the application, appended after `--app`'s; may begin with `-`
    /// (`--app-arg=--iterations --app-arg=1`). Repeatable.
    #[arg(long = "app-arg", allow_hyphen_values = true, value_name = "ARG")]
    pub app_args: Vec<String>,
    /// CSV file the results are written to, one row per measurement (with --build, one per
    /// build: FILE's stem, `-LABEL`).
    #[arg(
        short = 'o',
        long = "output-file",
        alias = "output",
        default_value = "replay_perf.csv",
        value_name = "FILE"
    )]
    pub output: PathBuf,
    /// Parent of the per-measurement rocprofv3 output directories, created if missing (with
    /// --build, one subdirectory per build).
    #[arg(
        short = 'd',
        long = "output-directory",
        alias = "workdir",
        default_value = "replay_perf_out",
        value_name = "DIR"
    )]
    pub workdir: PathBuf,
    /// Timed runs per measurement (at least 1).
    #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u32).range(1..))]
    pub repeats: u32,
    /// Untimed warm-up runs before the timed ones, per measurement.
    #[arg(long, default_value_t = 1, allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(0..))]
    pub warmup: i64,
    /// Number of counter groups G (1 to 5): P1 collects all G, P2 sweeps 1 to G.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=5))]
    pub groups: u32,
    /// Footprints of P3/P4, in array elements per buffer: each replaces the app's first
    /// argument, or sets `--elements` for a `krphase-emu run` app.
    #[arg(long, num_args = 1.., default_values_t = [262144u64, 1048576, 4194304, 16777216],
          value_name = "ELEMENTS")]
    pub footprints: Vec<u64>,
    /// Experiments to run, in the order given (default: all, sorted); p4 is accepted and
    /// means p3 (one footprint sweep serves both).
    #[arg(long, num_args = 1.., value_enum, value_name = "EXPERIMENT")]
    pub only: Vec<Experiment>,
    /// Print the plan and exit; checks neither rocprofv3 nor the app.
    #[arg(long)]
    pub dry_run: bool,
    /// libkrphase.so preloaded into every run through ROCP_TOOL_LIBRARIES, in observe mode.
    /// Default: the one built next to this executable.
    #[arg(long, conflicts_with = "no_tool", value_name = "FILE")]
    pub tool: Option<PathBuf>,
    /// Run without libkrphase.so (whole-run numbers only, no phase files).
    #[arg(long)]
    pub no_tool: bool,
    /// Label every measurement and every phase-file run this bench records: two labels are
    /// two builds, and `krphase compare A B` takes them.
    #[arg(long, value_name = "NAME")]
    pub label: Option<String>,
    /// On the emulator: the SDK build every run plays (krphase-emu's `--sdk-build LIST`, e.g.
    /// `keep-staging` or `keep-staging,device-side`), passed as KRPHASE_EMU_SDK_BUILD.
    #[arg(long, value_name = "LIST")]
    pub sdk_build: Option<String>,
    /// Measure several builds interleaved: `LABEL=SDK_BUILD` (repeatable; `SDK_BUILD` as for
    /// `--sdk-build`, `baseline` for none). Each measurement's runs alternate between the
    /// builds (A B, B A, A B, and so on), so slow drift of the machine falls on every build
    /// alike; each build's rows and runs carry its label, its work directory and CSV its own.
    #[arg(long = "build", value_name = "LABEL=SDK_BUILD", value_parser = parse_build,
          conflicts_with_all = ["label", "sdk_build"])]
    pub builds: Vec<(String, String)>,
}

/// `LABEL=SDK_BUILD` into its two parts.
fn parse_build(s: &str) -> Result<(String, String), String> {
    match s.split_once('=') {
        Some((l, b)) if !l.trim().is_empty() && !b.trim().is_empty() => {
            Ok((l.trim().to_string(), b.trim().to_string()))
        }
        _ => Err(format!("expected LABEL=SDK_BUILD, not {s:?}")),
    }
}

impl BenchArgs {
    /// The application and all its arguments: `--app`'s words, then every `--app-arg`.
    pub fn app_command(&self) -> Vec<String> {
        self.app.iter().chain(&self.app_args).cloned().collect()
    }
}
