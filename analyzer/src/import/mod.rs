//! Everything that enters the database: phase files (`.krp`, [`krp`]), the SDK's own log lines
//! ([`sdk_log`]), and whole-run measurements from replay_perf.py's CSV ([`measurement_csv`]) and
//! rocprofv3-benchmark databases ([`benchmark_db`]). Each `*_command` function is one
//! `krphase import*` subcommand: it opens the database, imports, and prints one line per input.

pub mod benchmark_db;
pub mod harness_launches;
pub mod kind;
pub mod krp;
pub mod measurement_csv;
pub mod paths;
pub mod rocpd;
pub mod rocprofv3_json;
pub mod sdk_log;

use std::collections::VecDeque;
use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::db;

/// `krphase import FILE... [--label L]`. A file imported before is not imported again; with
/// `--label` it is relabelled, and the line says so. Files are imported in order, one transaction
/// each, up to the first that fails: the ones before it stay imported. A database this command
/// would create appears only when at least one file was imported ([`db::create::write_with`]).
///
/// Many files (one per rank) decode in parallel: up to `jobs` files (default: one per core) are
/// hashed and decoded on their own threads while one connection inserts the oldest, so the
/// database gets the same rows, in the same order, as importing them one by one.
pub fn import_command(
    db_path: &Path,
    files: &[PathBuf],
    label: Option<&str>,
    jobs: Option<usize>,
) -> Result<()> {
    let ahead = jobs.unwrap_or_else(|| std::thread::available_parallelism().map_or(2, |n| n.get()));
    let (lines, failed) = db::create::write_with(db_path, |conn| {
        let mut lines = Vec::new();
        let mut next = files.iter();
        let mut started: VecDeque<(&PathBuf, krp::Started)> = next
            .by_ref()
            .take(ahead.max(1))
            .map(|f| (f, krp::start(f)))
            .collect();
        while let Some((f, s)) = started.pop_front() {
            if let Some(n) = next.next() {
                started.push_back((n, krp::start(n)));
            }
            match import_one(conn, f, s, label) {
                Ok(line) => lines.push(line),
                Err(e) if lines.is_empty() => return Err(e),
                Err(e) => return Ok((lines, Some(e))),
            }
        }
        Ok((lines, None))
    })?;
    for (out, note) in lines {
        println!("{out}");
        if let Some(note) = note {
            eprintln!("krphase: note: {note}");
        }
    }
    failed.map_or(Ok(()), Err)
}

/// Imports one started phase file; returns its stdout line and a note for stderr.
fn import_one(
    conn: &mut rusqlite::Connection,
    f: &Path,
    s: krp::Started,
    label: Option<&str>,
) -> Result<(String, Option<String>)> {
    let r = krp::import_started(conn, s, label)?;
    if r.already {
        let note = match label {
            None => String::new(),
            Some(l) => match db::runs::label_of(conn, r.run_id)? {
                Some(old) if old == l => format!(", labelled {l:?}"),
                old => {
                    db::runs::relabel(conn, r.run_id, l)?;
                    match old {
                        Some(old) => format!("; relabelled from {old:?} to {l:?}"),
                        None => format!("; labelled {l:?}"),
                    }
                }
            },
        };
        let line = format!(
            "{}: already imported as run {}{note}",
            f.display(),
            r.run_id
        );
        return Ok((line, None));
    }
    let line = format!(
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
        r.drop_note
    );
    Ok((line, r.note.map(|n| format!("{}: {n}", f.display()))))
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
    let (r, warnings) = db::create::write_with(db_path, |conn| {
        let r = measurement_csv::import_measurement_csv(conn, csv, workdir, label)?;
        let warnings = replay_claim_warnings(conn, &r.measurement_ids)?;
        Ok((r, warnings))
    })?;
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
    for w in warnings {
        eprintln!("krphase: warning: {w}");
    }
    if !r.link_errors.is_empty() {
        bail!(
            "{}: measurements stored, but {}",
            csv.display(),
            r.link_errors.join("; ")
        );
    }
    Ok(())
}

/// One warning per imported row whose kernel-replay claim fails (`db::measurements`).
fn replay_claim_warnings(conn: &rusqlite::Connection, ids: &[i64]) -> Result<Vec<String>> {
    let filter = db::measurements::MeasurementFilter::Any(
        ids.iter()
            .map(|&id| db::measurements::MeasurementFilter::Id(id))
            .collect(),
    );
    Ok(db::measurements::read_measurements(conn, &filter)?
        .iter()
        .filter_map(|m| m.warning())
        .collect())
}

/// `krphase import-benchmark FILE [--label L]`.
pub fn import_benchmark_command(db_path: &Path, file: &Path, label: Option<&str>) -> Result<()> {
    let r = db::create::write_with(db_path, |conn| {
        benchmark_db::import_benchmark(conn, file, label)
    })?;
    println!(
        "{}: {} configs, {} measurements ({} configs predate the replay columns)",
        file.display(),
        r.configs,
        r.measurements,
        r.configs_without_replay_columns
    );
    for w in &r.warnings {
        eprintln!("krphase: warning: {w}");
    }
    Ok(())
}
