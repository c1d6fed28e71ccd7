//! The one screen a report opens with: how many runs and windows, what was declined and why,
//! where the replayed windows' time went over all runs (each phase's share with its basis), and
//! the slowest kernels. Built from the run reports alone; the findings ([`super::findings`]) read
//! the same figures.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use serde::Serialize;

use super::run_report::{PhaseStats, RunReport, UNATTRIBUTED};
use crate::db::basis::Basis;
use crate::db::phases;
use crate::render::fmt::{bytes, duration, duration_short, percent};
use crate::stats::ratio;

/// Slowest kernels the summary lists.
pub const SLOWEST_KERNELS: usize = 3;

/// The summary's terminal tables: a header rule and column rules, no outer border (the screen
/// is short).
const COMPACT: &str = "     ═╪ ┆          ";

/// A top-level phase below this share of replay time is folded into one `other` row on the
/// summary screen (the per-run tables list it).
const SMALL_SHARE: f64 = 0.01;

/// One phase pooled over every run that has it.
#[derive(Debug, Clone, Serialize)]
pub struct PooledPhase {
    pub phase: String,
    /// The phase it is a part of (drain and snapshot of pre-pass, gpu of pass exec).
    pub parent: Option<String>,
    pub total_ns: i64,
    /// Of the pooled replayed window time of the runs that carry this phase.
    pub share_of_replay: Option<f64>,
    /// Of the parent's pooled total, over the same runs (parts only).
    pub share_of_parent: Option<f64>,
    /// Runs that carry it.
    pub runs: usize,
    pub basis: Vec<Basis>,
    /// It lies outside the window the shares divide (observe mode, whose window is the passes'
    /// span: the snapshot before pass 0), so it has no share.
    pub outside_window: bool,
    /// A part shown on its own: its parent is not timed in the runs that carry it (observe
    /// mode's gpu: no PASS callbacks, so no pass exec); its share is of replay time and the
    /// `unattributed` rest no longer holds it.
    pub parent_untimed: Option<String>,
}

/// One kernel of one run, among the slowest.
#[derive(Debug, Clone, Serialize)]
pub struct SlowKernel {
    pub run_id: i64,
    pub label: Option<String>,
    pub kernel: String,
    pub windows: u64,
    pub mean_ns: f64,
    pub sd_ns: Option<f64>,
    pub p99_ns: Option<i64>,
    pub top_phase: Option<String>,
    pub top_phase_share: Option<f64>,
}

/// A run whose tool dropped records.
#[derive(Debug, Clone, Serialize)]
pub struct DroppedRun {
    pub run_id: i64,
    pub records: u64,
}

/// Everything the summary screen and the findings say.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Overview {
    pub runs: usize,
    pub runs_by_mode: BTreeMap<String, usize>,
    pub dispatches: u64,
    pub replayed: u64,
    pub declined: u64,
    /// Dispatches that ran with no CONFIG callback: the SDK never offered them for replay.
    pub without_config: u64,
    pub declines_by_reason: BTreeMap<String, u64>,
    pub stuck: u64,
    /// Replayed window time and wall time, summed over the runs.
    pub replay_ns: i64,
    pub wall_ns: i64,
    pub phases: Vec<PooledPhase>,
    /// Snapshot bytes over the runs with replayed windows, and the windows they cover.
    pub snapshot_bytes: i64,
    pub snapshot_windows: u64,
    pub snapshot_bytes_basis: Vec<Basis>,
    /// Pooled snapshot rate: bytes over the SDK's snapshot time (runs with a joined log).
    pub snapshot_gbps: Option<f64>,
    pub restore_bytes: i64,
    pub restore_gbps: Option<f64>,
    /// GPU time over pass exec time, pooled.
    pub gpu_share_of_pass: Option<f64>,
    /// Windows whose restores ran inside the passes, and of them those whose pass exec still
    /// holds the restores (no SDK log line split them out).
    pub restore_in_pass: u64,
    pub restore_in_pass_unsplit: u64,
    /// Runs with replayed windows and no joined SDK log (drain and snapshot not separated).
    pub runs_without_log: Vec<i64>,
    pub dropped: Vec<DroppedRun>,
    pub slowest: Vec<SlowKernel>,
    /// Whether the emulator (krphase-emu) ran any of the runs.
    pub emulated: bool,
    /// The runs as ranks of a parallel job, when at least two carry a rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cross_rank: Option<super::ranks::CrossRank>,
    /// Kernels whose passes differ past the threshold, per run (`answers/fidelity`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pass_fidelity: Vec<super::fidelity::Flagged>,
}

/// How one run's phase enters the pool: outside the window, or a part whose parent the run
/// does not time (shown on its own, out of the run's rest).
fn placement(r: &RunReport, p: &PhaseStats) -> (bool, Option<String>) {
    let has = |name: &str| r.phases.iter().any(|q| q.phase == name && q.samples > 0);
    let span = r
        .phases
        .iter()
        .find(|q| q.phase == "window")
        .is_some_and(|w| phases::window_is_span(w.basis.iter()));
    let outside = span
        && phases::index(&p.phase).is_some_and(|k| phases::before_the_passes(&phases::PHASES[k]));
    let untimed = p.parent.clone().filter(|parent| !has(parent));
    (outside, untimed)
}

/// The parent of a part the run's report already shows on its own (a part whose parent the
/// run does not time, out of the run's rest there): no parent in the run, one in [`phases`].
fn shown_alone(p: &PhaseStats) -> Option<String> {
    let k = phases::index(&p.phase)?;
    phases::PHASES[k]
        .parent
        .filter(|_| p.parent.is_none())
        .map(String::from)
}

/// Pools each phase over the runs that carry it.
fn pool_phases(reports: &[RunReport]) -> Vec<PooledPhase> {
    let mut order: Vec<(String, Option<String>)> = Vec::new();
    let mut pooled: BTreeMap<(String, Option<String>), PooledPhase> = BTreeMap::new();
    // Per phase: the window time and the parent's time of the runs that carry it.
    let mut denominators: BTreeMap<(String, Option<String>), (i64, i64)> = BTreeMap::new();
    for r in reports.iter().filter(|r| r.windows.replayed > 0) {
        let total_of = |name: &str| {
            r.phases
                .iter()
                .find(|p| p.phase == name)
                .map_or(0, |p| p.total_ns)
        };
        let window = total_of("window");
        let shown: Vec<_> = r
            .phases
            .iter()
            .filter(|p| p.samples > 0 && p.bound_of.is_none() && p.phase != "window")
            .map(|p| (p, placement(r, p)))
            .collect();
        // Parts shown on their own inside the window leave the run's rest.
        let promoted: i64 = shown
            .iter()
            .filter(|(_, (outside, untimed))| untimed.is_some() && !outside)
            .map(|(p, _)| p.total_ns)
            .sum();
        for (p, (outside, untimed)) in shown {
            let parent = if untimed.is_some() {
                None
            } else {
                p.parent.clone()
            };
            let key = (p.phase.clone(), parent.clone());
            let e = pooled.entry(key.clone()).or_insert_with(|| {
                order.push(key.clone());
                PooledPhase {
                    phase: p.phase.clone(),
                    parent: parent.clone(),
                    total_ns: 0,
                    share_of_replay: None,
                    share_of_parent: None,
                    runs: 0,
                    basis: Vec::new(),
                    outside_window: false,
                    parent_untimed: None,
                }
            });
            let rest = p.phase == UNATTRIBUTED;
            e.total_ns += if rest {
                p.total_ns - promoted
            } else {
                p.total_ns
            };
            e.runs += 1;
            e.outside_window |= outside;
            e.parent_untimed = e
                .parent_untimed
                .take()
                .or(untimed)
                .or_else(|| shown_alone(p));
            let bases: BTreeSet<Basis> = if rest {
                // What no phase row covers: a rest of the figures beside it.
                [Basis::Rest].into()
            } else {
                e.basis.iter().chain(&p.basis).copied().collect()
            };
            e.basis = bases.into_iter().collect();
            let d = denominators.entry(key).or_default();
            d.0 += window;
            d.1 += parent.as_deref().map_or(0, total_of);
        }
    }
    order
        .into_iter()
        .filter_map(|key| {
            let mut p = pooled.remove(&key)?;
            let (window, parent) = denominators.get(&key).copied().unwrap_or_default();
            if !p.outside_window {
                p.share_of_replay = ratio(p.total_ns as f64, window as f64);
            }
            if p.parent.is_some() {
                p.share_of_parent = ratio(p.total_ns as f64, parent as f64);
            }
            Some(p)
        })
        .collect()
}

/// The slowest kernels over all runs, by mean window time.
fn slowest(reports: &[RunReport]) -> Vec<SlowKernel> {
    let mut all: Vec<SlowKernel> = reports
        .iter()
        .flat_map(|r| {
            r.kernels.iter().filter_map(|k| {
                Some(SlowKernel {
                    run_id: r.run_id,
                    label: r.label.clone(),
                    kernel: k.kernel.clone(),
                    windows: k.windows,
                    mean_ns: k.mean_ns?,
                    sd_ns: k.sd_ns,
                    p99_ns: k.p99_ns,
                    top_phase: k.top_phase.clone(),
                    top_phase_share: k.top_phase_share,
                })
            })
        })
        .collect();
    all.sort_by(|a, b| b.mean_ns.total_cmp(&a.mean_ns));
    all.truncate(SLOWEST_KERNELS);
    all
}

/// Pooled snapshot rate over the runs whose rate is over the SDK's snapshot time.
fn pooled_rate(reports: &[RunReport], phase: &str, bytes_of: fn(&RunReport) -> i64) -> Option<f64> {
    let (mut b, mut ns) = (0i64, 0i64);
    for r in reports {
        if let Some(p) = r.phases.iter().find(|p| p.phase == phase && p.samples > 0) {
            let rb = bytes_of(r);
            if rb > 0 && p.basis.iter().all(|b| *b != Basis::Estimate) {
                b += rb;
                ns += p.total_ns;
            }
        }
    }
    ratio(b as f64, ns as f64)
}

impl Overview {
    /// The overview of `reports`.
    pub fn of(reports: &[RunReport]) -> Overview {
        let mut o = Overview {
            runs: reports.len(),
            phases: pool_phases(reports),
            slowest: slowest(reports),
            cross_rank: super::ranks::CrossRank::of(reports),
            pass_fidelity: reports
                .iter()
                .flat_map(|r| super::fidelity::Flagged::of_run(r.run_id, &r.fidelity))
                .collect(),
            ..Overview::default()
        };
        let mut bases = BTreeSet::new();
        let (mut gpu, mut pass) = (0i64, 0i64);
        for r in reports {
            *o.runs_by_mode
                .entry(r.mode.clone().unwrap_or_else(|| "?".into()))
                .or_default() += 1;
            o.dispatches += r.dispatches_seen;
            o.replayed += r.windows.replayed;
            o.declined += r.windows.declined;
            o.stuck += r.windows.stuck;
            o.without_config += r
                .groups
                .iter()
                .filter(|g| g.group == "no CONFIG")
                .map(|g| g.count)
                .sum::<u64>();
            for (k, v) in &r.declines_by_reason {
                *o.declines_by_reason.entry(k.clone()).or_default() += v;
            }
            o.replay_ns += r.gpu.window_total_ns;
            o.wall_ns += r.wall_ns.unwrap_or(0);
            if r.windows.replayed > 0 {
                o.snapshot_bytes += r.bytes.snapshot_bytes_total;
                o.snapshot_windows += r.windows.replayed;
                bases.extend(r.bytes.snapshot_bytes_basis.iter().copied());
                o.restore_bytes += r.bytes.restore_bytes_total;
                gpu += r.gpu.gpu_total_ns;
                pass += r.gpu.pass_total_ns;
                o.restore_in_pass += r.restore_placement.in_pass;
                o.restore_in_pass_unsplit += r.restore_placement.unsplit();
                if !r.log_joined && r.mode.as_deref() == Some("drive") {
                    o.runs_without_log.push(r.run_id);
                }
            }
            if let Some(d) = r.drops.filter(|d| d.records() > 0) {
                o.dropped.push(DroppedRun {
                    run_id: r.run_id,
                    records: d.records(),
                });
            }
            o.emulated |= r
                .command
                .as_deref()
                .is_some_and(crate::db::emulated::command_is_emulated);
        }
        o.snapshot_bytes_basis = bases.into_iter().collect();
        o.snapshot_gbps = pooled_rate(reports, "snapshot", |r| r.bytes.snapshot_bytes_total);
        o.restore_gbps = pooled_rate(reports, "restore", |r| r.bytes.restore_bytes_total);
        o.gpu_share_of_pass = ratio(gpu as f64, pass as f64);
        o
    }

    /// The pooled figure of `phase`, when any run carries it.
    pub fn phase(&self, phase: &str) -> Option<&PooledPhase> {
        self.phases.iter().find(|p| p.phase == phase)
    }

    /// Snapshot bytes per replayed window.
    pub fn snapshot_bytes_per_window(&self) -> Option<f64> {
        ratio(self.snapshot_bytes as f64, self.snapshot_windows as f64)
    }
}

/// The bases as words (`measured in process`, `from SDK log`, ...).
pub fn basis_words(bases: &[Basis]) -> String {
    if bases.is_empty() {
        return "-".into();
    }
    bases
        .iter()
        .map(|b| b.word())
        .collect::<Vec<_>>()
        .join(" + ")
}

/// Declines by reason, e.g. `untracked_memory 3, graph 2`, largest first.
pub fn reasons_text(by_reason: &BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = by_reason.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then(a.0.cmp(b.0)));
    v.iter()
        .map(|(k, n)| format!("{k} {n}"))
        .collect::<Vec<_>>()
        .join(", ")
}

fn headline(o: &Overview) -> String {
    let modes = o
        .runs_by_mode
        .iter()
        .map(|(m, n)| format!("{n} {m}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut s = format!(
        "{} runs ({modes}){}: {} dispatches seen, {} replayed, {} declined, {} ran without a \
         replay window (no CONFIG)",
        o.runs,
        if o.emulated {
            format!(", {}", crate::db::emulated::EMULATED)
        } else {
            String::new()
        },
        o.dispatches,
        o.replayed,
        o.declined,
        o.without_config
    );
    if o.stuck > 0 {
        let _ = write!(s, "; {} stuck", o.stuck);
    }
    s
}

/// Whether `p` is a small top-level phase (folded into `other`).
fn small(p: &PooledPhase) -> bool {
    p.parent.is_none() && p.share_of_replay.is_some_and(|s| s < SMALL_SHARE)
}

/// The pooled phase rows: `(phase, share, total, runs, basis)`; the small top-level phases
/// folded into one row that names them.
fn phase_rows(o: &Overview) -> Vec<[String; 5]> {
    let folded: Vec<&PooledPhase> = o.phases.iter().filter(|p| small(p)).collect();
    let mut rows: Vec<[String; 5]> = o
        .phases
        .iter()
        .filter(|p| !small(p))
        .map(|p| {
            let share = match &p.parent {
                Some(parent) => format!("({} of {parent})", percent(p.share_of_parent)),
                None if p.outside_window => "outside¹".into(),
                None => percent(p.share_of_replay),
            };
            let name = if p.parent.is_some() {
                format!("  {}", p.phase)
            } else {
                p.phase.clone()
            };
            [
                name,
                share,
                duration(p.total_ns as f64),
                p.runs.to_string(),
                basis_words(&p.basis),
            ]
        })
        .collect();
    if !folded.is_empty() {
        let total: i64 = folded.iter().map(|p| p.total_ns).sum();
        let share: f64 = folded.iter().filter_map(|p| p.share_of_replay).sum();
        let names: Vec<&str> = folded.iter().map(|p| p.phase.as_str()).collect();
        let bases: BTreeSet<Basis> = folded
            .iter()
            .flat_map(|p| p.basis.iter().copied())
            .collect();
        rows.push([
            format!("other: {}", names.join(", ")),
            format!("<{}", percent(Some(share.max(SMALL_SHARE)))),
            duration(total as f64),
            folded.iter().map(|p| p.runs).max().unwrap_or(0).to_string(),
            basis_words(&bases.into_iter().collect::<Vec<_>>()),
        ]);
    }
    rows
}

/// The lines under the phase table that say why a figure has no share, what a part shown on
/// its own is part of, and what the rest holds.
fn phase_notes(o: &Overview) -> Vec<String> {
    let mut notes = Vec::new();
    let outside: Vec<&str> = o
        .phases
        .iter()
        .filter(|p| p.outside_window)
        .map(|p| p.phase.as_str())
        .collect();
    if !outside.is_empty() {
        notes.push(format!(
            "¹ {}: before pass 0, outside the window the shares divide (observe mode: the \
             passes' span, pass 0's enqueue to the last pass's completion; the SDK prints no \
             window time)",
            outside.join(", ")
        ));
    }
    for p in o.phases.iter().filter(|p| !p.outside_window) {
        if let Some(parent) = &p.parent_untimed {
            notes.push(format!(
                "{}: part of {parent}, which is not timed (observe mode: no PASS callbacks); \
                 its share is of replay time",
                p.phase
            ));
        }
    }
    if let Some(u) = o.phases.iter().find(|p| p.phase == UNATTRIBUTED) {
        let observe = o.phases.iter().any(|p| p.parent_untimed.is_some());
        notes.push(if observe {
            format!(
                "{}: the window time no row covers (window − the rows): in observe mode the \
                 passes' host side, each enqueue to its kernel's start, each kernel's end to \
                 its completion callback, and the owning tool's PASS callbacks and the SDK's \
                 pass preparation beside each restore",
                u.phase
            )
        } else if o.restore_in_pass > 0 {
            format!(
                "{}: the window time no row covers (window − the rows): the gaps between \
                 passes, host bookkeeping only, where restores ran inside the passes",
                u.phase
            )
        } else {
            format!(
                "{}: the window time no row covers (window − the rows; an older file has no \
                 CONTINUE records)",
                u.phase
            )
        });
    }
    if o.restore_in_pass > 0 {
        notes.push(if o.restore_in_pass_unsplit > 0 {
            format!(
                "restore: {} windows' restores ran inside the passes (after PASS ENTER: a \
                 device-side snapshot); pass exec holds those of {} (no SDK log line to split \
                 them out); they are not host work",
                o.restore_in_pass, o.restore_in_pass_unsplit
            )
        } else {
            format!(
                "restore: {} windows' restores ran inside the passes (after PASS ENTER: a \
                 device-side snapshot); restore is the SDK log's restore_seconds, pass exec the \
                 rest",
                o.restore_in_pass
            )
        });
    }
    notes
}

/// Whether the summary's kernel names are cut to the function name: demangled names carry their
/// argument lists, which would wrap the one-screen summary; the report's tables keep them whole.
fn kernels_truncated() -> bool {
    crate::db::kernel_names::form() == krphase_names::NameForm::Demangled
}

/// A kernel's name in the summary (see [`kernels_truncated`]).
pub(crate) fn short_kernel(shown: &str) -> String {
    if kernels_truncated() {
        krphase_names::truncate(shown)
    } else {
        shown.to_string()
    }
}

/// The slowest kernel rows: `(run, kernel, n, mean ± σ, p99, largest phase)`.
fn slow_rows(o: &Overview) -> Vec<[String; 6]> {
    o.slowest
        .iter()
        .map(|k| {
            [
                match &k.label {
                    Some(l) => format!("{} {l}", k.run_id),
                    None => k.run_id.to_string(),
                },
                short_kernel(&k.kernel),
                k.windows.to_string(),
                crate::render::fmt::mean_sd(Some(k.mean_ns), k.sd_ns),
                k.p99_ns.map_or("-".into(), |v| duration_short(v as f64)),
                match (&k.top_phase, k.top_phase_share) {
                    (Some(p), Some(s)) => format!("{p} {}", percent(Some(s))),
                    _ => "-".into(),
                },
            ]
        })
        .collect()
}

fn bytes_line(o: &Overview) -> Option<String> {
    let per = o.snapshot_bytes_per_window().filter(|&b| b > 0.0)?;
    let rate = o.snapshot_gbps.map_or(String::new(), |g| {
        format!(" at {g:.2} GB/s (SDK snapshot time)")
    });
    Some(format!(
        "snapshot: {} per replayed window{rate} [{}]",
        bytes(per),
        basis_words(&o.snapshot_bytes_basis)
    ))
}

/// A table of the summary: the report's style, compact on the terminal.
fn summary_table(markdown: bool, header: &[&str]) -> comfy_table::Table {
    let mut t = crate::render::table::table(markdown, header);
    if !markdown {
        t.load_preset(COMPACT);
    }
    t
}

/// The summary as terminal text (`markdown`: as Markdown, tables as pipe tables).
pub fn render(o: &Overview, markdown: bool) -> String {
    let mut s = String::new();
    let h = if markdown { "## " } else { "== " };
    let _ = writeln!(s, "{h}summary");
    if markdown {
        s.push('\n');
    }
    let _ = writeln!(
        s,
        "{}",
        crate::render::fmt::wrap(&headline(o), 98, "", "  ").trim_end()
    );
    if markdown {
        s.push('\n');
    }
    if !o.declines_by_reason.is_empty() {
        let _ = writeln!(
            s,
            "declined by reason: {}",
            reasons_text(&o.declines_by_reason)
        );
    }
    if markdown {
        s.push('\n');
    }
    if o.replay_ns > 0 {
        let _ = writeln!(
            s,
            "where the replayed windows' time went, all runs pooled ({} of replay in {} of wall):",
            duration(o.replay_ns as f64),
            duration(o.wall_ns as f64)
        );
        if markdown {
            s.push('\n');
        }
        let mut t = summary_table(markdown, &["phase", "share", "total", "runs", "basis"]);
        for row in phase_rows(o) {
            t.add_row(row.to_vec());
        }
        crate::render::table::push_table(&mut s, &t, markdown);
        for note in phase_notes(o) {
            let _ = writeln!(
                s,
                "{}",
                crate::render::fmt::wrap(&note, 98, "", "  ").trim_end()
            );
        }
        if markdown {
            s.push('\n');
        }
    }
    if let Some(b) = bytes_line(o) {
        let _ = writeln!(s, "{b}");
        if markdown {
            s.push('\n');
        }
    }
    if let Some(c) = &o.cross_rank {
        for line in c.summary_lines() {
            let _ = writeln!(
                s,
                "{}",
                crate::render::fmt::wrap(&line, 98, "", "  ").trim_end()
            );
        }
        if markdown {
            s.push('\n');
        }
    }
    if !o.slowest.is_empty() {
        let _ = writeln!(
            s,
            "slowest kernels (mean window time{}):",
            if kernels_truncated() {
                "; names truncated, whole in the report"
            } else {
                ""
            }
        );
        if markdown {
            s.push('\n');
        }
        let mut t = summary_table(
            markdown,
            &["run", "kernel", "n", "mean ± σ", "p99", "largest phase"],
        );
        if let Some(c) = t.column_mut(1) {
            c.set_cell_alignment(comfy_table::CellAlignment::Left);
        }
        for row in slow_rows(o) {
            t.add_row(row.to_vec());
        }
        crate::render::table::push_table(&mut s, &t, markdown);
    }
    s
}
