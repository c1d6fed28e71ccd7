//! Which files a run made. The output directory is listed before the application starts and again
//! after it ended; a file is the run's when it is new, or changed (length or modification time)
//! since the first listing. A modification time compared with the clock cannot tell: file
//! systems stamp files from a coarse clock that can read earlier than the moment the run began,
//! so a short run's files would look older than the run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use anyhow::{Context, Result};

/// Every file under a directory with its length and modification time.
#[derive(Debug, Default)]
pub struct Listing(BTreeMap<PathBuf, (u64, Option<SystemTime>)>);

/// Lists the files under `dir`, its subdirectories included (rocprofv3 writes into some).
pub fn list(dir: &Path) -> Result<Listing> {
    let mut listing = Listing::default();
    walk(dir, &mut listing)?;
    Ok(listing)
}

fn walk(dir: &Path, listing: &mut Listing) -> Result<()> {
    let entries = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory {}", dir.display()))?;
    for entry in entries {
        let entry = entry.with_context(|| format!("cannot read directory {}", dir.display()))?;
        let meta = entry
            .metadata()
            .with_context(|| format!("cannot read {}", entry.path().display()))?;
        if meta.is_dir() {
            walk(&entry.path(), listing)?;
        } else if meta.is_file() {
            listing
                .0
                .insert(entry.path(), (meta.len(), meta.modified().ok()));
        }
    }
    Ok(())
}

impl Listing {
    /// The files of `after` that this listing lacks or that changed since, in path order.
    pub fn made_until(&self, after: &Listing) -> Vec<PathBuf> {
        after
            .0
            .iter()
            .filter(|(p, now)| self.0.get(*p) != Some(*now))
            .map(|(p, _)| p.clone())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_and_changed_files_are_the_runs_and_untouched_ones_are_not() {
        let dir = tempfile::tempdir().unwrap();
        let old = dir.path().join("old.krp");
        let rewritten = dir.path().join("krphase-stderr.log");
        std::fs::write(&old, b"earlier run").unwrap();
        std::fs::write(&rewritten, b"earlier log").unwrap();
        let before = list(dir.path()).unwrap();
        std::fs::write(&rewritten, b"this run's log, longer").unwrap();
        std::fs::create_dir(dir.path().join("rocprofv3")).unwrap();
        let nested = dir.path().join("rocprofv3/run_results.db");
        std::fs::write(&nested, b"db").unwrap();
        let after = list(dir.path()).unwrap();
        assert_eq!(before.made_until(&after), vec![rewritten, nested]);
    }
}
