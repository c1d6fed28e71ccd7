//! Pass fidelity: whether the passes of a replay window behave alike enough for counters from
//! different passes to be combined. Per kernel: each pass's GPU and host time by pass index;
//! pass 0 against passes 1…N−1 as a ratio with its interval and n; the spread among passes
//! 1…N−1; every counter collected in more than one pass, compared pass to pass; and the
//! stitching bound, the largest relative pass-to-pass difference of what should be identical,
//! with its basis. The detector itself is [`detect`]; what it reads, [`records`].

#[cfg(test)]
mod calibration_tests;
pub mod detect;
pub mod records;

use std::collections::BTreeMap;

use anyhow::Result;
use rusqlite::Connection;
use serde::Serialize;

use crate::db::basis::Basis;
use detect::{Detection, Flag, Median, THRESHOLD, WindowPasses, detect, later_spread};
use records::{RepeatedCounter, WindowTimes};

/// One pass index of a kernel: its GPU and host time over the kernel's windows.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PassFigure {
    pub pass: i64,
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
    pub bound: Option<Bound>,
    /// The first judged measure past the threshold, with why.
    pub flagged: Option<(String, Flag)>,
}

/// Pass fidelity of one run, kernel by kernel (kernels with at least two passes per window).
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct RunFidelity {
    pub threshold: f64,
    pub kernels: Vec<KernelFidelity>,
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
    Ok(of_records(&windows, &counters))
}

/// The pass fidelity of these windows and counters (the database's, or synthetic ones).
pub fn of_records(windows: &[WindowTimes], counters: &[RepeatedCounter]) -> RunFidelity {
    let mut by_kernel: BTreeMap<&str, Vec<&WindowTimes>> = BTreeMap::new();
    for w in windows.iter().filter(|w| w.passes.len() >= 2) {
        by_kernel.entry(&w.kernel).or_default().push(w);
    }
    let mut counters_by: BTreeMap<(&str, &str, Basis), Vec<WindowPasses>> = BTreeMap::new();
    for c in counters {
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

fn pass_figures(ws: &[&WindowTimes]) -> Vec<PassFigure> {
    let mut by: BTreeMap<i64, (Vec<f64>, Vec<f64>)> = BTreeMap::new();
    for p in ws.iter().flat_map(|w| &w.passes) {
        let e = by.entry(p.pass).or_default();
        e.0.extend(p.gpu_ns.map(|v| v as f64));
        e.1.extend(p.host_ns.map(|v| v as f64));
    }
    by.into_iter()
        .map(|(pass, (g, h))| PassFigure {
            pass,
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
            reference: "pass 0",
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
        passes: pass_figures(ws),
        gpu,
        host,
        later_spread: later,
        counters,
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

/// What a user can do about a flagged kernel. The SDK offers no cache flush between passes,
/// so none is advised.
pub fn advice(flag: Flag) -> &'static str {
    match flag {
        Flag::Shift => {
            "keep each ratio's counters in one group (as ROCm/rocm-systems #9324 did), add a \
             warm-up pass (KRPHASE_WARMUP_PASS=1) so every counted pass starts warm, or replay \
             a smaller footprint"
        }
        Flag::Stray => {
            "keep each ratio's counters in one group (as ROCm/rocm-systems #9324 did): the \
             kernel does not repeat itself (atomic order, or state the restore leaves out), so \
             no pass plan makes its passes alike"
        }
    }
}
