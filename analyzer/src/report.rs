//! `krphase report`: per-run answers — what was replayed or declined and why, where each
//! window's time went (per phase: total, share, p50/p90/p99/max), bytes moved and at what rate,
//! GPU vs wall time, the non-replayed dispatch tax, and the whole-run share when a measurement is
//! linked. Renders as a table, CSV, JSON or Markdown.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use anyhow::{Result, bail};
use comfy_table::{Cell, CellAlignment, ContentArrangement, Table, presets};
use hdrhistogram::Histogram;
use rusqlite::{Connection, OptionalExtension};
use serde::Serialize;

use crate::phases::{self, PHASES, WINDOW};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    Table,
    Csv,
    Json,
    Markdown,
}

/// Statistics of one phase over the replayed windows of a run.
#[derive(Debug, Clone, Serialize)]
pub struct PhaseStats {
    pub phase: String,
    /// Windows that carry this phase.
    pub samples: u64,
    pub total_ns: i64,
    /// Total over the replayed windows' total time.
    pub share_of_window: Option<f64>,
    pub mean_ns: Option<f64>,
    pub p50_ns: Option<u64>,
    pub p90_ns: Option<u64>,
    pub p99_ns: Option<u64>,
    pub max_ns: Option<u64>,
}

/// A group of dispatches and its share of the run's wall time.
#[derive(Debug, Clone, Serialize)]
pub struct Group {
    pub group: String,
    pub count: u64,
    pub total_ns: i64,
    pub share_of_wall: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Windows {
    pub replayed: u64,
    pub declined: u64,
    pub total: u64,
    /// Declined windows whose last pass never exited (`pass_drain_stuck`); among `declined`.
    pub stuck: u64,
    /// Their stuck pass ENTER → CONFIG EXIT, summed.
    pub stuck_ns: i64,
}

#[derive(Debug, Clone, Serialize)]
pub struct Bytes {
    pub snapshot_bytes_total: i64,
    pub snapshot_bytes_per_window: Option<f64>,
    /// Snapshot bytes over snapshot time: the SDK's snapshot time when a log is joined,
    /// else the whole pre-pass (a lower bound on the copy rate).
    pub snapshot_gbps: Option<f64>,
    pub snapshot_gbps_basis: &'static str,
    pub restore_bytes_total: i64,
    pub restore_gbps: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PassGpu {
    pub pass_index: i64,
    pub passes: u64,
    /// Mean PASS ENTER → EXIT; `None` in observe mode (no PASS callbacks).
    pub host_mean_ns: Option<f64>,
    pub gpu_mean_ns: f64,
    pub gpu_share: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Gpu {
    pub per_pass: Vec<PassGpu>,
    pub gpu_total_ns: i64,
    pub pass_total_ns: i64,
    pub window_total_ns: i64,
    pub gpu_share_of_pass: Option<f64>,
    pub gpu_share_of_window: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Tax {
    pub plain_dispatches: u64,
    pub plain_enqueue_mean_ns: Option<f64>,
    pub opt_out_windows: u64,
    pub opt_out_config_mean_ns: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct PhaseShare {
    pub phase: String,
    pub share_of_wall: Option<f64>,
    pub share_of_overhead: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Measurement {
    pub measurement_id: i64,
    pub experiment: Option<String>,
    pub variant: Option<String>,
    pub mode: Option<String>,
    pub median_s: Option<f64>,
    pub reference_variant: Option<String>,
    pub reference_median_s: Option<f64>,
    pub overhead_s: Option<f64>,
    pub phases: Vec<PhaseShare>,
    /// P5: drain as a fraction of a window (needs a joined log).
    pub drain_fraction_of_window: Option<f64>,
}

/// Everything reported about one run.
#[derive(Debug, Clone, Serialize)]
pub struct RunReport {
    pub run_id: i64,
    pub label: Option<String>,
    pub pid: Option<i64>,
    pub host: Option<String>,
    pub command: Option<String>,
    pub mode: Option<String>,
    /// Passes the tool was configured for (drive mode).
    pub passes: Option<i64>,
    /// Passes actually executed per replayed window.
    pub passes_per_window: Option<f64>,
    pub truncated: bool,
    pub log_joined: bool,
    pub wall_ns: Option<i64>,
    pub dispatches_seen: u64,
    pub windows: Windows,
    pub declines_by_reason: BTreeMap<String, u64>,
    pub groups: Vec<Group>,
    pub phases: Vec<PhaseStats>,
    pub bytes: Bytes,
    pub gpu: Gpu,
    pub dispatch_tax: Tax,
    pub measurement: Option<Measurement>,
}

struct Acc {
    hist: Histogram<u64>,
    total: i64,
    max: u64,
}

fn ratio(a: f64, b: f64) -> Option<f64> {
    (b > 0.0).then(|| a / b)
}

/// Builds the report of one run.
pub fn run_report(conn: &Connection, run_id: i64) -> Result<RunReport> {
    type Info = (
        Option<String>,
        Option<i64>,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<i64>,
        i64,
        Option<i64>,
    );
    let info: Option<Info> = conn
        .query_row(
            "SELECT label, pid, host, command, mode, passes, truncated, \"end\" - \"start\"
             FROM krphase_run WHERE id = ?1",
            [run_id],
            |r| Info::try_from(r),
        )
        .optional()?;
    let Some((label, pid, host, command, mode, passes, truncated, wall_ns)) = info else {
        bail!("unknown run id {run_id}");
    };

    let mut accs: Vec<Acc> = PHASES
        .iter()
        .map(|_| Acc {
            // 1 ns .. 1 h at 3 significant figures; longer phases saturate at 1 h.
            hist: Histogram::new_with_bounds(1, 3_600_000_000_000, 3).expect("valid bounds"),
            total: 0,
            max: 0,
        })
        .collect();
    let (mut replayed, mut declined, mut stuck, mut stuck_ns) = (0u64, 0u64, 0u64, 0i64);
    let mut by_reason: BTreeMap<String, u64> = BTreeMap::new();
    let (mut declined_ns, mut opt_out_n, mut opt_out_ns) = (0i64, 0u64, 0i64);
    let (mut snap_bytes, mut restore_bytes, mut log_joined) = (0i64, 0i64, false);
    let mut executed = 0i64;
    // A declined dispatch usually also ran once as a plain dispatch; count it once.
    let mut has_plain = conn.prepare_cached(
        "SELECT EXISTS (SELECT 1 FROM krphase_dispatch WHERE run_id = ?1 AND dispatch_id = ?2)",
    )?;
    let mut declined_without_plain = 0i64;
    phases::for_each_window(conn, run_id, |w| {
        if !w.replayed() {
            let plain: bool = has_plain.query_row([run_id, w.dispatch_id], |r| r.get(0))?;
            declined_without_plain += i64::from(!plain);
            declined += 1;
            if let Some(ns) = w.stuck_ns {
                stuck += 1;
                stuck_ns += ns.max(0);
            }
            *by_reason.entry(w.reason.clone()).or_default() += 1;
            let ns = w.phase_ns[WINDOW].unwrap_or(0);
            declined_ns += ns;
            if w.outcome == "opt_out" {
                opt_out_n += 1;
                opt_out_ns += ns;
            }
            return Ok(());
        }
        replayed += 1;
        executed += w.executed_passes.unwrap_or(0);
        for (acc, v) in accs.iter_mut().zip(w.phase_ns) {
            if let Some(v) = v {
                let v = v.max(0) as u64;
                acc.total += v as i64;
                acc.max = acc.max.max(v);
                acc.hist.saturating_record(v);
            }
        }
        log_joined |= w.phase_ns[phases::index("snapshot").expect("phase")].is_some();
        let b = w.snapshot_bytes.unwrap_or(0);
        snap_bytes += b;
        restore_bytes += b * w.restores.unwrap_or(0);
        Ok(())
    })?;

    let window_total = accs[WINDOW].total;
    let phase_stats: Vec<PhaseStats> = PHASES
        .iter()
        .zip(&accs)
        .map(|(p, a)| {
            let n = a.hist.len();
            // hdrhistogram answers with a bucket's highest value; report its lowest (the
            // recorded value when it is exact at 3 significant figures).
            let q = |x: f64| (n > 0).then(|| a.hist.lowest_equivalent(a.hist.value_at_quantile(x)));
            PhaseStats {
                phase: p.name.to_string(),
                samples: n,
                total_ns: a.total,
                share_of_window: (n > 0)
                    .then(|| ratio(a.total as f64, window_total as f64))
                    .flatten(),
                mean_ns: (n > 0).then(|| a.total as f64 / n as f64),
                p50_ns: q(0.5),
                p90_ns: q(0.9),
                p99_ns: q(0.99),
                max_ns: (n > 0).then_some(a.max),
            }
        })
        .collect();
    let total_of = |name: &str| phase_stats[phases::index(name).expect("phase")].total_ns;

    // Plain dispatches: every dispatch that ran once. Those with a CONFIG pair before them are the
    // run-once of a decline (already counted as a window); the rest never reached CONFIG.
    let (plain_all, plain_n, plain_ns, tax_n, tax_ns): (i64, i64, Option<i64>, i64, Option<i64>) =
        conn.query_row(
            "SELECT COUNT(*), SUM(had_config = 0),
                    SUM(CASE WHEN had_config = 0 THEN \"end\" - \"start\" END),
                    COUNT(\"end\" - \"start\"), SUM(\"end\" - \"start\")
             FROM krphase_dispatch WHERE run_id = ?1",
            [run_id],
            |r| {
                Ok((
                    r.get(0)?,
                    r.get::<_, Option<i64>>(1)?.unwrap_or(0),
                    r.get(2)?,
                    r.get(3)?,
                    r.get(4)?,
                ))
            },
        )?;
    let plain_n = plain_n as u64;
    let plain_ns = plain_ns.unwrap_or(0);

    let wall = wall_ns.unwrap_or(0) as f64;
    let group = |name: &str, count: u64, total_ns: i64| Group {
        group: name.into(),
        count,
        total_ns,
        share_of_wall: ratio(total_ns as f64, wall),
    };
    let groups = vec![
        group("replayed", replayed, window_total),
        group("declined", declined, declined_ns),
        group("no CONFIG", plain_n, plain_ns),
    ];

    let snapshot_time = if log_joined {
        total_of("snapshot")
    } else {
        total_of("pre-pass")
    };
    let bytes = Bytes {
        snapshot_bytes_total: snap_bytes,
        snapshot_bytes_per_window: (replayed > 0).then(|| snap_bytes as f64 / replayed as f64),
        snapshot_gbps: ratio(snap_bytes as f64, snapshot_time as f64),
        snapshot_gbps_basis: if log_joined {
            "sdk snapshot time"
        } else {
            "pre-pass (lower bound)"
        },
        restore_bytes_total: restore_bytes,
        restore_gbps: ratio(restore_bytes as f64, total_of("restore") as f64),
    };

    // Per pass index: aggregated here while scanning the clustered pass table in order (an SQL
    // GROUP BY would sort every pass row). A stuck pass (no PASS EXIT) is left out: its GPU
    // interval spans the SDK's drain wait, not a pass.
    // (passes, host samples, host sum, GPU sum); observe-mode passes have no host interval.
    let mut by_index: BTreeMap<i64, (u64, u64, i64, i64)> = BTreeMap::new();
    if let Some((lo, hi)) = phases::window_range(conn, run_id)? {
        let mut stmt = conn.prepare_cached(
            "SELECT pass_index, \"end\" - \"start\", gpu_end - gpu_start
             FROM krphase_pass WHERE window_id BETWEEN ?2 AND ?3 AND +run_id = ?1
               AND +incomplete = 0",
        )?;
        let mut rows = stmt.query([run_id, lo, hi])?;
        while let Some(r) = rows.next()? {
            let e = by_index.entry(r.get(0)?).or_default();
            e.0 += 1;
            if let Some(h) = r.get::<_, Option<i64>>(1)? {
                e.1 += 1;
                e.2 += h;
            }
            e.3 += r.get::<_, Option<i64>>(2)?.unwrap_or(0);
        }
    }
    let per_pass: Vec<PassGpu> = by_index
        .into_iter()
        .map(|(pass_index, (n, hn, host, gpu))| {
            let host = (hn > 0).then(|| host as f64 / hn as f64);
            let gpu = gpu as f64 / n as f64;
            PassGpu {
                pass_index,
                passes: n,
                host_mean_ns: host,
                gpu_mean_ns: gpu,
                gpu_share: host.and_then(|h| ratio(gpu, h)),
            }
        })
        .collect();
    let gpu_total = total_of("gpu");
    let pass_total = total_of("pass exec");
    let gpu = Gpu {
        per_pass,
        gpu_total_ns: gpu_total,
        pass_total_ns: pass_total,
        window_total_ns: window_total,
        gpu_share_of_pass: ratio(gpu_total as f64, pass_total as f64),
        gpu_share_of_window: ratio(gpu_total as f64, window_total as f64),
    };
    let dispatch_tax = Tax {
        plain_dispatches: plain_all as u64,
        plain_enqueue_mean_ns: (tax_n > 0).then(|| tax_ns.unwrap_or(0) as f64 / tax_n as f64),
        opt_out_windows: opt_out_n,
        opt_out_config_mean_ns: (opt_out_n > 0).then(|| opt_out_ns as f64 / opt_out_n as f64),
    };
    let measurement = measurement(conn, run_id, &phase_stats, window_total)?;
    Ok(RunReport {
        run_id,
        label,
        pid,
        host,
        command,
        mode,
        passes,
        passes_per_window: (replayed > 0).then(|| executed as f64 / replayed as f64),
        truncated: truncated != 0,
        log_joined,
        wall_ns,
        dispatches_seen: replayed + plain_all as u64 + declined_without_plain as u64,
        windows: Windows {
            replayed,
            declined,
            total: replayed + declined,
            stuck,
            stuck_ns,
        },
        declines_by_reason: by_reason,
        groups,
        phases: phase_stats,
        bytes,
        gpu,
        dispatch_tax,
        measurement,
    })
}

/// The whole-run measurement linked to the run, with a single-pass reference from the same
/// source (same experiment first) to measure the overhead against.
fn measurement(
    conn: &Connection,
    run_id: i64,
    phase_stats: &[PhaseStats],
    window_total: i64,
) -> Result<Option<Measurement>> {
    type Row = (
        i64,
        Option<String>,
        Option<String>,
        Option<String>,
        Option<f64>,
        Option<String>,
    );
    let row: Option<Row> = conn
        .query_row(
            "SELECT measurement_id, experiment, variant, mode, median_s, source
             FROM krphase_run_measurement WHERE run_id = ?1 ORDER BY measurement_id DESC LIMIT 1",
            [run_id],
            |r| Row::try_from(r),
        )
        .optional()?;
    let Some((id, experiment, variant, mode, median_s, source)) = row else {
        return Ok(None);
    };
    let reference: Option<(Option<String>, Option<f64>)> = conn
        .query_row(
            "SELECT variant, median_s FROM krphase_measurement
             WHERE mode = 'single-pass' AND median_s IS NOT NULL AND source IS ?1
             ORDER BY (experiment IS ?2) DESC, id DESC LIMIT 1",
            rusqlite::params![source, experiment],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (reference_variant, reference_median_s) = reference.unwrap_or((None, None));
    let overhead_s = match (median_s, reference_median_s) {
        (Some(m), Some(r)) => Some(m - r),
        _ => None,
    };
    let phases = phase_stats
        .iter()
        .filter(|p| p.samples > 0)
        .map(|p| {
            let s = p.total_ns as f64 / 1e9;
            PhaseShare {
                phase: p.phase.clone(),
                share_of_wall: median_s.and_then(|m| ratio(s, m)),
                share_of_overhead: overhead_s.and_then(|o| ratio(s, o)),
            }
        })
        .collect();
    let drain = &phase_stats[phases::index("drain").expect("phase")];
    Ok(Some(Measurement {
        measurement_id: id,
        experiment,
        variant,
        mode,
        median_s,
        reference_variant,
        reference_median_s,
        overhead_s,
        phases,
        drain_fraction_of_window: (drain.samples > 0)
            .then(|| ratio(drain.total_ns as f64, window_total as f64))
            .flatten(),
    }))
}

/// Run ids selected by `--run` / `--label` (all runs when neither is given).
pub fn select_runs(conn: &Connection, run: Option<&str>, label: Option<&str>) -> Result<Vec<i64>> {
    if let Some(r) = run {
        return Ok(vec![crate::db::resolve_run(conn, r)?]);
    }
    let mut stmt =
        conn.prepare("SELECT id FROM krphase_run WHERE ?1 IS NULL OR label = ?1 ORDER BY id")?;
    let ids: Vec<i64> = stmt
        .query_map([label], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    if ids.is_empty() {
        match label {
            Some(l) => bail!("no run labelled {l:?}"),
            None => bail!("the database holds no runs (run `krphase import` first)"),
        }
    }
    Ok(ids)
}

// ---------------------------------------------------------------------------------------------
// Rendering

/// Human duration: ns, µs, ms or s with three significant-ish digits.
pub fn fmt_ns(ns: f64) -> String {
    let a = ns.abs();
    if a >= 1e9 {
        format!("{:.3} s", ns / 1e9)
    } else if a >= 1e6 {
        format!("{:.3} ms", ns / 1e6)
    } else if a >= 1e3 {
        format!("{:.1} µs", ns / 1e3)
    } else {
        format!("{ns:.0} ns")
    }
}

fn fmt_opt_ns(v: Option<u64>) -> String {
    v.map_or("-".into(), |v| fmt_ns(v as f64))
}

/// A fraction as a percentage with one decimal (`-` when absent).
pub(crate) fn pct(v: Option<f64>) -> String {
    v.map_or("-".into(), |v| format!("{:.1}%", v * 100.0))
}

fn fmt_bytes(b: f64) -> String {
    if b >= 1024.0 * 1024.0 * 1024.0 {
        format!("{:.2} GiB", b / (1024.0 * 1024.0 * 1024.0))
    } else if b >= 1024.0 * 1024.0 {
        format!("{:.1} MiB", b / (1024.0 * 1024.0))
    } else if b >= 1024.0 {
        format!("{:.1} KiB", b / 1024.0)
    } else {
        format!("{b:.0} B")
    }
}

fn table(markdown: bool, header: &[&str]) -> Table {
    let mut t = Table::new();
    t.load_preset(if markdown {
        presets::ASCII_MARKDOWN
    } else {
        presets::UTF8_FULL_CONDENSED
    })
    .set_content_arrangement(ContentArrangement::Dynamic)
    .set_width(100)
    .set_header(header.iter().map(Cell::new));
    for i in 1..header.len() {
        if let Some(c) = t.column_mut(i) {
            c.set_cell_alignment(CellAlignment::Right);
        }
    }
    t
}

fn render_text(r: &RunReport, markdown: bool, out: &mut String) {
    let h = if markdown { "## " } else { "== " };
    let _ = writeln!(
        out,
        "{h}run {} {}(pid {}, {}, mode {}, {} passes per window{}{})",
        r.run_id,
        r.label
            .as_ref()
            .map_or(String::new(), |l| format!("[{l}] ")),
        r.pid.map_or("?".into(), |p| p.to_string()),
        r.host.as_deref().unwrap_or("?"),
        r.mode.as_deref().unwrap_or("?"),
        r.passes_per_window
            .map(|p| format!("{p:.2}")
                .trim_end_matches('0')
                .trim_end_matches('.')
                .to_string())
            .or(r.passes.map(|p| p.to_string()))
            .unwrap_or_else(|| "?".into()),
        if r.truncated { ", TRUNCATED" } else { "" },
        if r.log_joined { ", SDK log joined" } else { "" },
    );
    if markdown {
        out.push('\n');
    }
    let _ = writeln!(
        out,
        "dispatches seen {}: {} replayed, {} declined, {} without CONFIG; wall {}",
        r.dispatches_seen,
        r.windows.replayed,
        r.windows.declined,
        r.groups[2].count,
        r.wall_ns.map_or("?".into(), |w| fmt_ns(w as f64))
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
            fmt_ns(r.windows.stuck_ns as f64)
        );
    }
    if markdown {
        out.push('\n');
    }
    let mut g = table(markdown, &["group", "count", "total", "share of wall"]);
    for x in &r.groups {
        g.add_row(vec![
            x.group.clone(),
            x.count.to_string(),
            fmt_ns(x.total_ns as f64),
            pct(x.share_of_wall),
        ]);
    }
    let _ = writeln!(out, "{g}\n");
    if r.windows.replayed == 0 {
        let _ = writeln!(
            out,
            "no replayed windows: no phases, bytes or GPU time to show{}",
            if r.dispatch_tax.plain_dispatches > 0 {
                format!(
                    ";\n  {} dispatches ran once at {} per enqueue",
                    r.dispatch_tax.plain_dispatches,
                    r.dispatch_tax
                        .plain_enqueue_mean_ns
                        .map_or("-".into(), fmt_ns)
                )
            } else {
                String::new()
            }
        );
        out.push('\n');
        return;
    }
    let mut t = table(
        markdown,
        &["phase", "n", "total", "share", "p50", "p90", "p99", "max"],
    );
    for p in &r.phases {
        if p.samples == 0 {
            let mut row = vec![p.phase.clone(), "0".into()];
            row.resize(8, "-".into());
            t.add_row(row);
            continue;
        }
        t.add_row(vec![
            p.phase.clone(),
            p.samples.to_string(),
            fmt_ns(p.total_ns as f64),
            pct(p.share_of_window),
            fmt_opt_ns(p.p50_ns),
            fmt_opt_ns(p.p90_ns),
            fmt_opt_ns(p.p99_ns),
            fmt_opt_ns(p.max_ns),
        ]);
    }
    let _ = writeln!(out, "{t}\n");
    let b = &r.bytes;
    let _ = writeln!(
        out,
        "snapshot bytes: {} total, {} per window, {} GB/s ({})\nrestored bytes: {} at {} GB/s",
        fmt_bytes(b.snapshot_bytes_total as f64),
        b.snapshot_bytes_per_window.map_or("-".into(), fmt_bytes),
        b.snapshot_gbps.map_or("-".into(), |v| format!("{v:.2}")),
        b.snapshot_gbps_basis,
        fmt_bytes(b.restore_bytes_total as f64),
        b.restore_gbps.map_or("-".into(), |v| format!("{v:.2}")),
    );
    let _ = writeln!(
        out,
        "GPU vs wall: GPU {} of pass exec {} ({}), of window time {}",
        fmt_ns(r.gpu.gpu_total_ns as f64),
        fmt_ns(r.gpu.pass_total_ns as f64),
        pct(r.gpu.gpu_share_of_pass),
        pct(r.gpu.gpu_share_of_window),
    );
    if !r.gpu.per_pass.is_empty() {
        if markdown {
            out.push('\n');
        }
        let mut t = table(
            markdown,
            &["pass", "n", "host mean", "GPU mean", "GPU share"],
        );
        for p in &r.gpu.per_pass {
            t.add_row(vec![
                p.pass_index.to_string(),
                p.passes.to_string(),
                p.host_mean_ns.map_or("-".into(), fmt_ns),
                fmt_ns(p.gpu_mean_ns),
                pct(p.gpu_share),
            ]);
        }
        let _ = writeln!(out, "{t}\n");
    }
    let x = &r.dispatch_tax;
    let _ = writeln!(
        out,
        "non-replayed dispatch tax: {} dispatches, {} per enqueue;\n  {} tool opt-outs, {} per CONFIG pair",
        x.plain_dispatches,
        x.plain_enqueue_mean_ns.map_or("-".into(), fmt_ns),
        x.opt_out_windows,
        x.opt_out_config_mean_ns.map_or("-".into(), fmt_ns),
    );
    if let Some(m) = &r.measurement {
        let _ = writeln!(
            out,
            "whole-run measurement {} ({} {} {}): median {} s;\n  single-pass reference {} {} s; overhead {} s",
            m.measurement_id,
            m.experiment.as_deref().unwrap_or("?"),
            m.variant.as_deref().unwrap_or("?"),
            m.mode.as_deref().unwrap_or("?"),
            m.median_s.map_or("-".into(), |v| format!("{v:.3}")),
            m.reference_variant.as_deref().unwrap_or("-"),
            m.reference_median_s
                .map_or("-".into(), |v| format!("{v:.3}")),
            m.overhead_s.map_or("-".into(), |v| format!("{v:.3}")),
        );
        if markdown {
            out.push('\n');
        }
        let mut t = table(
            markdown,
            &["phase", "share of whole-run wall", "share of overhead"],
        );
        for p in &m.phases {
            t.add_row(vec![
                p.phase.clone(),
                pct(p.share_of_wall),
                pct(p.share_of_overhead),
            ]);
        }
        let _ = writeln!(out, "{t}");
        let _ = writeln!(
            out,
            "P5 drain as a fraction of a window: {}",
            pct(m.drain_fraction_of_window)
        );
    }
    out.push('\n');
}

/// Long-format CSV: one `run_id,label,section,name,metric,value` row per figure.
fn render_csv(reports: &[RunReport]) -> Result<String> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record(["run_id", "label", "section", "name", "metric", "value"])?;
    for r in reports {
        let id = r.run_id.to_string();
        let label = r.label.clone().unwrap_or_default();
        let mut row = |section: &str, name: &str, metric: &str, value: String| {
            w.write_record([
                id.as_str(),
                label.as_str(),
                section,
                name,
                metric,
                value.as_str(),
            ])
        };
        row(
            "windows",
            "replayed",
            "count",
            r.windows.replayed.to_string(),
        )?;
        row(
            "windows",
            "declined",
            "count",
            r.windows.declined.to_string(),
        )?;
        row("windows", "stuck", "count", r.windows.stuck.to_string())?;
        row(
            "windows",
            "stuck",
            "total_ns",
            r.windows.stuck_ns.to_string(),
        )?;
        row("dispatches", "seen", "count", r.dispatches_seen.to_string())?;
        for (k, v) in &r.declines_by_reason {
            row("declines", k, "count", v.to_string())?;
        }
        for g in &r.groups {
            row("group", &g.group, "count", g.count.to_string())?;
            row("group", &g.group, "total_ns", g.total_ns.to_string())?;
            row("group", &g.group, "share_of_wall", opt(g.share_of_wall))?;
        }
        for p in &r.phases {
            row("phase", &p.phase, "samples", p.samples.to_string())?;
            row("phase", &p.phase, "total_ns", p.total_ns.to_string())?;
            row("phase", &p.phase, "share_of_window", opt(p.share_of_window))?;
            for (m, v) in [
                ("p50_ns", p.p50_ns),
                ("p90_ns", p.p90_ns),
                ("p99_ns", p.p99_ns),
                ("max_ns", p.max_ns),
            ] {
                row(
                    "phase",
                    &p.phase,
                    m,
                    v.map_or(String::new(), |v| v.to_string()),
                )?;
            }
        }
        row(
            "bytes",
            "snapshot",
            "total",
            r.bytes.snapshot_bytes_total.to_string(),
        )?;
        row(
            "bytes",
            "snapshot",
            "per_window",
            opt(r.bytes.snapshot_bytes_per_window),
        )?;
        row("bytes", "snapshot", "gbps", opt(r.bytes.snapshot_gbps))?;
        row(
            "bytes",
            "restore",
            "total",
            r.bytes.restore_bytes_total.to_string(),
        )?;
        row("bytes", "restore", "gbps", opt(r.bytes.restore_gbps))?;
        row("gpu", "all", "share_of_pass", opt(r.gpu.gpu_share_of_pass))?;
        row(
            "gpu",
            "all",
            "share_of_window",
            opt(r.gpu.gpu_share_of_window),
        )?;
        row(
            "tax",
            "plain",
            "enqueue_mean_ns",
            opt(r.dispatch_tax.plain_enqueue_mean_ns),
        )?;
        row(
            "tax",
            "opt_out",
            "config_mean_ns",
            opt(r.dispatch_tax.opt_out_config_mean_ns),
        )?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v}"))
}

/// Renders reports in `format`.
pub fn render(reports: &[RunReport], format: Format) -> Result<String> {
    Ok(match format {
        Format::Json => {
            let mut s = serde_json::to_string_pretty(&serde_json::json!({ "runs": reports }))?;
            s.push('\n');
            s
        }
        Format::Csv => render_csv(reports)?,
        Format::Table | Format::Markdown => {
            let md = format == Format::Markdown;
            let mut s = String::new();
            if md {
                s.push_str("# krphase report\n\n");
            }
            for r in reports {
                render_text(r, md, &mut s);
            }
            s
        }
    })
}

/// Renders reports in `format` together with the database's whole-run bench summary (P1-P6),
/// when it holds bench measurements: the `bench` key of the JSON, the summary text after a table
/// or Markdown report. CSV carries the runs only.
pub fn render_with_bench(
    conn: &Connection,
    reports: &[RunReport],
    format: Format,
) -> Result<String> {
    use crate::bench::summary;
    Ok(match format {
        Format::Json => {
            let mut v = serde_json::json!({ "runs": reports });
            if let Some(b) = summary::report_json(conn)? {
                v["bench"] = serde_json::to_value(b)?;
            }
            let mut s = serde_json::to_string_pretty(&v)?;
            s.push('\n');
            s
        }
        Format::Csv => render(reports, format)?,
        Format::Table | Format::Markdown => render(reports, format)? + &summary::render(conn)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::params;

    /// A run with two replayed 2-pass windows and one decline, all times known.
    pub(crate) fn fixture() -> Connection {
        let c = crate::db::open_in_memory().unwrap();
        c.execute(
            "INSERT INTO krphase_run (id, path, file_hash, label, pid, \"start\", \"end\", truncated, imported_at)
             VALUES (1, 'f', 'h', 'x', 10, 0, 1000000, 0, 'now')",
            [],
        )
        .unwrap();
        // window: start, pcr, first enter, last exit, end, pass, gpu, restore, restores, bytes
        let ws: [[i64; 10]; 2] = [
            [1000, 1100, 2100, 4100, 4200, 1500, 1000, 500, 1, 1_000_000],
            [
                10000, 10100, 12100, 15100, 15300, 2000, 1200, 1000, 1, 1_000_000,
            ],
        ];
        for (i, w) in ws.iter().enumerate() {
            c.execute(
                "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, executed_passes,
                   \"start\", pass_count_return, first_pass_enter, last_pass_exit, \"end\",
                   pass_ns, gpu_ns, restore_ns, restores, bytes_estimate)
                 VALUES (1, ?1, 'k', 'replayed', 'none', 2, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![i as i64 + 1, w[0], w[1], w[2], w[3], w[4], w[5], w[6], w[7], w[8], w[9]],
            )
            .unwrap();
        }
        c.execute(
            "INSERT INTO krphase_window (run_id, dispatch_id, kernel, outcome, reason, \"start\", \"end\")
             VALUES (1, 3, 'k', 'declined', 'untracked_memory', 20000, 20400)",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO krphase_dispatch (run_id, dispatch_id, \"start\", \"end\") VALUES (1, 4, 30000, 30050)",
            [],
        )
        .unwrap();
        c
    }

    #[test]
    fn report_figures_match_the_fixture() {
        let c = fixture();
        let r = run_report(&c, 1).unwrap();
        assert_eq!(
            (r.windows.replayed, r.windows.declined, r.dispatches_seen),
            (2, 1, 4)
        );
        assert_eq!(r.declines_by_reason.get("untracked_memory"), Some(&1));
        let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
        assert_eq!(p("pre-pass").total_ns, 1000 + 2000);
        assert_eq!(p("window").total_ns, 3200 + 5300);
        assert_eq!(p("restore").total_ns, 1500);
        assert_eq!(p("tail").total_ns, 100 + 200);
        assert_eq!(p("drain").samples, 0, "no log joined");
        assert_eq!(p("pre-pass").max_ns, Some(2000));
        assert_eq!(p("window").p50_ns, Some(3200));
        assert_eq!(p("window").p99_ns, Some(5300));
        assert_eq!(r.bytes.snapshot_bytes_total, 2_000_000);
        assert_eq!(r.bytes.restore_bytes_total, 2_000_000);
        let gbps = r.bytes.restore_gbps.unwrap();
        assert!((gbps - 2_000_000.0 / 1500.0).abs() < 1e-9);
        assert_eq!(r.dispatch_tax.plain_enqueue_mean_ns, Some(50.0));
        let g = &r.groups[0];
        assert!((g.share_of_wall.unwrap() - 8500.0 / 1_000_000.0).abs() < 1e-12);
        for f in [Format::Table, Format::Csv, Format::Json, Format::Markdown] {
            let s = render(std::slice::from_ref(&r), f).unwrap();
            assert!(s.contains("pre-pass"), "{f:?}");
        }
        let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
        for line in table.lines() {
            assert!(line.chars().count() <= 100, "too wide: {line}");
        }
        assert!(run_report(&c, 2).is_err());
    }

    #[test]
    fn linked_measurement_gives_whole_run_and_overhead_shares() {
        let c = fixture();
        c.execute_batch(
            "INSERT INTO krphase_measurement (id, source, experiment, variant, mode, median_s)
               VALUES (1, 'replay_perf', 'P2', 'passes-1', 'single-pass', 0.000010),
                      (2, 'replay_perf', 'P2', 'passes-2', 'kernel-replay', 0.000020);
             INSERT INTO krphase_measurement_run (measurement_id, run_id) VALUES (2, 1);",
        )
        .unwrap();
        let r = run_report(&c, 1).unwrap();
        let m = r.measurement.clone().expect("linked");
        assert_eq!(m.reference_variant.as_deref(), Some("passes-1"));
        let overhead = m.overhead_s.unwrap();
        assert!((overhead - 0.000010).abs() < 1e-12);
        let window = m.phases.iter().find(|p| p.phase == "window").unwrap();
        // 8500 ns of windows over a 20 µs run and a 10 µs overhead.
        assert!((window.share_of_wall.unwrap() - 0.425).abs() < 1e-9);
        assert!((window.share_of_overhead.unwrap() - 0.85).abs() < 1e-9);
        assert_eq!(m.drain_fraction_of_window, None, "no log joined");
        let text = render(std::slice::from_ref(&r), Format::Table).unwrap();
        assert!(
            text.contains("share of overhead") && text.contains("P5"),
            "{text}"
        );
    }

    #[test]
    fn joined_log_splits_the_pre_pass() {
        let c = fixture();
        c.execute(
            "INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at) VALUES (1, 'l', 'h', 1, 'now')",
            [],
        )
        .unwrap();
        c.execute(
            "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id, snapshot_ns, snapshot_bytes)
             VALUES (1, 1, 1, 1, 600, 1000000)",
            [],
        )
        .unwrap();
        let r = run_report(&c, 1).unwrap();
        let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
        assert_eq!((p("snapshot").total_ns, p("drain").total_ns), (600, 400));
        assert!(r.log_joined);
    }
}
