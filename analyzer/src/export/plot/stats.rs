//! What the plots draw, read once per run: per-window samples of the shown phases, per-kernel
//! sums of the stacked phases, and the run's coordinates for sweeps.

use std::collections::BTreeMap;

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension};

use crate::db::phases;

/// Phases drawn in the breakdown, in stacking order (pre-pass is split into drain and
/// snapshot when an SDK log is joined).
pub const STACK: &[&str] = &[
    "config",
    "drain",
    "snapshot",
    "pre-pass",
    "pass exec",
    "continue",
    "restore",
    "tail",
];
/// Phases drawn as histograms and in sweeps.
pub const SHOWN: &[&str] = &["window", "pre-pass", "pass exec", "restore"];

/// Options of an emulator command line that are sweep coordinates or only set the run length.
const SWEPT_OPTIONS: &[&str] = &["--elements", "--depth", "--iterations"];

/// One run's figures.
#[derive(Default, Debug)]
pub struct RunStats {
    pub label: String,
    pub workload: Option<String>,
    pub depth: Option<f64>,
    /// Everything else that sets the run's configuration (mode, kernel filter, other command
    /// options): runs with different `rest` never share a sweep.
    pub rest: String,
    pub windows: u64,
    pub passes: i64,
    pub bytes: i64,
    /// Per [`SHOWN`] phase: its value (ms) in each replayed window that has one.
    pub samples: Vec<Vec<f64>>,
    /// Per kernel: per [`STACK`] entry the sum (ns) over replayed windows, and their count.
    pub kernels: BTreeMap<String, (Vec<f64>, u64)>,
    /// The run came from the emulator (`db::emulated`).
    pub emulated: bool,
}

/// The subtitle line that says a plot's runs came from the emulator, when any did.
pub fn emulated_line<'a>(stats: impl IntoIterator<Item = &'a RunStats>) -> Option<String> {
    stats
        .into_iter()
        .any(|s| s.emulated)
        .then(|| crate::db::emulated::NOTE.to_string())
}

/// The workload, `--depth` and the remaining options of a command line.
pub fn parse_command(cmd: &str) -> (Option<String>, Option<f64>, Vec<String>) {
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    let run = toks.iter().position(|t| *t == "run");
    let workload = run.and_then(|i| toks.get(i + 1)).map(|s| s.to_string());
    let depth = toks
        .iter()
        .position(|t| *t == "--depth")
        .and_then(|i| toks.get(i + 1))
        .and_then(|s| s.parse().ok());
    let from = run.map_or(1, |i| i + 2);
    let mut rest = Vec::new();
    let mut i = from;
    while i < toks.len() {
        if SWEPT_OPTIONS.contains(&toks[i]) {
            i += 2;
            continue;
        }
        rest.push(toks[i].to_string());
        i += 1;
    }
    (workload, depth, rest)
}

/// The run's label, command, mode and kernel filter columns.
type RunRow = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The run's label, command, mode and kernel filter.
fn run_row(conn: &Connection, run: i64) -> Result<(String, String, String, Option<String>)> {
    let row: Option<RunRow> = conn
        .query_row(
            "SELECT label, command, mode, kernel_filter FROM krphase_run WHERE id = ?1",
            [run],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let (label, command, mode, filter) = row.with_context(|| format!("unknown run id {run}"))?;
    Ok((
        label.unwrap_or_else(|| format!("run {run}")),
        command.unwrap_or_default(),
        mode.unwrap_or_else(|| "?".into()),
        filter.filter(|f| !f.is_empty()),
    ))
}

/// Reads run `run`'s figures.
pub fn run_stats(conn: &Connection, run: i64) -> Result<RunStats> {
    let (label, command, mode, filter) = run_row(conn, run)?;
    let emulated = crate::db::emulated::command_is_emulated(&command);
    let (workload, depth, opts) = parse_command(&command);
    let mut rest = vec![format!("{mode} mode")];
    rest.push(match filter {
        Some(f) => format!("kernel filter {f}"),
        None => "no kernel filter".into(),
    });
    if !opts.is_empty() {
        rest.push(opts.join(" "));
    }
    let mut s = RunStats {
        label,
        workload,
        depth,
        rest: rest.join("; "),
        samples: vec![Vec::new(); SHOWN.len()],
        emulated,
        ..RunStats::default()
    };
    phases::for_each_window(conn, run, |w| {
        if w.replayed() {
            s.add_window(w);
        }
        Ok(())
    })?;
    Ok(s)
}

impl RunStats {
    fn add_window(&mut self, w: &phases::WindowRow) {
        let idx = |n: &str| phases::index(n).expect("phase");
        self.windows += 1;
        self.passes += w.executed_passes.unwrap_or(0);
        self.bytes += w.snapshot_bytes.unwrap_or(0);
        for (i, name) in SHOWN.iter().enumerate() {
            if let Some(v) = w.phase_ns[idx(name)] {
                self.samples[i].push(v as f64 / 1e6);
            }
        }
        let split = w.phase_ns[idx("drain")].is_some();
        let entry = self
            .kernels
            .entry(crate::db::kernel_names::shown(&w.kernel))
            .or_insert_with(|| (vec![0.0; STACK.len()], 0));
        entry.1 += 1;
        for (k, name) in STACK.iter().enumerate() {
            let skip = match *name {
                "pre-pass" => split,
                "drain" | "snapshot" => !split,
                _ => false,
            };
            if !skip {
                entry.0[k] += w.phase_ns[idx(name)].unwrap_or(0).max(0) as f64;
            }
        }
    }
}

/// Runs grouped by label in order of first appearance: (label, its runs).
pub fn by_label(stats: &[RunStats]) -> Vec<(String, Vec<&RunStats>)> {
    let mut out: Vec<(String, Vec<&RunStats>)> = Vec::new();
    for s in stats {
        match out.iter_mut().find(|(l, _)| *l == s.label) {
            Some((_, v)) => v.push(s),
            None => out.push((s.label.clone(), vec![s])),
        }
    }
    out
}

/// "1 run" / "5 runs".
pub fn runs_text(n: usize) -> String {
    if n == 1 {
        "1 run".into()
    } else {
        format!("{n} runs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_command_gives_workload_depth_and_the_other_options() {
        let (w, d, rest) = parse_command(
            "/x/krphase-emu run queue-depth --depth 100 --iterations 3 --link-gbps 3",
        );
        assert_eq!((w.as_deref(), d), (Some("queue-depth"), Some(100.0)));
        assert_eq!(rest, ["--link-gbps", "3"]);
        assert_eq!(parse_command("app"), (None, None, vec![]));
    }
}
