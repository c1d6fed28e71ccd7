//! `krphase import` of every format version's golden file (`tests/golden/`): the 1.0 and 2.0
//! goldens import with their exact counts, a newer minor imports with one note line of what
//! was skipped, a newer major is refused with the upgrade line and leaves the database as it was.

use std::path::{Path, PathBuf};

fn golden(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("golden")
        .join(name)
}

/// `krphase import FILE`: (success, stdout, stderr).
fn import(db: &Path, file: &Path) -> (bool, String, String) {
    let o = krphase_tests::krphase_db(db, &[std::ffi::OsStr::new("import"), file.as_os_str()]);
    (
        o.status.success(),
        String::from_utf8_lossy(&o.stdout).into_owned(),
        String::from_utf8_lossy(&o.stderr).into_owned(),
    )
}

#[test]
fn every_format_versions_golden_imports_and_a_newer_major_is_refused() {
    let dir = krphase_tests::scratch_dir("analyzer-formats");
    let db = dir.join("k.db");
    for (file, counts) in [
        (
            "small.krp",
            "25 events, 1 windows, 1 opt-outs, 1 plain dispatches",
        ),
        (
            "v2.0.krp",
            "93 events, 3 windows, 1 opt-outs, 4 plain dispatches, 3 counter values",
        ),
        (
            "v3.0.krp",
            "87 events, 3 windows, 1 opt-outs, 4 plain dispatches, 3 counter values",
        ),
        (
            "v3.1.krp",
            "87 events, 3 windows, 1 opt-outs, 4 plain dispatches, 3 counter values",
        ),
        (
            "v4.0.krp",
            "87 events, 3 windows, 1 opt-outs, 4 plain dispatches, 3 counter values",
        ),
    ] {
        let (ok, out, err) = import(&db, &golden(file));
        assert!(ok, "{file}: {err}");
        assert!(out.contains(counts), "{file}: {out}");
        assert!(err.is_empty(), "{file}: nothing skipped, no note: {err}");
    }

    let (ok, out, err) = import(&db, &golden("v2.1-future-minor.krp"));
    assert!(ok, "{err}");
    assert!(
        out.contains("3 windows, 1 opt-outs, 4 plain dispatches"),
        "{out}"
    );
    assert_eq!(
        err.trim_end(),
        format!(
            "krphase: note: {}: format 2.1 (this reader: 4.0): skipped 1 optional block with tag \
             200 (16 bytes), 2 records of kind 20, 8 header bytes, 2 trailer counters",
            golden("v2.1-future-minor.krp").display()
        )
    );

    let before = std::fs::read(&db).expect("db");
    let newer = golden("v5.0-newer-major.krp");
    let (ok, _, err) = import(&db, &newer);
    assert!(!ok, "a newer major imported");
    assert_eq!(
        err.trim_end(),
        format!(
            "krphase: error: {}: offset 4: written by a newer krphase, format 5.0; upgrade krphase",
            newer.display()
        )
    );
    assert_eq!(std::fs::read(&db).expect("db"), before, "database changed");
}
