//! The whole-run measurement CSV of the seed's `replay_perf.py` (exactly its 11 columns, in
//! order), which `krphase bench` writes too: reader, writer, and `krphase import-harness`, which
//! stores each row as a whole-run measurement linked to the phase files found in the
//! measurement's output directory.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};
use rusqlite::Connection;

use super::harness_launches::{Launches, LinkedFile, split_launches};
use super::krp::{import_phase_file, phase_files};
use crate::db::benchmark::CollectionMode;
use crate::db::measurements::{
    Failures, MeasurementRow, SOURCE_REPLAY_PERF, Timing, insert_measurement, link_run_in_launch,
    link_warmup,
};

/// The CSV header, in order.
pub const COLUMNS: [&str; 11] = [
    "experiment",
    "variant",
    "mode",
    "detail",
    "median_s",
    "min_s",
    "max_s",
    "peak_child_rss_kib",
    "samples",
    "failures",
    "command",
];

/// Python's `repr(float)` for the values we write: shortest round-trip digits, and a `.0` on
/// integral values so scripts see the same text the seed wrote.
pub fn py_float(v: f64) -> String {
    let s = format!("{v}");
    if s.contains(['.', 'e', 'E', 'n', 'i']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// The row's 11 CSV fields, in [`COLUMNS`] order.
fn csv_fields(row: &MeasurementRow) -> [String; 11] {
    let (median, min, max, rss) = match &row.timing {
        Some(t) => (
            py_float(t.median_s),
            py_float(t.min_s),
            py_float(t.max_s),
            t.peak_child_rss_kib.to_string(),
        ),
        None => Default::default(),
    };
    [
        row.experiment.clone(),
        row.variant.clone(),
        row.mode.as_str().to_string(),
        row.detail.clone(),
        median,
        min,
        max,
        rss,
        row.samples.to_string(),
        row.failures.to_string(),
        row.command.clone(),
    ]
}

/// Writes the CSV. Writes nothing (and returns false) when there are no rows.
pub fn write_csv(path: &Path, rows: &[MeasurementRow]) -> Result<bool> {
    if rows.is_empty() {
        return Ok(false);
    }
    let mut buf = Vec::new();
    {
        let mut w = csv::WriterBuilder::new()
            .terminator(csv::Terminator::CRLF)
            .from_writer(&mut buf);
        w.write_record(COLUMNS)?;
        for r in rows {
            w.write_record(csv_fields(r))?;
        }
        w.flush()?;
    }
    let mut f =
        std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
    f.write_all(&buf)
        .with_context(|| format!("cannot write {}", path.display()))?;
    Ok(true)
}

/// Reads a CSV written by `replay_perf.py` or `krphase bench`. Any malformed row is an error
/// naming its line; nothing is returned then.
pub fn read_csv(path: &Path) -> Result<Vec<MeasurementRow>> {
    let bytes = std::fs::read(path).with_context(|| format!("cannot open {}", path.display()))?;
    read_csv_from(&bytes, &path.display().to_string())
}

/// [`read_csv`] over bytes in memory; `name` stands for the input in error messages.
pub fn read_csv_from(bytes: &[u8], name: &str) -> Result<Vec<MeasurementRow>> {
    // The file's own line number of a record: the csv crate's line count is off by one per
    // CRLF line, the ending replay_perf.py (Python's csv module) writes, and a record's offset
    // can point at the line ending before it; so count the newlines before its first byte.
    let line_of = |byte: u64| {
        let mut start = (byte as usize).min(bytes.len());
        while start < bytes.len() && matches!(bytes[start], b'\r' | b'\n') {
            start += 1;
        }
        1 + bytes[..start].iter().filter(|b| **b == b'\n').count()
    };
    refuse_cut_file(bytes, name)?;
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(false)
        .flexible(true)
        .from_reader(bytes);
    let mut rows = Vec::new();
    let mut header_seen = false;
    for rec in rdr.records() {
        let rec = rec.map_err(|e| {
            let line = e.position().map_or(0, |p| line_of(p.byte()));
            anyhow::anyhow!("{name}: line {line}: unreadable CSV: {e}")
        })?;
        let line = rec.position().map_or(0, |p| line_of(p.byte()));
        if !header_seen {
            let got: Vec<&str> = rec.iter().collect();
            if got != COLUMNS {
                bail!(
                    "{name}: line {line}: header is not replay_perf.py's ({}), got ({})",
                    COLUMNS.join(","),
                    got.join(",")
                );
            }
            header_seen = true;
            continue;
        }
        rows.push(parse_row(&rec).map_err(|e| anyhow::anyhow!("{name}: line {line}: {e}"))?);
    }
    if !header_seen {
        bail!("{name}: empty file, no CSV header");
    }
    Ok(rows)
}

/// A file cut short (a copy interrupted, a disk that filled) ends inside a row: Python's csv
/// writer, and ours, end every row with a line end, so a last byte that is not `\n` means the
/// last row is incomplete even when its fields still parse (a command cut after `--pmc SQ_W`).
fn refuse_cut_file(bytes: &[u8], name: &str) -> Result<()> {
    match bytes.last() {
        Some(b) if *b != b'\n' => {
            let line = 1 + bytes.iter().filter(|b| **b == b'\n').count();
            bail!(
                "{name}: line {line}: the file ends mid-row, without the line end every row \
                 ends with (truncated copy?); nothing imported"
            )
        }
        _ => Ok(()),
    }
}

fn parse_row(rec: &csv::StringRecord) -> Result<MeasurementRow> {
    if rec.len() != COLUMNS.len() {
        bail!("expected {} fields, found {}", COLUMNS.len(), rec.len());
    }
    let f = |i: usize| rec.get(i).unwrap_or("");
    let mode = CollectionMode::parse(f(2)).with_context(|| format!("unknown mode {:?}", f(2)))?;
    let samples: u32 = f(8)
        .parse()
        .with_context(|| format!("samples {:?} is not a count", f(8)))?;
    let failures = match f(9) {
        "all" => Failures::All,
        s => Failures::Count(
            s.parse()
                .with_context(|| format!("failures {s:?} is neither a count nor `all`"))?,
        ),
    };
    let num = |i: usize| -> Result<Option<f64>> {
        let s = f(i);
        if s.is_empty() {
            return Ok(None);
        }
        let v: f64 = s
            .parse()
            .with_context(|| format!("{} {s:?} is not a number", COLUMNS[i]))?;
        if !v.is_finite() || v < 0.0 {
            bail!("{} {s:?} is not a non-negative number", COLUMNS[i]);
        }
        Ok(Some(v))
    };
    let (median, min, max) = (num(4)?, num(5)?, num(6)?);
    let rss = if f(7).is_empty() {
        None
    } else {
        Some(
            f(7).parse::<u64>()
                .with_context(|| format!("peak_child_rss_kib {:?} is not a count", f(7)))?,
        )
    };
    let timing = match (failures, median, min, max, rss) {
        (Failures::All, None, None, None, None) => {
            if samples != 0 {
                bail!("failures is `all` but samples is {samples}");
            }
            None
        }
        (Failures::All, ..) => bail!("failures is `all` but timings are present"),
        (Failures::Count(_), Some(median_s), Some(min_s), Some(max_s), Some(kib)) => {
            if samples == 0 {
                bail!("timings are present but samples is 0");
            }
            if !(min_s <= median_s && median_s <= max_s) {
                bail!("min_s <= median_s <= max_s does not hold");
            }
            Some(Timing {
                median_s,
                min_s,
                max_s,
                peak_child_rss_kib: kib,
            })
        }
        (Failures::Count(_), ..) => {
            bail!("median_s, min_s, max_s and peak_child_rss_kib must all be present")
        }
    };
    if f(10).is_empty() {
        bail!("command is empty");
    }
    Ok(MeasurementRow {
        experiment: f(0).to_string(),
        variant: f(1).to_string(),
        mode,
        detail: f(3).to_string(),
        timing,
        samples,
        failures,
        command: f(10).to_string(),
    })
}

/// What linking one row's phase files found.
#[derive(Debug, Default)]
struct RowLinks {
    runs: usize,
    warmup_launches: usize,
    note: Option<String>,
}

/// The facts [`split_launches`] groups by, of one imported run.
fn linked_file(conn: &Connection, run_id: i64) -> Result<LinkedFile> {
    Ok(conn.query_row(
        "SELECT path, COALESCE(clock_boottime_ns, \"start\"), ppid FROM krphase_run WHERE id = ?1",
        [run_id],
        |r| {
            Ok(LinkedFile {
                run_id,
                path: r.get(0)?,
                started_ns: r.get(1)?,
                ppid: r.get(2)?,
            })
        },
    )?)
}

/// Imports the phase files of a row's output directories and links them to its measurement:
/// the timed launches' runs with their launch, the warm-ups' apart. A file that cannot be
/// imported is reported on stderr (one line) and counted in the error.
fn link_row(
    conn: &mut Connection,
    measurement_id: i64,
    row: &MeasurementRow,
    dirs: &[PathBuf],
    label: Option<&str>,
) -> Result<RowLinks> {
    let mut files = Vec::new();
    let mut failed = Vec::new();
    for file in dirs.iter().flat_map(|d| phase_files(d)) {
        match import_phase_file(conn, &file, label) {
            Ok(run) => files.push(linked_file(conn, run)?),
            Err(e) => {
                eprintln!("krphase: warning: {e:#}");
                failed.push(file.display().to_string());
            }
        }
    }
    let launches = if dirs.len() == 1 {
        split_launches(files, row.samples, row.failures)
    } else {
        // A row derived from several commands: every file is a timed launch of its own.
        Launches {
            timed: files.iter().map(|f| vec![f.run_id]).collect(),
            ..Launches::default()
        }
    };
    for (k, launch) in launches.timed.iter().enumerate() {
        for run in launch {
            link_run_in_launch(conn, measurement_id, *run, Some(k as i64))?;
        }
    }
    for run in launches.warmups.iter().flatten() {
        link_warmup(conn, measurement_id, *run)?;
    }
    if !failed.is_empty() {
        bail!(
            "{} phase file(s) could not be imported: {}",
            failed.len(),
            failed.join(", ")
        );
    }
    Ok(RowLinks {
        runs: launches.timed.iter().map(Vec::len).sum(),
        warmup_launches: launches.warmups.len(),
        note: launches.note,
    })
}

/// Summary of one `import-harness`.
#[derive(Debug, Default)]
pub struct MeasurementCsvImport {
    pub measurements: usize,
    /// The ids of the stored rows.
    pub measurement_ids: Vec<i64>,
    /// Phase-file runs of timed launches, linked.
    pub runs: usize,
    /// Warm-up launches found beside the timed ones, kept out of every statistic.
    pub warmup_launches: usize,
    /// Rows whose output directory was missing.
    pub missing_dirs: Vec<String>,
    /// Phase files that failed to import (the measurement rows are stored all the same).
    pub link_errors: Vec<String>,
    /// One line per row whose launches could not all be told apart.
    pub notes: Vec<String>,
}

/// `krphase import-harness CSV [--workdir DIR]`: the whole CSV is validated before anything is
/// stored; measurement rows go in one transaction, then each row's phase files are imported and
/// linked (a phase file that fails is in `link_errors`, the rest stay linked). `workdir` is what relative `-d` paths are resolved against (default: cwd).
pub fn import_measurement_csv(
    conn: &mut Connection,
    csv_path: &Path,
    workdir: Option<&Path>,
    label: Option<&str>,
) -> Result<MeasurementCsvImport> {
    let rows = read_csv(csv_path)?;
    let base = match workdir {
        Some(w) => w.to_path_buf(),
        None => std::env::current_dir().context("current directory")?,
    };
    let tx = conn.transaction()?;
    let mut pending = Vec::new();
    let mut ids = Vec::new();
    for row in &rows {
        let dirs: Vec<PathBuf> = row.output_dirs().iter().map(|d| base.join(d)).collect();
        let stored = match dirs.as_slice() {
            [one] => Some(one.as_path()),
            _ => None,
        };
        let id = insert_measurement(&tx, SOURCE_REPLAY_PERF, row, stored, label, true)?;
        ids.push(id);
        pending.push((id, row, dirs));
    }
    tx.commit()?;
    let mut summary = MeasurementCsvImport {
        measurements: rows.len(),
        measurement_ids: ids,
        ..Default::default()
    };
    for (id, row, dirs) in pending {
        let (found, missing): (Vec<PathBuf>, Vec<PathBuf>) =
            dirs.into_iter().partition(|d| d.is_dir());
        summary
            .missing_dirs
            .extend(missing.iter().map(|d| d.display().to_string()));
        if found.is_empty() {
            continue;
        }
        match link_row(conn, id, row, &found, label) {
            Ok(l) => {
                summary.runs += l.runs;
                summary.warmup_launches += l.warmup_launches;
                summary.notes.extend(
                    l.note
                        .map(|n| format!("{}/{}: {n}", row.experiment, row.variant)),
                );
            }
            Err(e) => summary.link_errors.push(format!("{e:#}")),
        }
    }
    Ok(summary)
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod harness_layout_tests;
