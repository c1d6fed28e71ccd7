//! Reading a crate's module tree from its files: every file-backed module (found through its
//! `mod x;` items, as the compiler finds them), its code with comments and literals blanked, and
//! the module paths that code names.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

/// Every crate root of the workspace, relative to its top: each member the workspace's
/// `Cargo.toml` lists, with its `src/lib.rs` and `src/main.rs` where they exist. A crate added to
/// the workspace is checked without a change here.
pub fn roots() -> Vec<String> {
    let top = workspace_top();
    let manifest = fs::read_to_string(top.join("Cargo.toml")).expect("the workspace's Cargo.toml");
    let mut out = Vec::new();
    for member in workspace_members(&manifest) {
        for root in ["src/lib.rs", "src/main.rs"] {
            let rel = format!("{member}/{root}");
            if top.join(&rel).is_file() {
                out.push(rel);
            }
        }
    }
    out
}

/// The `members` of a workspace manifest's `[workspace]` table.
pub fn workspace_members(manifest: &str) -> Vec<String> {
    let Some(start) = manifest.find("members") else {
        return Vec::new();
    };
    let rest = &manifest[start..];
    let (Some(open), Some(close)) = (rest.find('['), rest.find(']')) else {
        return Vec::new();
    };
    rest[open + 1..close]
        .lines()
        .map(|l| l.split('#').next().unwrap_or_default())
        .flat_map(|l| l.split(','))
        .map(|m| m.trim().trim_matches('"'))
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .collect()
}

/// A module path inside one crate, e.g. `["report", "stats"]`; the crate root is empty.
pub type ModPath = Vec<String>;

pub struct Module {
    pub file: PathBuf,
    /// Code with comments, string literals and character literals blanked out.
    pub code: String,
    /// Declared under `#[cfg(test)]` (itself or a module above it): compiled into tests only.
    pub test_only: bool,
}

pub fn workspace_top() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ has a parent")
        .to_path_buf()
}

/// Blanks comments and literals so that `crate::` inside them is not read as a path.
pub fn strip(src: &str) -> String {
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
pub fn crate_modules(root: &Path) -> BTreeMap<ModPath, Module> {
    let mut found = BTreeMap::new();
    let mut todo = vec![(Vec::new(), root.to_path_buf(), false)];
    while let Some((path, file, test_only)) = todo.pop() {
        let src = fs::read_to_string(&file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
        let code = strip(&src);
        for decl in mod_declarations(&src) {
            let child = child_file(&file, &decl.name, decl.path.as_deref());
            let mut child_path = path.clone();
            child_path.push(decl.name);
            todo.push((child_path, child, test_only || decl.cfg_test));
        }
        found.insert(
            path,
            Module {
                file,
                code,
                test_only,
            },
        );
    }
    found
}

/// One out-of-line `mod name;` item.
pub struct ModDecl {
    pub name: String,
    /// Its `#[path = "…"]` value, if it has one.
    pub path: Option<String>,
    /// Whether `#[cfg(test)]` stands on it.
    pub cfg_test: bool,
}

/// Each out-of-line `mod name;` in a file, with the attributes on it that move or hide it.
pub fn mod_declarations(src: &str) -> Vec<ModDecl> {
    let mut out = Vec::new();
    let mut pending_path = None;
    let mut pending_test = false;
    for line in src.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("#[path = \"") {
            pending_path = rest.split('"').next().map(str::to_string);
            continue;
        }
        if line == "#[cfg(test)]" {
            pending_test = true;
            continue;
        }
        let item = line
            .strip_prefix("pub(crate) ")
            .or_else(|| line.strip_prefix("pub "))
            .unwrap_or(line);
        if let Some(name) = item.strip_prefix("mod ").and_then(|r| r.strip_suffix(';')) {
            out.push(ModDecl {
                name: name.trim().to_string(),
                path: pending_path.take(),
                cfg_test: std::mem::take(&mut pending_test),
            });
        } else if !line.starts_with("#[") {
            pending_path = None;
            pending_test = false;
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
pub fn named_paths(code: &str, at: &ModPath) -> Vec<ModPath> {
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
pub fn owner(path: &ModPath, modules: &BTreeMap<ModPath, Module>) -> ModPath {
    (0..=path.len())
        .rev()
        .map(|n| path[..n].to_vec())
        .find(|p| modules.contains_key(p))
        .unwrap_or_default()
}

/// `code` (already [`strip`]ped) with every item under `#[cfg(test)]` blanked: an inline
/// `mod tests { … }`, a test-only `use` or function. What is left is what the product compiles.
pub fn without_test_items(code: &str) -> String {
    const ATTR: &str = "#[cfg(test)]";
    let mut out = code.to_string();
    while let Some(at) = out.find(ATTR) {
        let b = out.as_bytes();
        let mut i = at + ATTR.len();
        let mut depth = 0usize;
        while i < b.len() {
            match b[i] {
                b';' if depth == 0 => break,
                b'{' => depth += 1,
                b'}' => {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                _ => {}
            }
            i += 1;
        }
        let end = (i + 1).min(out.len());
        out.replace_range(at..end, &" ".repeat(end - at));
    }
    out
}

#[test]
fn every_crate_of_the_workspace_is_a_root() {
    let found = roots();
    for want in [
        "ffi/src/lib.rs",
        "tool/src/lib.rs",
        "tool/format/src/lib.rs",
        "analyzer/windows/src/lib.rs",
        "analyzer/src/lib.rs",
        "analyzer/src/main.rs",
        "kernels/src/lib.rs",
        "kernels/emu/src/lib.rs",
        "kernels/emu/src/main.rs",
        "kernels/emu/driver/src/lib.rs",
        "tests/src/lib.rs",
        "tests/probe/src/lib.rs",
    ] {
        assert!(found.iter().any(|r| r == want), "{want} not in {found:?}");
    }
    let manifest = "[workspace]\nresolver = \"3\"\nmembers = [\n    \"ffi\",\n    \"tool\", # the tool\n    \
                    \"a/b\", \"c\",\n]\n\n[workspace.package]\nversion = \"0.1.0\"\n";
    assert_eq!(workspace_members(manifest), ["ffi", "tool", "a/b", "c"]);
}
