//! The evidence a log segment must show to join a run, checked in this order; the first that
//! fails is named. Dispatch ids alone prove nothing (they restart at 1 in every process), so:
//!
//! 1. **stamps**: every line carries a glog time stamp;
//! 2. **span**: every stamp, read as local time at the run's UTC offset (in the run's year when
//!    the prefix has none), lies inside the run's span (tool start → finalize) on its clock pair,
//!    within [`RunSpan::tolerance_ns`];
//! 3. **sequence**: every dispatch id is one of the run's, with the same outcome (replayed, or
//!    declined: an SDK-declined window, or in observe mode a dispatch that ran once) and the same
//!    requested and executed pass counts where both sides have them;
//! 4. **slot**: each line is stamped after its dispatch started and before the same thread's
//!    next other dispatch started (the SDK logs before the application's thread moves on);
//! 5. **physical**: no snapshot the log reports is longer than the drive-mode pre-pass that
//!    contains it, beyond the figure's printed resolution plus [`PHYSICAL_TOL_NS`].

use super::LogWindow;
use super::glog_prefix::{local_text, offset_text};
use super::run_facts::{RunFacts, RunSpan};

/// Slack on top of a snapshot figure's printed resolution: the SDK's clock reads and the
/// tool's are different reads of the same clock a few instructions apart.
pub const PHYSICAL_TOL_NS: i64 = 10_000;

/// The pieces of evidence, in checking order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Evidence {
    Stamps,
    Span,
    Sequence,
    Slot,
    Physical,
}

impl Evidence {
    pub fn name(self) -> &'static str {
        match self {
            Evidence::Stamps => "time stamps",
            Evidence::Span => "time span",
            Evidence::Sequence => "dispatch sequence",
            Evidence::Slot => "line timing",
            Evidence::Physical => "physical bounds",
        }
    }
}

/// The evidence that failed and why, in words for the refusal line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    pub evidence: Evidence,
    pub detail: String,
}

fn fail<T>(evidence: Evidence, detail: String) -> Result<T, Failure> {
    Err(Failure { evidence, detail })
}

/// What held, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Held {
    pub stamps: usize,
    pub matched: usize,
    pub slots: usize,
    pub physical: usize,
    /// Lines past the end of a file that was never finalized (the process was killed).
    pub beyond_file: usize,
}

impl Held {
    pub fn add(&mut self, o: Held) {
        self.stamps += o.stamps;
        self.matched += o.matched;
        self.slots += o.slots;
        self.physical += o.physical;
        self.beyond_file += o.beyond_file;
    }
}

fn seconds(ns: i64) -> String {
    format!("{:.6} s", ns as f64 / 1e9)
}

/// Evidence 1 and 2: needs only the run's span.
pub fn check_time(records: &[&LogWindow], span: &RunSpan) -> Result<Held, Failure> {
    let off = span.offset_s();
    let zone = match span.utc_offset_s {
        Some(_) => offset_text(off),
        None => "UTC: the run records no UTC offset, so the stamps were read as UTC".into(),
    };
    let (lo, hi) = (
        span.utc_ns(span.start) - span.tolerance_ns(span.start),
        span.utc_ns(span.end) + span.tolerance_ns(span.end),
    );
    for r in records {
        let Some(stamp) = r.stamp else {
            return fail(
                Evidence::Stamps,
                format!(
                    "the line of dispatch {} has no glog time stamp, and dispatch ids alone match any run",
                    r.dispatch_id
                ),
            );
        };
        let u = span.stamp_utc_ns(&stamp);
        let outside = if u < lo {
            Some(format!("{} before its start", seconds(lo - u)))
        } else if u > hi && span.finalized {
            Some(format!("{} after its end", seconds(u - hi)))
        } else {
            None
        };
        if let Some(o) = outside {
            return fail(
                Evidence::Span,
                format!(
                    "dispatch {}'s line is stamped {}, {o} (run {} ran {} – {}, {zone})",
                    r.dispatch_id,
                    local_text(u, off),
                    span.run_id,
                    local_text(span.utc_ns(span.start), off),
                    local_text(span.utc_ns(span.end), off),
                ),
            );
        }
    }
    Ok(Held {
        stamps: records.len(),
        ..Held::default()
    })
}

/// Whether the log's outcome agrees with the phase file's.
fn outcome_agrees(log: Option<&str>, file: &str) -> bool {
    match log {
        Some("replayed") => file == "replayed",
        Some("declined") => file == "declined" || file == "plain",
        Some(other) => other == file,
        None => file == "replayed" || file == "declined",
    }
}

fn opt(v: Option<i64>) -> String {
    v.map_or("?".into(), |v| v.to_string())
}

/// Evidence 3, 4 and 5 (after [`check_time`]), against the run's dispatch ids.
pub fn check_file(records: &[&LogWindow], facts: &RunFacts) -> Result<Held, Failure> {
    let span = &facts.span;
    let mut held = Held {
        stamps: records.len(),
        ..Held::default()
    };
    let mut matched = Vec::with_capacity(records.len());
    for r in records {
        let id = r.dispatch_id;
        let Some(e) = facts.entries.get(&id) else {
            if !span.finalized && id > facts.max_dispatch {
                held.beyond_file += 1;
                continue;
            }
            return fail(
                Evidence::Sequence,
                format!(
                    "dispatch {id} ({}) is not in run {}'s phase file",
                    r.outcome.as_deref().unwrap_or("phase line"),
                    span.run_id
                ),
            );
        };
        if !outcome_agrees(r.outcome.as_deref(), &e.outcome) {
            // An SDK that runs a pass count of 1 as a loop of one pass replays a dispatch that
            // an observing tool sees as one plain run: say so, since nothing else will.
            let one_pass = e.outcome == "plain" && r.executed_passes == Some(1);
            return fail(
                Evidence::Sequence,
                format!(
                    "dispatch {id}: the log says {}, run {}'s phase file {}{}",
                    r.outcome.as_deref().unwrap_or("replayed (phase line)"),
                    span.run_id,
                    e.outcome,
                    if one_pass {
                        " (a replay of one pass looks like a plain dispatch to an observer)"
                    } else {
                        ""
                    }
                ),
            );
        }
        let differs =
            |a: Option<i64>, b: Option<i64>| matches!((a, b), (Some(x), Some(y)) if x != y);
        let executed = (e.outcome != "plain").then_some(e.executed).flatten();
        if differs(r.requested_passes, e.requested) || differs(r.executed_passes, executed) {
            return fail(
                Evidence::Sequence,
                format!(
                    "dispatch {id}: the log says {} requested / {} executed passes, run {}'s phase file {} / {}",
                    opt(r.requested_passes),
                    opt(r.executed_passes),
                    span.run_id,
                    opt(e.requested),
                    opt(executed)
                ),
            );
        }
        held.matched += 1;
        matched.push((*r, e));
    }
    for (r, e) in &matched {
        let (Some(stamp), Some(start)) = (r.stamp, e.start) else {
            continue;
        };
        let u = span.stamp_utc_ns(&stamp);
        let lo = span.utc_ns(start) - span.tolerance_ns(start);
        if u < lo {
            return fail(
                Evidence::Slot,
                format!(
                    "dispatch {}'s line is stamped {} before the dispatch started in run {}",
                    r.dispatch_id,
                    seconds(lo - u),
                    span.run_id
                ),
            );
        }
        if let Some(next) = e.slot_end {
            let hi = span.utc_ns(next) + span.tolerance_ns(next);
            if u > hi {
                return fail(
                    Evidence::Slot,
                    format!(
                        "dispatch {}'s line is stamped {} after its thread's next dispatch started in run {}",
                        r.dispatch_id,
                        seconds(u - hi),
                        span.run_id
                    ),
                );
            }
        }
        held.slots += 1;
    }
    for (r, e) in &matched {
        let snap = r
            .snapshot_ns
            .map(|v| (v, r.snapshot_res_ns.unwrap_or(0), "snapshot (phase line)"))
            .or_else(|| {
                r.snap_ns
                    .map(|v| (v, r.snap_res_ns.unwrap_or(0), "snap_seconds"))
            });
        let (Some((snap, res, what)), Some(pre)) = (snap, e.prepass_ns) else {
            continue;
        };
        let tol = res + PHYSICAL_TOL_NS;
        if snap > pre + tol {
            return fail(
                Evidence::Physical,
                format!(
                    "dispatch {}: the log's {what} {} is longer than run {}'s pre-pass {} that contains it (tolerance {})",
                    r.dispatch_id,
                    seconds(snap),
                    span.run_id,
                    seconds(pre),
                    seconds(tol)
                ),
            );
        }
        held.physical += 1;
    }
    Ok(held)
}
