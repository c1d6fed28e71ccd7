//! Everything that enters the database: phase files (`.krp`, [`krp`]), the SDK's own log lines
//! ([`sdk_log`]), and whole-run measurements from replay_perf.py's CSV ([`measurement_csv`]) and
//! rocprofv3-benchmark databases ([`benchmark_db`]). Each `*_command` function is one
//! `krphase import*` subcommand: it opens the database, imports, and prints one line per input.

pub mod benchmark_db;
pub mod harness_launches;
pub mod krp;
pub mod measurement_csv;
pub mod sdk_log;

use std::path::{Path, PathBuf};

use anyhow::Result;

use crate::db;

/// `krphase import FILE... [--label L]`. A file imported before is not imported again; with
/// `--label` it is relabelled, and the line says so.
pub fn import_command(db_path: &Path, files: &[PathBuf], label: Option<&str>) -> Result<()> {
    let mut conn = db::open(db_path)?;
    for f in files {
        let r = krp::import_file(&mut conn, f, label)?;
        if r.already {
            let note = match label {
                None => String::new(),
                Some(l) => match db::runs::label_of(&conn, r.run_id)? {
                    Some(old) if old == l => format!(", labelled {l:?}"),
                    old => {
                        db::runs::relabel(&conn, r.run_id, l)?;
                        match old {
                            Some(old) => format!("; relabelled from {old:?} to {l:?}"),
                            None => format!("; labelled {l:?}"),
                        }
                    }
                },
            };
            println!(
                "{}: already imported as run {}{note}",
                f.display(),
                r.run_id
            );
        } else {
            println!(
                "{}: run {}: {} events, {} windows, {} opt-outs, {} plain dispatches{}{}{}",
                f.display(),
                r.run_id,
                r.events,
                r.windows,
                r.declines,
                r.dispatches,
                if r.counters > 0 {
                    format!(", {} counter values", r.counters)
                } else {
                    String::new()
                },
                if r.truncated { " (truncated)" } else { "" },
                r.stall_note
            );
            if let Some(note) = &r.note {
                eprintln!("krphase: note: {}: {note}", f.display());
            }
        }
    }
    Ok(())
}

/// `krphase import-log FILE [--run R [--force]]`.
pub fn import_log_command(
    db_path: &Path,
    file: &Path,
    run: Option<&str>,
    force: bool,
) -> Result<()> {
    let mut conn = db::open_existing(db_path)?;
    let run = run.map(|r| db::runs::resolve_run(&conn, r)).transpose()?;
    let target = match (run, force) {
        (Some(r), true) => sdk_log::Target::Force(r),
        (Some(r), false) => sdk_log::Target::Run(r),
        (None, _) => sdk_log::Target::Auto,
    };
    let r = sdk_log::import_log_to(&mut conn, file, target)?;
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

/// `krphase import-harness CSV [--workdir DIR] [--label L]`.
pub fn import_harness_command(
    db_path: &Path,
    csv: &Path,
    workdir: Option<&Path>,
    label: Option<&str>,
) -> Result<()> {
    let mut conn = db::open(db_path)?;
    let r = measurement_csv::import_measurement_csv(&mut conn, csv, workdir, label)?;
    let warm = match r.warmup_launches {
        0 => String::new(),
        n => format!(
            "; {n} warm-up launch(es) found in the same output directories and left out of \
             every statistic"
        ),
    };
    println!(
        "{}: {} measurements, {} phase-file runs of timed launches linked{warm}",
        csv.display(),
        r.measurements,
        r.runs
    );
    for d in &r.missing_dirs {
        eprintln!("krphase: note: output directory {d} not found; its row has no phase files");
    }
    for n in &r.notes {
        eprintln!("krphase: note: {n}");
    }
    if r.runs > 0 {
        eprintln!("krphase: note: {}", db::measurements::NO_SDK_LOG);
    }
    warn_replay_claims(&conn, &r.measurement_ids)
}

/// One warning per imported row whose kernel-replay claim fails (`db::measurements`).
fn warn_replay_claims(conn: &rusqlite::Connection, ids: &[i64]) -> Result<()> {
    let filter = db::measurements::MeasurementFilter::Any(
        ids.iter()
            .map(|&id| db::measurements::MeasurementFilter::Id(id))
            .collect(),
    );
    for m in db::measurements::read_measurements(conn, &filter)? {
        if let Some(w) = m.warning() {
            eprintln!("krphase: warning: {w}");
        }
    }
    Ok(())
}

/// `krphase import-benchmark FILE [--label L]`.
pub fn import_benchmark_command(db_path: &Path, file: &Path, label: Option<&str>) -> Result<()> {
    let mut conn = db::open(db_path)?;
    let r = benchmark_db::import_benchmark(&mut conn, file, label)?;
    println!(
        "{}: {} configs, {} measurements ({} configs predate the replay columns)",
        file.display(),
        r.configs,
        r.measurements,
        r.configs_without_replay_columns
    );
    Ok(())
}
