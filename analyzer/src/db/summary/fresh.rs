//! The `krphase_window_phase` view's figures of a window as `import` writes it, before any SDK log
//! record is joined to it: what lets `import` summarise a run from the rows it writes instead of
//! reading every one back through the view (which costs about as much as writing them).
//!
//! It is the view's CASEs with every log column NULL, so it holds only while no log record points
//! into the run's window ids: [`super::store_imported`] checks that, and debug builds (every test
//! that imports a file) compare the summary with the one read back through the view.

use std::sync::LazyLock;

use crate::db::basis::Basis;
use crate::db::phases::{self, WINDOW, WindowRow};

/// The columns of one `krphase_window` row the view's figures depend on, as import binds them.
#[derive(Debug, Clone, Copy, Default)]
pub struct FreshWindow<'a> {
    pub kernel: Option<&'a str>,
    pub outcome: &'a str,
    pub reason: &'a str,
    pub executed_passes: Option<i64>,
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub pass_count_return: Option<i64>,
    pub first_pass_enter: Option<i64>,
    pub last_pass_exit: Option<i64>,
    pub pass_ns: Option<i64>,
    pub gpu_ns: Option<i64>,
    pub restore_ns: Option<i64>,
    pub restores: Option<i64>,
    pub bytes_estimate: Option<i64>,
    pub continue_ns: Option<i64>,
    pub stuck_ns: Option<i64>,
    pub source: Option<&'a str>,
    /// 1 when the callbacks put the restores inside the passes (drive mode).
    pub restore_in_pass: Option<i64>,
}

fn minus(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    Some(a? - b?)
}

fn measured(v: Option<i64>) -> Option<Basis> {
    v.map(|_| Basis::InProcess)
}

/// Where each phase sits in [`phases::PHASES`], looked up once.
static INDEX: LazyLock<[usize; NAMES.len()]> =
    LazyLock::new(|| NAMES.map(|n| phases::index(n).expect("a phase")));

/// The phases besides the window, in the order [`fill`] sets them.
const NAMES: [&str; 10] = [
    "config",
    "pre-pass",
    "drain",
    "snapshot",
    "pass exec",
    "gpu",
    "continue",
    "restore",
    "restore bound",
    "tail",
];

fn put(w: &mut WindowRow, n: usize, value: Option<i64>, basis: Option<Basis>) {
    let k = INDEX[n];
    w.phase_ns[k] = value;
    w.phase_basis[k] = basis;
}

fn text(dst: &mut String, s: &str) {
    dst.clear();
    dst.push_str(s);
}

/// Fills `w` with the view's figures of `f` (strings reused: no allocation per window).
pub fn fill(f: &FreshWindow<'_>, w: &mut WindowRow) {
    let observe = match f.source {
        Some(s) => s == "observe",
        None => f.pass_count_return.is_none() && f.first_pass_enter.is_none(),
    };
    text(&mut w.kernel, f.kernel.unwrap_or(""));
    text(&mut w.outcome, f.outcome);
    text(&mut w.reason, f.reason);
    w.executed_passes = f.executed_passes;
    w.restores = f.restores;
    w.stuck_ns = f.stuck_ns;
    w.snapshot_bytes = f.bytes_estimate;
    w.bytes_basis = f.bytes_estimate.map(|_| Basis::Estimate);
    let window = minus(f.end, f.start);
    let window_basis = if f.pass_count_return.is_some() {
        Some(Basis::InProcess)
    } else {
        window.map(|_| Basis::Dispatch)
    };
    w.phase_ns[WINDOW] = window;
    w.phase_basis[WINDOW] = window_basis;
    let config = minus(f.pass_count_return, f.start);
    put(w, 0, config, measured(config));
    let prepass = minus(f.first_pass_enter, f.pass_count_return);
    put(w, 1, prepass, measured(prepass));
    put(w, 2, None, None);
    put(w, 3, None, None);
    put(w, 4, f.pass_ns, measured(f.pass_ns));
    put(w, 5, f.gpu_ns, measured(f.gpu_ns));
    put(w, 6, f.continue_ns, measured(f.continue_ns));
    if observe {
        put(w, 7, None, None);
        let bound = f.restore_ns.map(|_| Basis::Dispatch);
        put(w, 8, f.restore_ns, bound);
    } else if f.restore_in_pass == Some(1) {
        // The restores ran inside the passes: pass exec holds them, and only a joined SDK
        // log can split them out; the gaps between passes are no restore.
        put(w, 7, None, None);
        put(w, 8, None, None);
    } else {
        put(w, 7, f.restore_ns, measured(f.restore_ns));
        put(w, 8, None, None);
    }
    let tail = minus(f.end, f.last_pass_exit);
    put(w, 9, tail, measured(tail));
}
