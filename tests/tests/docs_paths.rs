//! Every path the docs name exists, so a doc cannot go on describing a file that moved or went.
//!
//! Read from each doc (`README.md`, `docs/*.md`, `kernels/hip/README.md`; not `CHANGELOG.md`,
//! which is history): inline code that starts with one of the workspace's top-level folders
//! (`analyzer/src/db/`, `tests/tests/layering/`) must name a file or folder; inline code naming a
//! bare Rust file (`quantiles.rs`, `sdk_log/plan.rs`) must be the end of some file's path in the
//! workspace; a link to a local file must reach it. Names with a placeholder in them
//! (`fuzz/corpus/<target>/`, `tests/clients/*.c`) are patterns, not paths, and are passed over.

use std::fs;
use std::path::{Path, PathBuf};

use pulldown_cmark::{Event, Parser, Tag};

fn workspace_top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// The workspace's files (relative, `/`-separated), outside build output and version control.
fn workspace_files(top: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut todo = vec![top.to_path_buf()];
    while let Some(dir) = todo.pop() {
        for entry in fs::read_dir(&dir).expect("a readable folder") {
            let p = entry.expect("a directory entry").path();
            let name = p.file_name().and_then(|n| n.to_str()).unwrap_or_default();
            if name == "target" || name == ".git" || name == "node_modules" {
                continue;
            }
            if p.is_dir() {
                todo.push(p);
            } else if let Ok(rel) = p.strip_prefix(top) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out
}

/// The names of the workspace's top-level folders, each a root a doc's path may start from.
fn top_folders(top: &Path) -> Vec<String> {
    fs::read_dir(top)
        .expect("the workspace")
        .filter_map(Result::ok)
        .filter(|e| e.path().is_dir())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != "target" && n != ".git")
        .collect()
}

/// What a doc names as a path, by kind.
#[derive(Debug, PartialEq)]
enum Named {
    /// From the workspace's top: `analyzer/src/db/`.
    Rooted(String),
    /// A Rust file named by the end of its path: `quantiles.rs`.
    Tail(String),
    /// A link's target, relative to the doc's folder.
    Link(String),
}

/// The paths `doc` names (see the file's comment for which).
fn named_paths(doc: &str, roots: &[String]) -> Vec<Named> {
    let placeholder = |s: &str| s.contains(['<', '>', '*', '%', '{', '}', '…', '$', ' ', '|']);
    let mut out = Vec::new();
    for event in Parser::new(doc) {
        match event {
            Event::Code(code) => {
                let tok = code.split(['#', ':']).next().unwrap_or_default();
                if tok.is_empty() || placeholder(&code) {
                    continue;
                }
                let first = tok.split('/').next().unwrap_or_default();
                if tok.contains('/') && roots.iter().any(|r| r == first) {
                    out.push(Named::Rooted(tok.trim_end_matches('/').to_string()));
                } else if tok.len() > ".rs".len()
                    && tok.ends_with(".rs")
                    && tok
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '/' | '.' | '-'))
                {
                    out.push(Named::Tail(tok.to_string()));
                }
            }
            Event::Start(Tag::Link { dest_url, .. })
            | Event::Start(Tag::Image { dest_url, .. }) => {
                let dest = dest_url.split('#').next().unwrap_or_default();
                if !dest.is_empty() && !dest.contains("://") && !dest.starts_with("mailto:") {
                    out.push(Named::Link(dest.to_string()));
                }
            }
            _ => {}
        }
    }
    out
}

/// The paths `doc` (in folder `dir`, relative to the top) names that do not exist.
fn missing(doc: &str, dir: &str, top: &Path, files: &[String], roots: &[String]) -> Vec<String> {
    named_paths(doc, roots)
        .into_iter()
        .filter(|n| match n {
            Named::Rooted(p) => !top.join(p).exists(),
            Named::Tail(t) => !files
                .iter()
                .any(|f| f == t || f.ends_with(&format!("/{t}"))),
            Named::Link(l) => !top.join(dir).join(l).exists(),
        })
        .map(|n| match n {
            Named::Rooted(p) | Named::Tail(p) | Named::Link(p) => p,
        })
        .collect()
}

fn docs(top: &Path) -> Vec<String> {
    let mut out: Vec<String> = fs::read_dir(top.join("docs"))
        .expect("docs/")
        .filter_map(Result::ok)
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    out.sort();
    out.extend(["README.md".into(), "kernels/hip/README.md".into()]);
    out
}

#[test]
fn every_path_the_docs_name_exists() {
    let top = workspace_top();
    let files = workspace_files(&top);
    let roots = top_folders(&top);
    let mut found = Vec::new();
    let mut checked = 0;
    for doc in docs(&top) {
        let text = fs::read_to_string(top.join(&doc)).unwrap_or_else(|e| panic!("{doc}: {e}"));
        let dir = Path::new(&doc)
            .parent()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        checked += named_paths(&text, &roots).len();
        found.extend(
            missing(&text, &dir, &top, &files, &roots)
                .into_iter()
                .map(|p| format!("{doc}: `{p}`")),
        );
    }
    assert!(checked > 100, "only {checked} paths read from the docs");
    assert!(
        found.is_empty(),
        "the docs name paths that do not exist:\n{}",
        found.join("\n")
    );
}

#[test]
fn the_checker_sees_moved_files_but_not_patterns_or_web_links() {
    let top = workspace_top();
    let files = workspace_files(&top);
    let roots = top_folders(&top);
    let doc = "See `analyzer/src/db/quantiles.rs` and `quantiles.rs`, `db/quantiles.rs:12`, \
               `tests/tests/layering/`, [the guide](user-guide.md#x) and \
               [web](https://example.invalid/a.md); patterns `fuzz/corpus/<target>/`, \
               `tests/*.c`; not paths: `krphase report`, `report.md`, the extension `.rs`.\n\n\
               Gone: `analyzer/src/report/stats.rs`, `order_stats.rs`, [old](old-guide.md).\n\n\
               ```\nanalyzer/src/nowhere.rs\n```\n";
    assert_eq!(
        missing(doc, "docs", &top, &files, &roots),
        [
            "analyzer/src/report/stats.rs",
            "order_stats.rs",
            "old-guide.md"
        ]
    );
}
