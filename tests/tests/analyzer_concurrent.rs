//! Concurrent `krphase import` processes into one database: into a new database and an existing
//! one, with the same files and with different ones. Every process exits 0, every file is
//! imported exactly once (one process prints its run, the others "already imported"), and no
//! temporary file is left beside the database.
//!
//! The processes are started together and only then waited for, so their opens, migrations and
//! imports overlap; the files are large enough that an import holds the write lock for a while.
//! Nothing here is timed: under load the processes take turns for longer, within the database's
//! wait.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use krphase_analyzer::synth::{SynthSpec, write_synthetic_file};

/// Processes started together in each trial.
const PROCESSES: usize = 8;

/// Trials of each new-database case (a race that loses one trial in two fails the test).
const TRIALS: usize = 3;

/// A distinct phase file (its content differs by `seed`).
fn phase_file(dir: &Path, name: &str, seed: u64) -> PathBuf {
    let p = dir.join(name);
    write_synthetic_file(
        &p,
        &SynthSpec {
            windows: 300,
            pid: 5000 + seed as u32,
            seed,
            ..SynthSpec::default()
        },
    )
    .unwrap();
    p
}

/// Starts one `krphase --db DB import FILES...` per entry of `sets`, all before waiting for any.
fn import_together(db: &Path, sets: &[Vec<PathBuf>]) -> Vec<Output> {
    let krphase = &krphase_tests::artifacts().krphase;
    let children: Vec<_> = sets
        .iter()
        .map(|files| {
            Command::new(krphase)
                .arg("--db")
                .arg(db)
                .arg("import")
                .args(files)
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .expect("start krphase import")
        })
        .collect();
    children
        .into_iter()
        .map(|c| c.wait_with_output().expect("wait for krphase import"))
        .collect()
}

/// Every process exited 0; every file of `files` is one run in the database; exactly one process
/// printed it as imported (`before`: files imported before the trial, by none) and every other
/// one that was given it printed "already imported"; nothing but the database is left in its
/// directory.
fn check(db: &Path, sets: &[Vec<PathBuf>], outs: &[Output], files: &[PathBuf], before: &[PathBuf]) {
    for o in outs {
        assert!(o.status.success(), "{}", krphase_tests::output_text(o));
    }
    let conn = rusqlite::Connection::open(db).unwrap();
    let runs: BTreeMap<String, i64> = conn
        .prepare("SELECT path, COUNT(*) FROM krphase_run GROUP BY file_hash")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    let expected: BTreeMap<String, i64> =
        files.iter().map(|f| (f.display().to_string(), 1)).collect();
    assert_eq!(runs, expected, "runs in the database");
    let stdout: String = outs
        .iter()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .collect();
    for f in files {
        let imported = stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{}: run ", f.display())))
            .count();
        let already = stdout
            .lines()
            .filter(|l| l.starts_with(&format!("{}: already imported as run ", f.display())))
            .count();
        let want = usize::from(!before.contains(f));
        let asked = sets.iter().filter(|s| s.contains(f)).count();
        assert_eq!(
            (imported, already),
            (want, asked - want),
            "{}: (imported, already imported) lines:\n{stdout}",
            f.display()
        );
    }
    let dir = db.parent().unwrap();
    let left: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".db") && !n.ends_with("k.db"))
        .collect();
    assert!(left.is_empty(), "left beside the database: {left:?}");
}

#[test]
fn eight_imports_of_the_same_files_into_a_new_database() {
    let dir = krphase_tests::scratch_dir("concurrent-same-new");
    let files: Vec<PathBuf> = (0..3)
        .map(|i| phase_file(&dir, &format!("same{i}.krp"), 10 + i))
        .collect();
    for t in 0..TRIALS {
        let db = dir.join(format!("t{t}")).join("k.db");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        // Each process lists the files in its own order, so they collide on different ones.
        let sets: Vec<Vec<PathBuf>> = (0..PROCESSES)
            .map(|p| {
                let mut v = files.clone();
                v.rotate_left(p % files.len());
                v
            })
            .collect();
        let outs = import_together(&db, &sets);
        check(&db, &sets, &outs, &files, &[]);
    }
}

#[test]
fn eight_imports_of_different_files_into_a_new_database() {
    let dir = krphase_tests::scratch_dir("concurrent-different-new");
    let files: Vec<PathBuf> = (0..PROCESSES as u64)
        .map(|i| phase_file(&dir, &format!("own{i}.krp"), 20 + i))
        .collect();
    for t in 0..TRIALS {
        let db = dir.join(format!("t{t}")).join("k.db");
        std::fs::create_dir_all(db.parent().unwrap()).unwrap();
        let sets: Vec<Vec<PathBuf>> = files.iter().map(|f| vec![f.clone()]).collect();
        let outs = import_together(&db, &sets);
        check(&db, &sets, &outs, &files, &[]);
    }
}

/// An existing database: each process imports a file already in it, one shared new file and one
/// of its own.
#[test]
fn eight_imports_of_shared_and_own_files_into_an_existing_database() {
    let dir = krphase_tests::scratch_dir("concurrent-existing");
    let db_dir = dir.join("db");
    std::fs::create_dir_all(&db_dir).unwrap();
    let db = db_dir.join("k.db");
    let old = phase_file(&dir, "old.krp", 30);
    krphase_tests::krphase_db_ok(&db, &[Path::new("import"), &old]);
    let shared = phase_file(&dir, "shared.krp", 31);
    let own: Vec<PathBuf> = (0..PROCESSES as u64)
        .map(|i| phase_file(&dir, &format!("own{i}.krp"), 40 + i))
        .collect();
    let sets: Vec<Vec<PathBuf>> = own
        .iter()
        .enumerate()
        .map(|(i, f)| match i % 3 {
            0 => vec![shared.clone(), f.clone(), old.clone()],
            1 => vec![f.clone(), old.clone(), shared.clone()],
            _ => vec![old.clone(), shared.clone(), f.clone()],
        })
        .collect();
    let outs = import_together(&db, &sets);
    let mut all = vec![old.clone(), shared];
    all.extend(own);
    check(&db, &sets, &outs, &all, &[old]);
}

/// An import that finds the database's write lock held says so on stderr after a second: the
/// database, the holder's pid (this test process, which holds the lock) and how long it has
/// waited; once the lock is released it imports and exits 0, having printed that line once.
/// The test waits for the line itself, never for a sleep.
#[test]
fn an_import_waiting_for_a_lock_says_what_it_waits_for() {
    use std::io::BufRead;
    let dir = krphase_tests::scratch_dir("concurrent-locked");
    let db = dir.join("k.db");
    let first = phase_file(&dir, "first.krp", 60);
    krphase_tests::krphase_db_ok(&db, &[Path::new("import"), &first]);
    let second = phase_file(&dir, "second.krp", 61);
    let holder = rusqlite::Connection::open(&db).unwrap();
    holder.execute_batch("BEGIN IMMEDIATE").unwrap();
    let mut child = Command::new(&krphase_tests::artifacts().krphase)
        .arg("--db")
        .arg(&db)
        .arg("import")
        .arg(&second)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start krphase import");
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    while !line.contains("waiting for database") {
        line.clear();
        let n = stderr.read_line(&mut line).unwrap();
        assert!(n > 0, "krphase ended without saying it waits");
    }
    assert!(line.contains(&db.display().to_string()), "{line}");
    assert!(
        line.contains(&format!("locked by pid {} (write)", std::process::id())),
        "{line}"
    );
    let waited: f64 = line
        .split("waited ")
        .nth(1)
        .and_then(|s| s.split(' ').next())
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no wait in {line}"));
    assert!((1.0..11.0).contains(&waited), "{line}");
    holder.execute_batch("ROLLBACK").unwrap();
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut stderr, &mut rest).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "{rest}");
    assert!(!rest.contains("waiting for database"), "one line: {rest}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{}: run ", second.display())),
        "{stdout}"
    );
}
