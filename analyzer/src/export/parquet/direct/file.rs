//! One phase file into its run's partition of every table, decoded as `import` decodes it and
//! written as the SQLite path writes it (the same builders, writer settings and row order): the
//! windows and passes as they are decoded, the dispatches and counters (which the SQLite path
//! reads sorted by dispatch id) sorted in memory at the end, then the run's row.

use std::collections::HashMap;
use std::fs::File;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use arrow_array::RecordBatch;
use krphase_windows::{CounterReading, PlainDispatch};
use parquet::arrow::ArrowWriter;
use rusqlite::types::ValueRef;

use super::cells::{
    CounterCells, CounterGet, DispatchCells, DispatchGet, PassCells, PassGet, RunCells,
    WindowCells, WindowGet, counter_getter, dispatch_getter, pass_getter, run_value, window_getter,
};
use crate::db;
use crate::export::parquet::batches::{BATCH_ROWS, Batcher, schema};
use crate::export::parquet::tables::{
    COUNTERS, DISPATCHES, MEASUREMENTS, PASSES, RUNS, RunContext, TABLES, Table, WINDOWS,
};
use crate::import::krp::{Row, decode_file};

/// What one file wrote: its content hash and rows per table (in [`TABLES`] order).
pub struct Written {
    pub hash: String,
    pub rows: Vec<u64>,
}

/// One partition file being written.
struct Part {
    path: PathBuf,
    writer: ArrowWriter<File>,
    batcher: Batcher,
    rows: u64,
}

impl Part {
    fn open(root: &Path, table: &Table, run: i64, ctx: &RunContext) -> Result<Part> {
        let dir = root.join(table.name).join(format!("run={run}"));
        std::fs::create_dir_all(&dir)
            .with_context(|| format!("cannot create {}", dir.display()))?;
        let path = dir.join("part-0.parquet");
        let f = File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        let options = crate::export::parquet::writer_options(table);
        Ok(Part {
            writer: ArrowWriter::try_new_with_options(f, schema(table), options)?,
            batcher: Batcher::new(table, ctx, BATCH_ROWS),
            path,
            rows: 0,
        })
    }

    fn write(&mut self, b: Option<RecordBatch>) -> Result<()> {
        if let Some(b) = b {
            self.writer
                .write(&b)
                .with_context(|| format!("cannot write {}", self.path.display()))?;
        }
        Ok(())
    }

    /// One row: `value(i)` for each of the batcher's columns.
    fn row<'v>(&mut self, mut value: impl FnMut(usize) -> ValueRef<'v>) -> Result<()> {
        for i in 0..self.batcher.columns().len() {
            self.batcher.push(i, value(i))?;
        }
        self.rows += 1;
        let full = self.batcher.end_row()?;
        self.write(full)
    }

    /// Writes the last batch and the footer; the rows written.
    fn close(self) -> Result<u64> {
        let Part {
            path,
            mut writer,
            batcher,
            rows,
        } = self;
        if let Some(b) = batcher.finish()? {
            writer
                .write(&b)
                .with_context(|| format!("cannot write {}", path.display()))?;
        }
        writer
            .close()
            .with_context(|| format!("cannot write {}", path.display()))?;
        Ok(rows)
    }
}

/// The getters of a table's read columns, by name.
fn getters<G>(t: &Table, of: impl Fn(&str) -> Result<G>) -> Result<Vec<G>> {
    t.columns
        .iter()
        .filter(|c| c.sql.is_some())
        .map(|c| of(c.name))
        .collect()
}

/// What a file's rows go into while it is decoded.
struct Sink {
    ctx: RunContext,
    windows: Part,
    passes: Part,
    window_get: Vec<WindowGet>,
    pass_get: Vec<PassGet>,
    /// The view's figures of the current window (reused).
    scratch: db::phases::WindowRow,
    /// Kernel names as shown, by raw name.
    names: HashMap<String, String>,
    /// Windows so far; the last window's id by dispatch id (a stray counter's window).
    windows_seen: i64,
    window_of: HashMap<i64, i64>,
    dispatches: Vec<PlainDispatch>,
    counters: Vec<(Option<i64>, CounterReading)>,
}

fn shown<'n>(names: &'n mut HashMap<String, String>, raw: Option<&str>) -> Option<&'n str> {
    let raw = raw?;
    if !names.contains_key(raw) {
        names.insert(raw.to_string(), db::kernel_names::shown(raw));
    }
    names.get(raw).map(String::as_str)
}

impl Sink {
    fn open(root: &Path, run: i64, h: &krphase_format::Header) -> Result<Sink> {
        let ctx = RunContext {
            label: None,
            hostname: Some(h.hostname.clone()),
            rank: h.rank.as_ref().map(|r| r.rank as i32),
        };
        Ok(Sink {
            windows: Part::open(root, &WINDOWS, run, &ctx)?,
            passes: Part::open(root, &PASSES, run, &ctx)?,
            window_get: WINDOWS
                .columns
                .iter()
                .filter(|c| c.sql.is_some())
                .map(window_getter)
                .collect::<Result<_>>()?,
            pass_get: getters(&PASSES, pass_getter)?,
            ctx,
            scratch: db::phases::WindowRow::default(),
            names: HashMap::new(),
            windows_seen: 0,
            window_of: HashMap::new(),
            dispatches: Vec::new(),
            counters: Vec::new(),
        })
    }

    fn row(&mut self, r: &Row) -> Result<()> {
        match r {
            Row::Window(w, counters) => {
                self.windows_seen += 1;
                let id = self.windows_seen;
                db::summary::fill(&w.fresh(), &mut self.scratch);
                let cells = WindowCells {
                    id,
                    w,
                    v: &self.scratch,
                    kernel: shown(&mut self.names, w.kernel.as_deref()),
                };
                let get = &self.window_get;
                self.windows.row(|i| cells.get(get[i]))?;
                for p in &w.passes {
                    let c = PassCells {
                        window_id: id,
                        w,
                        p,
                    };
                    let get = &self.pass_get;
                    self.passes.row(|i| get[i](&c))?;
                }
                self.window_of.insert(w.dispatch_id, id);
                self.counters
                    .extend(counters.iter().map(|c| (Some(id), c.clone())));
            }
            Row::Plain(p) => self.dispatches.push(p.clone()),
            Row::Counter(c) => {
                let w = self.window_of.get(&(c.dispatch_id as i64)).copied();
                self.counters.push((w, c.clone()));
            }
        }
        Ok(())
    }
}

/// The rows a file's decoding left for the end: its dispatches and its counters.
struct Rest {
    ctx: RunContext,
    names: HashMap<String, String>,
    dispatches: Vec<PlainDispatch>,
    counters: Vec<(Option<i64>, CounterReading)>,
}

/// Writes the run's dispatches (sorted by dispatch id, ids in decoding order as the database
/// numbers them) and counters (sorted as the SQLite path reads them).
fn write_sorted(root: &Path, run: i64, r: &mut Rest) -> Result<(u64, u64)> {
    let mut part = Part::open(root, &DISPATCHES, run, &r.ctx)?;
    let get: Vec<DispatchGet> = getters(&DISPATCHES, dispatch_getter)?;
    let mut order: Vec<usize> = (0..r.dispatches.len()).collect();
    order.sort_by_key(|&k| r.dispatches[k].dispatch_id);
    for k in order {
        let d = &r.dispatches[k];
        let c = DispatchCells {
            id: k as i64 + 1,
            d,
            kernel: shown(&mut r.names, d.kernel_name.as_deref()),
        };
        part.row(|i| get[i](&c))?;
    }
    let dispatches = part.close()?;
    let mut part = Part::open(root, &COUNTERS, run, &r.ctx)?;
    let get: Vec<CounterGet> = getters(&COUNTERS, counter_getter)?;
    r.counters
        .sort_by_key(|(_, c)| (c.dispatch_id, c.pass, c.counter));
    for (w, c) in &r.counters {
        let cells = CounterCells { window_id: *w, c };
        part.row(|i| get[i](&cells))?;
    }
    Ok((dispatches, part.close()?))
}

/// The run's one row, from what its file says.
fn write_run(root: &Path, run: i64, ctx: &RunContext, cells: &RunCells<'_>) -> Result<u64> {
    let mut part = Part::open(root, &RUNS, run, ctx)?;
    let values = part
        .batcher
        .columns()
        .iter()
        .map(|c| run_value(c.name, cells))
        .collect::<Result<Vec<_>>>()?;
    part.row(|i| ValueRef::from(&values[i]))?;
    part.close()
}

/// Converts the phase file `path` into run `run`'s partitions under `root`. `made_at` is the
/// runs table's `imported_at`.
pub fn convert(path: &Path, run: i64, root: &Path, made_at: &str) -> Result<Written> {
    let (sink, hash, facts) = decode_file(
        path,
        |h| Sink::open(root, run, h),
        |sink, r| sink.row(r).with_context(|| format!("{}", path.display())),
    )?;
    let Sink {
        ctx,
        windows,
        passes,
        names,
        dispatches,
        counters,
        ..
    } = sink;
    let windows = windows.close()?;
    let passes = passes.close()?;
    let mut rest = Rest {
        ctx,
        names,
        dispatches,
        counters,
    };
    let (dispatches, counters) = write_sorted(root, run, &mut rest)?;
    // Phase files carry no whole-run measurement: an empty partition, as for such a run.
    let measurements = Part::open(root, &MEASUREMENTS, run, &rest.ctx)?.close()?;
    let path_text = path.display().to_string();
    let cells = RunCells {
        path: &path_text,
        hash: &hash,
        facts: &facts,
        made_at,
    };
    let runs = write_run(root, run, &rest.ctx, &cells)?;
    let by_name = |n: &str| match n {
        "runs" => runs,
        "windows" => windows,
        "passes" => passes,
        "dispatches" => dispatches,
        "measurements" => measurements,
        _ => counters,
    };
    Ok(Written {
        hash,
        rows: TABLES.iter().map(|t| by_name(t.name)).collect(),
    })
}
