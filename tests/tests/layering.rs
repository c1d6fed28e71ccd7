//! The workspace's module layering: within every crate, no two sibling modules (files of one
//! folder, or folders of one parent) depend on each other, directly or around a longer cycle.
//!
//! A module's dependencies are the `crate::…`, `super::…` and `self::…` paths its file (and the
//! files below it) name. A path is charged to the deepest module it reaches, so naming the parent's
//! own items, or a child's, is never a sibling edge. Crates already form a graph without cycles
//! (cargo refuses otherwise), so only modules inside a crate need checking.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};

/// Every crate root of the workspace, relative to its top.
const ROOTS: &[&str] = &[
    "ffi/src/lib.rs",
    "names/src/lib.rs",
    "tool/src/lib.rs",
    "tool/format/src/lib.rs",
    "analyzer/windows/src/lib.rs",
    "analyzer/src/lib.rs",
    "analyzer/src/main.rs",
    "kernels/src/lib.rs",
    "kernels/emu/src/lib.rs",
    "kernels/emu/src/main.rs",
    "tests/src/lib.rs",
    "tests/probe/src/lib.rs",
];

/// A module path inside one crate, e.g. `["report", "stats"]`; the crate root is empty.
type ModPath = Vec<String>;

struct Module {
    file: PathBuf,
    /// Code with comments, string literals and character literals blanked out.
    code: String,
}

fn workspace_top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Blanks comments and literals so that `crate::` inside them is not read as a path.
fn strip(src: &str) -> String {
    let b = src.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            let mut depth = 0;
            while i < b.len() {
                if b[i..].starts_with(b"/*") {
                    depth += 1;
                    i += 2;
                } else if b[i..].starts_with(b"*/") {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    i += 1;
                }
            }
        } else if let Some(end) = raw_string_end(b, i) {
            out.push(b' ');
            i = end;
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(b' ');
        } else if b[i] == b'\'' && is_char_literal(b, i) {
            i += 1;
            while i < b.len() && b[i] != b'\'' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push(b' ');
        } else {
            out.push(b[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The index just past a raw string literal (`r"…"`, `r#"…"#`, `br"…"`) starting at `i`.
fn raw_string_end(b: &[u8], i: usize) -> Option<usize> {
    let prev_ident = i > 0 && (b[i - 1].is_ascii_alphanumeric() || b[i - 1] == b'_');
    if prev_ident {
        return None;
    }
    let mut j = i;
    if b.get(j) == Some(&b'b') {
        j += 1;
    }
    if b.get(j) != Some(&b'r') {
        return None;
    }
    j += 1;
    let hashes = b[j..].iter().take_while(|&&c| c == b'#').count();
    j += hashes;
    if b.get(j) != Some(&b'"') {
        return None;
    }
    let close: Vec<u8> = std::iter::once(b'"')
        .chain(std::iter::repeat_n(b'#', hashes))
        .collect();
    let rest = &b[j + 1..];
    let at = rest
        .windows(close.len())
        .position(|w| w == close.as_slice())?;
    Some(j + 1 + at + close.len())
}

/// Whether the `'` at `i` opens a character literal rather than a lifetime or label.
fn is_char_literal(b: &[u8], i: usize) -> bool {
    match (b.get(i + 1), b.get(i + 2)) {
        (Some(b'\\'), _) => true,
        (Some(_), Some(b'\'')) => true,
        // A multi-byte UTF-8 character.
        (Some(c), _) if *c >= 0x80 => true,
        _ => false,
    }
}

/// Every file-backed module of the crate rooted at `root`, found through its `mod x;` items.
fn crate_modules(root: &Path) -> BTreeMap<ModPath, Module> {
    let mut found = BTreeMap::new();
    let mut todo = vec![(Vec::new(), root.to_path_buf())];
    while let Some((path, file)) = todo.pop() {
        let src = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = strip(&src);
        for (name, explicit) in mod_declarations(&src) {
            let child = child_file(&file, &name, explicit.as_deref());
            let mut child_path = path.clone();
            child_path.push(name);
            todo.push((child_path, child));
        }
        found.insert(path, Module { file, code });
    }
    found
}

/// `(name, #[path] value)` of each out-of-line `mod name;` in a file.
fn mod_declarations(src: &str) -> Vec<(String, Option<String>)> {
    let mut out = Vec::new();
    let mut pending_path = None;
    for line in src.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            pending_path = rest.split('"').next().map(str::to_string);
            continue;
        }
        let item = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = item.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            out.push((name.trim().to_string(), pending_path.take()));
        } else if !line.starts_with("#[") {
            pending_path = None;
        }
    }
    out
}

/// Where `mod name;` declared in `parent` lives, by the language's rules.
fn child_file(parent: &Path, name: &str, explicit: Option<&str>) -> PathBuf {
    let dir = parent.parent().expect("a file has a folder");
    if let Some(p) = explicit {
        return dir.join(p);
    }
    let stem = parent
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    let base = if matches!(stem, "lib" | "main" | "mod") {
        dir.to_path_buf()
    } else {
        dir.join(stem)
    };
    let flat = base.join(format!("{name}.rs"));
    if flat.exists() {
        flat
    } else {
        base.join(name).join("mod.rs")
    }
}

/// The module paths a file names, resolved against its own module path `at`.
fn named_paths(code: &str, at: &ModPath) -> Vec<ModPath> {
    let b = code.as_bytes();
    let mut out = Vec::new();
    for (start, _) in code.match_indices("::") {
        let head_start = b[..start]
            .iter()
            .rposition(|c| !(c.is_ascii_alphanumeric() || *c == b'_'))
            .map_or(0, |p| p + 1);
        let head = &code[head_start..start];
        if head_start > 0 && b[head_start - 1] == b':' {
            continue; // Not the first segment of its path.
        }
        let base: ModPath = match head {
            "crate" => Vec::new(),
            "self" => at.clone(),
            "super" => at[..at.len().saturating_sub(1)].to_vec(),
            _ => continue,
        };
        let mut trees = Vec::new();
        use_tree(code, start + 2, base, &mut trees);
        out.extend(trees);
    }
    out
}

/// Parses the rest of a path (or a `use` tree with braces) beginning at byte `i`.
fn use_tree(code: &str, mut i: usize, mut path: ModPath, out: &mut Vec<ModPath>) -> usize {
    let b = code.as_bytes();
    loop {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if b.get(i) == Some(&b'{') {
            i += 1;
            loop {
                i = use_tree(code, i, path.clone(), out);
                while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b',') {
                    i += 1;
                }
                if i >= b.len() || b[i] == b'}' {
                    return i + 1;
                }
            }
        }
        let end = i + b[i..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric() || **c == b'_')
            .count();
        if end == i {
            out.push(path);
            return i;
        }
        let seg = &code[i..end];
        match seg {
            "super" => {
                path.pop();
            }
            "self" => {}
            _ => path.push(seg.to_string()),
        }
        i = end;
        if code[i..].starts_with("::") {
            i += 2;
        } else {
            out.push(path);
            return i;
        }
    }
}

/// The deepest known module that `path` reaches.
fn owner(path: &ModPath, modules: &BTreeMap<ModPath, Module>) -> ModPath {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains_key(p))
        .unwrap_or_default()
}

/// Edges between the children of each module: `(parent, from child, to child)`.
fn sibling_edges(modules: &BTreeMap<ModPath, Module>) -> BTreeSet<(ModPath, String, String)> {
    let mut edges = BTreeSet::new();
    for (from, module) in modules {
        for named in named_paths(&module.code, from) {
            let to = owner(&named, modules);
            let common = from.iter().zip(&to).take_while(|(a, b)| a == b).count();
            if common < from.len() && common < to.len() {
                edges.insert((
                    from[..common].to_vec(),
                    from[common].clone(),
                    to[common].clone(),
                ));
            }
        }
    }
    edges
}

/// One cycle among the children of each parent that has any.
fn find_cycles(edges: &BTreeSet<(ModPath, String, String)>) -> Vec<(ModPath, Vec<String>)> {
    let parents: BTreeSet<&ModPath> = edges.iter().map(|e| &e.0).collect();
    let mut cycles = Vec::new();
    'parents: for parent in parents {
        let next: BTreeMap<&str, Vec<&str>> =
            edges
                .iter()
                .filter(|e| &e.0 == parent)
                .fold(BTreeMap::new(), |mut m, e| {
                    m.entry(e.1.as_str()).or_default().push(e.2.as_str());
                    m
                });
        for &start in next.keys() {
            if let Some(cycle) = walk(&next, start, start, &mut vec![start]) {
                cycles.push((parent.clone(), cycle));
                continue 'parents;
            }
        }
    }
    cycles
}

fn walk<'a>(
    next: &BTreeMap<&'a str, Vec<&'a str>>,
    start: &str,
    at: &'a str,
    trail: &mut Vec<&'a str>,
) -> Option<Vec<String>> {
    for &to in next.get(at).into_iter().flatten() {
        if to == start {
            let mut cycle: Vec<String> = trail.iter().map(|s| s.to_string()).collect();
            cycle.push(start.to_string());
            return Some(cycle);
        }
        if !trail.contains(&to) {
            trail.push(to);
            if let Some(c) = walk(next, start, to, trail) {
                return Some(c);
            }
            trail.pop();
        }
    }
    None
}

#[test]
fn no_sibling_modules_depend_on_each_other() {
    let top = workspace_top();
    let mut cycles = Vec::new();
    for root in ROOTS {
        let modules = crate_modules(&top.join(root));
        for (parent, cycle) in find_cycles(&sibling_edges(&modules)) {
            let file = &modules[&parent].file;
            let at = file.strip_prefix(&top).unwrap_or(file).display();
            cycles.push(format!("{at}: {}", cycle.join(" -> ")));
        }
    }
    assert!(
        cycles.is_empty(),
        "sibling modules depend on each other:\n{}",
        cycles.join("\n")
    );
}

#[test]
fn the_checker_sees_a_cycle_through_crate_super_and_use_groups() {
    let mk = |code: &str| Module {
        file: PathBuf::new(),
        code: strip(code),
    };
    let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<ModPath>();
    let mut modules = BTreeMap::new();
    modules.insert(p(&[]), mk("pub mod a; pub mod b; pub mod c;"));
    modules.insert(p(&["a"]), mk("use crate::{x, b::{f, g}};"));
    modules.insert(
        p(&["b"]),
        mk("// crate::a::h is only a comment\nfn f() { super::c::k(); }"),
    );
    modules.insert(
        p(&["c"]),
        mk("let s = \"crate::b\"; use super::super_thing;"),
    );
    assert!(find_cycles(&sibling_edges(&modules)).is_empty());
    modules.insert(p(&["c"]), mk("fn k() { crate::a::CONST }"));
    let cycles = find_cycles(&sibling_edges(&modules));
    assert_eq!(
        cycles,
        [(
            ModPath::new(),
            ["a", "b", "c", "a"].map(String::from).to_vec()
        )]
    );
}

#[test]
fn children_and_parents_are_not_siblings() {
    let mk = |code: &str| Module {
        file: PathBuf::new(),
        code: strip(code),
    };
    let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<ModPath>();
    let mut modules = BTreeMap::new();
    modules.insert(p(&[]), mk("mod a; fn r() { a::inner::f(); }"));
    modules.insert(
        p(&["a"]),
        mk("mod inner; use super::r; use self::inner::f;"),
    );
    modules.insert(
        p(&["a", "inner"]),
        mk("use super::super::r; use crate::a::g;"),
    );
    assert!(sibling_edges(&modules).is_empty());
}
