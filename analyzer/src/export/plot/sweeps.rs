//! Sweeps: a phase's time against one dimension (passes per window, snapshot footprint, queue
//! depth) over runs that hold every other dimension and option fixed; the fixed values are
//! named in the subtitle.

use std::collections::BTreeMap;

use super::stats::{RunStats, SHOWN, runs_text};
use crate::db::quantiles::quantile_sorted_f64;
use crate::export::palette::phase_colour;
use crate::export::svg::axis::fmt_num;
use crate::export::svg::points::{self, Point, Series, XTick};

type XFn = fn(&RunStats) -> Option<f64>;

/// A sweep dimension: file-name tag, axis label, how a fixed value reads, and the run's
/// coordinate.
pub struct SweepDim {
    pub tag: &'static str,
    pub label: &'static str,
    pub fixed: fn(f64) -> String,
    pub x: XFn,
}

/// The dimensions krphase sweeps along.
pub const DIMS: [SweepDim; 3] = [
    SweepDim {
        tag: "passes",
        label: "passes per window (measured)",
        fixed: |v| format!("{} passes/window", fmt_num(v)),
        x: |s| (s.windows > 0).then(|| s.passes as f64 / s.windows as f64),
    },
    SweepDim {
        tag: "footprint",
        label: "snapshot MiB per window (measured)",
        fixed: |v| format!("{} MiB/window", fmt_num(v)),
        x: |s| (s.windows > 0).then(|| s.bytes as f64 / s.windows as f64 / f64::from(1 << 20)),
    },
    SweepDim {
        tag: "depth",
        label: "queue depth (dispatches between synchronizations)",
        fixed: |v| format!("queue depth {}", fmt_num(v)),
        x: |s| s.depth,
    },
];

/// Bucket of a sweep coordinate: values within about 3 % share a bucket, so repeated runs
/// of one configuration pool while a real step (2 -> 4 passes, 1 -> 4 MiB) separates.
pub fn sweep_key(x: f64) -> i64 {
    if x <= 0.0 {
        return i64::MIN;
    }
    (x.log2() * 24.0).round() as i64
}

/// The runs forming the sweep along `dims[d]`: runs are grouped by the other dimensions
/// (bucketed) and their other options, and the group with the most distinct values along
/// `d` wins, so a sweep never mixes, say, two footprints into one pass-count point.
pub fn sweep_group<'a>(all: &[&'a RunStats], dims: &[SweepDim], d: usize) -> Vec<&'a RunStats> {
    let mut groups: BTreeMap<(Vec<Option<i64>>, String), Vec<&'a RunStats>> = BTreeMap::new();
    for s in all {
        let key = dims
            .iter()
            .enumerate()
            .filter(|(o, _)| *o != d)
            .map(|(_, dim)| (dim.x)(s).map(sweep_key))
            .collect();
        groups.entry((key, s.rest.clone())).or_default().push(s);
    }
    let xf = dims[d].x;
    let rank = |g: &Vec<&RunStats>| {
        let mut xs: Vec<i64> = g.iter().filter_map(|s| xf(s).map(sweep_key)).collect();
        xs.sort_unstable();
        xs.dedup();
        (xs.len(), g.len())
    };
    groups.into_values().max_by_key(rank).unwrap_or_default()
}

/// The runs at one x: their x (the first run's), and the per-window samples pooled.
struct AtX<'a> {
    x: f64,
    runs: Vec<&'a RunStats>,
}

/// Median and p10..p90 of `v` (sorted in place); `None` when empty.
fn spread(v: &mut [f64]) -> Option<Point> {
    v.sort_by(f64::total_cmp);
    Some(Point {
        x: 0.0,
        y: quantile_sorted_f64(v, 0.5)?,
        lo: quantile_sorted_f64(v, 0.1)?,
        hi: quantile_sorted_f64(v, 0.9)?,
    })
}

/// The subtitle's first line: what the sweep holds fixed.
fn fixed_line(workload: &str, group: &[&RunStats], d: usize) -> String {
    let mut parts = vec![format!("workload {workload}")];
    for (_, dim) in DIMS.iter().enumerate().filter(|(o, _)| *o != d) {
        if let Some(v) = group.first().and_then(|s| (dim.x)(s)) {
            parts.push((dim.fixed)(v));
        }
    }
    if let Some(s) = group.first() {
        parts.push(s.rest.clone());
    }
    format!("Fixed: {}", parts.join("; "))
}

/// The sweep of `all` (one workload's runs) along `DIMS[d]`: `None` when fewer than two
/// distinct x values hold the rest fixed.
pub fn render_sweep(workload: &str, all: &[&RunStats], d: usize) -> Option<String> {
    let dim = &DIMS[d];
    let group = sweep_group(all, &DIMS, d);
    let mut at: BTreeMap<i64, AtX> = BTreeMap::new();
    for s in &group {
        let Some(x) = (dim.x)(s) else { continue };
        at.entry(sweep_key(x))
            .or_insert_with(|| AtX {
                x,
                runs: Vec::new(),
            })
            .runs
            .push(s);
    }
    if at.len() < 2 {
        return None;
    }
    let ticks: Vec<XTick> = at
        .values()
        .map(|a| XTick {
            x: a.x,
            label: fmt_num(a.x),
            n: format!(
                "n={} ({})",
                a.runs.iter().map(|s| s.windows).sum::<u64>(),
                runs_text(a.runs.len())
            ),
        })
        .collect();
    let series: Vec<Series> = SHOWN
        .iter()
        .enumerate()
        .map(|(i, name)| Series {
            name: name.to_string(),
            colour: phase_colour(name),
            points: at
                .values()
                .filter_map(|a| {
                    let mut v: Vec<f64> = a
                        .runs
                        .iter()
                        .flat_map(|s| s.samples[i].iter().copied())
                        .collect();
                    spread(&mut v).map(|p| Point { x: a.x, ..p })
                })
                .collect(),
        })
        .collect();
    let mut subtitle = vec![
        fixed_line(workload, &group, d),
        format!(
            "Point: median window; whisker: p10 to p90 of windows; n: replayed windows (runs) \
             at each x; y: {}",
            points::y_axis_note(&series)
        ),
    ];
    subtitle.extend(super::stats::emulated_line(group.iter().copied()));
    Some(points::points(
        &format!("{workload}: phase time per window against {}", dim.tag),
        &subtitle,
        (dim.label, "ms per window"),
        &ticks,
        &series,
    ))
}

/// Every sweep of `stats`: (file name, SVG), one per workload and dimension that has one.
pub fn render_sweeps(stats: &[RunStats]) -> Vec<(String, String)> {
    let mut by_workload: BTreeMap<String, Vec<&RunStats>> = BTreeMap::new();
    for s in stats.iter().filter(|s| s.windows > 0) {
        by_workload
            .entry(s.workload.clone().unwrap_or_else(|| "runs".into()))
            .or_default()
            .push(s);
    }
    let mut out = Vec::new();
    for (wl, all) in &by_workload {
        for (d, dim) in DIMS.iter().enumerate() {
            if let Some(svg) = render_sweep(wl, all, d) {
                out.push((format!("sweep-{}-{wl}.svg", dim.tag), svg));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(label: &str, passes: i64, mib: i64, rest: &str) -> RunStats {
        RunStats {
            label: label.into(),
            windows: 10,
            passes: passes * 10,
            bytes: (mib * 10) << 20,
            rest: rest.into(),
            samples: vec![vec![1.0; 10]; SHOWN.len()],
            ..RunStats::default()
        }
    }

    #[test]
    fn a_sweep_holds_the_other_dimensions_and_options_constant() {
        // 2 and 4 passes at 1 MiB, 2 passes at 1, 4 and 64 MiB, and a filtered run.
        let runs = [
            run("2p-1m", 2, 1, ""),
            run("4p-1m", 4, 1, ""),
            run("2p-4m", 2, 4, ""),
            run("2p-64m", 2, 64, ""),
            run("2p-8m-filtered", 2, 8, "kernel filter x"),
        ];
        let all: Vec<&RunStats> = runs.iter().collect();
        let labels = |g: Vec<&RunStats>| g.iter().map(|s| s.label.clone()).collect::<Vec<_>>();
        assert_eq!(labels(sweep_group(&all, &DIMS, 0)), ["2p-1m", "4p-1m"]);
        assert_eq!(
            labels(sweep_group(&all, &DIMS, 1)),
            ["2p-1m", "2p-4m", "2p-64m"]
        );
        assert_eq!(sweep_key(2.0), sweep_key(2.02));
        assert_ne!(sweep_key(2.0), sweep_key(3.0));
        let svg = render_sweep("w", &all, 1).expect("a footprint sweep");
        assert!(svg.contains("Fixed: workload w; 2 passes/window"), "{svg}");
        assert!(render_sweep("w", &all, 2).is_none(), "no depth anywhere");
    }
}
