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
