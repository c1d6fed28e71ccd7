//! `krphase`: the analyzer command line. Each subcommand is one enum variant plus one match arm
//! calling into the library.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use clap::{Parser, Subcommand};
use krphase_analyzer::{db, import, logparse};

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
}

fn run(cli: Cli) -> Result<()> {
    match cli.cmd {
        Cmd::Import { files, label } => {
            let mut conn = db::open(&cli.db)?;
            for f in &files {
                let id = import::import_phase_file(&mut conn, f, label.as_deref())?;
                println!("{}: run {id}", f.display());
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
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("krphase: error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
