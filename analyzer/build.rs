//! Embeds the git commit krphase was built from (`KRPHASE_GIT_COMMIT`), so that every report
//! and pull-request section can say which krphase produced it. Outside a git checkout (a source
//! tarball, a vendored copy) the commit is `unknown`.

use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    let s = String::from_utf8(out.stdout).ok()?.trim().to_string();
    (!s.is_empty()).then_some(s)
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=KRPHASE_GIT_COMMIT={commit}");
    // Rebuild when HEAD moves: a new commit updates HEAD's log, a checkout HEAD itself.
    for path in ["HEAD", "logs/HEAD"] {
        if let Some(p) = git(&["rev-parse", "--git-path", path]) {
            println!("cargo:rerun-if-changed={p}");
        }
    }
    println!("cargo:rerun-if-changed=build.rs");
}
