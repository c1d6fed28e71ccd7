//! One run's sections of the report as text: a table per section for the terminal (≤ 100
//! columns), or Markdown.

use std::fmt::Write as _;

use crate::answers::rocpd_counters::render_rocpd;
use crate::answers::run_report::{Drops, Measurement, PhaseStats, RunReport, UNATTRIBUTED};
use crate::db::phases::{PHASES, WINDOW};
use crate::render::fmt::{
    bytes, duration, duration_or_dash, duration_short, fixed2, markers, mean_sd, percent, wrap,
};
use crate::render::table::{push_table, table};

/// Appends one run's report.
pub fn render_run(r: &RunReport, markdown: bool, out: &mut String) {
    render_heading(r, markdown, out);
    render_drops(r, markdown, out);
    render_dispatches(r, markdown, out);
    render_groups(r, markdown, out);
    if r.windows.replayed == 0 {
        render_no_replayed_windows(r, out);
        return;
    }
    render_phases(r, markdown, out);
    render_kernels(r, markdown, out);
    render_agents(r, markdown, out);
    render_bytes_and_gpu(r, out);
    render_per_pass(r, markdown, out);
    render_counters(r, markdown, out);
    super::fidelity::render(r, markdown, out);
    if let Some(s) = &r.rocpd {
        render_rocpd(s, markdown, out);
    }
    render_dispatch_tax(r, out);
    if let Some(m) = &r.measurement {
        render_measurement(m, markdown, out);
    }
    out.push('\n');
}

/// Passes per window with at most two decimals and no trailing zeros (`2`, `2.5`, `2.33`).
fn passes_per_window(r: &RunReport) -> String {
    r.passes_per_window
        .map(|p| {
            format!("{p:.2}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string()
        })
        .or(r.passes.map(|p| p.to_string()))
        .unwrap_or_else(|| "?".into())
}

fn render_heading(r: &RunReport, markdown: bool, out: &mut String) {
    let h = if markdown { "## " } else { "== " };
    let _ = writeln!(
        out,
        "{h}run {} {}(pid {}, {}, mode {}, {} passes per window{}{}{})",
        r.run_id,
        r.label
            .as_ref()
            .map_or(String::new(), |l| format!("[{l}] ")),
        r.pid.map_or("?".into(), |p| p.to_string()),
        r.host.as_deref().unwrap_or("?"),
        r.mode.as_deref().unwrap_or("?"),
        passes_per_window(r),
        if r.truncated { ", TRUNCATED" } else { "" },
        if r.gpu_times_off {
            ", GPU times off"
        } else {
            ""
        },
        match (r.log_joined, r.log_join_forced) {
            (_, true) => ", SDK log joined FORCED (--force, past failed evidence)",
            (true, false) => ", SDK log joined",
            (false, false) => "",
        },
    );
    if markdown {
        out.push('\n');
    }
}

/// The mark on a figure built on records of which some were dropped (`kinds` picks the kinds
/// it is built on).
const DROPPED_MARK: &str = " (!)";

fn dropped_mark(r: &RunReport, kinds: fn(&Drops) -> u64) -> &'static str {
    if r.drops.as_ref().is_some_and(|d| kinds(d) > 0) {
        DROPPED_MARK
    } else {
        ""
    }
}

/// The tool's drops, by kind, and the application's wait on its output (only when it dropped
/// something or its wait budget ran out).
fn render_drops(r: &RunReport, markdown: bool, out: &mut String) {
    let Some(d) = r.drops.filter(|d| d.records() + d.names > 0 || d.stalled) else {
        return;
    };
    let _ = writeln!(
        out,
        "dropped by the tool: {} dispatch, {} allocation, {} window records, {} kernel names;
           the application waited {} on its output{}; figures marked{DROPPED_MARK} miss dropped records",
        d.dispatch,
        d.allocation,
        d.window,
        d.names,
        duration(d.stall_ns as f64),
        if d.stalled {
            " (the tool's wait budget ran out)"
        } else {
            ""
        }
    );
    if markdown {
        out.push('\n');
    }
}

fn render_dispatches(r: &RunReport, markdown: bool, out: &mut String) {
    let _ = writeln!(
        out,
        "dispatches seen{} {}: {} replayed, {} declined, {} without CONFIG; wall {}",
        dropped_mark(r, |d| d.dispatch + d.window),
        r.dispatches_seen,
        r.windows.replayed,
        r.windows.declined,
        r.groups[2].count,
        r.wall_ns.map_or("?".into(), |w| duration(w as f64))
    );
    if !r.declines_by_reason.is_empty() {
        let reasons: Vec<String> = r
            .declines_by_reason
            .iter()
            .map(|(k, v)| format!("{k} {v}"))
            .collect();
        let _ = writeln!(out, "declined by reason: {}", reasons.join(", "));
    }
    if r.windows.stuck > 0 {
        let _ = writeln!(
            out,
            "stuck passes: {} windows, {} from the stuck PASS ENTER to CONFIG EXIT",
            r.windows.stuck,
            duration(r.windows.stuck_ns as f64)
        );
    }
    if markdown {
        out.push('\n');
    }
}

fn render_groups(r: &RunReport, markdown: bool, out: &mut String) {
    let mut g = table(
        markdown,
        &["group", "count", "total", "share of wall", "basis"],
    );
    for x in &r.groups {
        g.add_row(vec![
            x.group.clone(),
            x.count.to_string(),
            duration(x.total_ns as f64),
            percent(x.share_of_wall),
            x.basis.marker().to_string(),
        ]);
    }
    let _ = writeln!(out, "{g}\n");
}

fn render_no_replayed_windows(r: &RunReport, out: &mut String) {
    let _ = writeln!(
        out,
        "no replayed windows: no phases, bytes or GPU time to show{}",
        if r.gpu_times_off {
            format!(";\n  dispatches not traced: {GPU_TIMES_OFF}")
        } else if r.dispatch_tax.plain_dispatches > 0 {
            format!(
                ";\n  {} dispatches ran once at {} per enqueue",
                r.dispatch_tax.plain_dispatches,
                duration_or_dash(r.dispatch_tax.plain_enqueue_mean_ns)
            )
        } else {
            String::new()
        }
    );
    out.push('\n');
}

/// A phase's name as the table shows it: parts indented under their parent.
fn phase_label(p: &PhaseStats) -> String {
    match &p.parent {
        Some(_) => format!("  {}", p.phase),
        None => p.phase.clone(),
    }
}

/// A phase's share as the table shows it: of the window for a top-level phase, of the parent
/// (in parentheses) for a part.
fn phase_share(p: &PhaseStats) -> String {
    match (&p.parent, &p.bound_of) {
        (_, Some(b)) => format!(">= {b}"),
        (Some(_), None) => format!("({})", percent(p.share_of_parent)),
        (None, None) => percent(p.share_of_window),
    }
}

/// What the `unattributed` rest of a run holds.
fn rest_holds(r: &RunReport) -> &'static str {
    if r.mode.as_deref() == Some("observe") {
        "observe mode: the passes' host side the tool cannot see, each enqueue to its kernel's \
         start and each kernel's end to its completion"
    } else if r.restore_placement.in_pass > 0 {
        "the gaps between passes, host bookkeeping only: the restores ran inside the passes"
    } else {
        "an older file has no CONTINUE records"
    }
}

fn render_phases(r: &RunReport, markdown: bool, out: &mut String) {
    let phase = format!("phase{}", dropped_mark(r, |d| d.window));
    let mut t = table(
        markdown,
        &[
            &phase,
            "basis",
            "n",
            "share",
            "mean ± σ",
            "p50",
            "p90",
            "p99",
            "max",
        ],
    );
    let mut why: Vec<String> = Vec::new();
    if let Some(line) = r.restore_placement.line() {
        why.push(format!("restore: {line}"));
    }
    // A bound no window carries (drive mode measures what it bounds) is no row of its own.
    for p in r
        .phases
        .iter()
        .filter(|p| p.samples > 0 || p.bound_of.is_none())
    {
        if p.samples == 0 {
            let mut row = vec![phase_label(p), "-".into(), "0".into()];
            row.resize(9, "-".into());
            t.add_row(row);
            if let Some(m) = &p.missing {
                why.push(format!("{}: {m}", p.phase));
            }
            continue;
        }
        if let (Some(parent), None) = (&p.parent, p.share_of_parent) {
            let of_window = match p.share_of_window {
                Some(_) => format!("{} of window time", percent(p.share_of_window)),
                None => "no share of window time (it precedes the passes' span)".into(),
            };
            why.push(format!(
                "{}: {of_window}; its share of {parent} is unknown ({parent} not recorded)",
                p.phase,
            ));
        }
        if p.phase == PHASES[WINDOW].name && crate::db::phases::window_is_span(p.basis.iter()) {
            why.push(format!("window: {}", crate::db::phases::SPAN_WINDOW_NOTE));
        }
        if let Some(parent) = crate::db::phases::index(&p.phase)
            .and_then(|k| PHASES[k].parent)
            .filter(|_| p.parent.is_none())
        {
            why.push(format!(
                "{}: part of {parent}, which is not timed (observe mode: no PASS callbacks); a \
                 row of its own, its share is of window time",
                p.phase
            ));
        }
        if p.phase == UNATTRIBUTED {
            why.push(format!(
                "{}: window time no row covers ({})",
                p.phase,
                rest_holds(r)
            ));
        }
        let ns = |v: Option<i64>| v.map_or("-".into(), |v| duration_short(v as f64));
        t.add_row(vec![
            phase_label(p),
            markers(&p.basis),
            p.samples.to_string(),
            phase_share(p),
            mean_sd(p.mean_ns, p.sd_ns),
            ns(p.p50_ns),
            ns(p.p90_ns),
            ns(p.p99_ns),
            ns(p.max_ns),
        ]);
    }
    push_table(out, &t, markdown);
    let _ = writeln!(
        out,
        "top-level shares add up to 100% of window time; an indented phase is a part of the one\n\
         above it, its share (in parentheses) is of that phase; a phase's total is n x its mean"
    );
    for w in why {
        out.push_str(&wrap(&w, 98, "  - ", "    "));
    }
    out.push('\n');
}

fn render_bytes_and_gpu(r: &RunReport, out: &mut String) {
    let b = &r.bytes;
    let _ = writeln!(
        out,
        "snapshot bytes{} [{}]: {} total, {} per window;\n  {} GB/s [{}] over the {}\n\
         restored bytes [{}]: {} at {} GB/s",
        dropped_mark(r, |d| d.allocation + d.window),
        markers(&b.snapshot_bytes_basis),
        bytes(b.snapshot_bytes_total as f64),
        b.snapshot_bytes_per_window.map_or("-".into(), bytes),
        fixed2(b.snapshot_gbps),
        b.snapshot_gbps_basis.marker(),
        b.snapshot_gbps_over,
        b.restore_basis.marker(),
        bytes(b.restore_bytes_total as f64),
        fixed2(b.restore_gbps),
    );
    if r.gpu_times_off {
        let _ = writeln!(out, "GPU vs wall: {GPU_TIMES_OFF}");
        return;
    }
    let _ = writeln!(
        out,
        "GPU vs wall [{}]: GPU {} of pass exec {} ({}), of window time {}",
        r.gpu.basis.marker(),
        duration(r.gpu.gpu_total_ns as f64),
        duration(r.gpu.pass_total_ns as f64),
        percent(r.gpu.gpu_share_of_pass),
        percent(r.gpu.gpu_share_of_window),
    );
}

fn render_per_pass(r: &RunReport, markdown: bool, out: &mut String) {
    if r.gpu.per_pass.is_empty() {
        return;
    }
    if markdown {
        out.push('\n');
    }
    let off = r.gpu_times_off;
    let head: &[&str] = if off {
        &["pass", "n", "host mean"]
    } else {
        &["pass", "n", "host mean", "GPU mean", "GPU share"]
    };
    let mut t = table(markdown, head);
    for p in &r.gpu.per_pass {
        let mut row = vec![
            p.pass_index.to_string(),
            p.passes.to_string(),
            duration_or_dash(p.host_mean_ns),
        ];
        if !off {
            row.extend([duration(p.gpu_mean_ns), percent(p.gpu_share)]);
        }
        t.add_row(row);
    }
    let _ = writeln!(out, "{t}\n");
}

/// Counter values shown in the table (every one is in CSV and JSON).
const SHOWN_COUNTERS: usize = 48;

/// Per window and pass, the values of that pass's counter group.
fn render_counters(r: &RunReport, markdown: bool, out: &mut String) {
    let Some(first) = r.counters.first() else {
        return;
    };
    let _ = writeln!(
        out,
        "counters per pass [{}] (one group per pass):",
        first.basis.marker()
    );
    if markdown {
        out.push('\n');
    }
    let mut t = table(
        markdown,
        &[
            "dispatch",
            "kernel",
            "pass",
            "counter",
            "value",
            "instances",
        ],
    );
    for c in r.counters.iter().take(SHOWN_COUNTERS) {
        t.add_row(vec![
            c.dispatch_id.to_string(),
            c.kernel.clone().unwrap_or_else(|| "?".into()),
            c.pass.to_string(),
            c.counter.clone(),
            format!("{}", c.value),
            c.instances.to_string(),
        ]);
    }
    push_table(out, &t, markdown);
    if r.counters.len() > SHOWN_COUNTERS {
        let _ = writeln!(
            out,
            "  ... {} more values (all of them in --format csv or json)",
            r.counters.len() - SHOWN_COUNTERS
        );
    }
    out.push('\n');
}

/// Per kernel: its replayed windows' figures, slowest total first.
fn render_kernels(r: &RunReport, markdown: bool, out: &mut String) {
    if r.kernels.is_empty() {
        return;
    }
    let mut t = table(
        markdown,
        &[
            "kernel",
            "n",
            "declined",
            "share",
            "mean ± σ",
            "p50",
            "p90",
            "p99",
            "max",
            "largest phase",
        ],
    );
    let ns = |v: Option<i64>| v.map_or("-".into(), |v| duration_short(v as f64));
    for k in &r.kernels {
        t.add_row(vec![
            k.kernel.clone(),
            k.windows.to_string(),
            k.declined.to_string(),
            percent(k.share_of_replay),
            mean_sd(k.mean_ns, k.sd_ns),
            ns(k.p50_ns),
            ns(k.p90_ns),
            ns(k.p99_ns),
            ns(k.max_ns),
            match (&k.top_phase, k.top_phase_share) {
                (Some(p), Some(s)) => format!("{p} {}", percent(Some(s))),
                _ => "-".into(),
            },
        ]);
    }
    let _ = writeln!(
        out,
        "per kernel [{}]: window time of its replayed windows; share of the run's replayed time",
        markers(
            &r.phases
                .iter()
                .find(|p| p.phase == PHASES[WINDOW].name)
                .map_or(Vec::new(), |p| p.basis.clone())
        )
    );
    if markdown {
        out.push('\n');
    }
    push_table(out, &t, markdown);
}

/// Per agent (device): its windows.
fn render_agents(r: &RunReport, markdown: bool, out: &mut String) {
    if r.agents.is_empty() {
        return;
    }
    let mut t = table(
        markdown,
        &[
            "agent",
            "replayed",
            "declined",
            "total",
            "share",
            "mean ± σ",
            "max",
            "basis",
        ],
    );
    for a in &r.agents {
        t.add_row(vec![
            a.agent.map_or_else(|| "?".into(), |a| a.to_string()),
            a.replayed.to_string(),
            a.declined.to_string(),
            duration(a.total_ns as f64),
            percent(a.share_of_replay),
            mean_sd(a.mean_ns, a.sd_ns),
            duration_or_dash(a.max_ns.map(|v| v as f64)),
            markers(&a.basis),
        ]);
    }
    push_table(out, &t, markdown);
}

/// What the report says where GPU times would be, when the user turned them off.
const GPU_TIMES_OFF: &str =
    "GPU times off (KRPHASE_GPU_TIMES=0: drive mode ran without dispatch tracing, by request)";

fn render_dispatch_tax(r: &RunReport, out: &mut String) {
    let x = &r.dispatch_tax;
    if r.gpu_times_off {
        let _ = writeln!(
            out,
            "non-replayed dispatch tax: dispatches not traced, {GPU_TIMES_OFF};\n  {} tool opt-outs, {} per CONFIG pair [{}]",
            x.opt_out_windows,
            duration_or_dash(x.opt_out_config_mean_ns),
            x.basis.marker(),
        );
        return;
    }
    let _ = writeln!(
        out,
        "non-replayed dispatch tax{} [{}]: {} dispatches, {} per enqueue;\n  {} tool opt-outs, {} per CONFIG pair",
        dropped_mark(r, |d| d.dispatch),
        x.basis.marker(),
        x.plain_dispatches,
        duration_or_dash(x.plain_enqueue_mean_ns),
        x.opt_out_windows,
        duration_or_dash(x.opt_out_config_mean_ns),
    );
}

fn render_measurement(m: &Measurement, markdown: bool, out: &mut String) {
    let s3 = |v: Option<f64>| v.map_or("-".into(), |v| format!("{v:.3}"));
    let _ = writeln!(
        out,
        "whole-run measurement {} ({} {} {}): median {} s [H];\n  single-pass reference {} {} s; overhead {} s",
        m.measurement_id,
        m.experiment.as_deref().unwrap_or("?"),
        m.variant.as_deref().unwrap_or("?"),
        m.mode.as_deref().unwrap_or("?"),
        s3(m.median_s),
        m.reference_variant.as_deref().unwrap_or("-"),
        s3(m.reference_median_s),
        s3(m.overhead_s),
    );
    if markdown {
        out.push('\n');
    }
    if let Some(why) = &m.invalid_reason {
        let _ = writeln!(
            out,
            "  INVALID: this measurement {why}; its shares below are too"
        );
    }
    let mut t = table(
        markdown,
        &[
            "phase",
            "share of whole-run wall [M/H]",
            "share of overhead [M/H]",
        ],
    );
    for p in &m.phases {
        t.add_row(vec![
            p.phase.clone(),
            percent(p.share_of_wall),
            percent(p.share_of_overhead),
        ]);
    }
    push_table(out, &t, markdown);
    let _ = writeln!(
        out,
        "P5 drain as a fraction of a window: {}",
        percent(m.drain_fraction_of_window)
    );
}
