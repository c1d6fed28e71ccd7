//! Every HSA function krphase and the emulator's clients resolve by name is one Debian's real ROCr
//! (`libhsa-runtime64.so.1`, package `libhsa-runtime64-1`) exports, and the emulator exports no
//! HSA function ROCr does not. The names come from where they are resolved, not from a list kept
//! here: `krphase_ffi::sdk::SYMBOLS` (the `sdk_symbols!` table, through which the tool, the probe
//! and the driver client resolve everything), every `dlsym` of an `hsa_*` name in the clients'
//! sources, and the emulator binary's dynamic symbols. A missing library fails the test with the
//! line that installs it: nothing here is skipped.

use krphase_tests::artifacts;
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's ROCr, as `libhsa-runtime64-1` installs it.
const REAL_ROCR: &str = "/usr/lib/x86_64-linux-gnu/libhsa-runtime64.so.1";

/// Sources of the clients that could resolve an HSA function themselves.
const CLIENT_SOURCES: &[&str] = &[
    "kernels/emu/clients",
    "tests/probe/src",
    "kernels/emu/driver/src",
    "tool/src",
];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("workspace root")
        .to_path_buf()
}

/// The defined dynamic symbols of `file`, without version suffixes (`nm -D --defined-only`).
fn dynamic_symbols(file: &Path) -> BTreeSet<String> {
    let out = Command::new("nm")
        .args(["-D", "--defined-only", "--format=just-symbols"])
        .arg(file)
        .output()
        .unwrap_or_else(|e| {
            panic!("nm (binutils) is needed to read {}: {e}; install it with: apt-get install -y binutils", file.display())
        });
    assert!(
        out.status.success(),
        "nm -D {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| l.split('@').next().unwrap_or(l).trim().to_string())
        .filter(|l| !l.is_empty())
        .collect()
}

/// The real library's exports; a missing library fails with the line that installs it.
fn real_exports() -> BTreeSet<String> {
    let lib = Path::new(REAL_ROCR);
    assert!(
        lib.exists(),
        "Debian's ROCm runtime is not installed ({REAL_ROCR} is missing): the HSA names krphase \
         resolves are checked against it. Install it with: apt-get install -y libhsa-runtime64-1 \
         (scripts/test installs it)"
    );
    let names = dynamic_symbols(lib);
    assert!(
        names.iter().filter(|n| n.starts_with("hsa_")).count() > 100,
        "{REAL_ROCR} exports too few hsa_* functions to be ROCr: {names:?}"
    );
    names
}

/// Every `.c`, `.h` and `.rs` file under `dir`.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let p = e.expect("a directory entry").path();
        if p.is_dir() {
            sources(&p, out);
        } else if p
            .extension()
            .is_some_and(|x| x == "c" || x == "h" || x == "rs")
        {
            out.push(p);
        }
    }
}

/// (name, where) of every HSA function resolved by name.
fn resolved_by_name() -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = krphase_ffi::sdk::SYMBOLS
        .iter()
        .filter(|(n, _)| n.starts_with("hsa_"))
        .map(|(n, _)| (n.to_string(), "ffi/src/sdk.rs sdk_symbols!".to_string()))
        .collect();
    let dlsym = regex::Regex::new(r#"(?s)dlsym\s*\([^;]*?c?"(hsa_[A-Za-z0-9_]+)""#).unwrap();
    let top = workspace();
    let mut files = Vec::new();
    for dir in CLIENT_SOURCES {
        sources(&top.join(dir), &mut files);
    }
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let shown = f.strip_prefix(&top).unwrap_or(&f).display().to_string();
        for c in dlsym.captures_iter(&text) {
            v.push((c[1].to_string(), shown.clone()));
        }
    }
    v
}

#[test]
fn every_hsa_function_resolved_by_name_is_a_real_rocr_export() {
    let real = real_exports();
    let wanted = resolved_by_name();
    assert!(
        wanted
            .iter()
            .any(|(n, _)| n == "hsa_system_get_major_extension_table"),
        "the loader is reached through the extension-table function: {wanted:?}"
    );
    let missing: Vec<String> = wanted
        .iter()
        .filter(|(n, _)| !real.contains(n))
        .map(|(n, at)| format!("{n} ({at})"))
        .collect();
    assert!(
        missing.is_empty(),
        "resolved by name, but not exported by ROCr ({REAL_ROCR}, {} exports): {}. ROCr exports \
         no hsa_ven_amd_loader_* function: the loader's functions come from \
         hsa_system_get_major_extension_table(HSA_EXTENSION_AMD_LOADER, 1, …)",
        real.len(),
        missing.join(", ")
    );
}

#[test]
fn the_emulator_exports_only_hsa_functions_rocr_exports() {
    let real = real_exports();
    let emu: BTreeSet<String> = dynamic_symbols(&artifacts().emu)
        .into_iter()
        .filter(|n| n.starts_with("hsa_"))
        .collect();
    let loader: Vec<&String> = emu
        .iter()
        .filter(|n| n.starts_with("hsa_ven_amd_loader_"))
        .collect();
    assert!(
        loader.is_empty(),
        "krphase-emu exports loader functions ROCr keeps in its extension table: {loader:?}"
    );
    assert!(
        emu.contains("hsa_system_get_major_extension_table"),
        "krphase-emu serves the loader through the extension table: {emu:?}"
    );
    let extra: Vec<&String> = emu.difference(&real).collect();
    assert!(
        extra.is_empty(),
        "krphase-emu exports HSA functions {REAL_ROCR} does not: {extra:?}"
    );
}
