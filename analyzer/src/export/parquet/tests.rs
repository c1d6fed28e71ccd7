//! The dataset read back with the parquet crate's Arrow reader, cell by cell against the
//! database's own query; record batches cut at any size hold the same rows; a value of the wrong
//! type fails the export with one line naming it and leaves the previous dataset as it was; and
//! `docs/parquet.md` lists every column with its type.

use std::path::{Path, PathBuf};

use arrow_array::cast::AsArray;
use arrow_array::types::{Float64Type, Int32Type, Int64Type};
use arrow_array::{Array, RecordBatch};
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use rusqlite::Connection;
use rusqlite::types::Value;

use super::batches::read_batches;
use super::columns::Kind;
use super::tables::{RunContext, TABLES, Table, UNLINKED_MEASUREMENTS, WINDOWS};
use super::{parquet_command, staging, write_dataset};
use crate::db;
use crate::import::krp::import_phase_file;
use crate::synth::{SynthSpec, write_synthetic_file};

/// Three synthetic runs on three hosts (run 2 labelled; runs 2 and 3 ranks 2 and 1, run 1 no
/// rank), a measurement linked to runs 1 and 3 with its samples,
/// a warm-up link, a measurement linked to none, and counter values on runs 1 and 3 (two passes
/// of every third window, one unnamed; one of a dispatch outside any window).
fn database(dir: &Path) -> PathBuf {
    let p = dir.join("k.db");
    let mut c = db::open(&p).unwrap();
    for i in 0..3u64 {
        let f = dir.join(format!("s{i}.krp"));
        write_synthetic_file(
            &f,
            &SynthSpec {
                windows: 30 + 25 * i,
                passes: 2 + i as u32,
                pid: 300 + i as u32,
                seed: i + 1,
                rank: (i > 0).then(|| krphase_format::Rank {
                    rank: 3 - i as u32,
                    world_size: Some(4),
                    var: "PMI_RANK".into(),
                }),
                hostname: format!("node{i}"),
                ..SynthSpec::default()
            },
        )
        .unwrap();
        import_phase_file(&mut c, &f, (i == 1).then_some("two")).unwrap();
    }
    c.execute_batch(
        "INSERT INTO krphase_measurement (id, source, experiment, variant, mode, median_s, min_s,
            max_s, samples, label, imported_at)
         VALUES (1, 'krphase-bench', 'P1', 'stream', 'kernel', 1.5, 1.25, 2.0, 3, 'base', 'now'),
                (2, 'replay_perf', 'P2', 'saxpy', 'kernel', 0.5, 0.5, 0.5, 1, NULL, 'now');
         INSERT INTO krphase_measurement_sample (measurement_id, seq, value_s)
         VALUES (1, 0, 2.0), (1, 1, 1.25), (1, 2, 1.5);
         INSERT INTO krphase_measurement_run VALUES (1, 1), (1, 3);
         INSERT INTO krphase_measurement_launch VALUES (1, 3, 7);
         INSERT INTO krphase_measurement_warmup VALUES (1, 2);
         INSERT INTO krphase_counter (run_id, window_id, dispatch_id, pass_index, counter_id, name,
             value, instances)
         SELECT run_id, id, dispatch_id, p, 7 + p, CASE p WHEN 0 THEN 'SQ_WAVES' END,
                64.5 * id + p, 4
         FROM krphase_window, (SELECT 0 AS p UNION ALL SELECT 1)
         WHERE run_id IN (1, 3) AND outcome = 'replayed' AND id % 3 = 0;
         INSERT INTO krphase_counter (run_id, window_id, dispatch_id, pass_index, counter_id, name,
             value, instances)
         VALUES (3, NULL, 999999, 0, 7, 'SQ_WAVES', 0.25, 255);",
    )
    .unwrap();
    p
}

/// An Arrow cell as the SQLite value it was read from.
fn cell(a: &dyn Array, kind: Kind, i: usize) -> Value {
    if a.is_null(i) {
        return Value::Null;
    }
    match kind {
        Kind::Int64 => Value::Integer(a.as_primitive::<Int64Type>().value(i)),
        Kind::Int32 => Value::Integer(a.as_primitive::<Int32Type>().value(i).into()),
        Kind::Float64 => Value::Real(a.as_primitive::<Float64Type>().value(i)),
        Kind::Utf8 => Value::Text(a.as_string::<i32>().value(i).to_string()),
        Kind::Bool => Value::Integer(a.as_boolean().value(i).into()),
        Kind::Float64List => {
            let l = a.as_list::<i32>().value(i);
            let v: Vec<f64> = l.as_primitive::<Float64Type>().values().to_vec();
            Value::Text(serde_json::to_string(&v).unwrap())
        }
    }
}

/// The rows of one Parquet file, each cell as a SQLite value (read columns only).
/// The first record batch of the file at `path`.
fn first_batch(path: &Path) -> RecordBatch {
    let f = std::fs::File::open(path).unwrap();
    ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
}

fn file_rows(path: &Path, table: &Table) -> Vec<Vec<Value>> {
    let f = std::fs::File::open(path).unwrap();
    let reader = ParquetRecordBatchReaderBuilder::try_new(f)
        .unwrap()
        .build()
        .unwrap();
    let mut rows = Vec::new();
    for b in reader {
        rows.extend(batch_rows(&b.unwrap(), table));
    }
    rows
}

fn batch_rows(b: &RecordBatch, table: &Table) -> Vec<Vec<Value>> {
    assert_eq!(b.schema(), super::schema(table), "{}", table.name);
    (0..b.num_rows())
        .map(|i| {
            table
                .columns
                .iter()
                .enumerate()
                .filter(|(_, c)| c.sql.is_some())
                .map(|(j, c)| cell(b.column(j).as_ref(), c.kind, i))
                .collect()
        })
        .collect()
}

/// The database's rows of `table` for `run`, through the table's own query.
fn db_rows(c: &Connection, table: &Table, run: i64) -> Vec<Vec<Value>> {
    let mut stmt = c.prepare(&table.select()).unwrap();
    let n = stmt.column_count();
    let range = db::phases::window_range(c, run).unwrap().unwrap_or((1, 0));
    let params: Vec<i64> = match table.params {
        super::tables::Params::None => vec![],
        super::tables::Params::Run => vec![run],
        super::tables::Params::RunWindows => vec![run, range.0, range.1],
    };
    let rows = stmt
        .query_map(rusqlite::params_from_iter(params), |r| {
            (0..n)
                .map(|i| r.get::<_, Value>(i))
                .collect::<rusqlite::Result<Vec<Value>>>()
        })
        .unwrap();
    let kinds: Vec<Kind> = table
        .columns
        .iter()
        .filter(|c| c.sql.is_some())
        .map(|c| c.kind)
        .collect();
    // Booleans are stored as 0/1, doubles may be stored as integers: compare as exported.
    rows.map(|r| {
        r.unwrap()
            .into_iter()
            .zip(&kinds)
            .map(|(v, k)| match (v, k) {
                (Value::Integer(i), Kind::Bool) => Value::Integer((i != 0).into()),
                (Value::Integer(i), Kind::Float64) => Value::Real(i as f64),
                (v, _) => v,
            })
            .collect()
    })
    .collect()
}

#[test]
fn the_dataset_holds_every_value_the_database_does() {
    let dir = tempfile::tempdir().unwrap();
    let p = database(dir.path());
    let c = db::open(&p).unwrap();
    let root = dir.path().join("ds");
    std::fs::create_dir(&root).unwrap();
    let conns = [db::open(&p).unwrap(), db::open(&p).unwrap()];
    let counts = write_dataset(conns, &[1, 2, 3], true, &root).unwrap();
    let windows: i64 = c
        .query_row("SELECT COUNT(*) FROM krphase_window", [], |r| r.get(0))
        .unwrap();
    assert_eq!(counts[1], ("windows", windows as u64, 3));
    // Measurement 1 in runs 1 and 3 (timed) and 2 (warm-up); measurement 2 in the NULL partition.
    assert_eq!(counts[4], ("measurements", 4, 4));
    let counters: i64 = c
        .query_row("SELECT COUNT(*) FROM krphase_counter", [], |r| r.get(0))
        .unwrap();
    assert!(counters > 2, "the database holds counter values");
    assert_eq!(counts[5], ("counters", counters as u64, 3));
    // The counters against the counter table itself (not the export's own query): per run, the
    // values, each in its window and pass, with the counting basis.
    for run in [1, 3] {
        let mut want: Vec<Vec<Value>> = c
            .prepare(
                "SELECT window_id, dispatch_id, pass_index, counter_id, name, value, instances
                 FROM krphase_counter WHERE run_id = ?1",
            )
            .unwrap()
            .query_map([run], |r| (0..7).map(|i| r.get(i)).collect())
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        let path = root.join(format!("counters/run={run}/part-0.parquet"));
        let mut got: Vec<Vec<Value>> = file_rows(&path, &TABLES[5])
            .into_iter()
            .map(|mut r| {
                assert_eq!(r.pop(), Some(Value::Text("sdk_counting".into())));
                r
            })
            .collect();
        let key = |r: &Vec<Value>| format!("{r:?}");
        want.sort_by_key(key);
        got.sort_by_key(key);
        assert!(!want.is_empty());
        assert_eq!(got, want, "counters of run {run}");
    }
    for table in TABLES {
        for run in 1..=3 {
            let path = root.join(format!("{}/run={run}/part-0.parquet", table.name));
            let got = file_rows(&path, table);
            let want = db_rows(&c, table, run);
            assert_eq!(got.len(), want.len(), "{} run {run}", table.name);
            assert_eq!(got, want, "{} run {run}", table.name);
        }
    }
    let unlinked = root.join("measurements/run=__HIVE_DEFAULT_PARTITION__/part-0.parquet");
    let rows = file_rows(&unlinked, &UNLINKED_MEASUREMENTS);
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0][0], Value::Integer(2));
    // The samples keep their run order; a CSV's measurement has none (NULL, not empty).
    let m1 = file_rows(&root.join("measurements/run=3/part-0.parquet"), &TABLES[4]);
    assert_eq!(m1[0][13], Value::Text("[2.0,1.25,1.5]".into()));
    assert_eq!(m1[0][2], Value::Integer(7), "the launch");
    assert_eq!(rows[0][13], Value::Null);
    // The run's context is on every window.
    let b = first_batch(&root.join("windows/run=2/part-0.parquet"));
    let label = b.column_by_name("label").unwrap().as_string::<i32>();
    assert!((0..b.num_rows()).all(|i| label.value(i) == "two"));
    let host = b.column_by_name("hostname").unwrap().as_string::<i32>();
    assert!((0..b.num_rows()).all(|i| host.value(i) == "node1"));
    let rank = b
        .column_by_name("rank")
        .unwrap()
        .as_primitive::<Int32Type>();
    assert!((0..b.num_rows()).all(|i| rank.value(i) == 2));
    let b = first_batch(&root.join("passes/run=1/part-0.parquet"));
    let rank = b.column_by_name("rank").unwrap();
    assert_eq!(rank.null_count(), b.num_rows(), "run 1 has no rank");
}

#[test]
fn batches_of_any_size_hold_the_same_rows() {
    let dir = tempfile::tempdir().unwrap();
    let c = db::open(database(dir.path())).unwrap();
    let sql = WINDOWS.select();
    let range = db::phases::window_range(&c, 3).unwrap();
    let read = |size: usize| {
        let mut batches = Vec::new();
        read_batches(
            &c,
            &WINDOWS,
            &sql,
            3,
            range,
            &RunContext::default(),
            size,
            |b| {
                batches.push(b);
                Ok(())
            },
        )
        .unwrap();
        batches
    };
    let whole = read(1 << 20);
    assert_eq!(whole.len(), 1);
    let cut = read(7);
    let n = whole[0].num_rows();
    assert_eq!(cut.len(), n.div_ceil(7));
    assert!(cut.iter().all(|b| b.num_rows() <= 7));
    let rows: Vec<Vec<Value>> = cut.iter().flat_map(|b| batch_rows(b, &WINDOWS)).collect();
    assert_eq!(rows, batch_rows(&whole[0], &WINDOWS));
    // A run without windows still gets a file's schema: one empty batch.
    let mut empty = Vec::new();
    read_batches(
        &c,
        &WINDOWS,
        &sql,
        9,
        None,
        &RunContext::default(),
        7,
        |b| {
            empty.push(b.num_rows());
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(empty, [0]);
}

#[test]
fn a_bad_value_fails_the_export_and_keeps_the_old_dataset() {
    let dir = tempfile::tempdir().unwrap();
    let db_path = database(dir.path());
    let ds = dir.path().join("ds");
    parquet_command(&db_path, &[], &ds).unwrap();
    let before = std::fs::read_to_string(ds.join(staging::MARKER)).unwrap();
    db::open(&db_path)
        .unwrap()
        .execute(
            "UPDATE krphase_window SET kernel_id = 'not a number' WHERE run_id = 2",
            [],
        )
        .unwrap();
    let err = parquet_command(&db_path, &[], &ds).unwrap_err();
    let line = format!("{err:#}");
    assert_eq!(line.lines().count(), 1, "{line}");
    assert!(line.contains("run 2: windows.kernel_id"), "{line}");
    assert_eq!(
        std::fs::read_to_string(ds.join(staging::MARKER)).unwrap(),
        before
    );
    let mut left: Vec<String> = std::fs::read_dir(dir.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with('.'))
        .collect();
    left.sort();
    assert!(left.is_empty(), "{left:?}");
}

/// The documentation's table of `table`'s columns, as `docs/parquet.md` must hold it.
fn doc_table(table: &Table) -> String {
    let mut s = format!(
        "### {}\n\n{}.\n\n| Column | Type | Meaning |\n|---|---|---|\n",
        table.name, table.doc
    );
    for c in table.columns {
        let null = if c.nullable { "" } else { ", not null" };
        s += &format!(
            "| `{}` | {}{null} | {} |\n",
            c.name,
            c.kind.doc_name(),
            c.doc.replace('|', "\\|")
        );
    }
    s
}

#[test]
fn the_docs_list_every_column_with_its_type() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/parquet.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_default();
    let missing: Vec<String> = TABLES
        .iter()
        .map(doc_table)
        .filter(|want| !doc.contains(want.as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "{} lacks (or differs from) these tables' columns; it should hold:\n\n{}",
        path.display(),
        missing.join("\n")
    );
}
