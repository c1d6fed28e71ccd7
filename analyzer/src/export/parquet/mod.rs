//! `krphase export parquet`: the database as a Parquet dataset that DuckDB, Spark or pandas query
//! across thousands of runs (one per rank). Each table ([`tables::TABLES`]) is a directory
//! hive-partitioned by run, `DIR/windows/run=ID/part-0.parquet`; the per-run tables repeat the
//! run's label, hostname and rank on every row, so a cross-rank query needs no join. One thread
//! reads the database a record batch at a time while another encodes and writes the files
//! (Snappy-compressed), so memory holds a few batches and a row group, never a table. The dataset
//! is written beside `DIR` and renamed into place ([`staging`]).

mod batches;
mod columns;
pub mod staging;
pub mod tables;
#[cfg(test)]
mod tests;

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{Receiver, SyncSender, sync_channel};

use anyhow::{Context, Result, anyhow};
use arrow_array::RecordBatch;
use arrow_schema::SchemaRef;
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use rusqlite::{Connection, OptionalExtension};

pub use batches::{BATCH_ROWS, schema};
pub use columns::{Column, Kind};
use tables::{RunContext, Table};

use crate::db;

/// The dataset layout's version, in [`staging::MARKER`]; a change of a column's name, type or
/// meaning bumps it.
pub const DATASET_VERSION: u32 = 1;

/// Rows of a Parquet row group: a few batches, so the writer's buffer stays bounded.
const ROW_GROUP_ROWS: usize = 4 * BATCH_ROWS;

/// Hive's name for the partition of a NULL key (measurements linked to no run).
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// What the writer thread is told.
enum Msg {
    Open(PathBuf, SchemaRef),
    Batch(RecordBatch),
    Close,
}

fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_created_by(format!("krphase {}", env!("CARGO_PKG_VERSION")))
        .build()
}

/// The writer thread: one file at a time, each complete (footer written, flushed) when closed.
fn write_files(rx: Receiver<Msg>) -> Result<()> {
    let mut open: Option<(PathBuf, ArrowWriter<File>)> = None;
    for msg in rx {
        match msg {
            Msg::Open(path, schema) => {
                let f = File::create(&path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                open = Some((
                    path,
                    ArrowWriter::try_new(f, schema, Some(writer_properties()))?,
                ));
            }
            Msg::Batch(b) => {
                let (path, w) = open.as_mut().expect("a batch follows Open");
                w.write(&b)
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
            Msg::Close => {
                let (path, w) = open.take().expect("Close follows Open");
                w.into_inner()
                    .with_context(|| format!("cannot write {}", path.display()))?;
            }
        }
    }
    Ok(())
}

/// Reads one partition's rows and sends them to the writer thread as one file.
struct Feeder<'a> {
    conn: &'a Connection,
    tx: SyncSender<Msg>,
    root: &'a Path,
    /// Rows and files written per table.
    counts: BTreeMap<&'static str, (u64, u64)>,
}

impl Feeder<'_> {
    fn send(&self, m: Msg) -> Result<()> {
        // A closed channel means the writer failed: its error is what the caller reports.
        self.tx.send(m).map_err(|_| anyhow!("the writer stopped"))
    }

    fn partition(
        &mut self,
        table: &Table,
        sql: &str,
        run: Option<i64>,
        windows: Option<(i64, i64)>,
        ctx: &RunContext,
    ) -> Result<()> {
        let key = run.map_or_else(|| NULL_PARTITION.to_string(), |r| r.to_string());
        let dir = self.root.join(table.name).join(format!("run={key}"));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        self.send(Msg::Open(dir.join("part-0.parquet"), schema(table)))?;
        let mut rows = 0;
        batches::read_batches(
            self.conn,
            table,
            sql,
            run.unwrap_or(0),
            windows,
            ctx,
            BATCH_ROWS,
            |b| {
                rows += b.num_rows() as u64;
                self.send(Msg::Batch(b))
            },
        )?;
        self.send(Msg::Close)?;
        let c = self.counts.entry(table.name).or_default();
        c.0 += rows;
        c.1 += 1;
        Ok(())
    }
}

/// Whether the database records ranks (a `rank` column in `krphase_run`).
fn has_rank(conn: &Connection) -> Result<bool> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM pragma_table_info('krphase_run') WHERE name = 'rank'",
        [],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

fn run_context(conn: &Connection, run: i64, rank: bool) -> Result<RunContext> {
    let sql = format!(
        "SELECT label, host, {} FROM krphase_run WHERE id = ?1",
        if rank { "rank" } else { "NULL" }
    );
    conn.query_row(&sql, [run], |r| {
        Ok(RunContext {
            label: r.get(0)?,
            hostname: r.get(1)?,
            rank: r.get(2)?,
        })
    })
    .optional()?
    .with_context(|| format!("unknown run id {run}"))
}

/// What was written: rows and files per table, in [`tables::TABLES`] order.
pub type Counts = Vec<(&'static str, u64, u64)>;

/// Writes the dataset of `runs` into `root` (an empty directory). With `all`, measurements
/// linked to no run go into the NULL partition.
pub fn write_dataset(conn: &Connection, runs: &[i64], all: bool, root: &Path) -> Result<Counts> {
    let rank = has_rank(conn)?;
    let sql = |t: &Table| {
        let s = t.select();
        if rank { s } else { s.replace("r.rank", "NULL") }
    };
    let sqls: Vec<String> = tables::TABLES.iter().map(sql).collect();
    let (tx, rx) = sync_channel(2);
    std::thread::scope(|s| {
        let writer = s.spawn(move || write_files(rx));
        let mut feeder = Feeder {
            conn,
            tx,
            root,
            counts: BTreeMap::new(),
        };
        let fed = (|| -> Result<()> {
            for &run in runs {
                let ctx = run_context(conn, run, rank)?;
                let windows = db::phases::window_range(conn, run)?;
                for (t, sql) in tables::TABLES.iter().zip(&sqls) {
                    feeder.partition(t, sql, Some(run), windows, &ctx)?;
                }
            }
            if all {
                let t = tables::UNLINKED_MEASUREMENTS;
                let unlinked: i64 = conn.query_row(
                    &format!("SELECT COUNT(*) FROM (SELECT m.id {})", t.from),
                    [],
                    |r| r.get(0),
                )?;
                if unlinked > 0 {
                    feeder.partition(&t, &t.select(), None, None, &RunContext::default())?;
                }
            }
            Ok(())
        })();
        let counts = std::mem::take(&mut feeder.counts);
        drop(feeder);
        let written = writer.join().expect("the writer thread does not panic");
        // The writer's own error explains a feeder's "the writer stopped".
        written.and(fed)?;
        Ok(tables::TABLES
            .iter()
            .map(|t| {
                let (rows, files) = counts.get(t.name).copied().unwrap_or_default();
                (t.name, rows, files)
            })
            .collect())
    })
}

/// The dataset's description, written as [`staging::MARKER`].
fn marker(db_path: &Path, runs: &[i64], counts: &Counts) -> serde_json::Value {
    serde_json::json!({
        "dataset": "krphase",
        "version": DATASET_VERSION,
        "krphase": env!("CARGO_PKG_VERSION"),
        "schema_version": db::SCHEMA_VERSION,
        "database": db_path.display().to_string(),
        "exported_at": db::now_utc(),
        "runs": runs,
        "tables": counts.iter().map(|(t, rows, files)| {
            (t.to_string(), serde_json::json!({"rows": rows, "files": files}))
        }).collect::<serde_json::Map<_, _>>(),
    })
}

/// `krphase export parquet [RUNS...] -d DIR`: the selected runs (every run when none is given)
/// as a dataset replacing `DIR`; one line per table.
pub fn parquet_command(db_path: &Path, runs: &[String], dir: &Path) -> Result<()> {
    let conn = db::open_existing(db_path)?;
    // One read transaction: the tables agree with each other even while an import writes.
    conn.execute_batch("BEGIN DEFERRED")?;
    let ids = db::runs::select_all(&conn, runs)?;
    let staging = staging::Staging::beside(dir)?;
    let counts = write_dataset(&conn, &ids, runs.is_empty(), staging.path())?;
    conn.execute_batch("COMMIT")?;
    let m = serde_json::to_string_pretty(&marker(db_path, &ids, &counts))?;
    let marker_path = staging.path().join(staging::MARKER);
    std::fs::write(&marker_path, m + "\n")
        .with_context(|| format!("cannot write {}", marker_path.display()))?;
    staging.publish()?;
    for (table, rows, files) in counts {
        println!(
            "{}: {rows} rows in {files} files",
            dir.join(table).display()
        );
    }
    Ok(())
}
