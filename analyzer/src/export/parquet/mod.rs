//! `krphase export parquet`: the database as a Parquet dataset that DuckDB, Spark or pandas query
//! across thousands of runs (one per rank). Each table ([`tables::TABLES`]) is a directory
//! hive-partitioned by run, `DIR/windows/run=ID/part-0.parquet`; the per-run tables repeat the
//! run's label, hostname and rank on every row, so a cross-rank query needs no join. One thread
//! reads the database a record batch at a time while another encodes and writes the files
//! (Snappy-compressed), two such pairs at once (the windows and the passes, the largest tables,
//! on different readers), so memory holds a few batches and row groups, never a table. The dataset
//! is written beside `DIR` and renamed into place ([`staging`]). [`direct`] writes the same dataset
//! straight from phase files, one worker per file, with no database in between.

mod batches;
mod columns;
mod direct;
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
use parquet::arrow::arrow_writer::ArrowWriterOptions;
use parquet::basic::{Compression, Encoding};
use parquet::file::properties::WriterProperties;
use parquet::schema::types::ColumnPath;
use rusqlite::{Connection, OptionalExtension};

pub use batches::{BATCH_ROWS, schema};
pub use columns::{Column, Kind};
pub use direct::parquet_from_command;
use tables::{RunContext, Table};

use crate::db;

/// The dataset layout's version, in [`staging::MARKER`]; a change of a column's name, type or
/// meaning bumps it.
pub const DATASET_VERSION: u32 = 2;

/// Rows of a Parquet row group: a few batches, so the writer's buffer stays bounded.
const ROW_GROUP_ROWS: usize = 4 * BATCH_ROWS;

/// Hive's name for the partition of a NULL key (measurements linked to no run).
const NULL_PARTITION: &str = "__HIVE_DEFAULT_PARTITION__";

/// What the writer thread is told.
enum Msg {
    Open(PathBuf, SchemaRef, Box<ArrowWriterOptions>),
    Batch(RecordBatch),
    Close,
}

/// How `table` is written: Snappy pages, bounded row groups; names dictionary-encoded (a few
/// distinct kernels, outcomes and bases a run), integers delta-encoded without a dictionary
/// (timestamps and ids are nearly all distinct and ascending: a dictionary would only be built to
/// be dropped, and deltas of ascending stamps pack into a few bits). Without the Arrow schema in
/// the footer (`ARROW:schema`): the Parquet schema says every type the tables use, and that copy
/// was about 3 KB of a run's 100-window file (a third of the windows file).
pub(crate) fn writer_options(table: &Table) -> ArrowWriterOptions {
    ArrowWriterOptions::new()
        .with_properties(writer_properties(table))
        .with_skip_arrow_metadata(true)
}

fn writer_properties(table: &Table) -> WriterProperties {
    let mut b = WriterProperties::builder()
        .set_compression(Compression::SNAPPY)
        .set_max_row_group_row_count(Some(ROW_GROUP_ROWS))
        .set_created_by(format!("krphase {}", env!("CARGO_PKG_VERSION")));
    for c in table.columns {
        if matches!(c.kind, Kind::Int64 | Kind::Int32) {
            let path = ColumnPath::from(c.name);
            b = b
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_encoding(path, Encoding::DELTA_BINARY_PACKED);
        }
    }
    b.build()
}

/// The writer thread: one file at a time, each complete (footer written, flushed) when closed.
fn write_files(rx: Receiver<Msg>) -> Result<()> {
    let mut open: Option<(PathBuf, ArrowWriter<File>)> = None;
    for msg in rx {
        match msg {
            Msg::Open(path, schema, options) => {
                let f = File::create(&path)
                    .with_context(|| format!("cannot create {}", path.display()))?;
                open = Some((
                    path,
                    ArrowWriter::try_new_with_options(f, schema, *options)?,
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
        self.send(Msg::Open(
            dir.join("part-0.parquet"),
            schema(table),
            Box::new(writer_options(table)),
        ))?;
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

fn run_context(conn: &Connection, run: i64) -> Result<RunContext> {
    conn.query_row(
        "SELECT label, host, rank FROM krphase_run WHERE id = ?1",
        [run],
        |r| {
            Ok(RunContext {
                label: r.get(0)?,
                hostname: r.get(1)?,
                rank: r.get(2)?,
            })
        },
    )
    .optional()?
    .with_context(|| format!("unknown run id {run}"))
}

/// What was written: rows and files per table, in [`tables::TABLES`] order.
pub type Counts = Vec<(&'static str, u64, u64)>;

/// The tables each of the two readers writes, as indexes into [`tables::TABLES`]: the windows
/// beside the small tables, the passes beside the dispatches and counters (about half the cells
/// each).
const GROUPS: [&[usize]; 2] = [&[0, 1, 4], &[2, 3, 5]];

/// Rows and files per table.
type Tally = BTreeMap<&'static str, (u64, u64)>;

/// One reader's share of the dataset: `group`'s tables of every run, read on `conn` and written
/// by a writer thread of its own.
fn write_group(
    conn: &Connection,
    group: &[usize],
    runs: &[i64],
    all: bool,
    root: &Path,
) -> Result<Tally> {
    let tables: Vec<&Table> = group.iter().map(|&i| &tables::TABLES[i]).collect();
    let sqls: Vec<String> = tables.iter().map(|t| t.select()).collect();
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
                let ctx = run_context(conn, run)?;
                let windows = db::phases::window_range(conn, run)?;
                for (t, sql) in tables.iter().zip(&sqls) {
                    feeder.partition(t, sql, Some(run), windows, &ctx)?;
                }
            }
            let t = tables::UNLINKED_MEASUREMENTS;
            if all && tables.iter().any(|g| g.name == t.name) {
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
        Ok(counts)
    })
}

/// Writes the dataset of `runs` into `root` (an empty directory), two readers at once, each on
/// its own connection (which must see the same snapshot: each in a read transaction begun before
/// either reads). With `all`, measurements linked to no run go into the NULL partition.
pub fn write_dataset(
    conns: [Connection; 2],
    runs: &[i64],
    all: bool,
    root: &Path,
) -> Result<Counts> {
    let tallies: Vec<Result<Tally>> = std::thread::scope(|s| {
        let readers: Vec<_> = conns
            .into_iter()
            .zip(GROUPS)
            .map(|(conn, group)| s.spawn(move || write_group(&conn, group, runs, all, root)))
            .collect();
        readers
            .into_iter()
            .map(|r| r.join().expect("a reader thread does not panic"))
            .collect()
    });
    let mut counts = Tally::new();
    for t in tallies {
        counts.extend(t?);
    }
    Ok(tables::TABLES
        .iter()
        .map(|t| {
            let (rows, files) = counts.get(t.name).copied().unwrap_or_default();
            (t.name, rows, files)
        })
        .collect())
}

/// A connection to `db_path` in a read transaction holding the database's shared lock: no
/// import can commit until every reader is done, so all of them read one snapshot.
fn reader(db_path: &Path) -> Result<Connection> {
    let conn = db::open_existing(db_path)?;
    conn.execute_batch("BEGIN DEFERRED")?;
    conn.query_row("SELECT COUNT(*) FROM krphase_run", [], |r| {
        r.get::<_, i64>(0)
    })?;
    Ok(conn)
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
    let conn = reader(db_path)?;
    let ids = db::runs::select_all(&conn, runs)?;
    let staging = staging::Staging::beside(dir)?;
    let conns = [conn, reader(db_path)?];
    let counts = write_dataset(conns, &ids, runs.is_empty(), staging.path())?;
    publish(staging, &marker(db_path, &ids, &counts), &counts, dir)
}

/// Writes the dataset's marker into `staging`, puts the dataset in place at `dir` and prints one
/// line per table: the last step of both paths (from the database, and `--from` phase files).
fn publish(
    staging: staging::Staging,
    marker: &serde_json::Value,
    counts: &Counts,
    dir: &Path,
) -> Result<()> {
    let m = serde_json::to_string_pretty(marker)?;
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
