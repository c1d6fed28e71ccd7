//! `krphase`: the analyzer command line. Each subcommand is one enum variant plus one match arm
//! calling into the library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use krphase_analyzer::report::compare_builds::{CompareFormat, CompareWhat};
use krphase_analyzer::{bench, demo, doctor, export, import, report, synth};

#[derive(Parser)]
#[command(name = "krphase", version, about = "Kernel-replay phase analyzer")]
struct Cli {
    /// SQLite database to read and write.
    #[arg(long, global = true, default_value = "krphase.db")]
    db: PathBuf,
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Import phase files (.krp) written by libkrphase.so.
    Import {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Label the imported runs (e.g. `stream-2p`); relabels a file imported before.
        #[arg(long)]
        label: Option<String>,
    },
    /// List the imported runs: id, label, pid, host, mode, windows, declines, wall, file.
    Runs {
        #[arg(long, value_enum, default_value = "table")]
        format: report::Format,
    },
    /// Import SDK log lines (stderr at ROCPROFILER_LOG_LEVEL=info) and join them to the run(s)
    /// the evidence proves: stamps inside the run's time span, the dispatch sequence, physical
    /// bounds. A log that fails any of it is refused and nothing is stored; so is an empty or
    /// binary file, or a log without kernel-replay lines.
    ImportLog {
        file: PathBuf,
        /// Join only to this run (still on the evidence; default: the run(s) it proves).
        #[arg(long)]
        run: Option<String>,
        /// With --run: join even where the evidence fails; the join is marked forced.
        #[arg(long, requires = "run")]
        force: bool,
    },
    /// Import replay_perf.py's CSV (or `krphase bench`'s), linking each row to the phase files in
    /// its output directory (the `-d` of its command).
    ImportHarness {
        csv: PathBuf,
        /// Directory the CSV's relative `-d` paths are relative to (default: cwd).
        #[arg(long)]
        workdir: Option<PathBuf>,
        #[arg(long)]
        label: Option<String>,
    },
    /// Run the seed's whole-run experiments (replay_perf.py's P1-P6) with phase files; CSV out,
    /// and with --db everything recorded in the database.
    Bench(bench::BenchArgs),
    /// Import a rocprofv3-benchmark SQLite database (never modified) as whole-run measurements.
    ImportBenchmark {
        file: PathBuf,
        #[arg(long)]
        label: Option<String>,
    },
    /// Per-run report (windows, phases, bytes, GPU vs wall, dispatch tax) and the whole-run
    /// measurements.
    Report {
        /// Run id, or a label (every run carrying it; or a measurement label). Default: all.
        #[arg(long)]
        run: Option<String>,
        /// Same as --run LABEL.
        #[arg(long, conflicts_with = "run")]
        label: Option<String>,
        #[arg(long, value_enum, default_value = "table")]
        format: report::Format,
    },
    /// Compare two builds (labels of bench runs or imports, or run ids): whole-run rows with
    /// intervals, phases per window, and where the wall change went (attribution).
    Compare {
        a: String,
        b: String,
        /// What A and B name (auto: measurement rows when both sides have some, else runs).
        #[arg(long, value_enum, default_value = "auto")]
        what: CompareWhat,
        #[arg(long, value_enum, default_value = "table")]
        format: CompareFormat,
        /// Equivalence margin, percent of side A ("equivalent within ±M%").
        #[arg(long, default_value_t = 15.0)]
        margin: f64,
    },
    /// Export a run as a trace.
    Export {
        #[command(subcommand)]
        what: ExportCmd,
    },
    /// SVG plots: phase breakdown per kernel, per-phase histograms, sweeps.
    Plot {
        /// Run ids or labels, a label meaning all its runs (default: every run).
        runs: Vec<String>,
        #[arg(short, long, default_value = "krphase-plots")]
        output: PathBuf,
    },
    /// Run the emulator demo end to end: runs, import, report, trace, plots.
    Demo {
        /// Output directory.
        #[arg(long, default_value = "krphase-demo")]
        out: PathBuf,
        /// Use krphase-emu and libkrphase.so next to this executable; do not run cargo.
        #[arg(long)]
        no_build: bool,
        /// Emulator binary to use (with --tool).
        #[arg(long, requires = "tool")]
        emu: Option<PathBuf>,
        /// libkrphase.so to use (with --emu).
        #[arg(long, requires = "emu")]
        tool: Option<PathBuf>,
        /// Only these runs (by label).
        #[arg(long, hide = true)]
        only: Vec<String>,
    },
    /// Check the environment (and, after --, the command that will run) for the set-up traps
    /// that would lose a run; one line per finding with its fix. Exit 1 when any would lose it.
    Doctor {
        /// The command the run will use (an argument vector, or one shell command line).
        #[arg(last = true)]
        command: Vec<String>,
    },
    /// Write a synthetic phase file (benchmarks and tests).
    #[command(hide = true)]
    GenSynthetic {
        #[arg(long, default_value_t = 1000)]
        windows: u64,
        #[arg(long, default_value_t = 2)]
        passes: u32,
        #[arg(short, long)]
        output: PathBuf,
    },
}

#[derive(Subcommand)]
enum ExportCmd {
    /// Chrome trace-event JSON for the Perfetto UI.
    Perfetto {
        /// Run id, or a label: one trace per run it selects (`STEM-runID.json` when several).
        run: String,
        #[arg(short, long, default_value = "trace.json")]
        output: PathBuf,
    },
}

/// The database a command reads or writes at `--db` (`None`: it has its own, or none).
fn db_of(cli: &Cli, db_given: bool) -> Option<PathBuf> {
    match cli.cmd {
        Cmd::Demo { .. } | Cmd::GenSynthetic { .. } => None,
        Cmd::Bench(_) if !db_given => None,
        _ => Some(cli.db.clone()),
    }
}

/// `db_given`: `--db` was on the command line (not the default).
fn run(cli: Cli, db_given: bool) -> Result<()> {
    let db = cli.db.as_path();
    match cli.cmd {
        Cmd::Import { files, label } => import::import_command(db, &files, label.as_deref()),
        Cmd::Runs { format } => report::runs_list::runs_command(db, format),
        Cmd::ImportLog { file, run, force } => {
            import::import_log_command(db, &file, run.as_deref(), force)
        }
        Cmd::ImportHarness {
            csv,
            workdir,
            label,
        } => import::import_harness_command(db, &csv, workdir.as_deref(), label.as_deref()),
        Cmd::ImportBenchmark { file, label } => {
            import::import_benchmark_command(db, &file, label.as_deref())
        }
        // Records into a database only when --db was given (the global default is not used).
        Cmd::Bench(args) => bench::bench_command(&args, db_given.then_some(db)),
        Cmd::Report { run, label, format } => {
            report::report_command(db, run.as_deref(), label.as_deref(), format)
        }
        Cmd::Compare {
            a,
            b,
            what,
            format,
            margin,
        } => report::compare_command(db, &a, &b, what, format, margin),
        Cmd::Export {
            what: ExportCmd::Perfetto { run, output },
        } => export::perfetto_command(db, &run, &output),
        Cmd::Plot { runs, output } => export::plot_command(db, &runs, &output),
        Cmd::Demo {
            out,
            no_build,
            emu,
            tool,
            only,
        } => demo::demo_command(demo::DemoOpts {
            out,
            no_build,
            emu,
            tool,
            only,
        }),
        Cmd::GenSynthetic {
            windows,
            passes,
            output,
        } => synth::gen_synthetic_command(windows, passes, &output),
        Cmd::Doctor { .. } => unreachable!("doctor is run by main"),
    }
}

/// Peak resident set size of this process in KiB (Linux `VmHWM`), for the benchmarks.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> ExitCode {
    let matches = Cli::command().get_matches();
    let db_given = matches.value_source("db") == Some(ValueSource::CommandLine);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    // The doctor's verdict is its exit code (1: a trap would lose the run), not an error.
    if let Cmd::Doctor { command } = &cli.cmd {
        return ExitCode::from(doctor::doctor_command(command) as u8);
    }
    let db = db_of(&cli, db_given);
    // A lock or I/O error of SQLite's names the database it concerns.
    let result = run(cli, db_given).map_err(|e| match &db {
        Some(p) => krphase_analyzer::db::locked::name_database(e, p),
        None => e,
    });
    let code = match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("krphase: error: {e:#}");
            ExitCode::FAILURE
        }
    };
    if std::env::var_os("KRPHASE_PEAK_RSS").is_some() {
        eprintln!("krphase: peak RSS {} KiB", peak_rss_kib().unwrap_or(0));
    }
    code
}
