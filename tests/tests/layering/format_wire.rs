//! `krphase-format` is the wire format only: records, their kinds, blocks, header, trailer,
//! versions, the clock conversion a reader needs, reading and writing (and the small files tests
//! build). What the events mean as replay windows is `krphase-windows`, the next crate on the
//! data's path; the format crate holds no module for it and defines none of its items.

use std::collections::BTreeSet;
use std::fs;
use std::path::Path;

use regex::Regex;

use crate::modules::{crate_modules, strip, workspace_top};
use crate::no_path::rust_files;

/// The format crate's top-level modules: the wire, and nothing that interprets it.
const WIRE_MODULES: &[&str] = &[
    "block",
    "clock",
    "enqueue_pair",
    "event",
    "events_block",
    "header",
    "read",
    "record",
    "sample",
    "skipped",
    "synthetic",
    "trailer",
    "version",
    "write",
];

/// The names a crate's files define: types (at any depth) and top-level functions, constants
/// and statics.
fn defined_names(files: &[std::path::PathBuf], public_only: bool) -> BTreeSet<String> {
    let vis = if public_only {
        r"pub"
    } else {
        r"(?:pub(?:\([a-z]+\))?\s+)?"
    };
    let types = Regex::new(&format!(
        r"(?m)^\s*{vis}\s*(?:struct|enum|trait|type|union)\s+([A-Za-z_][A-Za-z0-9_]*)"
    ))
    .unwrap();
    let items = Regex::new(&format!(
        r"(?m)^{vis}\s*(?:fn|const|static)\s+([A-Za-z_][A-Za-z0-9_]*)"
    ))
    .unwrap();
    let mut out = BTreeSet::new();
    for f in files {
        let code = strip(&fs::read_to_string(f).expect("a source file"));
        for re in [&types, &items] {
            out.extend(re.captures_iter(&code).map(|c| c[1].to_string()));
        }
    }
    out
}

fn src_files(dir: &str) -> Vec<std::path::PathBuf> {
    rust_files(&workspace_top().join(dir))
}

#[test]
fn the_format_crate_has_only_wire_modules() {
    let modules = crate_modules(&workspace_top().join("tool/format/src/lib.rs"));
    let top: BTreeSet<&str> = modules
        .iter()
        .filter(|(p, m)| p.len() == 1 && !m.test_only)
        .map(|(p, _)| p[0].as_str())
        .collect();
    let extra: Vec<&&str> = top.iter().filter(|m| !WIRE_MODULES.contains(m)).collect();
    assert!(
        extra.is_empty(),
        "krphase-format has modules beyond the wire format: {extra:?} (interpretation goes to \
         krphase-windows or the analyzer)"
    );
}

#[test]
fn the_format_crate_defines_none_of_the_window_models_items() {
    let model = defined_names(&src_files("analyzer/windows/src"), true);
    assert!(
        ["Window", "Reconstructor", "Limits", "Decline"]
            .iter()
            .all(|n| model.contains(*n)),
        "the window model's items were not read: {model:?}"
    );
    let format = defined_names(&src_files("tool/format/src"), false);
    let both: Vec<&String> = model.intersection(&format).collect();
    assert!(
        both.is_empty(),
        "krphase-format defines items of the window model: {both:?}"
    );
}

#[test]
fn the_checker_reads_types_at_any_depth_and_top_level_items() {
    let dir = std::env::temp_dir().join(format!("krphase-layering-{}", std::process::id()));
    fs::create_dir_all(&dir).unwrap();
    let f = dir.join("x.rs");
    fs::write(
        &f,
        "pub struct Window;\nmod m {\n    pub(crate) enum Pass { A }\n}\n\
         impl Window {\n    pub fn take(&self) {}\n}\npub fn decode_file() {}\n\
         // pub struct Comment;\nconst LIMIT: u32 = 1;\n",
    )
    .unwrap();
    let all = defined_names(std::slice::from_ref(&f), false);
    let public = defined_names(std::slice::from_ref(&f), true);
    fs::remove_dir_all(Path::new(&dir)).unwrap();
    assert_eq!(
        all.into_iter().collect::<Vec<_>>(),
        ["LIMIT", "Pass", "Window", "decode_file"]
    );
    assert_eq!(
        public.into_iter().collect::<Vec<_>>(),
        ["Window", "decode_file"]
    );
}
