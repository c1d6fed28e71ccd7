//! `krphase`: the analyzer command line. Each subcommand is one enum variant plus one match arm
//! calling into the library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::FromArgMatches;
use clap::parser::ValueSource;
use krphase_analyzer::cli::args::{Cli, Cmd, ExportCmd};
use krphase_analyzer::cli::{completions, man};
use krphase_analyzer::{answers, bench, compare, db, demo, doctor, export, import, report, synth};

/// The database a command reads or writes at `--db` (`None`: it has its own, or none).
fn db_of(cli: &Cli, db_given: bool) -> Option<PathBuf> {
    match cli.cmd {
        Cmd::Demo { .. }
        | Cmd::GenSynthetic { .. }
        | Cmd::Doctor { .. }
        | Cmd::Completions { .. }
        | Cmd::Man { .. } => None,
        Cmd::Bench(_) if !db_given => None,
        _ => Some(cli.db.clone()),
    }
}

/// Why a command that uses no database refuses `--db`.
fn no_database(cmd: &Cmd) -> String {
    match cmd {
        Cmd::Demo { out, .. } => format!(
            "demo does not take --db: its database is {} (choose the directory with -d)",
            out.join("krphase.db").display()
        ),
        Cmd::GenSynthetic { .. } => {
            "gen-synthetic does not take --db: it writes a phase file".into()
        }
        Cmd::Doctor { .. } => "doctor does not take --db: it reads no database".into(),
        Cmd::Completions { .. } => "completions does not take --db: it reads no database".into(),
        Cmd::Man { .. } => "man does not take --db: it reads no database".into(),
        _ => "this command does not take --db".into(),
    }
}

/// `db_given`: `--db` was on the command line (not the default).
fn run(cli: Cli, db_given: bool) -> Result<()> {
    let db = cli.db.as_path();
    match cli.cmd {
        Cmd::Import {
            paths,
            label,
            jobs,
            workdir,
        } => import::paths::import_paths_command(
            db,
            &paths,
            &import::paths::Options {
                label: label.label.as_deref(),
                jobs: jobs.map(usize::from),
                workdir: workdir.as_deref(),
            },
        ),
        Cmd::Runs { format } => answers::runs_list::runs_command(db, format.format),
        Cmd::ImportLog { file, run, force } => {
            import::import_log_command(db, &file, run.as_deref(), force)
        }
        Cmd::ImportRocpd { file } => import::rocpd::import_rocpd_command(db, &file),
        Cmd::ImportHarness {
            csv,
            workdir,
            label,
        } => import::import_harness_command(db, &csv, workdir.as_deref(), label.label.as_deref()),
        Cmd::ImportBenchmark { file, label } => {
            import::import_benchmark_command(db, &file, label.label.as_deref())
        }
        // Records into a database only when --db was given (the global default is not used).
        Cmd::Bench(args) => bench::bench_command(&args, db_given.then_some(db)),
        Cmd::Report {
            run,
            label,
            by,
            format,
            output_file,
            names,
        } => {
            db::kernel_names::set_form(names.form());
            report::report_command(
                db,
                (run.as_deref(), label.as_deref(), by),
                (format.format, export::inline_plots),
                output_file.as_deref(),
            )
        }
        Cmd::Compare {
            a,
            b,
            what,
            format,
            margin,
            output_file,
        } => compare::compare_command(
            db,
            &a,
            &b,
            what,
            format.format,
            margin,
            output_file.as_deref(),
        ),
        Cmd::Export {
            what:
                ExportCmd::Perfetto {
                    runs,
                    output,
                    format,
                    names,
                },
        } => {
            db::kernel_names::set_form(names.form());
            export::perfetto_command(db, &runs, &output, format)
        }
        Cmd::Export {
            what: ExportCmd::Rocpd { output, names },
        } => {
            db::kernel_names::set_form(names.form());
            export::rocpd::export_rocpd_command(db, &output)
        }
        Cmd::Export {
            what:
                ExportCmd::Parquet {
                    runs,
                    from,
                    jobs,
                    output,
                    names,
                },
        } => {
            db::kernel_names::set_form(names.form());
            if from.is_empty() {
                export::parquet::parquet_command(db, &runs, &output)
            } else {
                export::parquet::parquet_from_command(&from, &output, jobs.map(usize::from))
            }
        }
        Cmd::Plot {
            runs,
            output,
            png,
            names,
        } => {
            db::kernel_names::set_form(names.form());
            export::plot_command(db, &runs, &output, png)
        }
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
            ranks,
            output,
        } => synth::gen_synthetic_command(windows, passes, ranks, &output),
        Cmd::Completions { shell } => completions::completions_command(shell),
        Cmd::Man { out_dir } => man::man_command(out_dir.as_deref()),
        Cmd::Doctor { .. } | Cmd::Run(_) => unreachable!("doctor and run are run by main"),
    }
}

/// Peak resident set size of this process in KiB (Linux `VmHWM`), for the benchmarks.
fn peak_rss_kib() -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn main() -> ExitCode {
    let matches = krphase_analyzer::cli::command().get_matches();
    let db_given = matches.value_source("db") == Some(ValueSource::CommandLine);
    let cli = Cli::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    if db_given && db_of(&cli, true).is_none() {
        eprintln!("krphase: error: {}", no_database(&cli.cmd));
        return ExitCode::FAILURE;
    }
    // The doctor's verdict is its exit code (1: a trap would lose the run), not an error.
    if let Cmd::Doctor { command } = &cli.cmd {
        return ExitCode::from(doctor::doctor_command(command) as u8);
    }
    // `run` ends as the application did; its own errors come before the application ran.
    if let Cmd::Run(args) = &cli.cmd {
        let db = db_given.then_some(cli.db.as_path());
        match krphase_analyzer::run::run_command(args, db) {
            Ok(end) => krphase_analyzer::run::child::end_like(end),
            Err(e) => {
                eprintln!("krphase: error: {e:#}");
                return ExitCode::from(125);
            }
        }
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
