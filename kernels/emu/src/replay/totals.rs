//! Each window's true phase durations under the build, and their sums over the run: the truth
//! an analyzer's attribution of a build-to-build change is checked against. The phases are
//! cut at the boundaries a tool can see (CONFIG, PASS ENTER/EXIT, the continue return) plus the
//! SDK log's own timers (snapshot, restores, lock+drain) and the emulator's sub-phases.

use super::config::config;
use super::record::WindowRecord;
use crate::truth;
use parking_lot::Mutex;
use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::sync::LazyLock;

/// The sums over the run's accepted windows.
#[derive(Default)]
struct Totals {
    windows: u64,
    by_reason: BTreeMap<String, u64>,
    snapshot_bytes: u64,
    restore_bytes: u64,
    ns: BTreeMap<&'static str, u64>,
}

static TOTALS: LazyLock<Mutex<Totals>> = LazyLock::new(|| Mutex::new(Totals::default()));

fn d(a: u64, b: u64) -> u64 {
    b.saturating_sub(a)
}

/// The window's true durations, ns, by phase (phases the window did not reach are left out).
fn phase_ns(w: &WindowRecord) -> Vec<(&'static str, u64)> {
    let mut v = vec![("window", d(w.config_enter, w.config_exit))];
    v.push(("config", d(w.config_enter, w.pass_count_return)));
    let snapshot = w.snapshot.as_ref().map(|s| d(s.span.start, s.span.end));
    if let Some(first) = w.passes.first() {
        let pre = d(w.pass_count_return, first.enter);
        v.push(("pre_pass", pre));
        v.push(("drain", pre.saturating_sub(snapshot.unwrap_or(0))));
    }
    if let Some(s) = snapshot {
        v.push(("snapshot", s));
    }
    if let (Some(l), Some(a)) = (&w.lock_wait, &w.agent_drain) {
        v.push(("lock_drain", d(l.start, a.end)));
    }
    for (name, s) in [
        ("queue_drain", &w.queue_drain),
        ("drain_signal", &w.drain_signal),
    ] {
        if let Some(s) = s {
            v.push((name, d(s.start, s.end)));
        }
    }
    let ended: Vec<_> = w
        .passes
        .iter()
        .filter_map(|p| p.exit.map(|x| (p, x)))
        .collect();
    v.push(("pass_exec", ended.iter().map(|(p, x)| d(p.enter, *x)).sum()));
    v.push((
        "gpu",
        w.passes
            .iter()
            .filter_map(|p| p.gpu)
            .map(|(a, b)| d(a, b))
            .sum(),
    ));
    let cont = ended
        .iter()
        .filter_map(|(p, x)| p.continue_phase.map(|c| d(*x, c.end)));
    v.push(("continue", cont.sum()));
    // The gap before pass i: from the continue return (PASS EXIT without one) to PASS ENTER.
    let gaps = w.passes.windows(2).filter_map(|p| {
        let from = p[0].continue_phase.map(|c| c.end).or(p[0].exit)?;
        Some(d(from, p[1].enter))
    });
    v.push(("restore", gaps.sum()));
    let copies = |in_pass: bool| -> u64 {
        w.restores
            .iter()
            .filter(|r| r.in_pass == in_pass)
            .map(|r| d(r.span.start, r.span.end))
            .sum()
    };
    v.push(("restore_copy", copies(false) + copies(true)));
    v.push(("restore_in_pass", copies(true)));
    if let Some(t) = &w.tail {
        v.push(("tail", d(t.start, t.end)));
    }
    v
}

/// Adds one finished window to the run's totals; returns its phase durations for its truth line.
pub(super) fn add(w: &WindowRecord, reason: &str) -> Value {
    let phases = phase_ns(w);
    let mut t = TOTALS.lock();
    t.windows += 1;
    *t.by_reason.entry(reason.to_string()).or_default() += 1;
    t.snapshot_bytes += w.snapshot.as_ref().map_or(0, |s| s.bytes);
    t.restore_bytes += w.restores.iter().map(|r| r.bytes).sum::<u64>();
    for (name, ns) in &phases {
        *t.ns.entry(name).or_default() += ns;
    }
    Value::Object(
        phases
            .into_iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect(),
    )
}

/// The `totals` truth line: the run's windows by outcome, bytes and phase sums, with the build
/// and its slow-down factor.
pub fn write_truth() {
    let t = TOTALS.lock();
    let model = config().model;
    let ns: Map<String, Value> =
        t.ns.iter()
            .map(|(k, v)| (k.to_string(), json!(v)))
            .collect();
    truth::write(&json!({
        "type": "totals", "pid": std::process::id(),
        "build": model.map(|m| m.build.label()), "slowdown": model.map(|m| m.slowdown),
        "device_gbps": model.map(|m| m.device_gbps),
        "windows": t.windows, "by_reason": t.by_reason,
        "snapshot_bytes": t.snapshot_bytes, "restore_bytes": t.restore_bytes, "ns": ns,
    }));
}
