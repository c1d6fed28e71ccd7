//! `krphase export parquet --from PATHS`: the dataset straight from phase files, with no
//! database in between. Each file is converted by a worker of its own (`--jobs`, one per core by
//! default) into its run's partition of every table ([`file`]), with the values the SQLite path
//! writes after `import` ([`cells`]); runs are numbered 1, 2, ... in the order the files are
//! given (a directory's sorted), as `import` numbers them in a fresh database. The dataset is
//! staged and renamed into place as the SQLite path's is; any failure leaves nothing.

mod cells;
mod file;

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use anyhow::{Context, Result, bail};

use super::staging::Staging;
use super::tables::TABLES;
use super::{Counts, DATASET_VERSION};
use crate::db;
use crate::import::kind::Kind;
use file::Written;

/// The phase files `paths` name. A file named directly that is not a phase file is refused; in a
/// directory (what `krphase run -d DIR` fills: phase files beside SDK logs and rocprofv3's
/// outputs) the other kinds are left out, and one line on stderr says how many and why.
fn phase_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let found = crate::import::paths::find(paths)?;
    let (phase, other): (Vec<_>, Vec<_>) = found
        .files
        .into_iter()
        .partition(|(k, _)| *k == Kind::Phase);
    if let Some((k, p)) = other.iter().find(|(_, p)| paths.contains(p)) {
        bail!(
            "{}: a {k}; export parquet --from reads phase files only (import it with `krphase \
             import` and export from the database)",
            p.display()
        );
    }
    if !other.is_empty() {
        eprintln!(
            "krphase: left out {} file(s) in {} that are not phase files (the first: {}); \
             `krphase import` them and export from the database to include them",
            other.len(),
            shown(paths),
            other[0].1.display()
        );
    }
    let files: Vec<PathBuf> = phase.into_iter().map(|(_, p)| p).collect();
    if files.is_empty() {
        bail!("no phase file (.krp) in {}", shown(paths));
    }
    Ok(files)
}

fn shown(paths: &[PathBuf]) -> String {
    let v: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
    v.join(", ")
}

/// Converts `files` into `root` on `jobs` workers; each file's result in file order. After the
/// first failure the workers take no new file.
fn convert_all(files: &[PathBuf], root: &Path, jobs: usize, made_at: &str) -> Vec<Result<Written>> {
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Vec<Mutex<Option<Result<Written>>>> =
        files.iter().map(|_| Mutex::new(None)).collect();
    std::thread::scope(|s| {
        for w in 0..jobs {
            let (next, failed, results) = (&next, &failed, &results);
            let worker = std::thread::Builder::new()
                .name(format!("krphase-parquet-{w}"))
                .spawn_scoped(s, move || {
                    while !failed.load(Ordering::Relaxed) {
                        let k = next.fetch_add(1, Ordering::Relaxed);
                        let Some(f) = files.get(k) else { break };
                        let r = file::convert(f, k as i64 + 1, root, made_at);
                        failed.fetch_or(r.is_err(), Ordering::Relaxed);
                        *results[k].lock().unwrap_or_else(|e| e.into_inner()) = Some(r);
                    }
                });
            if let Err(e) = worker {
                failed.store(true, Ordering::Relaxed);
                *results[0].lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(Err(e).context("cannot start a worker thread"));
            }
        }
    });
    results
        .into_iter()
        .filter_map(|m| m.into_inner().unwrap_or_else(|e| e.into_inner()))
        .collect()
}

/// The dataset's description, written as [`staging::MARKER`].
fn marker(files: &[PathBuf], counts: &Counts) -> serde_json::Value {
    serde_json::json!({
        "dataset": "krphase",
        "version": DATASET_VERSION,
        "krphase": env!("CARGO_PKG_VERSION"),
        "schema_version": db::SCHEMA_VERSION,
        "database": null,
        "from": files.iter().map(|p| p.display().to_string()).collect::<Vec<_>>(),
        "exported_at": db::now_utc(),
        "runs": (1..=files.len() as i64).collect::<Vec<_>>(),
        "tables": counts.iter().map(|(t, rows, files)| {
            (t.to_string(), serde_json::json!({"rows": rows, "files": files}))
        }).collect::<serde_json::Map<_, _>>(),
    })
}

/// `krphase export parquet --from PATHS [--jobs N] -d DIR`: one line per table, as the SQLite
/// path prints.
pub fn parquet_from_command(paths: &[PathBuf], dir: &Path, jobs: Option<usize>) -> Result<()> {
    let files = phase_files(paths)?;
    let staging = Staging::beside(dir)?;
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let jobs = jobs.unwrap_or(cores).clamp(1, files.len());
    let made_at = db::now_utc();
    let results = convert_all(&files, staging.path(), jobs, &made_at);
    let mut rows = vec![0u64; TABLES.len()];
    let mut seen = std::collections::HashMap::new();
    for (k, r) in results.into_iter().enumerate() {
        let w = r?;
        if let Some(first) = seen.insert(w.hash.clone(), k) {
            bail!(
                "{} and {} have the same content (one run given twice); nothing written",
                files[first].display(),
                files[k].display()
            );
        }
        for (t, n) in rows.iter_mut().zip(&w.rows) {
            *t += n;
        }
    }
    let n = files.len() as u64;
    let counts: Counts = TABLES
        .iter()
        .zip(rows)
        .map(|(t, r)| (t.name, r, n))
        .collect();
    super::publish(staging, &marker(&files, &counts), &counts, dir)
}
