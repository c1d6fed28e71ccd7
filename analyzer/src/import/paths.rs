//! `krphase import PATH...`: one verb for every kind krphase reads. Each file's kind is read
//! from its content ([`kind`](super::kind)); directories are walked. Phase files go first (they
//! make the runs), then what joins to runs: rocpd databases, SDK logs, then the whole-run
//! measurements.

use std::path::{Path, PathBuf};

use anyhow::{Context, Result, bail};

use super::kind::{self, Kind};

/// Options that apply to some kinds.
#[derive(Debug, Default, Clone)]
pub struct Options<'a> {
    pub label: Option<&'a str>,
    pub jobs: Option<usize>,
    /// What a harness CSV's relative `-d` paths are relative to (default: the current directory).
    pub workdir: Option<&'a Path>,
}

/// The files to import, by kind, and what a directory held that krphase does not read.
#[derive(Debug, Default)]
pub struct Found {
    pub files: Vec<(Kind, PathBuf)>,
    pub skipped: Vec<PathBuf>,
}

/// Reads every path's kind before anything is imported: a file named on the command line that
/// krphase does not read refuses the whole import; one met while walking a directory is skipped.
pub fn find(paths: &[PathBuf]) -> Result<Found> {
    let mut found = Found::default();
    for p in paths {
        let meta = std::fs::metadata(p).with_context(|| format!("cannot read {}", p.display()))?;
        if meta.is_dir() {
            walk(p, &mut found)?;
            continue;
        }
        match kind::of(p)? {
            Some(k) => found.files.push((k, p.clone())),
            // A named `.krp` that does not read as one is a damaged phase file: the phase
            // reader's refusal says where and how (offset, magic, version), which helps more
            // than "not a kind krphase reads".
            None if p.extension().is_some_and(|e| e == "krp") => {
                found.files.push((Kind::Phase, p.clone()))
            }
            None => bail!(
                "{}: not a kind of file krphase reads (it reads: {})",
                p.display(),
                kind::known()
            ),
        }
    }
    // Stable by kind: runs first, each kind's files in the order given (a directory's sorted).
    found.files.sort_by_key(|(k, _)| *k);
    Ok(found)
}

fn walk(dir: &Path, found: &mut Found) -> Result<()> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("cannot read directory {}", dir.display()))?
        .map(|e| e.map(|e| e.path()))
        .collect::<std::io::Result<_>>()
        .with_context(|| format!("cannot read directory {}", dir.display()))?;
    entries.sort();
    for p in entries {
        if p.is_dir() {
            walk(&p, found)?;
        } else if let Some(k) = kind::of(&p)? {
            found.files.push((k, p));
        } else {
            found.skipped.push(p);
        }
    }
    Ok(())
}

/// `krphase import PATH... [--label L] [--jobs N] [--workdir DIR]`.
pub fn import_paths_command(db: &Path, paths: &[PathBuf], opts: &Options) -> Result<()> {
    let found = find(paths)?;
    if found.files.is_empty() {
        bail!(
            "nothing to import in {}: no file of a kind krphase reads ({})",
            shown(paths),
            kind::known()
        );
    }
    if !found.skipped.is_empty() {
        eprintln!(
            "krphase: note: skipped {} file(s) krphase does not read: {}",
            found.skipped.len(),
            shown(&found.skipped)
        );
    }
    import_found(db, &found.files, opts)
}

/// Imports `files` (sorted by kind), each with its kind's importer.
pub fn import_found(db: &Path, files: &[(Kind, PathBuf)], opts: &Options) -> Result<()> {
    let of = |k: Kind| -> Vec<PathBuf> {
        files
            .iter()
            .filter(|(fk, _)| *fk == k)
            .map(|(_, p)| p.clone())
            .collect()
    };
    let phase = of(Kind::Phase);
    if !phase.is_empty() {
        super::import_command(db, &phase, opts.label, opts.jobs)?;
    }
    for f in of(Kind::Rocpd) {
        super::rocpd::import_rocpd_command(db, &f)?;
    }
    for f in of(Kind::Rocprofv3Json) {
        super::rocprofv3_json::import_json_command(db, &f)?;
    }
    for f in of(Kind::SdkLog) {
        super::import_log_command(db, &f, None, false)?;
    }
    for f in of(Kind::HarnessCsv) {
        super::import_harness_command(db, &f, opts.workdir, opts.label)?;
    }
    for f in of(Kind::BenchmarkDb) {
        super::import_benchmark_command(db, &f, opts.label)?;
    }
    Ok(())
}

/// Up to three paths, then how many more.
fn shown(paths: &[PathBuf]) -> String {
    let mut s: Vec<String> = paths
        .iter()
        .take(3)
        .map(|p| p.display().to_string())
        .collect();
    if paths.len() > 3 {
        s.push(format!("and {} more", paths.len() - 3));
    }
    s.join(", ")
}
