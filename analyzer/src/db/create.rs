//! Writing to a database that may not exist yet, so that a failed command leaves no file behind.
//!
//! A new database is built beside its final path under a hidden temporary name, and appears
//! under the final name (a hard link: atomic, and refused when the name exists) only once the
//! work succeeded. Two processes creating the same database at once cannot overwrite each other:
//! the one whose link is refused does its work again in the database the other one published.
//! A failure before that removes the temporary file and its journal. On a file system without
//! hard links the database is created in place, as SQLite does (the schema migration is safe
//! against concurrent openers either way).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use rusqlite::Connection;

/// Runs `work` on the database at `path` (opened and migrated with [`super::open`]). When `path`
/// did not exist, the database appears there only if `work` returns `Ok`; `work` may then run a
/// second time, in a database another process created meanwhile, so it must print nothing and
/// must not depend on having run before.
pub fn write_with<T>(path: &Path, mut work: impl FnMut(&mut Connection) -> Result<T>) -> Result<T> {
    if std::fs::symlink_metadata(path).is_ok() {
        return work(&mut super::open(path)?);
    }
    let tmp = TempDb::beside(path);
    let value = {
        let mut conn = super::open(&tmp.path).with_context(|| {
            format!(
                "cannot create database {} (in {})",
                path.display(),
                tmp.path.display()
            )
        })?;
        let value = work(&mut conn)?;
        conn.close()
            .map_err(|(_, e)| e)
            .with_context(|| format!("cannot close database {}", tmp.path.display()))?;
        value
    };
    match std::fs::hard_link(&tmp.path, path) {
        Ok(()) => Ok(value),
        // Another process published the database first (AlreadyExists), or this file system
        // has no hard links: work in the database at `path`, created in place if need be.
        Err(_) => {
            drop(tmp);
            work(&mut super::open(path)?)
        }
    }
}

/// A temporary database file beside the final one, removed (with SQLite's side files) on drop.
struct TempDb {
    path: PathBuf,
}

impl TempDb {
    fn beside(path: &Path) -> TempDb {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let name = path
            .file_name()
            .map_or_else(|| "krphase.db".into(), |n| n.to_string_lossy().into_owned());
        let unique = format!(
            ".{name}.{}-{}.new",
            std::process::id(),
            SEQ.fetch_add(1, Ordering::Relaxed)
        );
        TempDb {
            path: path.with_file_name(unique),
        }
    }
}

impl Drop for TempDb {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        for side in ["-journal", "-wal", "-shm"] {
            let mut p = self.path.clone().into_os_string();
            p.push(side);
            let _ = std::fs::remove_file(p);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_files::names;

    fn insert_run(c: &mut Connection, hash: &str) -> Result<()> {
        c.execute(
            "INSERT INTO krphase_run (path, file_hash, imported_at) VALUES ('p', ?1, 'now')",
            [hash],
        )?;
        Ok(())
    }

    #[test]
    fn a_failed_first_write_leaves_no_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.db");
        let err = write_with(&p, |c| -> Result<()> {
            insert_run(c, "h")?;
            anyhow::bail!("the input was bad")
        })
        .unwrap_err();
        assert_eq!(err.to_string(), "the input was bad");
        assert!(names(dir.path()).is_empty(), "{:?}", names(dir.path()));
    }

    #[test]
    fn a_successful_first_write_publishes_only_the_database() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.db");
        write_with(&p, |c| insert_run(c, "h")).unwrap();
        assert_eq!(names(dir.path()), vec!["new.db".to_string()]);
        let n: i64 = super::super::open(&p)
            .unwrap()
            .query_row("SELECT COUNT(*) FROM krphase_run", [], |r| r.get(0))
            .unwrap();
        assert_eq!(n, 1);
    }

    /// Another process publishes the database while this one builds its own: the work runs again
    /// in the published one, and nothing is lost or left over.
    #[test]
    fn losing_the_race_redoes_the_work_in_the_winner() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("new.db");
        let mut calls = 0;
        write_with(&p, |c| {
            calls += 1;
            if calls == 1 {
                write_with(&p, |other| insert_run(other, "theirs")).unwrap();
            }
            insert_run(c, "mine")
        })
        .unwrap();
        assert_eq!(calls, 2);
        let c = super::super::open(&p).unwrap();
        let hashes: Vec<String> = c
            .prepare("SELECT file_hash FROM krphase_run ORDER BY id")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<rusqlite::Result<_>>()
            .unwrap();
        assert_eq!(hashes, vec!["theirs".to_string(), "mine".to_string()]);
        assert_eq!(names(dir.path()), vec!["new.db".to_string()]);
    }
}
