//! One table of one run, from SQLite rows to Arrow record batches of at most [`BATCH_ROWS`] rows:
//! a batch is handed on as soon as it is full, so memory holds a batch, never the table.

use std::sync::Arc;

use anyhow::{Context, Result, bail};
use arrow_array::builder::{
    BooleanBuilder, Float64Builder, Int32Builder, Int64Builder, ListBuilder, StringBuilder,
};
use arrow_array::{ArrayRef, Int32Array, RecordBatch, StringArray};
use arrow_schema::{Field, Schema, SchemaRef};
use rusqlite::types::ValueRef;

use super::columns::{Column, Kind};
use super::tables::{Params, RunContext, Table};

/// Rows a record batch holds.
pub const BATCH_ROWS: usize = 64 * 1024;

/// The Arrow schema of a table.
pub fn schema(table: &Table) -> SchemaRef {
    let fields: Vec<Field> = table.columns.iter().map(Column::field).collect();
    Arc::new(Schema::new(fields))
}

/// An Arrow builder for one column read from the database.
enum Builder {
    Int64(Int64Builder),
    Int32(Int32Builder),
    Float64(Float64Builder),
    Utf8(StringBuilder),
    Bool(BooleanBuilder),
    List(ListBuilder<Float64Builder>),
}

/// Rows a builder has room for at first; it grows as rows come (and starts empty again after each
/// batch). A run of 100 windows, one phase file of a cluster job, fills a few hundred rows a
/// table: room for a whole batch in each of its ~130 columns was ~70 MB allocated and freed per
/// file (without it, and without the footer's Arrow schema, `--from` over 200 such files took
/// 1,427 page faults instead of 7,038).
const FIRST_ROWS: usize = 1024;

impl Builder {
    fn new(kind: Kind) -> Builder {
        match kind {
            Kind::Int64 => Builder::Int64(Int64Builder::with_capacity(FIRST_ROWS)),
            Kind::Int32 => Builder::Int32(Int32Builder::with_capacity(FIRST_ROWS)),
            Kind::Float64 => Builder::Float64(Float64Builder::with_capacity(FIRST_ROWS)),
            Kind::Utf8 => Builder::Utf8(StringBuilder::with_capacity(FIRST_ROWS, FIRST_ROWS * 16)),
            Kind::Bool => Builder::Bool(BooleanBuilder::with_capacity(FIRST_ROWS)),
            Kind::Float64List => Builder::List(ListBuilder::new(Float64Builder::new()).with_field(
                Arc::new(Field::new("item", arrow_schema::DataType::Float64, false)),
            )),
        }
    }

    /// Appends one database value; a value of another type than the column's is an error.
    fn push(&mut self, v: ValueRef<'_>) -> Result<()> {
        match (self, v) {
            (Builder::Int64(b), ValueRef::Null) => b.append_null(),
            (Builder::Int32(b), ValueRef::Null) => b.append_null(),
            (Builder::Float64(b), ValueRef::Null) => b.append_null(),
            (Builder::Utf8(b), ValueRef::Null) => b.append_null(),
            (Builder::Bool(b), ValueRef::Null) => b.append_null(),
            (Builder::List(b), ValueRef::Null) => b.append_null(),
            (Builder::Int64(b), ValueRef::Integer(i)) => b.append_value(i),
            (Builder::Int32(b), ValueRef::Integer(i)) => {
                b.append_value(i32::try_from(i).with_context(|| format!("{i} exceeds Int32"))?);
            }
            (Builder::Float64(b), ValueRef::Real(f)) => b.append_value(f),
            (Builder::Float64(b), ValueRef::Integer(i)) => b.append_value(i as f64),
            (Builder::Utf8(b), ValueRef::Text(t)) => b.append_value(std::str::from_utf8(t)?),
            (Builder::Bool(b), ValueRef::Integer(i)) => b.append_value(i != 0),
            (Builder::List(b), ValueRef::Text(t)) => {
                let values: Vec<f64> = serde_json::from_slice(t)?;
                b.values().append_slice(&values);
                b.append(true);
            }
            (_, other) => bail!("unexpected {:?} value", other.data_type()),
        }
        Ok(())
    }

    fn finish(&mut self) -> ArrayRef {
        match self {
            Builder::Int64(b) => Arc::new(b.finish()),
            Builder::Int32(b) => Arc::new(b.finish()),
            Builder::Float64(b) => Arc::new(b.finish()),
            Builder::Utf8(b) => Arc::new(b.finish()),
            Builder::Bool(b) => Arc::new(b.finish()),
            Builder::List(b) => Arc::new(b.finish()),
        }
    }
}

/// The run context's column as an array of `rows` copies of its value.
fn context_array(name: &str, ctx: &RunContext, rows: usize) -> Result<ArrayRef> {
    Ok(match name {
        "label" => Arc::new(StringArray::from(vec![ctx.label.as_deref(); rows])),
        "hostname" => Arc::new(StringArray::from(vec![ctx.hostname.as_deref(); rows])),
        "rank" => Arc::new(Int32Array::from(vec![ctx.rank; rows])),
        _ => bail!("no run context column {name}"),
    })
}

/// Rows of one table turned into record batches of at most `batch_rows` rows: the database's
/// rows ([`read_batches`]) and a phase file's ([`super::direct`]) go through the same builders, so
/// both give the same types and the same refusals.
pub struct Batcher {
    table: Table,
    ctx: RunContext,
    schema: SchemaRef,
    /// The columns values are pushed for (those read from a row; the run's context is filled).
    read: Vec<&'static Column>,
    builders: Vec<Builder>,
    rows: usize,
    batch_rows: usize,
    emitted: bool,
}

impl Batcher {
    pub fn new(table: &Table, ctx: &RunContext, batch_rows: usize) -> Batcher {
        let read: Vec<&'static Column> = table.columns.iter().filter(|c| c.sql.is_some()).collect();
        Batcher {
            table: *table,
            ctx: ctx.clone(),
            schema: schema(table),
            builders: read.iter().map(|c| Builder::new(c.kind)).collect(),
            read,
            rows: 0,
            batch_rows,
            emitted: false,
        }
    }

    /// The columns a row gives values for, in the order [`Batcher::push`] takes them.
    pub fn columns(&self) -> &[&'static Column] {
        &self.read
    }

    /// Appends the value of column `i` (of [`Batcher::columns`]) of the current row.
    pub fn push(&mut self, i: usize, v: ValueRef<'_>) -> Result<()> {
        self.builders[i]
            .push(v)
            .with_context(|| format!("{}.{}", self.table.name, self.read[i].name))
    }

    fn batch(&mut self) -> Result<RecordBatch> {
        let mut fed = self.builders.iter_mut();
        let arrays = self
            .table
            .columns
            .iter()
            .map(|c| match c.sql {
                Some(_) => Ok(fed.next().expect("one builder a read column").finish()),
                None => context_array(c.name, &self.ctx, self.rows),
            })
            .collect::<Result<Vec<_>>>()?;
        self.rows = 0;
        Ok(RecordBatch::try_new(self.schema.clone(), arrays)?)
    }

    /// Ends the current row; a full batch when it completed one.
    pub fn end_row(&mut self) -> Result<Option<RecordBatch>> {
        self.rows += 1;
        if self.rows < self.batch_rows {
            return Ok(None);
        }
        self.emitted = true;
        self.batch().map(Some)
    }

    /// The last, partial batch; an empty one only when no batch went before (so every file
    /// carries the schema).
    pub fn finish(mut self) -> Result<Option<RecordBatch>> {
        if self.rows > 0 || !self.emitted {
            return self.batch().map(Some);
        }
        Ok(None)
    }
}

/// Reads `table`'s rows of run `run_id` (all of them for a table without parameters) and hands
/// `emit` one record batch per `batch_rows` rows ([`BATCH_ROWS`] but in tests), then the rest (an
/// empty batch when the run has no rows, so every file carries the schema). `windows` is the
/// run's window id range.
#[allow(clippy::too_many_arguments)] // the query's inputs, each needed
pub fn read_batches(
    conn: &rusqlite::Connection,
    table: &Table,
    sql: &str,
    run_id: i64,
    windows: Option<(i64, i64)>,
    ctx: &RunContext,
    batch_rows: usize,
    mut emit: impl FnMut(RecordBatch) -> Result<()>,
) -> Result<()> {
    let mut b = Batcher::new(table, ctx, batch_rows);
    let mut stmt = conn
        .prepare_cached(sql)
        .with_context(|| format!("cannot read table {}", table.name))?;
    let mut rows = match (table.params, windows) {
        (Params::None, _) => stmt.query([])?,
        (Params::Run, _) => stmt.query([run_id])?,
        (Params::RunWindows, Some((lo, hi))) => stmt.query([run_id, lo, hi])?,
        // A run without windows has no passes either.
        (Params::RunWindows, None) => return b.finish()?.map_or(Ok(()), emit),
    };
    let n = b.columns().len();
    while let Some(r) = rows.next()? {
        for i in 0..n {
            b.push(i, r.get_ref(i)?)
                .with_context(|| format!("run {run_id}"))?;
        }
        if let Some(batch) = b.end_row()? {
            emit(batch)?;
        }
    }
    b.finish()?.map_or(Ok(()), emit)
}
