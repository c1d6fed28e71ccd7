//! Instruction counts for the benches: a program run under callgrind, its total instructions
//! (all of them, or those inside the functions a toggle names).
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Stdio};

/// Why there are no counts when `KRPHASE_BENCH_NO_CALLGRIND` is set.
pub fn switched_off() -> Result<(), String> {
    match std::env::var_os("KRPHASE_BENCH_NO_CALLGRIND") {
        Some(_) => Err("callgrind switched off (KRPHASE_BENCH_NO_CALLGRIND)".into()),
        None => Ok(()),
    }
}

/// Runs `program args` with `envs` under callgrind (collecting only inside `toggle`'s
/// functions when given) and returns its total instructions; `Err` says why there is none.
pub fn total(
    program: &Path,
    args: &[&str],
    envs: &[(&str, &str)],
    toggle: Option<&str>,
) -> Result<u64, String> {
    let out = std::env::temp_dir().join(format!(
        "krphase-cg-{}-{}.out",
        std::process::id(),
        COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    let st = Command::new("valgrind")
        .args(["--tool=callgrind", "--quiet"])
        .args(toggle.map(|t| format!("--toggle-collect={t}")))
        .arg(format!("--callgrind-out-file={}", out.display()))
        .arg(program)
        .args(args)
        .envs(envs.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .map_err(|e| match e.kind() {
            std::io::ErrorKind::NotFound => {
                "valgrind not found (apt-get install valgrind)".to_string()
            }
            _ => format!("valgrind did not start: {e}"),
        })?;
    if !st.success() {
        return Err(format!("valgrind failed: {st}"));
    }
    let text = std::fs::read_to_string(&out).map_err(|e| e.to_string())?;
    let _ = std::fs::remove_file(&out);
    text.lines()
        .find_map(|l| {
            l.strip_prefix("summary: ")
                .or_else(|| l.strip_prefix("totals: "))
        })
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .ok_or_else(|| "no totals in the callgrind output".into())
}

static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Instructions per unit: `run(a)` and `run(b)` totals, the difference over `b - a` (start-up
/// and exit cancel).
pub fn per_unit(
    a: usize,
    b: usize,
    run: impl Fn(usize) -> Result<u64, String>,
) -> Result<f64, String> {
    switched_off()?;
    let (ia, ib) = (run(a)?, run(b)?);
    Ok(ib.saturating_sub(ia) as f64 / (b - a) as f64)
}
