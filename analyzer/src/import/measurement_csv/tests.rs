use super::*;

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/fixtures/bench")
        .join(name)
}

fn row(variant: &str, timing: Option<Timing>) -> MeasurementRow {
    MeasurementRow {
        experiment: "P1".into(),
        variant: variant.into(),
        mode: CollectionMode::KernelReplay,
        detail: "3 groups, one run".into(),
        samples: if timing.is_some() { 2 } else { 0 },
        failures: if timing.is_some() {
            Failures::Count(0)
        } else {
            Failures::All
        },
        timing,
        command: "rocprofv3 --pmc A B -d out/p1-replay -o out -- app 1".into(),
    }
}

const T: Timing = Timing {
    median_s: 1.0,
    min_s: 0.5,
    max_s: 2.25,
    peak_child_rss_kib: 1234,
};

#[test]
fn written_file_has_a_stable_column_set_and_round_trips() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.csv");
    let rows = vec![row("replay-all-groups", Some(T)), row("failed", None)];
    assert!(write_csv(&p, &rows).unwrap());
    let text = std::fs::read_to_string(&p).unwrap();
    assert_eq!(text.lines().next().unwrap(), COLUMNS.join(","));
    assert!(
        text.contains(",kernel-replay,"),
        "modes are written as given"
    );
    assert!(text.contains(",1.0,0.5,2.25,1234,2,0,"), "{text}");
    assert_eq!(read_csv(&p).unwrap(), rows);
}

#[test]
fn failed_measurement_is_recorded_rather_than_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.csv");
    write_csv(&p, &[row("failed", None)]).unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let mut rdr = csv::Reader::from_reader(text.as_bytes());
    let rec = rdr.records().next().unwrap().unwrap();
    let fields: Vec<&str> = rec.iter().collect();
    assert_eq!(&fields[4..10], &["", "", "", "", "0", "all"]);
}

#[test]
fn row_records_the_command_that_produced_it() {
    let r = row("x", Some(T));
    assert_eq!(csv_fields(&r)[10], r.command);
    assert_eq!(r.output_dir(), Some("out/p1-replay"));
    let derived = MeasurementRow {
        command: "r --pmc A -d w/p1-base-0 -o out -- app ; r --pmc B -d w/p1-base-1 -o out -- app"
            .into(),
        ..r
    };
    assert_eq!(derived.output_dirs(), vec!["w/p1-base-0", "w/p1-base-1"]);
}

#[test]
fn nothing_is_written_when_nothing_was_measured() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("out.csv");
    assert!(!write_csv(&p, &[]).unwrap());
    assert!(!p.exists());
}

#[test]
fn python_float_text() {
    assert_eq!(py_float(1.0), "1.0");
    assert_eq!(py_float(0.25), "0.25");
    assert_eq!(py_float(12.5), "12.5");
}

#[test]
fn reads_the_seed_fixture() {
    let rows = read_csv(&fixture("replay_perf.csv")).unwrap();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0].mode, CollectionMode::SinglePass);
    assert_eq!(rows[1].mode, CollectionMode::Multiplexed);
    assert_eq!(rows[2].failures, Failures::Count(1));
    assert_eq!(rows[3].failures, Failures::All);
    assert_eq!(rows[3].timing, None);
    assert_eq!(rows[0].output_dir(), Some("replay_perf_out/p1-base-0"));
}

#[test]
fn malformed_row_names_its_line() {
    let err = read_csv(&fixture("replay_perf_malformed.csv")).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("line 3"), "{msg}");
    assert!(msg.contains("median_s"), "{msg}");
    assert_eq!(msg.lines().count(), 1, "{msg}");
}

#[test]
fn inconsistent_rows_are_rejected() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("bad.csv");
    let header = COLUMNS.join(",");
    for body in [
        "P1,v,single-pass,d,1.0,1.0,1.0,10,1,all,cmd", // all with timings
        "P1,v,sometimes,d,1.0,1.0,1.0,10,1,0,cmd",     // unknown mode
        "P1,v,single-pass,d,,,,,0,0,cmd",              // count without timings
        "P1,v,single-pass,d,2.0,1.0,1.5,10,1,0,cmd",   // median above max
        "P1,v,single-pass,d,1.0,1.0,1.0,10,1,0",       // 10 fields
    ] {
        std::fs::write(&p, format!("{header}\n{body}\n")).unwrap();
        let err = read_csv(&p).unwrap_err();
        assert!(format!("{err}").contains("line 2"), "{body}: {err}");
    }
    std::fs::write(&p, "a,b,c\n").unwrap();
    assert!(format!("{}", read_csv(&p).unwrap_err()).contains("header"));
}

#[test]
fn import_stores_every_row_and_nothing_for_a_malformed_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut conn = crate::db::open(dir.path().join("k.db")).unwrap();
    let err = import_measurement_csv(&mut conn, &fixture("replay_perf_malformed.csv"), None, None);
    assert!(err.is_err());
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM krphase_measurement", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0);

    let s = import_measurement_csv(
        &mut conn,
        &fixture("replay_perf.csv"),
        Some(dir.path()),
        None,
    )
    .unwrap();
    assert_eq!(s.measurements, 4);
    assert_eq!(s.missing_dirs.len(), 4, "no output directories exist here");
    // Idempotent: a second import replaces rather than duplicates.
    import_measurement_csv(
        &mut conn,
        &fixture("replay_perf.csv"),
        Some(dir.path()),
        None,
    )
    .unwrap();
    let (n, all): (i64, i64) = conn
        .query_row(
            "SELECT COUNT(*), SUM(failures = 'all' AND median_s IS NULL) FROM krphase_measurement",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((n, all), (4, 1));
    let outdir: String = conn
        .query_row(
            "SELECT outdir FROM krphase_measurement WHERE variant = 'replay-all-groups'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        PathBuf::from(outdir),
        dir.path().join("replay_perf_out/p1-replay")
    );
}

/// Errors name the file's own line numbers (1 = the header), whatever the line ending, and
/// after a quoted field that spans lines.
#[test]
fn error_lines_are_the_files_line_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("lines.csv");
    let header = COLUMNS.join(",");
    let good = "P1,v,single-pass,d,1.0,1.0,1.0,10,1,0,cmd";
    let bad = "P1,v,single-pass,d,abc,1.0,1.0,10,1,0,cmd";
    let multi = "P1,v,single-pass,\"two\nlines\",1.0,1.0,1.0,10,1,0,cmd";
    for (body, want) in [
        (format!("{header}\n{good}\n{bad}\n"), "line 3"),
        (
            format!("{header}\r\n{good}\r\n{good}\r\n{bad}\r\n"),
            "line 4",
        ),
        (format!("{header}\n{multi}\n{bad}\n"), "line 4"),
        (format!("{header}\n\n{good}\n{bad}\n"), "line 4"),
    ] {
        std::fs::write(&p, &body).unwrap();
        let err = format!("{}", read_csv(&p).unwrap_err());
        assert!(err.contains(want), "{body:?}: {err}");
    }
}

/// A file cut mid-row (at two thirds of the seed fixture: the last row's command ends early but
/// every field still parses) is refused with the cut line's number, and nothing is stored.
#[test]
fn truncated_file_is_refused_with_its_line_and_nothing_stored() {
    let dir = tempfile::tempdir().unwrap();
    let whole = std::fs::read(fixture("replay_perf.csv")).unwrap();
    let text = String::from_utf8(whole.clone()).unwrap();
    // Cut inside the third data row's command (line 4), after its tenth field.
    let row_start = text.match_indices('\n').nth(2).unwrap().0 + 1;
    let command_at = row_start + text[row_start..].find(",rocprofv3").unwrap() + 1;
    let cut = command_at + 20;
    let p = dir.path().join("cut.csv");
    std::fs::write(&p, &whole[..cut]).unwrap();
    let mut conn = crate::db::open(dir.path().join("k.db")).unwrap();
    let err = import_measurement_csv(&mut conn, &p, Some(dir.path()), None).unwrap_err();
    let msg = format!("{err:#}");
    assert!(msg.contains("line 4") && msg.contains("mid-row"), "{msg}");
    assert_eq!(msg.lines().count(), 1, "{msg}");
    let n: i64 = conn
        .query_row("SELECT COUNT(*) FROM krphase_measurement", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 0, "nothing stored");
    // The whole file still imports.
    std::fs::write(&p, &whole).unwrap();
    assert!(import_measurement_csv(&mut conn, &p, Some(dir.path()), None).is_ok());
}
