//! The Python packages some tests read krphase's outputs with (other projects' own readers:
//! Perfetto's protobuf modules, DuckDB, sqlglot), pinned in `tests/python-requirements.txt` and
//! installed beside the build in `target/pydeps` (`KRPHASE_PYDEPS` overrides). `scripts/test`
//! installs them; a test run that finds them missing installs them itself with pip, once, under a lock, so
//! `cargo test --workspace` on a fresh machine needs only pip and the registry.

use std::path::PathBuf;
use std::process::Command;
use std::sync::OnceLock;

/// The pinned requirements file.
fn requirements() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("python-requirements.txt")
}

/// Where the packages live (`PYTHONPATH` for the tests' `python3`).
pub fn site() -> PathBuf {
    if let Some(p) = std::env::var_os("KRPHASE_PYDEPS") {
        return PathBuf::from(p);
    }
    crate::profile_dir()
        .parent()
        .expect("target dir")
        .join("pydeps")
}

/// A Python program that exits 0 when every pinned package is installed at its version.
const CHECK: &str = "import importlib.metadata as m, sys\n\
want = [l.strip().split('==') for l in open(sys.argv[1]) if l.strip() and l[0] != '#']\n\
sys.exit(any(m.version(n) != v for n, v in want))";

/// Whether every pinned package is installed at its pinned version.
fn present() -> bool {
    Command::new("python3")
        .env("PYTHONPATH", site())
        .args(["-c", CHECK])
        .arg(requirements())
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Makes sure the pinned packages are in [`site`] and returns it; panics with one line saying
/// how to install them when they are missing and pip cannot install them.
pub fn ensure() -> PathBuf {
    static DONE: OnceLock<()> = OnceLock::new();
    DONE.get_or_init(|| {
        if present() {
            return;
        }
        let site = site();
        std::fs::create_dir_all(&site).expect("create the Python packages' directory");
        // Under flock(1), checked again: test binaries starting together install once, and
        // none replaces packages another is already reading.
        let script = "python3 -c \"$1\" \"$2\" || python3 -m pip install --quiet \
                      --disable-pip-version-check --upgrade --target \"$3\" -r \"$2\"";
        let _ = Command::new("flock")
            .arg(site.with_extension("lock"))
            .args(["sh", "-c", script, "sh", CHECK])
            .arg(requirements())
            .arg(&site)
            .env("PYTHONPATH", &site)
            .output();
        assert!(
            present(),
            "the Python packages in {} are missing from {} and pip could not install them: run \
             .ci/run, or python3 -m pip install --target {} -r {}",
            requirements().display(),
            site.display(),
            site.display(),
            requirements().display()
        );
    });
    site()
}
