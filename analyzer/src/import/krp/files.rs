//! Finding the phase files a run left under a directory.

use std::path::{Path, PathBuf};

/// Phase files (`*.krp`) under `dir`, recursively (application replay writes `pass_<n>/`),
/// sorted by path.
pub fn phase_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "krp") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}
