//! What an import stores, cell by cell: every format version's golden file and two synthetic
//! files (one with more passes per window than any multi-row statement ever carried, one with
//! the benchmark's shape) imported into one database, whose every `krphase_*` table is compared
//! with `tests/golden/import-tables.txt` (`KRPHASE_BLESS=1` rewrites it). A change to how
//! import inserts (statements, batching, hashing) must leave this file as it is.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use rusqlite::Connection;
use rusqlite::types::ValueRef;

use super::import_file;
use crate::db;
use crate::synth::{SynthSpec, write_synthetic_file};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel)
}

/// Columns whose value depends on when or from where the import ran, not on the file.
const VOLATILE: &[(&str, &str)] = &[("krphase_run", "imported_at"), ("krphase_run", "path")];

fn cell(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => format!("{f:?}"),
        ValueRef::Text(t) => format!("{:?}", String::from_utf8_lossy(t)),
        // The summary's order statistics: their length and digest keep the file short.
        ValueRef::Blob(b) => format!(
            "blob[{}]:{}",
            b.len(),
            &blake3::hash(b).to_hex().as_str()[..16]
        ),
    }
}

/// Every krphase table (but the schema's bookkeeping) in creation order, each row in the
/// table's storage order (rowid, or the primary key of a table without one).
fn dump(c: &Connection) -> String {
    let tables: Vec<String> = c
        .prepare(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'krphase_%'
               AND name != 'krphase_schema_version' ORDER BY rowid",
        )
        .and_then(|mut s| s.query_map([], |r| r.get(0))?.collect())
        .unwrap();
    let mut out = String::new();
    for t in tables {
        let mut s = c.prepare(&format!("SELECT * FROM \"{t}\"")).unwrap();
        let cols: Vec<String> = s.column_names().iter().map(|c| c.to_string()).collect();
        let keep: Vec<usize> = (0..cols.len())
            .filter(|&k| !VOLATILE.contains(&(t.as_str(), cols[k].as_str())))
            .collect();
        let mut rows = s.query([]).unwrap();
        let mut lines = Vec::new();
        while let Some(r) = rows.next().unwrap() {
            let cells: Vec<String> = keep.iter().map(|&k| cell(r.get_ref(k).unwrap())).collect();
            lines.push(cells.join("\t"));
        }
        if lines.is_empty() {
            continue;
        }
        let names: Vec<&str> = keep.iter().map(|&k| cols[k].as_str()).collect();
        writeln!(out, "## {t} ({} rows)\n{}", lines.len(), names.join("\t")).unwrap();
        for l in lines {
            writeln!(out, "{l}").unwrap();
        }
    }
    out
}

#[test]
fn imported_tables_match_their_golden() {
    let dir = tempfile::tempdir().unwrap();
    let mut files: Vec<PathBuf> = [
        "small.krp",
        "v2.0.krp",
        "v2.1-future-minor.krp",
        "v3.0.krp",
        "v3.1.krp",
        "v4.0.krp",
    ]
    .iter()
    .map(|f| repo("tests/golden").join(f))
    .collect();
    for (name, windows, passes, seed) in [("many-passes.krp", 12, 11, 3), ("bench.krp", 40, 2, 4)] {
        let f = dir.path().join(name);
        let spec = SynthSpec {
            windows,
            passes,
            seed,
            ..SynthSpec::default()
        };
        write_synthetic_file(&f, &spec).unwrap();
        files.push(f);
    }
    let mut c = db::open(dir.path().join("k.db")).unwrap();
    for f in &files {
        import_file(&mut c, f, None).unwrap();
    }
    let got = dump(&c);
    let golden = repo("tests/golden/import-tables.txt");
    if std::env::var_os("KRPHASE_BLESS").is_some() {
        std::fs::write(&golden, &got).unwrap();
    }
    let want = std::fs::read_to_string(&golden)
        .unwrap_or_else(|e| panic!("{}: {e} (bless with KRPHASE_BLESS=1)", golden.display()));
    if got != want {
        let first = got
            .lines()
            .zip(want.lines())
            .position(|(g, w)| g != w)
            .unwrap_or(got.lines().count().min(want.lines().count()));
        panic!(
            "the imported tables differ from {} at line {} (bless with KRPHASE_BLESS=1):\n got: {}\nwant: {}",
            golden.display(),
            first + 1,
            got.lines().nth(first).unwrap_or("(end)"),
            want.lines().nth(first).unwrap_or("(end)")
        );
    }
}
