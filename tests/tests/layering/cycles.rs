//! No two sibling modules (files of one folder, or folders of one parent) depend on each other,
//! directly or around a longer cycle, in any crate of the workspace.
//!
//! A module's dependencies are the `crate::…`, `super::…` and `self::…` paths its file (and the
//! files below it) name. A path is charged to the deepest module it reaches, so naming the parent's
//! own items, or a child's, is never a sibling edge. Crates already form a graph without cycles
//! (cargo refuses otherwise), so only modules inside a crate need checking.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::modules::{
    ModPath, Module, crate_modules, named_paths, owner, roots, strip, workspace_top,
};

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
    for root in roots() {
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
        test_only: false,
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
        test_only: false,
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
