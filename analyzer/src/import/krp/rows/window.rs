//! The `krphase_window` and `krphase_pass` rows of one reconstructed window or decline, computed
//! on the decoding thread (with the run's summary), so that the inserting thread, the slower half
//! of an import, only binds and steps.

use std::borrow::Cow;

use krphase_windows::{Decline, Interval, Outcome, Pass, Restore, Source, Window, restore_in_pass};

use super::i;
use crate::db::summary::FreshWindow;

/// The values of one pass row besides its window id and run id, in the statement's order:
/// pass_index, start, end, gpu_start, gpu_end, restore_start, restore_end, incomplete,
/// continue_ns, complete_host.
pub type PassValues = [Option<i64>; 10];

/// One `krphase_window` row and the pass rows under it.
#[derive(Debug, Default)]
pub struct WindowRows {
    pub dispatch_id: i64,
    pub correlation_id: Option<i64>,
    pub kernel_id: Option<i64>,
    pub kernel: Option<String>,
    pub agent: Option<i64>,
    pub queue: Option<i64>,
    pub thread: u32,
    pub outcome: &'static str,
    /// Borrowed for every reason but a decline's (no allocation per replayed window).
    pub reason: Cow<'static, str>,
    pub requested_passes: Option<i64>,
    pub executed_passes: i64,
    pub start: Option<i64>,
    pub end: Option<i64>,
    pub pass_count_return: Option<i64>,
    pub first_pass_enter: Option<i64>,
    pub last_pass_exit: Option<i64>,
    pub pass_ns: Option<i64>,
    pub gpu_ns: Option<i64>,
    pub restore_ns: Option<i64>,
    pub restores: i64,
    pub bytes_estimate: Option<i64>,
    pub bytes_upper: Option<i64>,
    pub regions: Option<i64>,
    pub continue_ns: Option<i64>,
    pub stuck_ns: Option<i64>,
    pub source: &'static str,
    /// 1: the restores ran inside the next pass, 0: between passes, by the order of the
    /// callbacks (`None`: no restores, no evidence, or observe mode).
    pub restore_in_pass: Option<i64>,
    pub passes: Vec<PassValues>,
}

fn span(i: &Interval) -> u64 {
    i.end.saturating_sub(i.start)
}

/// The sum of `f` over the passes that have it (`None` when none has).
fn pass_sum(passes: &[Pass], f: impl Fn(&Pass) -> Option<u64>) -> Option<i64> {
    passes
        .iter()
        .filter_map(f)
        .fold(None, |acc, v| Some(acc.unwrap_or(0) + v as i64))
}

fn pass_values(p: &Pass, restores: &[Restore]) -> PassValues {
    let r = restores.iter().find(|r| r.after_pass == p.index);
    [
        Some(i64::from(p.index)),
        i(p.enter),
        i(p.exit),
        i(p.gpu_start),
        i(p.gpu_end),
        r.map(|r| r.start as i64),
        r.map(|r| r.end as i64),
        Some(i64::from(p.incomplete)),
        r.and_then(|r| r.continue_phase.as_ref().map(|c| span(c) as i64)),
        i(p.complete_host),
    ]
}

impl WindowRows {
    /// The row of a reconstructed window (replayed, or declined by the SDK mid-loop).
    pub fn window(w: &Window, kernel: Option<String>) -> WindowRows {
        let restore_ns: i64 = w
            .restores
            .iter()
            .map(|r| (r.end.saturating_sub(r.start)) as i64)
            .sum();
        let continue_ns = w
            .restores
            .iter()
            .filter_map(|r| r.continue_phase.as_ref().map(span))
            .fold(None, |acc, v| Some(acc.unwrap_or(0) + v as i64));
        let (outcome, reason) = match w.outcome {
            Outcome::Replayed => ("replayed", "none"),
            // The SDK's reason is only in its log; the view takes it from a joined log line.
            // ... except a stuck pass: the SDK broke the loop inside it.
            Outcome::Declined if w.stuck.is_some() => ("declined", "pass_drain_stuck"),
            Outcome::Declined => ("declined", "unknown"),
        };
        // Observe-mode windows have no CONFIG pair: span the passes instead, to the last
        // completion the host saw (its GPU end in files without COMPLETE_HOST).
        let start = w.config_enter.or_else(|| {
            w.passes
                .first()
                .and_then(|p| p.enqueue_enter.or(p.gpu_start))
        });
        let end = w.config_exit.or_else(|| {
            w.passes
                .last()
                .and_then(|p| p.complete_host.or(p.gpu_end).or(p.exit))
        });
        WindowRows {
            dispatch_id: w.dispatch_id as i64,
            correlation_id: i(w.correlation_id),
            kernel_id: i(w.kernel_id),
            kernel,
            agent: i(w.agent),
            queue: i(w.queue),
            thread: w.thread,
            outcome,
            reason: Cow::Borrowed(reason),
            requested_passes: i(w.requested_passes),
            executed_passes: w.executed_passes as i64,
            start: i(start),
            end: i(end),
            pass_count_return: i(w.pass_count_return),
            first_pass_enter: i(w
                .pre_pass
                .map(|p| p.end)
                .or_else(|| w.passes.first().and_then(|p| p.enter))),
            last_pass_exit: i(w
                .tail
                .map(|t| t.start)
                .or_else(|| w.passes.last().and_then(|p| p.exit))),
            pass_ns: pass_sum(&w.passes, |p| Some(p.exit?.saturating_sub(p.enter?))),
            gpu_ns: pass_sum(&w.passes, |p| Some(p.gpu_end?.saturating_sub(p.gpu_start?))),
            restore_ns: (!w.restores.is_empty()).then_some(restore_ns),
            restores: w.restores.len() as i64,
            bytes_estimate: w.bytes.map(|b| b.classified as i64),
            bytes_upper: w.bytes.map(|b| b.upper_bound as i64),
            regions: w.bytes.map(|b| i64::from(b.classified_regions)),
            continue_ns,
            stuck_ns: w.stuck.as_ref().map(|s| span(s) as i64),
            source: match w.source {
                Source::Drive => "drive",
                Source::Observe => "observe",
            },
            restore_in_pass: match w.source {
                Source::Drive => {
                    let bytes = w.bytes.map(|b| b.classified);
                    restore_in_pass(&w.passes, &w.restores, bytes).map(i64::from)
                }
                Source::Observe => None,
            },
            passes: w
                .passes
                .iter()
                .map(|p| pass_values(p, &w.restores))
                .collect(),
        }
    }

    /// The row of a dispatch the tool or the SDK declined before any pass (an opt-out window).
    pub fn decline(d: &Decline, kernel: Option<String>) -> WindowRows {
        let reason = serde_json::to_value(d.reason)
            .ok()
            .and_then(|v| v.as_str().map(str::to_string))
            .map_or(Cow::Borrowed("unknown"), Cow::Owned);
        WindowRows {
            dispatch_id: d.dispatch_id as i64,
            kernel_id: i(d.kernel_id),
            kernel,
            thread: d.thread,
            outcome: "opt_out",
            reason,
            start: i(d.config_enter),
            end: i(d.config_exit),
            source: "drive",
            ..WindowRows::default()
        }
    }

    /// The columns the run's summary reads, as the view would give them.
    pub fn fresh(&self) -> FreshWindow<'_> {
        FreshWindow {
            kernel: self.kernel.as_deref(),
            outcome: self.outcome,
            reason: &self.reason,
            executed_passes: Some(self.executed_passes),
            start: self.start,
            end: self.end,
            pass_count_return: self.pass_count_return,
            first_pass_enter: self.first_pass_enter,
            last_pass_exit: self.last_pass_exit,
            pass_ns: self.pass_ns,
            gpu_ns: self.gpu_ns,
            restore_ns: self.restore_ns,
            restores: Some(self.restores),
            bytes_estimate: self.bytes_estimate,
            continue_ns: self.continue_ns,
            stuck_ns: self.stuck_ns,
            source: Some(self.source),
            restore_in_pass: self.restore_in_pass,
        }
    }
}
