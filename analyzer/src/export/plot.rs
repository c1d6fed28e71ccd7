//! `krphase plot [RUN...] -o DIR`: SVG plots — the stacked phase breakdown per kernel, a
//! histogram per phase, and phase time against pass count, footprint and queue depth when runs
//! of the same workload form a sweep.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{Context, Result};
use rusqlite::{Connection, OptionalExtension};

use super::svg;
use crate::db::phases::{self, PHASES};
use crate::report::stats::quantile_sorted_f64;

/// Phases drawn in the breakdown, in stacking order (pre-pass is split when a log is joined).
const STACK: &[&str] = &[
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
const SHOWN: &[&str] = &["pre-pass", "pass exec", "restore", "window"];

#[derive(Default)]
struct RunStats {
    label: String,
    workload: Option<String>,
    depth: Option<f64>,
    windows: u64,
    passes: i64,
    bytes: i64,
    /// Per phase sum over replayed windows (ns) and count.
    sums: Vec<(f64, u64)>,
    /// Per kernel: per STACK entry sum (ns), and window count.
    kernels: BTreeMap<String, (Vec<f64>, u64)>,
}

/// The workload and `--depth` of an emulator command line.
fn workload_and_depth(cmd: &str) -> (Option<String>, Option<f64>) {
    let toks: Vec<&str> = cmd.split_whitespace().collect();
    let workload = toks
        .iter()
        .position(|t| *t == "run")
        .and_then(|i| toks.get(i + 1))
        .map(|s| s.to_string());
    let depth = toks
        .iter()
        .position(|t| *t == "--depth")
        .and_then(|i| toks.get(i + 1))
        .and_then(|s| s.parse().ok());
    (workload, depth)
}

fn run_stats(conn: &Connection, run: i64, samples: &mut [Vec<f64>]) -> Result<RunStats> {
    let (label, command): (Option<String>, Option<String>) = conn
        .query_row(
            "SELECT label, command FROM krphase_run WHERE id = ?1",
            [run],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?
        .with_context(|| format!("unknown run id {run}"))?;
    let (workload, depth) = workload_and_depth(command.as_deref().unwrap_or(""));
    let mut s = RunStats {
        label: label.unwrap_or_else(|| format!("run {run}")),
        workload,
        depth,
        sums: vec![(0.0, 0); PHASES.len()],
        ..RunStats::default()
    };
    let idx = |n: &str| phases::index(n).expect("phase");
    phases::for_each_window(conn, run, |w| {
        if !w.replayed() {
            return Ok(());
        }
        s.windows += 1;
        s.passes += w.executed_passes.unwrap_or(0);
        s.bytes += w.snapshot_bytes.unwrap_or(0);
        for (k, v) in w.phase_ns.iter().enumerate() {
            if let Some(v) = v {
                s.sums[k].0 += *v as f64;
                s.sums[k].1 += 1;
            }
        }
        for (i, name) in SHOWN.iter().enumerate() {
            if let Some(v) = w.phase_ns[idx(name)] {
                samples[i].push(v as f64 / 1e6);
            }
        }
        let split = w.phase_ns[idx("drain")].is_some();
        let entry = s
            .kernels
            .entry(w.kernel.clone())
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
        Ok(())
    })?;
    Ok(s)
}

type XFn = fn(&RunStats) -> Option<f64>;
/// A sweep dimension: file-name tag, axis label, and the run's coordinate.
type SweepDim = (&'static str, &'static str, XFn);

/// The runs forming the sweep along `dims[d]`: runs are grouped by the other dimensions
/// (bucketed), and the group with the most distinct values along `d` wins, so a sweep never
/// mixes, say, two footprints into one pass-count point.
fn sweep_group<'a>(all: &[&'a RunStats], dims: &[SweepDim], d: usize) -> Vec<&'a RunStats> {
    let mut groups: BTreeMap<Vec<Option<i64>>, Vec<&'a RunStats>> = BTreeMap::new();
    for s in all {
        let key = dims
            .iter()
            .enumerate()
            .filter(|(o, _)| *o != d)
            .map(|(_, (_, _, f))| f(s).map(sweep_key))
            .collect();
        groups.entry(key).or_default().push(s);
    }
    let xf = dims[d].2;
    let rank = |g: &Vec<&RunStats>| {
        let mut xs: Vec<i64> = g.iter().filter_map(|s| xf(s).map(sweep_key)).collect();
        xs.sort_unstable();
        xs.dedup();
        (xs.len(), g.len())
    };
    groups.into_values().max_by_key(rank).unwrap_or_default()
}

/// Bucket of a sweep coordinate: values within about 3 % share a bucket, so repeated runs
/// of one configuration pool while a real step (2 -> 4 passes, 1 -> 4 MiB) separates.
fn sweep_key(x: f64) -> i64 {
    if x <= 0.0 {
        return i64::MIN;
    }
    (x.log2() * 24.0).round() as i64
}

/// Writes the plots for `runs` (every run when empty) into `dir`; returns the files written.
pub fn plot(conn: &Connection, runs: &[i64], dir: &Path) -> Result<Vec<PathBuf>> {
    let runs: Vec<i64> = if runs.is_empty() {
        crate::db::runs::select_all(conn, &[])?
    } else {
        runs.to_vec()
    };
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); SHOWN.len()];
    let mut stats = Vec::new();
    for &r in &runs {
        stats.push(run_stats(conn, r, &mut samples)?);
    }
    let mut plots = vec![("breakdown.svg".to_string(), breakdown(&stats))];
    plots.extend(histograms(&mut samples));
    plots.extend(sweeps(&stats));
    let mut written = Vec::new();
    for (name, svg) in plots {
        let p = dir.join(name);
        std::fs::write(&p, svg).with_context(|| format!("cannot write {}", p.display()))?;
        written.push(p);
    }
    Ok(written)
}

/// Stacked breakdown: one bar per (label, kernel), runs sharing a label pooled; mean ms per
/// window.
fn breakdown(stats: &[RunStats]) -> String {
    let mut bars: Vec<(String, Vec<f64>, u64)> = Vec::new();
    for s in stats {
        for (k, (sums, n)) in &s.kernels {
            let name = format!("{} {k}", s.label);
            match bars.iter_mut().find(|b| b.0 == name) {
                Some(b) => {
                    b.1.iter_mut().zip(sums).for_each(|(a, x)| *a += x);
                    b.2 += n;
                }
                None => bars.push((name, sums.clone(), *n)),
            }
        }
    }
    let labels: Vec<String> = bars.iter().map(|b| b.0.clone()).collect();
    let values: Vec<Vec<f64>> = bars
        .iter()
        .map(|(_, sums, n)| sums.iter().map(|v| v / *n as f64 / 1e6).collect())
        .collect();
    let series: Vec<String> = STACK.iter().map(|s| s.to_string()).collect();
    svg::stacked_bars(
        "Phase breakdown per kernel (mean per replayed window)",
        "ms per window",
        &labels,
        &series,
        &values,
    )
}

/// A histogram per shown phase, bins from the minimum to the 99th percentile (the rest in the
/// last bin): (file name, SVG).
fn histograms(samples: &mut [Vec<f64>]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (i, name) in SHOWN.iter().enumerate() {
        let v = &mut samples[i];
        if v.is_empty() {
            continue;
        }
        v.sort_by(f64::total_cmp);
        let lo = v[0];
        let p99 = quantile_sorted_f64(v, 0.99).unwrap_or(lo);
        let hi = p99.max(lo + 1e-6);
        let bins = 40usize;
        let edges: Vec<f64> = (0..=bins)
            .map(|k| lo + (hi - lo) * k as f64 / bins as f64)
            .collect();
        let mut counts = vec![0u64; bins];
        for x in v.iter() {
            let b = (((x - lo) / (hi - lo)) * bins as f64) as usize;
            counts[b.min(bins - 1)] += 1;
        }
        let file = format!("hist-{}.svg", name.replace(' ', "-"));
        out.push((
            file,
            svg::histogram(
                &format!("{name} per replayed window"),
                "ms",
                &edges,
                &counts,
            ),
        ));
    }

    out
}

/// Sweeps within each workload: x = passes per window, footprint (MiB), queue depth; one plot
/// per workload and dimension with at least two distinct x: (file name, SVG).
fn sweeps(stats: &[RunStats]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut by_workload: BTreeMap<String, Vec<&RunStats>> = BTreeMap::new();
    for s in stats {
        if s.windows > 0 {
            by_workload
                .entry(s.workload.clone().unwrap_or_else(|| "runs".into()))
                .or_default()
                .push(s);
        }
    }
    let dims: [SweepDim; 3] = [
        ("passes", "passes per window", |s| {
            Some(s.passes as f64 / s.windows as f64)
        }),
        ("footprint", "snapshot MiB per window", |s| {
            Some(s.bytes as f64 / s.windows as f64 / (1 << 20) as f64)
        }),
        (
            "depth",
            "queue depth (dispatches between synchronizations)",
            |s| s.depth,
        ),
    ];
    for (wl, all) in &by_workload {
        for (d, (dim, xlabel, xf)) in dims.iter().enumerate() {
            let group = sweep_group(all, &dims, d);
            // Mean per phase at each distinct x (runs at the same x are pooled).
            let mut at: BTreeMap<i64, (f64, Vec<(f64, u64)>)> = BTreeMap::new();
            for s in group {
                let Some(x) = xf(s) else { continue };
                let key = sweep_key(x);
                let e = at
                    .entry(key)
                    .or_insert_with(|| (x, vec![(0.0, 0); PHASES.len()]));
                for (k, (sum, n)) in s.sums.iter().enumerate() {
                    e.1[k].0 += sum;
                    e.1[k].1 += n;
                }
            }
            if at.len() < 2 {
                continue;
            }
            let xs: Vec<f64> = at.values().map(|(x, _)| *x).collect();
            let names: Vec<String> = SHOWN.iter().map(|s| s.to_string()).collect();
            let ys: Vec<Vec<Option<f64>>> = SHOWN
                .iter()
                .map(|name| {
                    let k = phases::index(name).expect("phase");
                    at.values()
                        .map(|(_, sums)| {
                            (sums[k].1 > 0).then(|| sums[k].0 / sums[k].1 as f64 / 1e6)
                        })
                        .collect()
                })
                .collect();
            out.push((
                format!("sweep-{dim}-{wl}.svg"),
                svg::lines(
                    &format!("{wl}: phase time vs {dim}"),
                    xlabel,
                    "ms per window",
                    &xs,
                    &names,
                    &ys,
                ),
            ));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sweep_holds_the_other_dimensions_constant() {
        let run = |label: &str, passes: i64, mib: i64| RunStats {
            label: label.into(),
            windows: 10,
            passes: passes * 10,
            bytes: (mib * 10) << 20,
            ..RunStats::default()
        };
        // 2 and 4 passes at 1 MiB, plus 2 passes at 1, 4 and 64 MiB.
        let runs = [
            run("2p-1m", 2, 1),
            run("4p-1m", 4, 1),
            run("2p-4m", 2, 4),
            run("2p-64m", 2, 64),
        ];
        let all: Vec<&RunStats> = runs.iter().collect();
        let dims: [SweepDim; 3] = [
            ("passes", "", |s| Some(s.passes as f64 / s.windows as f64)),
            ("footprint", "", |s| {
                Some(s.bytes as f64 / s.windows as f64 / (1 << 20) as f64)
            }),
            ("depth", "", |s| s.depth),
        ];
        let labels = |g: Vec<&RunStats>| g.iter().map(|s| s.label.clone()).collect::<Vec<_>>();
        // The pass sweep keeps the footprint at 1 MiB: the 4 and 64 MiB runs stay out.
        assert_eq!(labels(sweep_group(&all, &dims, 0)), ["2p-1m", "4p-1m"]);
        // The footprint sweep keeps 2 passes: the 4-pass run stays out.
        assert_eq!(
            labels(sweep_group(&all, &dims, 1)),
            ["2p-1m", "2p-4m", "2p-64m"]
        );
        assert_eq!(sweep_key(2.0), sweep_key(2.02));
        assert_ne!(sweep_key(2.0), sweep_key(3.0));
    }

    #[test]
    fn workload_and_depth_from_the_command() {
        let (w, d) =
            workload_and_depth("/x/krphase-emu run queue-depth --depth 100 --iterations 3");
        assert_eq!((w.as_deref(), d), (Some("queue-depth"), Some(100.0)));
        assert_eq!(workload_and_depth("app"), (None, None));
    }
}
