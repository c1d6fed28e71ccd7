//! Attribution: for one kernel-replay row on both sides, the change of its wall time split into
//! the change of each phase's total per run (the phase's mean per window × windows, averaged over
//! the row's linked runs), the change of the non-replayed dispatches' time, the window time no
//! measured phase covers, and an unexplained rest, which is always shown. Means, not medians: a
//! mean per run is additive, so the parts add up to the whole and the rest is only what no figure
//! explains (a median of a sum is not the sum of the medians).
//!
//! Refused (one line) when the row is missing on a side, rests on an invalid kernel-replay
//! claim, or has no phase files linked on a side: without them there is nothing to split by.
//! Refused too unless the wall change itself is real: fewer than three runs a side, or a 95 %
//! interval of the change (Welch's t on the per-run walls, `stats/run_test.rs`) that holds zero,
//! and the shares would split noise (a −646 % part of a change that is not there).

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use super::phases::{PASSES_AS_REST, WINDOW_REST, signed_duration};
use crate::answers::run_report::{RunReport, UNATTRIBUTED, run_report};
use crate::db::basis::Basis;
use crate::db::measurements::StoredMeasurement;
use crate::db::phases::{PHASES, WINDOW, window_is_span};
use crate::db::samples::samples_of;
use crate::stats::interval::Interval;
use crate::stats::run_test::{MIN_RUNS, welch};
use crate::stats::verdict::ALPHA;

/// One part of the wall change.
#[derive(Debug, Clone, Serialize)]
pub struct Part {
    pub item: String,
    /// Per run, mean over the row's runs (ns); `None` for the unexplained rest.
    pub a_ns: Option<f64>,
    pub b_ns: Option<f64>,
    pub change_ns: f64,
    /// Change over the wall change.
    pub share: Option<f64>,
    pub basis: Vec<Basis>,
    pub note: Option<String>,
}

/// The facts of one side beside the attribution.
#[derive(Debug, Clone, Default, Serialize)]
pub struct SideFacts {
    pub runs: usize,
    pub replayed_windows: u64,
    pub declines_by_reason: BTreeMap<String, u64>,
    pub snapshot_bytes_per_window: Option<f64>,
    /// Snapshot bytes over the snapshot time (SDK log) or, without it, over the pre-pass (a
    /// lower bound, estimated).
    pub snapshot_gbps: Option<f64>,
    pub snapshot_gbps_basis: Option<Basis>,
}

/// The wall change of one row, split.
#[derive(Debug, Clone, Serialize)]
pub struct Attribution {
    /// Mean wall time per run (ns): the row's stored runs, else its median (harness); for
    /// phase-file runs without a measurement, their first to last event (in process).
    pub a_wall_ns: f64,
    pub b_wall_ns: f64,
    pub wall_change_ns: f64,
    pub wall_basis: Basis,
    /// The wall change's 95 % interval over the per-run walls, and their count per side.
    pub wall_interval: Interval,
    pub wall_runs: (usize, usize),
    /// Phases, the dispatch tax and the in-window rest, by |change|, then the unexplained rest.
    pub parts: Vec<Part>,
    pub a: SideFacts,
    pub b: SideFacts,
}

/// The name of the unexplained rest's part.
pub const UNEXPLAINED: &str = "unexplained rest";
/// The name of the non-replayed dispatches' part.
pub const TAX: &str = "non-replayed dispatch tax";

/// What the unexplained rest holds when the window is only the passes' span.
const UNEXPLAINED_SPAN: &str = "wall change minus every part above: start-up, exit and noise, \
    and every window's time outside the passes' span (the first pass's dispatch to the last \
    pass's completion) other than the snapshot: lock, drain and the rest of the pre-pass, \
    CONFIG, the host's wait from the last completion to the end of the pass, and the tail. \
    Observe mode cannot split these out of what \
    the SDK prints (only snap_seconds and restore_seconds); drive mode measures them, as would \
    an SDK phase line if an SDK prints one";

/// Whether a run's windows are only the passes' span (observe mode without an SDK phase line).
fn span_window(r: &RunReport) -> bool {
    phase(r, PHASES[WINDOW].name).is_some_and(|w| w.samples > 0 && window_is_span(w.basis.iter()))
}

/// The note of part `k`: what a rest holds, and where a snapshot outside the window comes from.
fn note(k: &str, rest: &str, span: bool) -> Option<String> {
    if k == rest {
        return Some(if span {
            "the passes' span minus the restore: the passes and what else ran between them \
             (observe mode)"
                .into()
        } else {
            "window time no measured phase covers (observe mode: the passes)".into()
        });
    }
    (span && k == "snapshot").then(|| {
        "the SDK's snap_seconds (outcome line), before the passes' span, so beside it".into()
    })
}

/// Per run: each item's total and bases.
type Items = BTreeMap<String, (f64, Vec<Basis>)>;

fn phase<'a>(rep: &'a RunReport, name: &str) -> Option<&'a crate::answers::run_report::PhaseStats> {
    rep.phases.iter().find(|p| p.phase == name)
}

/// Whether `parent`'s parts tile it in this run: every window carries each part and their totals
/// add up to the parent's (drain + snapshot = pre-pass; gpu does not tile pass exec).
fn parts_tile(rep: &RunReport, parent: &str) -> bool {
    let Some(p) = phase(rep, parent).filter(|p| p.samples > 0) else {
        return false;
    };
    let kids: Vec<_> = rep
        .phases
        .iter()
        .filter(|k| k.parent.as_deref() == Some(parent))
        .collect();
    !kids.is_empty()
        && kids.iter().all(|k| k.samples == p.samples)
        && (kids.iter().map(|k| k.total_ns).sum::<i64>() - p.total_ns).unsigned_abs() <= p.samples
}

/// The window's top-level phases, each split into its parts where they tile it on every run.
fn tiles(reports: &[&RunReport]) -> Vec<&'static str> {
    let mut out = Vec::new();
    for (k, p) in PHASES.iter().enumerate() {
        if k == WINDOW || p.parent.is_some() || p.bound_of.is_some() {
            continue;
        }
        if !reports.is_empty() && reports.iter().all(|r| parts_tile(r, p.name)) {
            out.extend(
                PHASES
                    .iter()
                    .filter(|c| c.parent == Some(p.name))
                    .map(|c| c.name),
            );
        } else {
            out.push(p.name);
        }
    }
    out
}

/// The window rest's name: the passes when the tool saw no pass boundary (observe mode).
fn rest_name(reports: &[&RunReport]) -> &'static str {
    let unseen = reports
        .iter()
        .all(|r| phase(r, "pass exec").is_none_or(|p| p.samples == 0));
    if unseen { PASSES_AS_REST } else { WINDOW_REST }
}

fn items(rep: &RunReport, tiles: &[&str], rest: &str) -> Items {
    let mut m = Items::new();
    for t in tiles {
        if let Some(p) = phase(rep, t).filter(|p| p.samples > 0) {
            m.insert(t.to_string(), (p.total_ns as f64, p.basis.clone()));
        }
    }
    // A part the run's report shows on its own (its parent untimed: observe mode's gpu) is out
    // of the report's rest; here the rest is the passes (`rest_name`), so it goes back in.
    let alone: i64 = rep
        .phases
        .iter()
        .filter(|p| p.samples > 0 && p.parent.is_none() && !tiles.contains(&p.phase.as_str()))
        .filter(|p| crate::db::phases::index(&p.phase).is_some_and(|k| PHASES[k].parent.is_some()))
        .map(|p| p.total_ns)
        .sum();
    if let Some(u) = phase(rep, UNATTRIBUTED) {
        let total = (u.total_ns + alone) as f64;
        m.insert(rest.to_string(), (total, vec![Basis::Rest]));
    }
    let tax: i64 = rep
        .groups
        .iter()
        .filter(|g| g.group != "replayed")
        .map(|g| g.total_ns)
        .sum();
    m.insert(TAX.to_string(), (tax as f64, vec![Basis::InProcess]));
    m
}

fn facts(reports: &[RunReport]) -> SideFacts {
    let mut f = SideFacts {
        runs: reports.len(),
        ..SideFacts::default()
    };
    let (mut bytes, mut snap_ns, mut pre_ns) = (0i64, 0i64, 0i64);
    for r in reports {
        f.replayed_windows += r.windows.replayed;
        for (k, v) in &r.declines_by_reason {
            *f.declines_by_reason.entry(k.clone()).or_default() += v;
        }
        bytes += r.bytes.snapshot_bytes_total;
        snap_ns += phase(r, "snapshot").map_or(0, |p| p.total_ns);
        pre_ns += phase(r, "pre-pass").map_or(0, |p| p.total_ns);
    }
    if f.replayed_windows > 0 && bytes > 0 {
        f.snapshot_bytes_per_window = Some(bytes as f64 / f.replayed_windows as f64);
        let (ns, basis) = if snap_ns > 0 {
            (snap_ns, Basis::SdkLog)
        } else {
            (pre_ns, Basis::Estimate)
        };
        if ns > 0 {
            f.snapshot_gbps = Some(bytes as f64 / ns as f64);
            f.snapshot_gbps_basis = Some(basis);
        }
    }
    f
}

/// Where a side's wall time per run comes from.
#[derive(Debug, Clone, Copy)]
pub enum Wall<'a> {
    /// A whole-run measurement: the mean of its stored runs, else its median (harness).
    Row(&'a StoredMeasurement),
    /// Phase-file runs without a measurement: each run's first to last event (in process).
    Spans,
}

/// The per-run wall times of a side (ns) and their basis: a row's stored runs, else the spans
/// of its linked phase files; empty when there are none.
fn per_run_walls(
    conn: &Connection,
    wall: Wall<'_>,
    reports: &[RunReport],
) -> Result<(Vec<f64>, Basis)> {
    if let Wall::Row(m) = wall {
        let v = samples_of(conn, m.measurement_id)?;
        if !v.is_empty() {
            return Ok((v.iter().map(|s| s * 1e9).collect(), Basis::Harness));
        }
    }
    let spans: Vec<f64> = reports
        .iter()
        .filter_map(|r| r.wall_ns)
        .map(|w| w as f64)
        .collect();
    let all = spans.len() == reports.len();
    Ok((if all { spans } else { Vec::new() }, Basis::InProcess))
}

/// The mean per-run wall time of a side (ns) and its basis: of its per-run walls, else (a CSV
/// row, which keeps only its median) the row's median.
fn wall_ns(wall: Wall<'_>, per_run: &(Vec<f64>, Basis)) -> Option<(f64, Basis)> {
    let (v, basis) = per_run;
    if let Wall::Row(m) = wall
        && *basis != Basis::Harness
    {
        return m.median_s.map(|s| (s * 1e9, Basis::Harness));
    }
    (!v.is_empty()).then(|| (v.iter().sum::<f64>() / v.len() as f64, *basis))
}

/// The wall change's test, or why the change is not real enough to split (one line).
fn wall_gate(a: &[f64], b: &[f64]) -> std::result::Result<Interval, String> {
    if a.len() < MIN_RUNS || b.len() < MIN_RUNS {
        return Err(format!(
            "wall change untested: {}/{} runs, fewer than {MIN_RUNS} a side; no attribution",
            a.len(),
            b.len()
        ));
    }
    let t = welch(a, b, ALPHA).ok_or("no wall change to test")?;
    let i = t.interval;
    if i.excludes(0.0) {
        return Ok(i);
    }
    Err(format!(
        "wall change not significant (interval {} .. {}, n runs {}/{}); no attribution",
        signed_duration(i.lo95),
        signed_duration(i.hi95),
        a.len(),
        b.len()
    ))
}

/// Why the row cannot be attributed, when it cannot.
fn refusal(side: &str, m: Option<&StoredMeasurement>) -> Option<String> {
    let Some(m) = m else {
        return Some(format!("{side} has no such row"));
    };
    if let Some(why) = m.invalid_reason() {
        return Some(format!("{side} (measurement {}) {why}", m.measurement_id));
    }
    if m.linked_runs.is_empty() {
        return Some(format!(
            "no phase files are linked to {side}'s measurement {} (run bench with the tool, or \
             import the CSV with its output directories)",
            m.measurement_id
        ));
    }
    m.median_s.is_none().then(|| {
        format!(
            "{side}'s measurement {} has no successful run",
            m.measurement_id
        )
    })
}

/// How many runs a side's phase files make: its timed launches (several files each under
/// application replay), else one per file.
fn runs_of(wall: Wall<'_>, reports: &[RunReport]) -> usize {
    match wall {
        Wall::Row(m) if !m.launches.is_empty() => m.launches.len(),
        _ => reports.len(),
    }
}

/// Mean per run of each item over a side's reports, `runs` runs in all.
fn mean_items(reports: &[RunReport], runs: usize, tiles: &[&str], rest: &str) -> Items {
    let mut sum = Items::new();
    for r in reports {
        for (k, (v, b)) in items(r, tiles, rest) {
            let e = sum.entry(k).or_insert((0.0, Vec::new()));
            e.0 += v;
            for x in b {
                if !e.1.contains(&x) {
                    e.1.push(x);
                }
            }
        }
    }
    let n = runs.max(1) as f64;
    for v in sum.values_mut() {
        v.0 /= n;
        v.1.sort();
    }
    sum
}

/// Splits the wall change of a row between `a` and `b`; `Err(text)` says in one line why it
/// cannot be.
pub fn attribute(
    conn: &Connection,
    a: Option<&StoredMeasurement>,
    b: Option<&StoredMeasurement>,
) -> Result<std::result::Result<Attribution, String>> {
    if let Some(why) = refusal("A", a).or_else(|| refusal("B", b)) {
        return Ok(Err(why));
    }
    let (a, b) = (a.expect("checked"), b.expect("checked"));
    attribute_runs(
        conn,
        (&a.linked_runs, Wall::Row(a)),
        (&b.linked_runs, Wall::Row(b)),
    )
}

/// Splits the wall change between the runs of side `a` and those of side `b`, each with where
/// its wall time comes from.
pub fn attribute_runs(
    conn: &Connection,
    a: (&[i64], Wall<'_>),
    b: (&[i64], Wall<'_>),
) -> Result<std::result::Result<Attribution, String>> {
    let load = |runs: &[i64]| -> Result<Vec<RunReport>> {
        runs.iter().map(|&r| run_report(conn, r)).collect()
    };
    let (ra, rb) = (load(a.0)?, load(b.0)?);
    if ra.is_empty() || rb.is_empty() {
        return Ok(Err("a side has no phase-file runs".into()));
    }
    let all: Vec<&RunReport> = ra.iter().chain(rb.iter()).collect();
    let span = all.iter().all(|r| span_window(r));
    let mut tiles = tiles(&all);
    if span {
        // Observe mode without an SDK phase line: the window is the passes' span, and the SDK's
        // snapshot time (outcome line) lies before it, so it is a part of its own.
        tiles.push("snapshot");
    }
    let rest = rest_name(&all);
    let (na, nb) = (runs_of(a.1, &ra), runs_of(b.1, &rb));
    let (ia, ib) = (
        mean_items(&ra, na, &tiles, rest),
        mean_items(&rb, nb, &tiles, rest),
    );
    let (pa, pb) = (
        per_run_walls(conn, a.1, &ra)?,
        per_run_walls(conn, b.1, &rb)?,
    );
    let (Some((wa, basis)), Some((wb, _))) = (wall_ns(a.1, &pa), wall_ns(b.1, &pb)) else {
        return Ok(Err(
            "a side has no wall time (no successful run, or a run without events)".into(),
        ));
    };
    let wall_interval = match wall_gate(&pa.0, &pb.0) {
        Ok(i) => i,
        Err(why) => return Ok(Err(why)),
    };
    let wall_change = wb - wa;
    let share = |c: f64| (wall_change != 0.0).then(|| c / wall_change);
    let mut names: Vec<&String> = ia.keys().chain(ib.keys()).collect();
    names.sort();
    names.dedup();
    let mut parts: Vec<Part> = names
        .into_iter()
        .map(|k| {
            let (x, bx) = ia.get(k).cloned().unwrap_or((0.0, Vec::new()));
            let (y, by) = ib.get(k).cloned().unwrap_or((0.0, Vec::new()));
            let mut basis = bx;
            basis.extend(
                by.into_iter()
                    .filter(|b| !basis.contains(b))
                    .collect::<Vec<_>>(),
            );
            basis.sort();
            Part {
                note: note(k, rest, span),
                item: k.clone(),
                a_ns: Some(x),
                b_ns: Some(y),
                change_ns: y - x,
                share: share(y - x),
                basis,
            }
        })
        .collect();
    parts.sort_by(|p, q| q.change_ns.abs().total_cmp(&p.change_ns.abs()));
    let explained: f64 = parts.iter().map(|p| p.change_ns).sum();
    let unexplained = wall_change - explained;
    parts.push(Part {
        item: UNEXPLAINED.into(),
        a_ns: None,
        b_ns: None,
        change_ns: unexplained,
        share: share(unexplained),
        basis: vec![Basis::Rest],
        note: Some(if span {
            UNEXPLAINED_SPAN.into()
        } else {
            "wall change minus every part above (start-up, exit, noise)".into()
        }),
    });
    Ok(Ok(Attribution {
        a_wall_ns: wa,
        b_wall_ns: wb,
        wall_change_ns: wall_change,
        wall_basis: basis,
        wall_interval,
        wall_runs: (pa.0.len(), pb.0.len()),
        parts,
        a: SideFacts {
            runs: na,
            ..facts(&ra)
        },
        b: SideFacts {
            runs: nb,
            ..facts(&rb)
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_real_wall_change_is_attributed() {
        let a = [100e6, 104e6, 96e6];
        // Noise: the interval holds zero, so shares would split nothing.
        let why = wall_gate(&a, &[101e6, 97e6, 103e6]).unwrap_err();
        assert!(
            why.starts_with("wall change not significant (interval -")
                && why.ends_with("n runs 3/3); no attribution"),
            "{why}"
        );
        // Two runs a side: untested, whatever their values.
        let why = wall_gate(&a[..2], &[200e6, 201e6, 202e6]).unwrap_err();
        assert!(why.starts_with("wall change untested: 2/3 runs"), "{why}");
        // A clear change: its interval, which leaves out zero.
        let i = wall_gate(&a, &[150e6, 152e6, 148e6]).unwrap();
        assert!(i.lo95 > 0.0 && (i.estimate - 50e6).abs() < 1.0, "{i:?}");
    }
}
