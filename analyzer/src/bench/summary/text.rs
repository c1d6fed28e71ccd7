//! The bench summary as text: one or two lines per experiment, fitting 100 columns, printed after
//! `krphase bench` and at the end of a table or Markdown report.

use std::fmt::Write as _;

use anyhow::Result;
use rusqlite::Connection;

use super::{BenchSummary, MeasurementRef, PerDispatch, TRACING_BASIS, TracingCost, summarize};
use crate::render::fmt::{bytes_b_or_mib, duration_us_ms, factor, percent, seconds, wrap};

/// Plain-text rendering (fits 100 columns).
pub fn render_summary(s: &BenchSummary) -> String {
    let mut o = String::new();
    let _ = writeln!(
        o,
        "bench summary (basis: whole-run medians H; P3 snapshot/window SDK L, tool E;\n  P5 and the \
         in-process P6 tax M, M-L)"
    );
    if s.application_replay_s.is_some() || s.kernel_replay_s.is_some() {
        let _ = writeln!(
            o,
            "  P1  application replay {} | multiplexed {} | kernel replay {} | speedup {}",
            seconds(s.application_replay_s),
            seconds(s.multiplexed_s),
            seconds(s.kernel_replay_s),
            factor(s.speedup_vs_application_replay)
        );
        if let Some(why) = &s.speedup_invalid_reason {
            o.push_str(&wrap(why, 98, "      speedup INVALID: ", "        "));
        }
    }
    for m in &s.passes {
        let _ = writeln!(
            o,
            "  P2  {:<14} median {}{}",
            m.variant,
            seconds(m.median_s),
            invalid_mark(m)
        );
    }
    for f in &s.footprints {
        let _ = writeln!(
            o,
            "  P3  {:<17} {:>9} | RSS {:>9} | snapshot/window SDK {:>9}, tool {:>9}",
            f.measurement.variant,
            seconds(f.measurement.median_s),
            f.measurement
                .peak_child_rss_kib
                .map_or("-".into(), |k| format!("{:.1} MiB", k as f64 / 1024.0)),
            bytes_b_or_mib(f.sdk_bytes_per_window),
            bytes_b_or_mib(f.estimate_bytes_per_window),
        );
        if f.measurement.invalid_reason.is_some() {
            let _ = writeln!(
                o,
                "      {}{}",
                f.measurement.variant,
                invalid_mark(&f.measurement)
            );
        }
    }
    if let Some(d) = &s.drain {
        let _ = writeln!(
            o,
            "  P5  drain share of window {} (median per window {}), pre-pass share {};",
            percent(d.share),
            percent(d.median_window_share),
            percent(d.prepass_share)
        );
        let _ = writeln!(
            o,
            "      {} of {} replayed windows carry a drain figure",
            d.windows_with_drain, d.windows
        );
        if let Some(why) = &d.unavailable {
            o.push_str(&wrap(why, 98, "      drain unavailable: ", "        "));
        }
    }
    if let Some(why) = s.tax.as_ref().and_then(|t| t.invalid_reason.as_ref()) {
        o.push_str(&wrap(
            why,
            98,
            "  P6  non-replayed dispatch tax INVALID: ",
            "        ",
        ));
    } else if let Some(t) = &s.tax {
        let _ = writeln!(
            o,
            "  P6  non-replayed dispatch tax {}/dispatch over whole runs",
            duration_us_ms(t.whole_run_tax_per_dispatch_s.map(|s| s * 1e9))
        );
        let _ = writeln!(
            o,
            "      (replay active {} vs not configured {}, {} dispatches per run);",
            seconds(t.filtered.median_s),
            seconds(t.baseline.median_s),
            t.dispatches_per_run
                .map_or("-".into(), |n| format!("{n:.0}"))
        );
        let _ = writeln!(
            o,
            "      in process {}/dispatch (enqueue {} replay active vs {} not configured)",
            duration_us_ms(t.in_process_tax_per_dispatch_ns),
            duration_us_ms(t.enqueue_mean_ns_filtered),
            duration_us_ms(t.enqueue_mean_ns_baseline)
        );
    }
    if let Some(c) = &s.tracing {
        render_tracing(c, &mut o);
    }
    o
}

/// P6's split: krphase's dispatch tracing per dispatch, and the replay tax with and without it.
fn render_tracing(c: &TracingCost, o: &mut String) {
    let label = if c.emulated { " [EMULATED]" } else { "" };
    if let Some(why) = &c.refused {
        o.push_str(&wrap(
            why,
            98,
            &format!("  P6  krphase's dispatch tracing{label}: no figure: "),
            "        ",
        ));
        return;
    }
    let fig = |f: &Option<PerDispatch>| match f {
        Some(f) => format!(
            "{}/dispatch (95% {} to {}; runs {}+{})",
            duration_us_ms(Some(f.estimate_ns)),
            duration_us_ms(Some(f.lo95_ns)),
            duration_us_ms(Some(f.hi95_ns)),
            f.runs.0,
            f.runs.1
        ),
        None => "-".into(),
    };
    let _ = writeln!(
        o,
        "  P6  krphase's dispatch tracing{label} {}",
        fig(&c.tracing)
    );
    let _ = writeln!(
        o,
        "      replay tax with it        {}",
        fig(&c.tax_with_tracing)
    );
    let _ = writeln!(
        o,
        "      replay tax without it     {}",
        fig(&c.tax_without_tracing)
    );
    o.push_str(&wrap(
        &format!(
            "{TRACING_BASIS}: {} per run; krphase driving replay (no kernel matches) with KRPHASE_GPU_TIMES=1 vs =0 vs libkrphase.so disabled, runs interleaved",
            c.dispatches_per_run.unwrap_or(0)
        ),
        98,
        "      basis: ",
        "        ",
    ));
}

/// ` INVALID (no kernel replay ran)` for a row whose replay claim failed, else nothing.
fn invalid_mark(m: &MeasurementRef) -> &'static str {
    if m.invalid_reason.is_some() {
        " INVALID (no kernel replay ran)"
    } else {
        ""
    }
}

/// The summary text of a database, empty when it holds no bench measurements.
pub fn render(conn: &Connection) -> Result<String> {
    Ok(summarize(conn)?
        .map(|s| render_summary(&s))
        .unwrap_or_default())
}
