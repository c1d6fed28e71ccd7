//! Where a dataset is written before it replaces the one its directory held: a hidden directory
//! beside it, renamed into place once every file is complete. A reader of the directory sees the
//! old dataset or the new one, never part of one; a failed export removes what it wrote and
//! leaves the old dataset as it was (one killed midway leaves a hidden directory, which the next
//! export to the same place removes). Only an empty directory or an earlier krphase dataset (its
//! [`MARKER`] file) is replaced: an export never deletes other files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result, bail};

/// The file describing a dataset (what was exported, from where, when). Query engines skip
/// names starting with `_`.
pub const MARKER: &str = "_krphase.json";

/// A dataset being written; removed on drop unless published.
pub struct Staging {
    dir: PathBuf,
    target: PathBuf,
    published: bool,
}

/// A hidden sibling of `target` named for what it holds, unique to this process.
fn sibling(target: &Path, what: &str) -> PathBuf {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map_or_else(|| "dataset".into(), |n| n.to_string_lossy().into_owned());
    target.with_file_name(format!(
        ".{name}.{what}-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ))
}

/// Removes what an export to `target` that was killed (Ctrl-C, a crash) left beside it: the
/// hidden directories of [`sibling`] whose process is gone.
fn sweep_stale(target: &Path) {
    let (Some(parent), Some(name)) = (target.parent(), target.file_name()) else {
        return;
    };
    let prefix = format!(".{}.", name.to_string_lossy());
    let Ok(entries) = std::fs::read_dir(parent) else {
        return;
    };
    for e in entries.flatten() {
        let n = e.file_name().to_string_lossy().into_owned();
        let Some(rest) = n.strip_prefix(&prefix) else {
            continue;
        };
        let pid = rest
            .strip_prefix("new-")
            .or_else(|| rest.strip_prefix("old-"))
            .and_then(|r| r.split('-').next())
            .and_then(|p| p.parse::<u32>().ok());
        if let Some(pid) = pid
            && !Path::new(&format!("/proc/{pid}")).exists()
        {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Refuses a `target` that exists and is neither an empty directory nor a krphase dataset.
fn check_replaceable(target: &Path) -> Result<()> {
    let Ok(meta) = std::fs::symlink_metadata(target) else {
        return Ok(());
    };
    if !meta.is_dir() {
        bail!("{} exists and is not a directory", target.display());
    }
    let empty = std::fs::read_dir(target)
        .with_context(|| format!("cannot read {}", target.display()))?
        .next()
        .is_none();
    if !empty && !target.join(MARKER).is_file() {
        bail!(
            "{} holds files but no krphase dataset (no {MARKER}); refusing to replace it",
            target.display()
        );
    }
    Ok(())
}

impl Staging {
    /// A new empty directory beside `target` (whose parent is created if missing).
    pub fn beside(target: &Path) -> Result<Staging> {
        let target = if target.is_absolute() {
            target.to_path_buf()
        } else {
            std::env::current_dir()?.join(target)
        };
        if target.file_name().is_none() {
            bail!(
                "{} cannot be replaced (no directory name)",
                target.display()
            );
        }
        check_replaceable(&target)?;
        let parent = target.parent().unwrap_or(Path::new("/"));
        std::fs::create_dir_all(parent)
            .with_context(|| format!("cannot create {}", parent.display()))?;
        sweep_stale(&target);
        let dir = sibling(&target, "new");
        std::fs::create_dir(&dir)
            .with_context(|| format!("cannot write into {}", parent.display()))?;
        Ok(Staging {
            dir,
            target,
            published: false,
        })
    }

    pub fn path(&self) -> &Path {
        &self.dir
    }

    /// Puts the dataset in place of `target`: the old one is moved aside, the new one renamed
    /// in, the old one removed. When the rename fails the old one is put back.
    pub fn publish(mut self) -> Result<()> {
        check_replaceable(&self.target)?;
        let old = self.target.exists().then(|| sibling(&self.target, "old"));
        if let Some(old) = &old {
            std::fs::rename(&self.target, old)
                .with_context(|| format!("cannot replace {}", self.target.display()))?;
        }
        if let Err(e) = std::fs::rename(&self.dir, &self.target) {
            if let Some(old) = &old {
                let _ = std::fs::rename(old, &self.target);
            }
            return Err(e).with_context(|| format!("cannot create {}", self.target.display()));
        }
        self.published = true;
        if let Some(old) = old {
            remove_tree(&old)
                .with_context(|| format!("cannot remove the old dataset {}", old.display()))?;
        }
        Ok(())
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if !self.published {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }
}

/// Removes `dir` and everything in it, each entry (a dataset's table directories) on a thread of
/// its own: an old dataset of a 10,000-rank job is 60,000 files, and removing them on one thread
/// took a fifth of `--from`'s CPU time, after its workers had finished. Directories apart do not
/// share the file system's per-directory lock.
fn remove_tree(dir: &Path) -> std::io::Result<()> {
    let entries = std::fs::read_dir(dir)?.collect::<std::io::Result<Vec<_>>>()?;
    let removed: Vec<std::io::Result<()>> = std::thread::scope(|s| {
        let started: Vec<_> = entries
            .iter()
            .map(|e| {
                std::thread::Builder::new()
                    .spawn_scoped(s, move || remove_entry(e))
                    .map_err(|_| e)
            })
            .collect();
        started
            .into_iter()
            .map(|h| match h {
                Ok(h) => h
                    .join()
                    .unwrap_or_else(|_| Err(std::io::Error::other("a remover panicked"))),
                // No thread to spare: removed here.
                Err(e) => remove_entry(e),
            })
            .collect()
    });
    removed.into_iter().collect::<std::io::Result<()>>()?;
    std::fs::remove_dir(dir)
}

fn remove_entry(e: &std::fs::DirEntry) -> std::io::Result<()> {
    if e.file_type()?.is_dir() {
        std::fs::remove_dir_all(e.path())
    } else {
        std::fs::remove_file(e.path())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::test_files::names;

    /// A directory holding a dataset `ds` with one file, `old`.
    fn old_dataset() -> (tempfile::TempDir, std::path::PathBuf) {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("ds");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join(MARKER), "{}").unwrap();
        std::fs::write(target.join("old"), "x").unwrap();
        (root, target)
    }

    #[test]
    fn a_dropped_staging_leaves_nothing_and_the_old_dataset_intact() {
        let (root, target) = old_dataset();
        let s = Staging::beside(&target).unwrap();
        std::fs::write(s.path().join("half"), "y").unwrap();
        drop(s);
        assert_eq!(names(root.path()), ["ds"]);
        assert_eq!(names(&target), [MARKER, "old"]);
    }

    #[test]
    fn publish_replaces_a_dataset_whole() {
        let (root, target) = old_dataset();
        // Table directories with partitions, as an export leaves them: removed with the rest.
        for t in ["windows", "passes"] {
            let part = target.join(t).join("run=1");
            std::fs::create_dir_all(&part).unwrap();
            std::fs::write(part.join("part-0.parquet"), "x").unwrap();
        }
        let s = Staging::beside(&target).unwrap();
        std::fs::write(s.path().join(MARKER), "{}").unwrap();
        std::fs::write(s.path().join("new"), "y").unwrap();
        s.publish().unwrap();
        assert_eq!(names(root.path()), ["ds"]);
        assert_eq!(names(&target), [MARKER, "new"]);
    }

    #[test]
    fn what_a_killed_export_left_is_swept_and_a_live_one_kept() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("ds");
        // No process has a pid above the kernel's limit (2^22).
        let dead = root.path().join(".ds.new-999999999-0");
        let live = root
            .path()
            .join(format!(".ds.new-{}-77", std::process::id()));
        let other = root.path().join(".dsx.new-999999999-0");
        for d in [&dead, &live, &other] {
            std::fs::create_dir(d).unwrap();
        }
        Staging::beside(&target).unwrap().publish().unwrap();
        assert_eq!(
            names(root.path()),
            [
                ".ds.new-".to_string() + &format!("{}-77", std::process::id()),
                ".dsx.new-999999999-0".into(),
                "ds".into()
            ]
        );
    }

    #[test]
    fn other_files_are_never_replaced() {
        let root = tempfile::tempdir().unwrap();
        let target = root.path().join("home");
        std::fs::create_dir(&target).unwrap();
        std::fs::write(target.join("thesis.tex"), "x").unwrap();
        let err = Staging::beside(&target).err().unwrap().to_string();
        assert!(err.contains("no krphase dataset"), "{err}");
        let file = root.path().join("file");
        std::fs::write(&file, "x").unwrap();
        let err = Staging::beside(&file).err().unwrap().to_string();
        assert!(err.contains("not a directory"), "{err}");
        assert_eq!(names(root.path()), ["file", "home"]);
        // An empty directory is taken.
        let empty = root.path().join("empty");
        std::fs::create_dir(&empty).unwrap();
        Staging::beside(&empty).unwrap().publish().unwrap();
        assert!(empty.is_dir());
    }
}
