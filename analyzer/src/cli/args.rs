//! The `krphase` argument tree: each subcommand is one [`Cmd`] variant with its help, every
//! argument described, and an example that runs as written (on the emulator where a GPU would
//! be needed).

use std::path::PathBuf;

use clap::{Parser, Subcommand};
use clap_complete::Shell;

use super::shared::{DB_HELP, ImportLabel, KernelNames, ReportFormat};
use crate::bench;
use crate::compare::builds::CompareWhat;

#[derive(Parser)]
#[command(
    name = "krphase",
    version,
    about = "Kernel-replay phase analyzer: import libkrphase.so's phase files, SDK logs and \
             whole-run measurements into SQLite; report, compare, export and plot them",
    after_help = "Example (the whole tour on the emulator; no GPU needed):\n  \
                  krphase demo -d krphase-demo"
)]
pub struct Cli {
    #[arg(long, global = true, default_value = "krphase.db", hide_default_value = true,
          value_name = "FILE", help = DB_HELP)]
    pub db: PathBuf,
    #[command(subcommand)]
    pub cmd: Cmd,
}

#[derive(Subcommand)]
pub enum Cmd {
    /// Import what krphase reads: phase files, SDK logs, rocpd databases, replay_perf.py CSVs
    /// and rocprofv3-benchmark databases, each recognized by its content.
    ///
    /// Directories are walked (files of other kinds in them are skipped, and counted); a file
    /// named here that krphase does not read refuses the whole import. Phase files are imported
    /// first, then what joins to their runs. A phase file imported before is not imported again;
    /// with --label it is relabelled. The old verbs (import-log, import-rocpd, import-harness,
    /// import-benchmark) remain for one kind with its own options.
    #[command(after_help = "Examples:\n  krphase import out/\n  \
                            krphase import krphase-*.krp --label stream-2p")]
    Import {
        /// Files or directories to import.
        #[arg(required = true, value_name = "PATHS")]
        paths: Vec<PathBuf>,
        #[command(flatten)]
        label: ImportLabel,
        /// Phase files decoded at once, ahead of the one being written (default: one per core; 1
        /// imports one file at a time). The database gets the same rows in the same order.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
        jobs: Option<u16>,
        /// Directory a replay_perf.py CSV's relative `-d` paths are relative to (default: the
        /// current directory).
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
    },
    /// Profile an application and answer in one step, as rocprofv3 does: run it with
    /// libkrphase.so, then import and summarize.
    ///
    /// Sets ROCP_TOOL_LIBRARIES (every entry ending in ':', as the SDK needs), KRPHASE_MODE,
    /// ROCPROFILER_LOG_LEVEL=info and the output names; runs `krphase doctor`'s checks first (a
    /// trap stops the run unless --force); passes the application's stdout and stderr through
    /// unchanged (stderr stays a terminal when krphase's is one) while keeping a copy in DIR for
    /// the SDK-log join; passes SIGINT and SIGTERM on; imports into DIR/krphase.db and prints the
    /// summary. krphase exits as the application did (its status, or its signal). Under MPI or
    /// Slurm (a rank variable set) each rank only writes its files; `krphase import DIR` merges
    /// them after the job.
    #[command(
        after_help = "Examples (on the emulator; on a GPU, ./my_app in place of \
                            `krphase-emu run stream` and rocprofv3 in place of \
                            \"krphase-emu rocprofv3\"):\n  \
        krphase run --pmc \"SQ_WAVES GRBM_COUNT\" --pmc SQ_INSTS_VALU -d out -- \\\n    \
        krphase-emu run stream\n  \
        krphase run --rocprofv3 \"krphase-emu rocprofv3\" --pmc SQ_WAVES --pmc SQ_INSTS_VALU \\\n    \
        -d out -- krphase-emu run stream"
    )]
    Run(crate::run::RunArgs),
    /// List the imported runs: id, label, pid, host, mode, windows, declines, wall, file.
    #[command(after_help = "Example:\n  krphase runs --format csv")]
    Runs {
        #[command(flatten)]
        format: ReportFormat,
    },
    /// Import SDK log lines (stderr at ROCPROFILER_LOG_LEVEL=info), joined to the run(s) they
    /// prove.
    ///
    /// The evidence: stamps inside the run's time span, the dispatch sequence, physical bounds.
    /// A log that fails any of it is refused and nothing is stored; so is an empty or binary
    /// file, or a log without kernel-replay lines.
    #[command(after_help = "Example:\n  krphase import-log my_app.log --run stream-2p")]
    ImportLog {
        /// The application's stderr, captured with ROCPROFILER_LOG_LEVEL=info.
        file: PathBuf,
        /// Join only to this run: a run id or a label (still on the evidence; default: the
        /// run(s) the log proves).
        #[arg(long, value_name = "ID|LABEL")]
        run: Option<String>,
        /// With --run: join even where the evidence fails; the join is marked forced.
        #[arg(long, requires = "run")]
        force: bool,
    },
    /// Import a rocprofv3 rocpd database: kernel names, dispatches and counter values, attached
    /// by dispatch id to the run it proves.
    ///
    /// The proof: the same pid and host as an imported run, and time overlapping the run's. The
    /// database is read through its views (rocpd schema 3.0.3; a newer one where its views still
    /// match) and never modified. Re-importing it replaces the rows it stored.
    #[command(after_help = "Example:\n  krphase import-rocpd out/run_results.db")]
    ImportRocpd {
        /// The rocpd database (rocprofv3 --output-format rocpd: `<dir>/<name>_results.db`).
        file: PathBuf,
    },
    /// Import replay_perf.py's CSV (or `krphase bench`'s) as whole-run measurements.
    ///
    /// Each row is linked to the phase files in its output directory (the `-d` of its command).
    #[command(
        after_help = "Example:\n  krphase import-harness replay_perf.csv --workdir . \
                            --label baseline"
    )]
    ImportHarness {
        /// The harness's results CSV (`krphase bench --output`, replay_perf.py's CSV).
        csv: PathBuf,
        /// Directory the CSV's relative `-d` paths are relative to (default: the current
        /// directory).
        #[arg(long, value_name = "DIR")]
        workdir: Option<PathBuf>,
        #[command(flatten)]
        label: ImportLabel,
    },
    /// Run the whole-run experiments of replay_perf.py (P1-P6) with phase files.
    ///
    /// The results go to a CSV and, with --db, everything is recorded in the database.
    #[command(after_help = "Example (on the emulator):\n  \
        krphase bench --rocprofv3 \"krphase-emu rocprofv3\" --repeats 2 --groups 3 \\\n    \
        --only p1 p2 --db bench.db --app krphase-emu run stream")]
    Bench(bench::BenchArgs),
    /// Import a rocprofv3-benchmark SQLite database (never modified) as whole-run measurements.
    #[command(after_help = "Example:\n  krphase import-benchmark benchmark.db --label baseline")]
    ImportBenchmark {
        /// The rocprofv3-benchmark SQLite database; opened read-only.
        file: PathBuf,
        #[command(flatten)]
        label: ImportLabel,
    },
    /// Per-run report (windows, phases, bytes, GPU vs wall, dispatch tax) and measurements.
    ///
    /// The measurements are the whole-run rows of bench, import-harness and import-benchmark.
    #[command(
        after_help = "Examples:\n  krphase report --label stream-2p --format markdown\n  \
                            krphase report --format html -o report.html"
    )]
    Report {
        /// Run id, or a label (every run carrying it; or a measurement label). Default: all.
        #[arg(long, value_name = "ID|LABEL")]
        run: Option<String>,
        /// Same as --run LABEL.
        #[arg(long, conflicts_with = "run", value_name = "NAME")]
        label: Option<String>,
        /// One section per run (default), or one row per rank of a parallel job with the
        /// cross-rank summary (slowest rank, spread; runs of format 3.1 launched as ranks).
        #[arg(long, value_enum, default_value = "run")]
        by: crate::report::By,
        #[command(flatten)]
        format: ReportFormat,
        /// Write the report into this file instead of stdout; stdout then gets the summary
        /// screen and the file's name.
        #[arg(short = 'o', long = "output-file", value_name = "FILE")]
        output_file: Option<PathBuf>,
        #[command(flatten)]
        names: KernelNames,
    },
    /// Compare two builds: whole-run rows with intervals, phases per window, attribution.
    ///
    /// A and B are labels of bench runs or imports, or run ids. The attribution says where the
    /// wall-time change went.
    #[command(after_help = "Example:\n  krphase compare baseline keep-staging --margin 10")]
    Compare {
        /// Side A, the reference: a label or a run id.
        a: String,
        /// Side B, compared with A: a label or a run id.
        b: String,
        /// What A and B name (auto: measurement rows when both sides have some, else runs).
        #[arg(long, value_enum, default_value = "auto")]
        what: CompareWhat,
        #[command(flatten)]
        format: ReportFormat,
        /// Equivalence margin in percent of side A: within ±M % is "equivalent".
        #[arg(long, default_value_t = 15.0, value_name = "PERCENT")]
        margin: f64,
        /// Write the comparison into this file instead of stdout.
        #[arg(short = 'o', long = "output-file", value_name = "FILE")]
        output_file: Option<PathBuf>,
    },
    /// Export runs: a trace for the Perfetto UI, krphase's tables into a rocpd database, or a
    /// Parquet dataset for DuckDB and Spark.
    #[command(
        after_help = "Examples:\n  krphase export perfetto stream-2p -o trace.pftrace\n  \
                            krphase export parquet -d krphase-parquet"
    )]
    Export {
        #[command(subcommand)]
        what: ExportCmd,
    },
    /// SVG plots: phase breakdown per kernel, per-phase histograms, sweeps.
    #[command(after_help = "Example:\n  krphase plot stream-2p -d krphase-plots")]
    Plot {
        /// Run ids or labels, a label meaning all its runs (default: every run).
        #[arg(value_name = "RUNS")]
        runs: Vec<String>,
        /// Directory the SVG files are written into (created if missing).
        #[arg(
            short = 'd',
            long = "output-directory",
            alias = "output",
            default_value = "krphase-plots",
            value_name = "DIR"
        )]
        output: PathBuf,
        #[command(flatten)]
        names: KernelNames,
        /// Also render each plot as PNG beside its SVG (twice the SVG's size; system fonts).
        #[arg(long)]
        png: bool,
    },
    /// Run the emulator demo end to end: runs, import, report, trace, plots.
    #[command(after_help = "Example:\n  krphase demo -d krphase-demo")]
    Demo {
        /// Output directory: its database (krphase.db, the demo's own: --db is refused),
        /// report.md, report.html, trace and plots.
        #[arg(
            short = 'd',
            long = "output-directory",
            alias = "out",
            default_value = "krphase-demo",
            value_name = "DIR"
        )]
        out: PathBuf,
        /// Use krphase-emu and libkrphase.so next to this executable; do not run cargo.
        #[arg(long)]
        no_build: bool,
        /// Emulator binary to use (with --tool).
        #[arg(long, requires = "tool", value_name = "FILE")]
        emu: Option<PathBuf>,
        /// libkrphase.so to use (with --emu).
        #[arg(long, requires = "emu", value_name = "FILE")]
        tool: Option<PathBuf>,
        /// Only these runs, by label (for the tests; default: every run).
        #[arg(long, hide = true, value_name = "LABEL")]
        only: Vec<String>,
    },
    /// Check the set-up (and, after --, the command that will run) for traps that lose a run.
    ///
    /// One line per finding with its fix. The exit status is 1 when any would lose the run.
    #[command(after_help = "Example:\n  \
        krphase doctor -- rocprofv3 --replay-mode kernel --kernel-replay-beta-enabled \\\n    \
        -d out -- ./my_app")]
    Doctor {
        /// The command the run will use (an argument vector, or one shell command line).
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<String>,
    },
    /// Print the shell completion script for krphase on stdout.
    #[command(after_help = "Example:\n  \
        mkdir -p ~/.local/share/bash-completion/completions\n  \
        krphase completions bash > ~/.local/share/bash-completion/completions/krphase")]
    Completions {
        /// Shell the script is for.
        #[arg(value_enum)]
        shell: Shell,
    },
    /// Write krphase's man pages (krphase.1 on stdout, or a directory of pages).
    ///
    /// With -d, krphase.1 and one page per subcommand are written into the directory.
    #[command(after_help = "Example:\n  krphase man -d ~/.local/share/man/man1")]
    Man {
        /// Directory to write krphase.1 and krphase-SUBCOMMAND.1 into (created if missing).
        #[arg(
            short = 'd',
            long = "output-directory",
            alias = "out-dir",
            value_name = "DIR"
        )]
        out_dir: Option<PathBuf>,
    },
    /// Write a synthetic phase file (benchmarks and tests).
    #[command(
        hide = true,
        after_help = "Example:\n  krphase gen-synthetic --windows 100 -o synth.krp"
    )]
    GenSynthetic {
        /// Replay windows (dispatches replayed) in the file.
        #[arg(long, default_value_t = 1000)]
        windows: u64,
        /// Passes per window.
        #[arg(long, default_value_t = 2)]
        passes: u32,
        /// Write a parallel job's files instead: N rank files DIR/rank-R.krp (-o names the
        /// directory), each its own process with its own phase lengths and its rank of N.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        ranks: Option<u32>,
        /// Phase file to write (with --ranks, their directory).
        #[arg(
            short = 'o',
            long = "output-file",
            alias = "output",
            value_name = "FILE"
        )]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum ExportCmd {
    /// Add the run's windows, passes and declines to its rocpd database, as tables and views
    /// beside rocpd's own.
    ///
    /// The run is the one the database's process proves (as import-rocpd proves it). rocpd's
    /// own tables are never changed; exporting again replaces only krphase's objects.
    #[command(after_help = "Example:\n  krphase export rocpd -o out/run_results.db")]
    Rocpd {
        /// The existing rocpd database to write into.
        #[arg(short = 'o', long = "output-file", value_name = "FILE")]
        output: PathBuf,
        #[command(flatten)]
        names: KernelNames,
    },
    /// One trace of the selected runs for the Perfetto UI: Perfetto protobuf (default) or
    /// Chrome JSON.
    ///
    /// Every run is a process track (label, run id, pid) with its host threads and GPU queues:
    /// nested window, pre-pass, pass, continue, restore and tail slices, each pass's GPU slice
    /// with a flow from its host pass, declines as instants, and counter tracks for snapshot
    /// bytes and windows in flight. Timestamps are absolute CLOCK_BOOTTIME nanoseconds, the
    /// clock of the SDK's records, so the trace lines up with rocprofv3's of the same run.
    #[command(after_help = "Example:\n  krphase export perfetto stream-2p -o trace.pftrace")]
    Perfetto {
        /// Run ids or labels, a label meaning all its runs (default: every run).
        #[arg(value_name = "RUNS")]
        runs: Vec<String>,
        /// Trace file to write (written whole or not at all).
        #[arg(
            short = 'o',
            long = "output-file",
            alias = "output",
            default_value = "trace.pftrace",
            value_name = "FILE"
        )]
        output: PathBuf,
        /// Encoding: pftrace (Perfetto protobuf) or json (Chrome trace-event JSON). Default: json
        /// when FILE ends in .json, else pftrace.
        #[arg(long, value_enum, value_name = "FORMAT")]
        format: Option<crate::export::perfetto::TraceFormat>,
        #[command(flatten)]
        names: KernelNames,
    },
    /// A Parquet dataset of the runs, for DuckDB, Spark or pandas across thousands of ranks.
    ///
    /// Tables runs, windows, passes, dispatches, measurements and counters, each
    /// hive-partitioned by run (DIR/windows/run=ID/part-0.parquet); the per-run tables repeat the run's label, hostname
    /// and rank on every row. The new dataset replaces DIR whole (an empty directory or an
    /// earlier export; nothing else is replaced).
    #[command(
        after_help = "Examples:\n  krphase export parquet -d krphase-parquet\n  \
                            krphase export parquet --from out/ --jobs 8 -d krphase-parquet"
    )]
    Parquet {
        /// Run ids or labels, a label meaning all its runs (default: every run, and the
        /// measurements linked to none).
        #[arg(value_name = "RUNS", conflicts_with = "from")]
        runs: Vec<String>,
        /// Straight from phase files (.krp) or directories of them, with no database: each file
        /// converted by a worker of its own into run 1, 2, ... in the order given.
        #[arg(long, value_name = "PATHS", num_args = 1.., conflicts_with = "runs")]
        from: Vec<PathBuf>,
        /// With --from: files converted at once (default: one per core).
        #[arg(long, value_name = "N", requires = "from",
              value_parser = clap::value_parser!(u16).range(1..=1024))]
        jobs: Option<u16>,
        /// Directory of the dataset (replaced whole; created if missing).
        #[arg(
            short = 'd',
            long = "output-directory",
            default_value = "krphase-parquet",
            value_name = "DIR"
        )]
        output: PathBuf,
        #[command(flatten)]
        names: KernelNames,
    },
}
