//! Import of every format version's golden file (`tests/golden/`), of a newer minor (imported,
//! with a note of what was skipped) and of a newer major or a file breaking a reconstruction
//! limit (refused with the offset, nothing stored).

use std::path::{Path, PathBuf};

use krphase_format::event::Decision;
use krphase_format::{FileWriter, Record};
use rusqlite::Connection;

use super::import_file;
use crate::db;
use crate::synth::{SynthSpec, header};

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/golden")
        .join(name)
}

fn one<T: rusqlite::types::FromSql>(c: &Connection, sql: &str) -> T {
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// (windows, declines, plain dispatches, truncated) of an import.
fn counts(r: &super::Imported) -> (u64, u64, u64, bool) {
    (r.windows, r.declines, r.dispatches, r.truncated)
}

#[test]
fn v2_0_golden_imports_its_continue_stuck_and_indefinite_windows() {
    let mut c = db::open_in_memory().unwrap();
    let r = import_file(&mut c, &golden("v2.0.krp"), None).unwrap();
    assert_eq!(counts(&r), (3, 1, 4, false));
    assert_eq!(r.note, None);
    let run: (i64, i64, Option<String>) = c
        .query_row(
            "SELECT format_version, format_minor, reader_note FROM krphase_run",
            [],
            |x| Ok((x.get(0)?, x.get(1)?, x.get(2)?)),
        )
        .unwrap();
    assert_eq!(run, (2, 0, None));
    // Counter values: two on window 1's passes, one that reached the file after window 2 was
    // emitted, joined to that window by its dispatch id.
    let mut st = c
        .prepare(
            "SELECT w.dispatch_id, k.pass_index, k.name, k.value, k.instances
             FROM krphase_counter k JOIN krphase_window w ON w.id = k.window_id
             ORDER BY w.dispatch_id, k.pass_index",
        )
        .unwrap();
    let counters: Vec<(i64, i64, String, f64, i64)> = st
        .query_map([], |x| {
            Ok((x.get(0)?, x.get(1)?, x.get(2)?, x.get(3)?, x.get(4)?))
        })
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        counters,
        [
            (1, 0, "SQ_WAVES".into(), 4096.0, 1),
            (1, 1, "GRBM_COUNT".into(), 123_456.0, 2),
            (2, 2, "SQ_WAVES".into(), 4096.0, 1),
        ]
    );
    // Continue phases: 140 (window 1), 150 + 150 (the indefinite loop), 120 (the stuck one).
    let cont: Vec<(i64, i64, Option<i64>, Option<i64>)> = c
        .prepare(
            "SELECT dispatch_id, executed_passes, continue_ns, stuck_ns FROM krphase_window WHERE dispatch_id < 4
             ORDER BY dispatch_id",
        )
        .unwrap()
        .query_map([], |x| Ok((x.get(0)?, x.get(1)?, x.get(2)?, x.get(3)?)))
        .unwrap()
        .map(Result::unwrap)
        .collect();
    assert_eq!(
        cont,
        [
            (1, 2, Some(140), None),
            (2, 3, Some(300), None),
            (3, 1, Some(120), Some(15_000 - 13_500))
        ]
    );
    assert_eq!(
        one::<i64>(
            &c,
            "SELECT requested_passes FROM krphase_window WHERE dispatch_id = 2"
        ),
        0
    );
    // Dispatches 6 and 7 share the placement recorded at 6's enqueue (queue 5).
    assert_eq!(
        one::<String>(
            &c,
            "SELECT group_concat(dispatch_id || ':' || queue, ' ') FROM
               (SELECT dispatch_id, queue FROM krphase_dispatch ORDER BY dispatch_id)"
        ),
        "4:3 5:3 6:5 7:5"
    );
}

#[test]
fn v1_0_golden_imports_as_format_1() {
    let mut c = db::open_in_memory().unwrap();
    let r = import_file(&mut c, &golden("small.krp"), None).unwrap();
    assert_eq!(counts(&r), (1, 1, 1, false));
    assert_eq!(
        one::<String>(
            &c,
            "SELECT format_version || '.' || format_minor FROM krphase_run"
        ),
        "1.0"
    );
}

#[test]
fn future_minor_imports_with_a_note_of_what_was_skipped() {
    let mut c = db::open_in_memory().unwrap();
    let r = import_file(&mut c, &golden("v2.1-future-minor.krp"), None).unwrap();
    assert_eq!(counts(&r), (3, 1, 4, false), "everything 2.0 knows");
    let want = "format 2.1 (this reader: 4.0): skipped 1 optional block with tag 200 (16 bytes), \
                2 records of kind 20, 8 header bytes, 2 trailer counters";
    assert_eq!(r.note.as_deref(), Some(want));
    assert_eq!(
        one::<String>(&c, "SELECT reader_note FROM krphase_run"),
        want
    );
    assert_eq!(one::<i64>(&c, "SELECT format_minor FROM krphase_run"), 1);
}

#[test]
fn newer_major_is_refused_and_nothing_is_stored() {
    let mut c = db::open_in_memory().unwrap();
    let e = format!(
        "{:#}",
        import_file(&mut c, &golden("v5.0-newer-major.krp"), None).unwrap_err()
    );
    assert!(
        e.ends_with(
            "v5.0-newer-major.krp: offset 4: written by a newer krphase, format 5.0; upgrade krphase"
        ),
        "{e}"
    );
    assert_eq!(one::<i64>(&c, "SELECT COUNT(*) FROM krphase_run"), 0);
}

#[test]
fn a_reconstruction_limit_is_refused_with_the_records_offset_and_nothing_is_stored() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("passes.krp");
    let head = FileWriter::new(Vec::new(), &header(&SynthSpec::default()))
        .unwrap()
        .into_inner()
        .len() as u64;
    let mut w = FileWriter::new(
        std::fs::File::create(&f).unwrap(),
        &header(&SynthSpec::default()),
    )
    .unwrap();
    // A window whose second pass claims index 2^20 (the tool runs at most 4096).
    w.write_records(&[
        Record::config_enter(7, 1_000, 1, 1, Decision::Replay),
        Record::pass_enter(7, 2_000, 1, 0, 2, 2),
        Record::pass_exit(7, 2_500, 1, 0, 2, 2),
        Record::pass_enter(7, 3_000, 1, 1 << 20, 2, 2),
    ])
    .unwrap();
    w.flush().unwrap();
    drop(w);
    let mut c = db::open_in_memory().unwrap();
    let e = format!("{:#}", import_file(&mut c, &f, None).unwrap_err());
    // The block's frame, the THREAD record (8), CONFIG ENTER (32), then PASS ENTER and EXIT
    // without their dispatch id (24 each).
    let at = head + 12 + 8 + 32 + 2 * 24;
    assert!(
        e.contains(&format!(
            "passes.krp: offset {at}: more than 65536 passes, enqueues, completions or continue calls of one dispatch (dispatch 1)"
        )),
        "{e}"
    );
    assert_eq!(one::<i64>(&c, "SELECT COUNT(*) FROM krphase_run"), 0);
}
