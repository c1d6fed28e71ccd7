//! Builds the fake SDK (`tests/fake_sdk/fake_sdk.c`) with the system C compiler.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Compiles the fake SDK into a fresh shared library and returns its path. `defines` are
/// `-D` names; `soname` sets `DT_SONAME`. Panics with the compiler's output on failure: these
/// tests need `cc` (gcc is on every dev and CI machine of this project).
pub fn build_fake(tag: &str, defines: &[&str], soname: Option<&str>) -> PathBuf {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fake_sdk/fake_sdk.c");
    let dir =
        Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("fake-sdk-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("create fake SDK build dir");
    let out = dir.join(format!("libfake-{tag}.so"));
    let mut cmd = Command::new("cc");
    cmd.args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
        .arg(&out)
        .arg(&src);
    for d in defines {
        cmd.arg(format!("-D{d}"));
    }
    if let Some(s) = soname {
        cmd.arg(format!("-Wl,-soname,{s}"));
    }
    let res = cmd
        .output()
        .unwrap_or_else(|e| panic!("cannot run cc for the fake SDK: {e}"));
    assert!(
        res.status.success(),
        "cc failed building the fake SDK:\n{}",
        String::from_utf8_lossy(&res.stderr)
    );
    out
}
