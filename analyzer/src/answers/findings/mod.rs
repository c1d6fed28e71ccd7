//! Findings: the report's first section, plain sentences each backed by the figure it cites.
//! Every rule is one function here over the [`Overview`]; a rule that lacks its evidence says
//! nothing rather than guess.

use super::overview::{Overview, basis_words, reasons_text, short_kernel};
use super::run_report::UNATTRIBUTED;
use crate::render::fmt::{bytes, duration, percent};

/// A top-level phase at or above this share of replay time is called dominant.
pub const DOMINANT_SHARE: f64 = 0.40;
/// Dispatches not replayed at or above this share are a finding.
pub const NOT_REPLAYED_SHARE: f64 = 0.10;
/// The GPU below this share of pass time is a finding.
pub const LOW_GPU_SHARE: f64 = 0.50;
/// A kernel whose p99 is at least this many times its mean has a long tail.
pub const TAIL_FACTOR: f64 = 3.0;
/// Windows a kernel needs before its tail is judged.
pub const TAIL_MIN_WINDOWS: u64 = 20;
/// The slowest rank's replay at or above this many times the median rank's is a finding.
pub const RANK_IMBALANCE: f64 = 1.25;

/// One finding: which rule said it, and the sentence.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Finding {
    pub rule: &'static str,
    pub text: String,
}

type Rule = fn(&Overview) -> Option<Finding>;

/// Every rule, in the order the findings are listed.
pub const RULES: &[(&str, Rule)] = &[
    ("dominant_phase", dominant_phase),
    ("snapshot_cost", snapshot_cost),
    ("not_replayed", not_replayed),
    ("low_gpu_share", low_gpu_share),
    ("long_tail", long_tail),
    ("no_sdk_log", no_sdk_log),
    ("dropped_records", dropped_records),
    ("stuck_windows", stuck_windows),
    ("rank_imbalance", rank_imbalance),
    ("pass_fidelity", pass_fidelity),
];

/// What the rules find in `o`.
pub fn findings(o: &Overview) -> Vec<Finding> {
    RULES.iter().filter_map(|(_, rule)| rule(o)).collect()
}

fn finding(rule: &'static str, text: String) -> Option<Finding> {
    Some(Finding { rule, text })
}

/// What would cut a phase's time, for the phases krphase can point at.
fn remedy(phase: &str) -> &'static str {
    match phase {
        "pre-pass" | "snapshot" => {
            "; a kernel filter (KRPHASE_KERNEL_FILTER, rocprofv3's kernel include regex) or a \
             device-side snapshot would cut it"
        }
        "restore" => "; fewer passes (counter groups) or a device-side restore would cut it",
        "pass exec" => "; that is the kernel itself run once per pass: fewer counter groups cut it",
        _ => "",
    }
}

/// The top-level phase that holds most of the replayed windows' time.
pub fn dominant_phase(o: &Overview) -> Option<Finding> {
    let p = o
        .phases
        .iter()
        .filter(|p| p.parent.is_none() && p.phase != UNATTRIBUTED && !p.outside_window)
        .max_by(|a, b| a.total_ns.cmp(&b.total_ns))?;
    let share = p.share_of_replay?;
    if share < DOMINANT_SHARE {
        return None;
    }
    // A phase measured in parts cites them (each part's own rule says what would cut it).
    let parts: Vec<String> = o
        .phases
        .iter()
        .filter(|q| q.parent.as_deref() == Some(p.phase.as_str()))
        .map(|q| format!("{} {}", q.phase, percent(q.share_of_parent)))
        .collect();
    let detail = if parts.is_empty() {
        remedy(&p.phase).to_string()
    } else {
        format!(": {} of it", parts.join(", "))
    };
    finding(
        "dominant_phase",
        format!(
            "{} is {} of replay time ({} over {} run(s), {}){detail}.",
            p.phase,
            percent(Some(share)),
            duration(p.total_ns as f64),
            p.runs,
            basis_words(&p.basis),
        ),
    )
}

/// The snapshot's share, with the bytes a window moves and the rate, when it is a large part.
pub fn snapshot_cost(o: &Overview) -> Option<Finding> {
    let snap = o.phase("snapshot")?;
    let pre = o.phase("pre-pass")?;
    let of_replay = pre.share_of_replay? * snap.share_of_parent?;
    if of_replay < 0.25 {
        return None;
    }
    let per = o.snapshot_bytes_per_window()?;
    let rate = o.snapshot_gbps?;
    finding(
        "snapshot_cost",
        format!(
            "snapshot is {} of replay time: {} per window at {rate:.2} GB/s ({}){}.",
            percent(Some(of_replay)),
            bytes(per),
            basis_words(&snap.basis),
            remedy("snapshot")
        ),
    )
}

/// Dispatches that were not replayed, and why.
pub fn not_replayed(o: &Overview) -> Option<Finding> {
    let not = o.declined + o.without_config;
    let share = crate::stats::ratio(not as f64, o.dispatches as f64)?;
    if not == 0 || share < NOT_REPLAYED_SHARE {
        return None;
    }
    let mut why = Vec::new();
    if !o.declines_by_reason.is_empty() {
        why.push(format!("declined: {}", reasons_text(&o.declines_by_reason)));
    }
    if o.without_config > 0 {
        why.push(format!(
            "{} never offered for replay (no CONFIG callback: graph launches or multi-packet \
             submits)",
            o.without_config
        ));
    }
    finding(
        "not_replayed",
        format!(
            "{} of dispatches were not replayed ({not} of {}): {}; their counters are missing.",
            percent(Some(share)),
            o.dispatches,
            why.join("; ")
        ),
    )
}

/// The GPU busy for a small part of the passes' host time.
pub fn low_gpu_share(o: &Overview) -> Option<Finding> {
    let g = o.gpu_share_of_pass?;
    if g >= LOW_GPU_SHARE {
        return None;
    }
    // A restore that ran inside the pass (device-side snapshot) and was not split out with the
    // SDK log is part of pass time, and no host work.
    if o.restore_in_pass_unsplit > 0 {
        return finding(
            "low_gpu_share",
            format!(
                "the GPU runs {} of pass time (measured in process), but pass time holds the \
                 restores of {} windows, which ran inside the passes (after PASS ENTER: a \
                 device-side snapshot); join the SDK log (krphase import-log) to split them \
                 out before reading the rest as host work.",
                percent(Some(g)),
                o.restore_in_pass_unsplit
            ),
        );
    }
    finding(
        "low_gpu_share",
        format!(
            "the GPU runs {} of pass time (measured in process{}): the rest of each pass is host \
             work between PASS ENTER and EXIT (counter set-up and read-out, the wait for \
             completion).",
            percent(Some(g)),
            if o.restore_in_pass > 0 {
                "; the restores that ran inside the passes are taken out, from the SDK log"
            } else {
                ""
            }
        ),
    )
}

/// A kernel whose slowest windows are far slower than its typical one.
pub fn long_tail(o: &Overview) -> Option<Finding> {
    let k = o.slowest.iter().find(|k| {
        k.windows >= TAIL_MIN_WINDOWS
            && k.p99_ns
                .is_some_and(|p| p as f64 >= TAIL_FACTOR * k.mean_ns)
    })?;
    let p99 = k.p99_ns? as f64;
    finding(
        "long_tail",
        format!(
            "{} in run {} has a long tail: p99 {} is {:.1}x its mean {} (n = {}); look for \
             what those windows wait on in the trace (krphase export perfetto).",
            k.kernel,
            k.run_id,
            duration(p99),
            p99 / k.mean_ns,
            duration(k.mean_ns),
            k.windows
        ),
    )
}

/// Drive-mode runs with replayed windows and no SDK log: drain and snapshot are not separated.
pub fn no_sdk_log(o: &Overview) -> Option<Finding> {
    if o.runs_without_log.is_empty() {
        return None;
    }
    let ids: Vec<String> = o.runs_without_log.iter().map(i64::to_string).collect();
    finding(
        "no_sdk_log",
        format!(
            "{} run(s) have no SDK log joined (run {}): their pre-pass is not split into drain \
             and snapshot; run with ROCPROFILER_LOG_LEVEL=info and `krphase import-log`.",
            ids.len(),
            ids.join(", ")
        ),
    )
}

/// Runs whose tool dropped records: figures built on them are incomplete.
pub fn dropped_records(o: &Overview) -> Option<Finding> {
    if o.dropped.is_empty() {
        return None;
    }
    let list: Vec<String> = o
        .dropped
        .iter()
        .map(|d| format!("run {} {}", d.run_id, d.records))
        .collect();
    finding(
        "dropped_records",
        format!(
            "the tool dropped records ({}): the figures marked (!) in those runs are incomplete.",
            list.join(", ")
        ),
    )
}

/// Windows whose last pass never exited.
pub fn stuck_windows(o: &Overview) -> Option<Finding> {
    (o.stuck > 0).then(|| Finding {
        rule: "stuck_windows",
        text: format!(
            "{} window(s) had a pass that never exited (a stuck drain): the SDK gave up on them \
             and they are counted as declined.",
            o.stuck
        ),
    })
}

/// The slowest rank far behind the median rank, and whether it replayed more windows or slower
/// ones: the job waits for it at every step it synchronises.
pub fn rank_imbalance(o: &Overview) -> Option<Finding> {
    let (slow, median, median_windows, median_mean) =
        o.cross_rank.as_ref()?.imbalance(RANK_IMBALANCE)?;
    let mean = slow.mean_window_ns?;
    let why = if slow.replayed as f64 >= 1.2 * median_windows && mean < 1.2 * median_mean {
        "more windows, not slower ones: the kernels it replays are unevenly spread over the ranks"
    } else if mean >= 1.2 * median_mean {
        "slower windows: look at its phases (`krphase report --run ID`)"
    } else {
        "neither many more windows nor much slower ones alone"
    };
    finding(
        "rank_imbalance",
        format!(
            "rank {} (run {}) spends {} in replay, {:.2}× the median rank's {}: {} windows against \
             a median of {:.0}, at a mean window of {} against {} — {why}.",
            slow.rank,
            slow.run_id,
            duration(slow.replay_ns as f64),
            slow.replay_ns as f64 / median,
            duration(median),
            slow.replayed,
            median_windows,
            duration(mean),
            duration(median_mean),
        ),
    )
}

/// Kernels whose passes differ past the threshold: counters combined across their passes are
/// off by as much. One finding for all of them, citing the first kernel's figure by the summary's
/// short name (the report's pass fidelity section has every kernel, whole), in three lines so the
/// demo's summary stays one screen.
pub fn pass_fidelity(o: &Overview) -> Option<Finding> {
    use super::fidelity::detect::{Flag, THRESHOLD};
    let first = o.pass_fidelity.first()?;
    let cite = |f: &super::fidelity::Flagged| {
        let figure = match (f.flag, f.ratio, f.stray) {
            (Flag::Shift, Some(r), _) => format!(
                "{:.2}× the reference pass [{:.2}, {:.2}], n={} windows",
                r.estimate,
                r.lo95.unwrap_or(f64::NAN),
                r.hi95.unwrap_or(f64::NAN),
                r.n
            ),
            (_, _, Some(s)) => format!(
                "passes disagree by {} per window (median, lower bound {}), n={} windows",
                percent(Some(s.estimate)),
                percent(s.lo95),
                s.n
            ),
            _ => "past the threshold".into(),
        };
        format!(
            "{} (run {}): {} {figure}, {}",
            short_kernel(&f.kernel),
            f.run_id,
            f.measure,
            f.basis.word()
        )
    };
    let remedy = match first.flag {
        Flag::Shift => "Remedies: one group per ratio, KRPHASE_WARMUP_PASS=1, a smaller footprint",
        Flag::Stray => "Remedy: one group per ratio (the kernel does not repeat itself)",
    };
    finding(
        "pass_fidelity",
        format!(
            "passes differ past {} in {} kernel(s), and counters stitched across them as much{}: \
             {}. {remedy}.",
            percent(Some(THRESHOLD)),
            o.pass_fidelity.len(),
            if o.pass_fidelity.len() > 1 {
                "; first"
            } else {
                ""
            },
            cite(first),
        ),
    )
}

/// The findings as a list (Markdown or terminal text), or a line saying there are none.
pub fn render(list: &[Finding], markdown: bool) -> String {
    let mut s = String::from(if markdown {
        "## findings\n\n"
    } else {
        "== findings\n"
    });
    if list.is_empty() {
        s.push_str("no rule found anything to point at.\n");
    }
    for f in list {
        if markdown {
            s.push_str(&format!("- {}\n", f.text));
        } else {
            s.push_str(&crate::render::fmt::wrap(&f.text, 98, "- ", "  "));
        }
    }
    if markdown {
        s.push('\n');
    }
    s
}

#[cfg(test)]
mod tests;
