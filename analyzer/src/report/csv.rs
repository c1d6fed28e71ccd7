//! The report as long-format CSV: one `run_id,label,section,name,metric,value` row per figure.

use anyhow::Result;

use super::run_report::RunReport;

/// Long-format CSV: one `run_id,label,section,name,metric,value` row per figure.
pub fn render_csv(reports: &[RunReport]) -> Result<String> {
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
