//! The import benchmark's reference: a bare rusqlite program that inserts the rows an import
//! stored, already in memory, into a fresh database with the same schema and the same settings,
//! in one transaction with one cached statement per table. No file read, no hash, no decoding,
//! no window reconstruction, no summary building: what any importer of these rows must pay.

use std::path::Path;
use std::time::Instant;

use krphase_analyzer::db;
use krphase_analyzer::import::krp::IMPORT_PRAGMAS;
use rusqlite::types::Value;
use rusqlite::{Connection, TransactionBehavior, params_from_iter};

/// One table's rows, as stored.
pub struct TableRows {
    name: String,
    columns: Vec<String>,
    rows: Vec<Vec<Value>>,
}

/// Every row of every krphase table in `db` that holds any, in the order the tables were
/// created (which is an order their foreign keys allow). The schema's own bookkeeping table is
/// left out: a fresh database writes its own.
pub fn load(db: &Path) -> Vec<TableRows> {
    let c = Connection::open(db).expect("open imported database");
    let names: Vec<String> = c
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'
               AND name != 'krphase_schema_version' ORDER BY rowid",
        )
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .expect("list tables");
    names
        .into_iter()
        .map(|name| table(&c, name))
        .filter(|t| !t.rows.is_empty())
        .collect()
}

fn table(c: &Connection, name: String) -> TableRows {
    let mut s = c
        .prepare(&format!("SELECT * FROM \"{name}\""))
        .expect("select");
    let columns: Vec<String> = s.column_names().iter().map(|c| c.to_string()).collect();
    let n = columns.len();
    let rows = s
        .query_map([], |r| (0..n).map(|i| r.get::<_, Value>(i)).collect())
        .and_then(Iterator::collect)
        .expect("rows");
    TableRows {
        name,
        columns,
        rows,
    }
}

/// Rows in all tables.
pub fn count(tables: &[TableRows]) -> usize {
    tables.iter().map(|t| t.rows.len()).sum()
}

/// Creates `db` with krphase's schema and inserts `tables` into it as an import would (the
/// same settings, one immediate transaction); returns the wall seconds from open to commit.
pub fn insert(db: &Path, tables: &[TableRows]) -> f64 {
    let t = Instant::now();
    let mut c = db::open(db).expect("create database");
    c.execute_batch(IMPORT_PRAGMAS).expect("settings");
    let tx = c
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .expect("begin");
    for t in tables {
        let cols: Vec<String> = t.columns.iter().map(|c| format!("\"{c}\"")).collect();
        let marks = vec!["?"; cols.len()].join(", ");
        let sql = format!(
            "INSERT INTO \"{}\" ({}) VALUES ({marks})",
            t.name,
            cols.join(", ")
        );
        let mut s = tx.prepare_cached(&sql).expect("prepare");
        for r in &t.rows {
            s.execute(params_from_iter(r.iter())).expect("insert");
        }
    }
    tx.commit().expect("commit");
    t.elapsed().as_secs_f64()
}
