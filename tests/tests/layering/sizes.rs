//! No source file of the analyzer, the window model or the file format is over 800 lines: past
//! that a file holds more than one thing. Split it by job, not by line count.

use std::fs;
use std::path::Path;

use crate::modules::workspace_top;
use crate::no_path::rust_files;

/// The folders held to the limit.
const FOLDERS: &[&str] = &["analyzer/src", "analyzer/windows/src", "tool/format/src"];
const MAX_LINES: usize = 800;

/// `(file, lines)` of every `.rs` file below `dir` over `max` lines.
fn over(dir: &Path, max: usize) -> Vec<(String, usize)> {
    let top = workspace_top();
    rust_files(dir)
        .into_iter()
        .filter_map(|f| {
            let lines = fs::read_to_string(&f)
                .expect("a source file")
                .lines()
                .count();
            let name = f.strip_prefix(&top).unwrap_or(&f).display().to_string();
            (lines > max).then_some((name, lines))
        })
        .collect()
}

#[test]
fn no_file_is_over_the_limit() {
    let found: Vec<String> = FOLDERS
        .iter()
        .flat_map(|d| over(&workspace_top().join(d), MAX_LINES))
        .map(|(f, n)| format!("{f}: {n} lines"))
        .collect();
    assert!(
        found.is_empty(),
        "over {MAX_LINES} lines:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_counts_lines_and_sees_the_largest_files() {
    // Below the real limit the same walk must find files, and count them as `wc -l` does.
    let dir = workspace_top().join("tool/format/src");
    let found = over(&dir, 300);
    assert!(
        !found.is_empty(),
        "no format file over 300 lines: the walk found nothing"
    );
    let (name, lines) = &found[0];
    let text = fs::read_to_string(workspace_top().join(name)).unwrap();
    assert_eq!(
        *lines,
        text.matches('\n').count() + usize::from(!text.ends_with('\n'))
    );
}
