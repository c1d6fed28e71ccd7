//! `krphase-windows` sits between the file format and the analyzer: of krphase's own crates it
//! depends on `krphase-format` only (cargo already keeps the format crate from depending back).

use std::fs;

use crate::modules::workspace_top;

/// The `krphase-*` crates a manifest names in its dependency sections (normal, dev and build).
fn own_dependencies(manifest: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut in_deps = false;
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_deps = line.ends_with("dependencies]");
            continue;
        }
        if !in_deps {
            continue;
        }
        let name = line.split(['=', '.', ' ']).next().unwrap_or_default();
        if name.starts_with("krphase-") {
            out.push(name.to_string());
        }
    }
    out
}

#[test]
fn the_window_model_depends_only_on_the_format_crate() {
    let manifest = fs::read_to_string(workspace_top().join("analyzer/windows/Cargo.toml"))
        .expect("analyzer/windows/Cargo.toml");
    assert_eq!(own_dependencies(&manifest), ["krphase-format"]);
}

#[test]
fn the_checker_reads_every_dependency_section() {
    let m = "[package]\nname = \"krphase-windows\"\n\n[dependencies]\nkrphase-format.workspace = \
             true\nserde = \"1\"\n\n[dev-dependencies]\nkrphase-kernels = { path = \"../k\" }\n\n\
             [target.'cfg(unix)'.build-dependencies]\nkrphase-ffi.workspace = true\n[lints]\n\
             krphase-x = 1\n";
    assert_eq!(
        own_dependencies(m),
        ["krphase-format", "krphase-kernels", "krphase-ffi"]
    );
}
