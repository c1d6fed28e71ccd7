//! The analyzer's rooms stand in layers: a room's product code uses only rooms of lower layers,
//! so the data's path reads bottom to top. Test code (modules and items under `#[cfg(test)]`) may
//! reach further up, to check a room through the answers built on it; the sibling-cycle check
//! still covers it. The same table is drawn in `docs/architecture.md`, and the two must agree.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;

use crate::modules::{
    ModPath, Module, crate_modules, named_paths, without_test_items, workspace_top,
};

/// The analyzer's top-level modules by layer, lowest first.
pub const ANALYZER_LAYERS: &[&[&str]] = &[
    &["db"],
    &[
        "rocpd",
        "stats",
        "render",
        "doctor",
        "synth",
        "synth_benchmark",
    ],
    &["import", "answers"],
    &["compare", "export", "bench"],
    &["report"],
    &["run", "demo"],
    &["cli"],
];

/// Each room's layer.
fn layer_of(table: &[&[&str]]) -> BTreeMap<String, usize> {
    let mut out = BTreeMap::new();
    for (layer, rooms) in table.iter().enumerate() {
        for room in *rooms {
            assert!(
                out.insert(room.to_string(), layer).is_none(),
                "{room} is in the table twice"
            );
        }
    }
    out
}

/// Every break of the layering: a product module of one room naming a room of its own layer or
/// above, and every top-level room the table does not place.
fn violations(modules: &BTreeMap<ModPath, Module>, table: &[&[&str]]) -> Vec<String> {
    let layers = layer_of(table);
    let mut out = BTreeSet::new();
    for (path, module) in modules {
        let Some(room) = path.first() else { continue };
        if module.test_only {
            continue;
        }
        let Some(&mine) = layers.get(room) else {
            if path.len() == 1 {
                out.insert(format!("`{room}` has no layer in the table"));
            }
            continue;
        };
        let code = without_test_items(&module.code);
        for named in named_paths(&code, path) {
            let Some(other) = named.first().filter(|o| *o != room) else {
                continue;
            };
            if let Some(&theirs) = layers.get(other)
                && theirs >= mine
            {
                out.insert(format!(
                    "{} (`{room}`, layer {mine}) uses `{other}` (layer {theirs})",
                    path.join("::")
                ));
            }
        }
    }
    out.into_iter().collect()
}

#[test]
fn every_analyzer_room_uses_only_lower_layers() {
    let modules = crate_modules(&workspace_top().join("analyzer/src/lib.rs"));
    let found = violations(&modules, ANALYZER_LAYERS);
    assert!(
        found.is_empty(),
        "the analyzer's layering is broken:\n{}",
        found.join("\n")
    );
}

/// The layer table drawn in the doc: each row of the table whose header starts `| Layer |`, as the
/// backquoted room names of its second cell.
fn doc_table(doc: &str) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let mut inside = false;
    for line in doc.lines() {
        if line.starts_with("| Layer |") {
            inside = true;
            continue;
        }
        if !inside {
            continue;
        }
        if !line.starts_with('|') {
            break;
        }
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        if cells.get(1).is_some_and(|c| c.starts_with("---")) {
            continue;
        }
        let rooms = cells.get(2).copied().unwrap_or_default();
        rows.push(
            rooms
                .split('`')
                .skip(1)
                .step_by(2)
                .map(str::to_string)
                .collect(),
        );
    }
    rows
}

#[test]
fn the_architecture_doc_draws_the_same_layers() {
    let doc = fs::read_to_string(workspace_top().join("docs/architecture.md"))
        .expect("docs/architecture.md");
    let want: Vec<Vec<String>> = ANALYZER_LAYERS
        .iter()
        .map(|l| l.iter().map(|r| r.to_string()).collect())
        .collect();
    assert_eq!(
        doc_table(&doc),
        want,
        "docs/architecture.md's layer table differs from the one this test enforces"
    );
}

#[test]
fn the_checker_sees_a_room_using_its_own_layer_or_above() {
    use crate::modules::strip;
    let mk = |code: &str, test_only| Module {
        file: Default::default(),
        code: strip(code),
        test_only,
    };
    let p = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<ModPath>();
    let table: &[&[&str]] = &[&["low"], &["mid", "peer"], &["high"]];
    let mut modules = BTreeMap::new();
    modules.insert(
        p(&[]),
        mk(
            "pub mod low; pub mod mid; pub mod peer; pub mod high;",
            false,
        ),
    );
    modules.insert(p(&["low"]), mk("", false));
    modules.insert(
        p(&["mid"]),
        mk("use crate::low::x; use super::mid::y;", false),
    );
    modules.insert(p(&["peer"]), mk("", false));
    modules.insert(
        p(&["high"]),
        mk(
            "use crate::{mid, low::z};\n#[cfg(test)]\nmod tests { use crate::high::q; }",
            false,
        ),
    );
    // Test code may reach up: an inline test item, and a test-only module.
    modules.insert(p(&["low", "t"]), mk("fn f() { crate::high::g(); }", true));
    modules.insert(
        p(&["low", "inline"]),
        mk(
            "#[cfg(test)]\nmod tests { use crate::high::g; }\n#[cfg(test)]\nuse crate::mid::h;",
            false,
        ),
    );
    assert!(violations(&modules, table).is_empty());

    modules.insert(
        p(&["mid", "deep"]),
        mk("fn f() { crate::peer::g() }", false),
    );
    modules.insert(p(&["low", "up"]), mk("use crate::{high::{a, b}};", false));
    modules.insert(p(&["stray"]), mk("", false));
    assert_eq!(
        violations(&modules, table),
        [
            "`stray` has no layer in the table",
            "low::up (`low`, layer 0) uses `high` (layer 2)",
            "mid::deep (`mid`, layer 1) uses `peer` (layer 1)",
        ]
    );
}

#[test]
fn the_doc_table_is_read_row_by_row() {
    let doc = "intro\n\n| Layer | Rooms | Holds |\n|---|---|---|\n| 0 | `db` | the database |\n\
               | 1 | `a`, `b` | two |\n\nafter\n| 9 | `x` | not in the table |\n";
    assert_eq!(doc_table(doc), [vec!["db"], vec!["a", "b"]]);
}
