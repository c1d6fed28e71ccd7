//! Every bad input to the analyzer gets one clear line on stderr and a non-zero exit, and leaves
//! the database byte for byte as it was.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

struct Case {
    dir: PathBuf,
    db: PathBuf,
    good: PathBuf,
}

/// A scratch dir with a database holding one imported synthetic run, and that run's file.
fn setup(name: &str) -> Case {
    let dir = krphase_tests::scratch_dir(name);
    let good = dir.join("good.krp");
    write_synthetic_file(
        &good,
        &SynthSpec {
            windows: 300,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    let db = dir.join("k.db");
    let (ok, _, err) = run(&db, &[OsStr::new("import"), good.as_os_str()]);
    assert!(ok, "{err}");
    Case { dir, db, good }
}

fn run<S: AsRef<OsStr>>(db: &Path, args: &[S]) -> (bool, String, String) {
    let o = krphase_tests::krphase_db(db, args);
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

/// Runs a command that must fail: one stderr line containing every `needles`, db unchanged.
fn must_fail<S: AsRef<OsStr> + std::fmt::Debug>(db: &Path, args: &[S], needles: &[&str]) {
    let digest = |p: &Path| {
        use std::hash::{DefaultHasher, Hash, Hasher};
        std::fs::read(p).ok().map(|b| {
            let mut h = DefaultHasher::new();
            b.hash(&mut h);
            h.finish()
        })
    };
    let before = digest(db);
    let (ok, _, err) = run(db, args);
    assert!(!ok, "{args:?} succeeded");
    assert_eq!(
        err.trim_end().lines().count(),
        1,
        "{args:?}: not one line:\n{err}"
    );
    for n in needles {
        assert!(err.contains(n), "{args:?}: {err:?} lacks {n:?}");
    }
    assert_eq!(digest(db), before, "{args:?} changed the database");
}

fn write_variant(c: &Case, name: &str, edit: impl FnOnce(&mut Vec<u8>)) -> PathBuf {
    let mut bytes = std::fs::read(&c.good).unwrap();
    edit(&mut bytes);
    let p = c.dir.join(name);
    std::fs::write(&p, bytes).unwrap();
    p
}

#[test]
fn bad_phase_files_are_refused() {
    let c = setup("analyzer-bad-files");
    let imp = |p: &Path| [OsStr::new("import").to_owned(), p.as_os_str().to_owned()];
    must_fail(&c.db, &imp(&c.dir.join("missing.krp")), &["missing.krp"]);
    let magic = write_variant(&c, "magic.krp", |b| b[..4].copy_from_slice(b"NOPE"));
    must_fail(&c.db, &imp(&magic), &["magic.krp", "offset 0", "magic"]);
    let version = write_variant(&c, "version.krp", |b| {
        b[4..8].copy_from_slice(&7u32.to_le_bytes())
    });
    must_fail(
        &c.db,
        &imp(&version),
        &["version.krp", "offset 4", "format 7.0; upgrade krphase"],
    );
    let crc = write_variant(&c, "crc.krp", |b| {
        let mid = b.len() / 2;
        b[mid] ^= 0x5a;
    });
    must_fail(&c.db, &imp(&crc), &["crc.krp", "offset", "checksum"]);
    let header_cut = write_variant(&c, "header.krp", |b| b.truncate(20));
    must_fail(&c.db, &imp(&header_cut), &["header.krp", "header"]);
}

#[test]
fn a_file_cut_mid_block_loads_its_complete_blocks_and_is_marked_truncated() {
    let c = setup("analyzer-truncated");
    let cut = write_variant(&c, "cut.krp", |b| {
        let n = b.len() * 3 / 5;
        b.truncate(n);
    });
    let (ok, out, err) = run(&c.db, &[OsStr::new("import"), cut.as_os_str()]);
    assert!(ok, "{err}");
    assert!(out.contains("(truncated)"), "{out}");
    let conn = rusqlite::Connection::open(&c.db).unwrap();
    let (windows, truncated): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM krphase_window w WHERE w.run_id = r.id AND outcome = 'replayed'), truncated
             FROM krphase_run r WHERE path LIKE '%cut.krp'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(truncated, 1);
    assert!(windows > 50 && windows < 300, "{windows} windows");
}

#[test]
fn bad_databases_and_selectors_are_refused() {
    let c = setup("analyzer-bad-db");
    let o = |s: &'static str| OsStr::new(s);
    must_fail(&c.db, &["report", "--run", "99"], &["unknown run id 99"]);
    must_fail(
        &c.db,
        &["report", "--run", "no-such-label"],
        &["no-such-label"],
    );
    must_fail(&c.db, &["compare", "1", "42"], &["unknown run id 42"]);
    must_fail(&c.db, &["export", "perfetto", "42"], &["unknown run id 42"]);
    let log = c.dir.join("stderr.log");
    std::fs::write(&log, "nothing useful\n").unwrap();
    must_fail(
        &c.db,
        &[o("import-log"), log.as_os_str(), o("--run"), o("42")],
        &["unknown run id 42"],
    );
    must_fail(
        &c.db,
        &[o("import-log"), c.dir.join("nolog.txt").as_os_str()],
        &["nolog.txt"],
    );

    // Not SQLite at all.
    let text = c.dir.join("text.db");
    std::fs::write(&text, "this is a text file, not a database; ".repeat(50)).unwrap();
    must_fail(
        &text,
        &["report"],
        &["text.db", "not a usable SQLite database"],
    );
    must_fail(&text, &[o("import"), c.good.as_os_str()], &["text.db"]);
    // SQLite, but someone else's tables.
    let foreign = c.dir.join("foreign.db");
    rusqlite::Connection::open(&foreign)
        .unwrap()
        .execute_batch("CREATE TABLE samples (x INTEGER); INSERT INTO samples VALUES (1);")
        .unwrap();
    must_fail(&foreign, &["report"], &["foreign.db", "krphase tables"]);
    must_fail(
        &foreign,
        &[o("import"), c.good.as_os_str()],
        &["foreign.db", "krphase tables"],
    );
    // No database yet.
    let none = c.dir.join("none.db");
    must_fail(&none, &["report"], &["none.db", "does not exist"]);
    assert!(!none.exists(), "report created a database");
}

/// The names in `dir`, sorted.
fn names_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

fn log_files(db: &Path) -> i64 {
    rusqlite::Connection::open(db)
        .unwrap()
        .query_row("SELECT COUNT(*) FROM krphase_log_file", [], |r| r.get(0))
        .unwrap()
}

/// A PNG, random bytes, an empty file and a text with no kernel-replay line are refused by
/// `import-log` with one line saying why; nothing is stored.
#[test]
fn logs_that_cannot_be_sdk_logs_are_refused() {
    let c = setup("analyzer-bad-logs");
    let o = |s: &'static str| OsStr::new(s);
    let png = c.dir.join("plot.png");
    let mut bytes = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\x01\0\0\0\x01\0\x08\x06\0\0\0".to_vec();
    bytes.extend((0..2000u32).map(|i| (i * 7919 % 251) as u8));
    std::fs::write(&png, bytes).unwrap();
    let noise = c.dir.join("noise.bin");
    std::fs::write(
        &noise,
        (1..4000u32)
            .map(|i| (i * 151 % 255 + 1) as u8)
            .collect::<Vec<u8>>(),
    )
    .unwrap();
    let empty = c.dir.join("empty.log");
    std::fs::write(&empty, "").unwrap();
    let plain = c.dir.join("app.stderr.log");
    std::fs::write(&plain, "starting\nresult = 42\ndone\n").unwrap();
    for (file, needles) in [
        (
            &png,
            &["plot.png", "binary data", "NUL byte at offset 8"][..],
        ),
        (&noise, &["noise.bin", "binary data", "not text"][..]),
        (
            &empty,
            &["empty.log", "empty file", "krphase doctor -- "][..],
        ),
        (
            &plain,
            &[
                "app.stderr.log",
                "no kernel-replay lines in its 3 lines",
                "ROCPROFILER_LOG_LEVEL=info",
                "krphase doctor -- ",
            ][..],
        ),
    ] {
        must_fail(&c.db, &[o("import-log"), file.as_os_str()], needles);
        must_fail(
            &c.db,
            &[o("import-log"), file.as_os_str(), o("--run"), o("1")],
            needles,
        );
        let forced = [
            o("import-log"),
            file.as_os_str(),
            o("--run"),
            o("1"),
            o("--force"),
        ];
        must_fail(&c.db, &forced, needles);
    }
    assert_eq!(log_files(&c.db), 0);
}

/// A command that would create the database and fails creates nothing: no database, no
/// journal, no temporary file.
#[test]
fn a_failed_import_into_a_new_database_leaves_no_file() {
    let c = setup("analyzer-no-leftovers");
    let o = |s: &'static str| OsStr::new(s);
    let bad = write_variant(&c, "crc.krp", |b| {
        let mid = b.len() / 2;
        b[mid] ^= 0x5a;
    });
    let csv = c.dir.join("bad.csv");
    std::fs::write(&csv, "a,b,c\n1,2,3\n").unwrap();
    let not_db = c.dir.join("not-a-benchmark.db");
    std::fs::write(&not_db, "text").unwrap();
    let fresh = c.dir.join("fresh");
    std::fs::create_dir_all(&fresh).unwrap();
    let db = fresh.join("new.db");
    must_fail(
        &db,
        &[o("import"), bad.as_os_str()],
        &["crc.krp", "checksum"],
    );
    must_fail(
        &db,
        &[o("import"), c.dir.join("gone.krp").as_os_str()],
        &["gone.krp"],
    );
    must_fail(&db, &[o("import-harness"), csv.as_os_str()], &["bad.csv"]);
    must_fail(
        &db,
        &[o("import-benchmark"), not_db.as_os_str()],
        &["not-a-benchmark.db"],
    );
    assert!(names_in(&fresh).is_empty(), "{:?}", names_in(&fresh));

    // A good file before the bad one stays imported, as into an existing database.
    let (ok, out, err) = run(&db, &[o("import"), c.good.as_os_str(), bad.as_os_str()]);
    assert!(!ok && err.contains("crc.krp"), "{out}{err}");
    assert!(out.contains("good.krp: run 1:"), "{out}");
    assert_eq!(names_in(&fresh), vec!["new.db".to_string()]);
}

/// A write lock held past the wait is reported with the database's name and the wait, in one
/// line, and nothing is changed.
#[test]
fn a_lock_held_too_long_names_the_database() {
    let c = setup("analyzer-locked");
    let other = c.dir.join("other.krp");
    write_synthetic_file(
        &other,
        &SynthSpec {
            windows: 50,
            seed: 9,
            pid: 99,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    // Read first: closing any descriptor of the file would drop this process's lock on it.
    let before = std::fs::read(&c.db).unwrap();
    let holder = rusqlite::Connection::open(&c.db).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE;").unwrap();
    for args in [
        vec![OsStr::new("import"), other.as_os_str()],
        vec![OsStr::new("report")],
    ] {
        let o = std::process::Command::new(&krphase_tests::artifacts().krphase)
            .arg("--db")
            .arg(&c.db)
            .args(&args)
            .env("KRPHASE_DB_WAIT_S", "0.3")
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            !o.status.success(),
            "{args:?}: {}",
            krphase_tests::output_text(&o)
        );
        assert_eq!(err.trim_end().lines().count(), 1, "{err}");
        for needle in [
            format!("database {}", c.db.display()),
            "stayed locked by another process for 0.3 s".into(),
            "KRPHASE_DB_WAIT_S".into(),
        ] {
            assert!(err.contains(&needle), "{args:?}: {err:?} lacks {needle:?}");
        }
    }
    holder.execute_batch("ROLLBACK;").unwrap();
    drop(holder);
    assert_eq!(std::fs::read(&c.db).unwrap(), before);
    let (ok, out, err) = run(&c.db, &[OsStr::new("import"), other.as_os_str()]);
    assert!(ok && out.contains("other.krp: run 2:"), "{out}{err}");
}
