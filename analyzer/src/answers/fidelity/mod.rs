//! Pass fidelity: whether the passes of a replay window behave alike enough for counters from
//! different passes to be combined. Per kernel: each pass's GPU and host time by pass index;
//! pass 0 against passes 1…N−1 as a ratio with its interval and n; the spread among passes
//! 1…N−1; every counter collected in more than one pass, compared pass to pass; and the
//! stitching bound, the largest relative pass-to-pass difference of what should be identical,
//! with its basis. The detector itself is [`detect`]; what it reads, [`records`].

#[cfg(test)]
mod calibration_tests;
pub mod detect;
pub mod plan;
pub mod records;

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::basis::Basis;
use detect::{Detection, Flag, Median, THRESHOLD, WindowPasses, detect, later_spread};
use plan::{PassPlan, Role};
use records::{RepeatedCounter, WindowTimes};

/// One pass index of a kernel: its GPU and host time over the kernel's windows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassFigure {
    pub pass: i64,
    pub role: Role,
    /// Median GPU time (ns) over the windows that ran this pass, with its interval and n.
    pub gpu_ns: Option<Median>,
    /// Median host time (ns, PASS ENTER .. EXIT), with its interval and n.
    pub host_ns: Option<Median>,
}

/// One measure compared across the passes of each window: GPU time, host time or a counter.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Measure {
    pub name: String,
    pub basis: Basis,
    /// The pass each window's later passes are compared with.
    pub reference: &'static str,
    /// Whether this measure may flag the kernel (host time never does: it holds the launch).
    pub judged: bool,
    #[serde(flatten)]
    pub detection: Detection,
}

/// The stitching bound: the largest relative pass-to-pass difference among the measures that
/// should be identical, and the measure it comes from.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Bound {
    pub value: f64,
    pub measure: String,
    pub basis: Basis,
}

/// Pass fidelity of one kernel.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct KernelFidelity {
    pub kernel: String,
    pub windows: usize,
    pub passes: Vec<PassFigure>,
    pub gpu: Option<Measure>,
    pub host: Option<Measure>,
    /// Median over windows of (max − min) / median among passes 1…N−1 (GPU time).
    pub later_spread: Option<Median>,
    pub counters: Vec<Measure>,
    /// With a warm-up pass: the warm-up pass against the counted passes (what it absorbed).
    pub warmup: Option<Measure>,
    pub bound: Option<Bound>,
    /// The first judged measure past the threshold, with why.
    pub flagged: Option<(String, Flag)>,
}

/// Pass fidelity of one run, kernel by kernel (kernels with at least two passes per window).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunFidelity {
    pub threshold: f64,
    pub kernels: Vec<KernelFidelity>,
    /// The tool's pass plan, when it wrote one (drive mode with counters or extra passes).
    pub plan: Option<PassPlan>,
    /// Why the tool's plan note could not be read (its passes are then all taken as counted).
    pub plan_error: Option<String>,
    /// What the warm-up and verification passes cost, when the plan has them.
    pub extra: Option<ExtraCost>,
}

/// The passes the plan added (warm-up, verification): how many and their time, measured in
/// process, against all the run's passes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Serialize)]
pub struct ExtraCost {
    pub passes: u64,
    pub gpu_ns: i64,
    pub host_ns: i64,
    /// Of all complete passes' host time.
    pub share_of_pass_host: Option<f64>,
}

impl RunFidelity {
    pub fn is_empty(&self) -> bool {
        self.kernels.is_empty()
    }

    /// The kernels flagged.
    pub fn flagged(&self) -> impl Iterator<Item = &KernelFidelity> {
        self.kernels.iter().filter(|k| k.flagged.is_some())
    }
}

/// The pass fidelity of run `run`.
pub fn of_run(conn: &Connection, run: i64) -> Result<RunFidelity> {
    let windows = records::window_times(conn, run)?;
    let counters = records::repeated_counters(conn, run)?;
    let notes: Option<String> = conn.query_row(
        "SELECT tool_notes FROM krphase_run WHERE id = ?1",
        [run],
        |r| r.get(0),
    )?;
    let (plan, plan_error) = match plan::parse(notes.as_deref().unwrap_or("")) {
        Ok(p) => (p, None),
        Err(e) => (None, Some(e)),
    };
    let mut f = of_records(&windows, &counters, plan.as_ref());
    f.plan = plan;
    f.plan_error = plan_error;
    Ok(f)
}

/// The windows with their warm-up passes left out (what stitching combines).
fn counted(windows: &[WindowTimes], plan: Option<&PassPlan>) -> Vec<WindowTimes> {
    windows
        .iter()
        .map(|w| WindowTimes {
            window_id: w.window_id,
            kernel: w.kernel.clone(),
            passes: w
                .passes
                .iter()
                .filter(|p| plan.is_none_or(|pl| pl.role(p.pass) != Role::Warmup))
                .copied()
                .collect(),
        })
        .collect()
}

/// The time of the passes the plan added.
fn extra_cost(windows: &[WindowTimes], plan: &PassPlan) -> Option<ExtraCost> {
    if !(plan.warmup || plan.verify) {
        return None;
    }
    let mut c = ExtraCost::default();
    let mut all_host = 0i64;
    for p in windows.iter().flat_map(|w| &w.passes) {
        all_host += p.host_ns.unwrap_or(0);
        if plan.role(p.pass) != Role::Counted {
            c.passes += 1;
            c.gpu_ns += p.gpu_ns.unwrap_or(0);
            c.host_ns += p.host_ns.unwrap_or(0);
        }
    }
    c.share_of_pass_host = crate::stats::ratio(c.host_ns as f64, all_host as f64);
    Some(c)
}

/// The pass fidelity of these windows and counters (the database's, or synthetic ones) under
/// `plan` (warm-up passes are shown but never combined).
pub fn of_records(
    all_windows: &[WindowTimes],
    all_counters: &[RepeatedCounter],
    plan: Option<&PassPlan>,
) -> RunFidelity {
    let windows = &counted(all_windows, plan)[..];
    let counters: Vec<RepeatedCounter> = all_counters
        .iter()
        .map(|c| RepeatedCounter {
            passes: c
                .passes
                .iter()
                .filter(|(p, _)| plan.is_none_or(|pl| pl.role(*p) != Role::Warmup))
                .copied()
                .collect(),
            ..c.clone()
        })
        .filter(|c| c.passes.len() >= 2)
        .collect();
    let mut by_kernel: BTreeMap<&str, Vec<&WindowTimes>> = BTreeMap::new();
    for w in windows.iter().filter(|w| w.passes.len() >= 2) {
        by_kernel.entry(&w.kernel).or_default().push(w);
    }
    let mut counters_by: BTreeMap<(&str, &str, Basis), Vec<WindowPasses>> = BTreeMap::new();
    for c in &counters {
        counters_by
            .entry((&c.kernel, &c.counter, c.basis))
            .or_default()
            .push(c.passes.iter().map(|(_, v)| *v).collect());
    }
    let mut kernels: Vec<KernelFidelity> = by_kernel
        .into_iter()
        .map(|(kernel, ws)| {
            let counters = counters_by
                .iter()
                .filter(|((k, _, _), _)| *k == kernel)
                .map(|((_, name, basis), w)| Measure {
                    name: (*name).to_string(),
                    basis: *basis,
                    reference: "the first pass that collected it",
                    judged: true,
                    detection: detect(w, true),
                })
                .collect();
            kernel_fidelity(kernel, &ws, counters)
        })
        .collect();
    // Counters of kernels whose windows hold fewer than two timed passes still count.
    for k in &mut kernels {
        let all: Vec<&WindowTimes> = all_windows
            .iter()
            .filter(|w| w.kernel == k.kernel)
            .collect();
        k.passes = pass_figures(&all, plan);
        if plan.is_some_and(|p| p.warmup) {
            k.warmup = warmup_measure(&all, plan);
        }
    }
    for ((kernel, name, basis), w) in &counters_by {
        if !kernels.iter().any(|k| k.kernel == *kernel) {
            let m = Measure {
                name: (*name).to_string(),
                basis: *basis,
                reference: "the first pass that collected it",
                judged: true,
                detection: detect(w, true),
            };
            let mut k = kernel_fidelity(kernel, &[], vec![m]);
            k.windows = w.len();
            kernels.push(k);
        }
    }
    kernels.sort_by(|a, b| a.kernel.cmp(&b.kernel));
    RunFidelity {
        threshold: THRESHOLD,
        kernels,
        plan: None,
        plan_error: None,
        extra: plan.and_then(|p| extra_cost(all_windows, p)),
    }
}

/// Each window's value of `f` per pass, windows missing one left out.
fn per_window(ws: &[&WindowTimes], f: fn(&records::PassTimes) -> Option<i64>) -> Vec<WindowPasses> {
    ws.iter()
        .filter_map(|w| {
            w.passes
                .iter()
                .map(|p| f(p).map(|v| v as f64))
                .collect::<Option<Vec<f64>>>()
        })
        .collect()
}

/// The warm-up pass (each window's first) against the counted passes after it, GPU time: what
/// the warm-up absorbed. Not judged: it is the pass left out of stitching.
fn warmup_measure(ws: &[&WindowTimes], plan: Option<&PassPlan>) -> Option<Measure> {
    let w: Vec<WindowPasses> = per_window(ws, |p| p.gpu_ns)
        .into_iter()
        .zip(ws)
        .filter(|(_, w)| {
            w.passes
                .first()
                .is_some_and(|p| plan.is_some_and(|pl| pl.role(p.pass) == Role::Warmup))
        })
        .map(|(v, _)| v)
        .collect();
    (!w.is_empty()).then(|| Measure {
        name: "GPU time, warm-up pass as reference".into(),
        basis: Basis::InProcess,
        reference: "the warm-up pass",
        judged: false,
        detection: detect(&w, false),
    })
}

fn pass_figures(ws: &[&WindowTimes], plan: Option<&PassPlan>) -> Vec<PassFigure> {
    let mut by: BTreeMap<i64, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for p in ws.iter().flat_map(|w| &w.passes) {
        let e = by.entry(p.pass).or_default();
        e.0.extend(p.gpu_ns.map(|v| v as f64));
        e.1.extend(p.host_ns.map(|v| v as f64));
    }
    by.into_iter()
        .map(|(pass, (g, h))| PassFigure {
            pass,
            role: plan.map_or(Role::Counted, |p| p.role(pass)),
            gpu_ns: Median::of(&g),
            host_ns: Median::of(&h),
        })
        .collect()
}

fn kernel_fidelity(kernel: &str, ws: &[&WindowTimes], counters: Vec<Measure>) -> KernelFidelity {
    let time = |name: &str, f, judged| {
        let w = per_window(ws, f);
        (!w.is_empty()).then(|| Measure {
            name: name.to_string(),
            basis: Basis::InProcess,
            reference: "pass 0 (the first counted pass after a warm-up pass)",
            judged,
            detection: detect(&w, false),
        })
    };
    let gpu = time("GPU time", |p: &records::PassTimes| p.gpu_ns, true);
    let host = time("host time", |p: &records::PassTimes| p.host_ns, false);
    let later = later_spread(&per_window(ws, |p| p.gpu_ns));
    let judged: Vec<&Measure> = gpu.iter().chain(&counters).filter(|m| m.judged).collect();
    let bound = judged
        .iter()
        .filter_map(|m| Some((m, bound_of(&m.detection)?)))
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(m, value)| Bound {
            value,
            measure: m.name.clone(),
            basis: m.basis,
        });
    let flagged = judged
        .iter()
        .find_map(|m| Some((m.name.clone(), m.detection.flag?)));
    KernelFidelity {
        kernel: kernel.to_string(),
        windows: ws.len(),
        passes: pass_figures(ws, None),
        gpu,
        host,
        later_spread: later,
        counters,
        warmup: None,
        bound,
        flagged,
    }
}

/// A measure's relative pass-to-pass difference: the larger of its median shift and its median
/// window-by-window disagreement.
fn bound_of(d: &Detection) -> Option<f64> {
    let shift = d.ratio.map(|r| (r.estimate - 1.0).abs());
    let stray = d.stray.map(|s| s.estimate);
    match (shift, stray) {
        (Some(a), Some(b)) => Some(a.max(b)),
        (a, b) => a.or(b),
    }
}

/// A flagged kernel of one run, as the findings cite it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Flagged {
    pub run_id: i64,
    pub kernel: String,
    pub measure: String,
    /// The flagged measure's basis.
    pub basis: Basis,
    pub flag: Flag,
    pub bound: Option<Bound>,
    /// The flagged measure's ratio to its reference, with its interval and n.
    pub ratio: Option<Median>,
    pub stray: Option<Median>,
}

impl Flagged {
    /// The flagged kernels of run `run_id`.
    pub fn of_run(run_id: i64, f: &RunFidelity) -> Vec<Flagged> {
        f.flagged()
            .filter_map(|k| {
                let (measure, flag) = k.flagged.clone()?;
                let m = k
                    .gpu
                    .iter()
                    .chain(&k.counters)
                    .find(|m| m.name == measure)?;
                Some(Flagged {
                    run_id,
                    kernel: k.kernel.clone(),
                    measure,
                    basis: m.basis,
                    flag,
                    bound: k.bound.clone(),
                    ratio: m.detection.ratio,
                    stray: m.detection.stray,
                })
            })
            .collect()
    }
}

/// What a user can do about a flagged kernel. The SDK offers no cache flush between passes,
/// so none is advised.
pub fn advice(flag: Flag) -> &'static str {
    match flag {
        Flag::Shift => {
            "keep each ratio's counters in one group (as ROCm/rocm-systems #9324 did), add a \
             warm-up pass (KRPHASE_WARMUP_PASS=1) so every counted pass starts warm, or replay \
             a smaller footprint; if the later passes see state the snapshot does not hold (an \
             untracked pool allocation), no pass plan makes them alike"
        }
        Flag::Stray => {
            "keep each ratio's counters in one group (as ROCm/rocm-systems #9324 did): the \
             kernel does not repeat itself (atomic order, or state the restore leaves out), so \
             no pass plan makes its passes alike"
        }
    }
}
