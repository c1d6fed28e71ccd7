//! No `#[path]` in any crate's `src/`: a module lives where the compiler looks for it, so a file's
//! place is its place in the module tree, and no sibling can be turned into a child to get round
//! the layering. (Test targets in `tests/` and `benches/` are not product code.)

use std::fs;
use std::path::{Path, PathBuf};

use crate::modules::{roots, strip, workspace_top};

/// Every `.rs` file below `dir`.
pub fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap_or_else(|e| panic!("{}: {e}", d.display())) {
            let p = entry.expect("a directory entry").path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|e| e == "rs") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// The line numbers (from 1) of the `#[path` attributes in a file's code.
fn path_attributes(src: &str) -> Vec<usize> {
    strip(src)
        .lines()
        .enumerate()
        .filter(|(_, l)| l.contains("#[path"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// Every crate's `src/` folder.
fn src_dirs() -> Vec<PathBuf> {
    let top = workspace_top();
    let mut dirs: Vec<PathBuf> = roots()
        .iter()
        .map(|r| {
            top.join(r)
                .parent()
                .expect("a root has a folder")
                .to_path_buf()
        })
        .collect();
    dirs.dedup();
    dirs
}

#[test]
fn no_crate_source_moves_a_module_with_a_path_attribute() {
    let top = workspace_top();
    let mut found = Vec::new();
    for dir in src_dirs() {
        for file in rust_files(&dir) {
            let src = fs::read_to_string(&file).expect("a source file");
            for line in path_attributes(&src) {
                found.push(format!(
                    "{}:{line}",
                    file.strip_prefix(&top).unwrap_or(&file).display()
                ));
            }
        }
    }
    assert!(
        found.is_empty(),
        "#[path] in a crate's src/:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_sees_a_path_attribute_but_not_one_in_a_comment_or_string() {
    let src = "// #[path = \"a.rs\"] in a comment\nconst S: &str = \"#[path]\";\n\
               #[cfg(test)]\n#[path = \"x/tests.rs\"]\nmod tests;\n";
    assert_eq!(path_attributes(src), [4]);
}

#[test]
fn every_crate_root_is_searched() {
    let dirs = src_dirs();
    for want in [
        "analyzer/src",
        "analyzer/windows/src",
        "tool/format/src",
        "kernels/emu/src",
    ] {
        assert!(
            dirs.contains(&workspace_top().join(want)),
            "{want} not searched"
        );
    }
}
