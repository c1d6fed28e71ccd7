//! `krphase`: the analyzer command line. Each subcommand is one enum variant plus one match arm
//! calling into the library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};
use krphase_analyzer::{
    bench, compare, db, demo, export, harness, import, logparse, plot, report, synth,
};

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
        /// Label the imported runs (e.g. `stream-2p`).
        #[arg(long)]
        label: Option<String>,
    },
    /// Import SDK log lines (stderr at ROCPROFILER_LOG_LEVEL=info) and join them to a run.
    ImportLog {
        file: PathBuf,
        /// Run to join to (default: the run whose dispatch ids match best).
        #[arg(long)]
        run: Option<String>,
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
    /// Per-run report: replayed/declined windows, phases, bytes, GPU vs wall, dispatch tax.
    Report {
        /// Run id or label (default: every run).
        #[arg(long)]
        run: Option<String>,
        /// Every run with this label.
        #[arg(long, conflicts_with = "run")]
        label: Option<String>,
        #[arg(long, value_enum, default_value = "table")]
        format: report::Format,
    },
    /// Compare two runs phase by phase, with a noise test (a label pools all its runs).
    Compare {
        a: String,
        b: String,
        #[arg(long, value_enum, default_value = "table")]
        format: CompareFormat,
    },
    /// Export a run as a trace.
    Export {
        #[command(subcommand)]
        what: ExportCmd,
    },
    /// SVG plots: phase breakdown per kernel, per-phase histograms, sweeps.
    Plot {
        /// Run ids or labels (default: every run).
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
        /// Run id or label.
        run: String,
        #[arg(short, long, default_value = "trace.json")]
        output: PathBuf,
    },
}

#[derive(Clone, Copy, clap::ValueEnum)]
enum CompareFormat {
    Table,
    Json,
}

/// `db_given`: `--db` was on the command line (not the default).
fn run(cli: Cli, db_given: bool) -> Result<()> {
    match cli.cmd {
        Cmd::Compare { a, b, format } => {
            let conn = db::open_existing(&cli.db)?;
            let (a, b) = (compare::select(&conn, &a)?, compare::select(&conn, &b)?);
            let c = compare::compare(&conn, &a, &b)?;
            match format {
                CompareFormat::Table => print!("{}", compare::render_table(&c)),
                CompareFormat::Json => println!("{}", serde_json::to_string_pretty(&c)?),
            }
            Ok(())
        }
        Cmd::Export {
            what: ExportCmd::Perfetto { run, output },
        } => {
            let conn = db::open_existing(&cli.db)?;
            let run = db::resolve_run(&conn, &run)?;
            let n = export::export_perfetto(&conn, run, &output)?;
            println!("{}: {n} trace events of run {run}", output.display());
            Ok(())
        }
        Cmd::Plot { runs, output } => {
            let conn = db::open_existing(&cli.db)?;
            let ids = runs
                .iter()
                .map(|r| db::resolve_run(&conn, r))
                .collect::<Result<Vec<_>>>()?;
            for f in plot::plot(&conn, &ids, &output)? {
                println!("{}", f.display());
            }
            Ok(())
        }
        Cmd::Demo {
            out,
            no_build,
            emu,
            tool,
            only,
        } => {
            demo::demo(&demo::DemoOpts {
                out,
                no_build,
                emu,
                tool,
                only,
            })?;
            Ok(())
        }
        Cmd::GenSynthetic {
            windows,
            passes,
            output,
        } => {
            let spec = synth::SynthSpec {
                windows,
                passes,
                ..synth::SynthSpec::default()
            };
            let t = synth::write_synthetic_file(&output, &spec)?;
            println!(
                "{}: {} events, {} windows",
                output.display(),
                t.events,
                t.windows
            );
            Ok(())
        }
        Cmd::Report { run, label, format } => {
            let conn = db::open_existing(&cli.db)?;
            let ids = report::select_runs(&conn, run.as_deref(), label.as_deref())?;
            let reports = ids
                .iter()
                .map(|&id| report::run_report(&conn, id))
                .collect::<Result<Vec<_>>>()?;
            // With the whole-run bench experiments (P1-P6), when the database holds any.
            print!("{}", report::render_with_bench(&conn, &reports, format)?);
            Ok(())
        }
        Cmd::Import { files, label } => {
            let mut conn = db::open(&cli.db)?;
            for f in &files {
                let r = import::import_file(&mut conn, f, label.as_deref())?;
                if r.already {
                    println!("{}: already imported as run {}", f.display(), r.run_id);
                } else {
                    println!(
                        "{}: run {}: {} events, {} windows, {} opt-outs, {} plain dispatches{}",
                        f.display(),
                        r.run_id,
                        r.events,
                        r.windows,
                        r.declines,
                        r.dispatches,
                        if r.truncated { " (truncated)" } else { "" }
                    );
                }
            }
            Ok(())
        }
        Cmd::ImportLog { file, run } => {
            let mut conn = db::open_existing(&cli.db)?;
            let run = run.map(|r| db::resolve_run(&conn, &r)).transpose()?;
            let r = logparse::import_log(&mut conn, &file, run)?;
            println!(
                "{}: {} lines, {} dispatch records, {} joined to windows, {} lines skipped; {}",
                file.display(),
                r.lines,
                r.records,
                r.joined,
                r.skipped,
                r.run_note
            );
            Ok(())
        }
        Cmd::ImportHarness {
            csv,
            workdir,
            label,
        } => {
            let mut conn = db::open(&cli.db)?;
            let r = harness::import_harness(&mut conn, &csv, workdir.as_deref(), label.as_deref())?;
            println!(
                "{}: {} measurements, {} phase-file runs linked",
                csv.display(),
                r.measurements,
                r.runs
            );
            for d in &r.missing_dirs {
                eprintln!(
                    "krphase: note: output directory {d} not found; its row has no phase files"
                );
            }
            Ok(())
        }
        Cmd::Bench(args) => {
            // Record into a database only when --db was given (the global default is not used).
            let code = bench::run(&args, db_given.then_some(cli.db.as_path()))?;
            if code != 0 {
                std::process::exit(i32::from(code));
            }
            Ok(())
        }
        Cmd::ImportBenchmark { file, label } => {
            let mut conn = db::open(&cli.db)?;
            let r = bench::import_benchmark::import_benchmark(&mut conn, &file, label.as_deref())?;
            println!(
                "{}: {} configs, {} measurements ({} configs predate the replay columns)",
                file.display(),
                r.configs,
                r.measurements,
                r.configs_without_replay_columns
            );
            Ok(())
        }
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
    let code = match run(cli, db_given) {
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
