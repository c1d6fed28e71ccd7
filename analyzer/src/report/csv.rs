//! The report as long-format CSV: one `run_id,label,section,name,metric,value,basis` row per
//! figure. Run figures carry their run id; whole-run measurement rows (section `measurement`) and
//! the bench summary (section `bench`) leave `run_id` empty. `basis` is the figure's basis code
//! (`db/basis.rs`; several joined with `+`), empty for counts and flags.

use anyhow::Result;

use crate::answers::findings::Finding;
use crate::answers::measurements::MeasurementSection;
use crate::answers::run_report::RunReport;
use crate::bench::summary::BenchSummary;
use crate::db::basis::Basis;
use crate::render::fmt::codes;

type Writer = csv::Writer<Vec<u8>>;

/// One CSV row's first columns.
struct Key<'a> {
    run_id: &'a str,
    label: &'a str,
    section: &'a str,
    name: &'a str,
}

fn row(w: &mut Writer, k: &Key<'_>, metric: &str, value: String, basis: &str) -> Result<()> {
    w.write_record([
        k.run_id,
        k.label,
        k.section,
        k.name,
        metric,
        value.as_str(),
        basis,
    ])?;
    Ok(())
}

fn opt(v: Option<f64>) -> String {
    v.map_or(String::new(), |v| format!("{v}"))
}

fn opt_i(v: Option<i64>) -> String {
    v.map_or(String::new(), |v| v.to_string())
}

/// `finding` rows (no header: they follow the report's), one per finding, named by its rule.
pub fn findings_rows(found: &[Finding]) -> Result<String> {
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(Vec::new());
    for f in found {
        let k = Key {
            run_id: "",
            label: "",
            section: "finding",
            name: f.rule,
        };
        row(&mut w, &k, "text", f.text.clone(), "")?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

/// Long-format CSV of the runs, the measurements and the bench summary.
pub fn render_csv(
    reports: &[RunReport],
    measurements: &MeasurementSection,
    bench: Option<&BenchSummary>,
) -> Result<String> {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    w.write_record([
        "run_id", "label", "section", "name", "metric", "value", "basis",
    ])?;
    for r in reports {
        write_run(&mut w, r)?;
        for rec in super::fidelity::csv_rows(r) {
            w.write_record(&rec)?;
        }
    }
    write_measurements(&mut w, measurements)?;
    if let Some(b) = bench {
        write_bench(&mut w, b)?;
    }
    Ok(String::from_utf8(w.into_inner()?)?)
}

fn write_run(w: &mut Writer, r: &RunReport) -> Result<()> {
    let id = r.run_id.to_string();
    let label = r.label.clone().unwrap_or_default();
    let k = |section: &'static str, name: &'static str| Key {
        run_id: "",
        label: "",
        section,
        name,
    };
    let key = |k: Key<'static>| Key {
        run_id: id.as_str(),
        label: label.as_str(),
        ..k
    };
    let m = Basis::InProcess.code();
    if r.command
        .as_deref()
        .is_some_and(crate::db::emulated::command_is_emulated)
    {
        // The run came from the emulator: its first row says so.
        let e = key(k("provenance", crate::db::emulated::EMULATED));
        row(w, &e, "flag", "1".into(), "")?;
    }
    let counts = [
        ("windows", "replayed", "count", r.windows.replayed),
        ("windows", "declined", "count", r.windows.declined),
        ("windows", "stuck", "count", r.windows.stuck),
        ("dispatches", "seen", "count", r.dispatches_seen),
    ];
    for (section, name, metric, v) in counts {
        row(w, &key(k(section, name)), metric, v.to_string(), "")?;
    }
    let stuck = key(k("windows", "stuck"));
    row(w, &stuck, "total_ns", r.windows.stuck_ns.to_string(), m)?;
    for (reason, v) in &r.declines_by_reason {
        let kk = Key {
            name: reason,
            ..key(k("declines", ""))
        };
        row(w, &kk, "count", v.to_string(), "")?;
    }
    for g in &r.groups {
        let kk = Key {
            name: &g.group,
            ..key(k("group", ""))
        };
        let b = g.basis.code();
        row(w, &kk, "count", g.count.to_string(), "")?;
        row(w, &kk, "total_ns", g.total_ns.to_string(), b)?;
        row(w, &kk, "share_of_wall", opt(g.share_of_wall), b)?;
    }
    for p in &r.phases {
        let kk = Key {
            name: &p.phase,
            ..key(k("phase", ""))
        };
        let b = codes(&p.basis);
        row(w, &kk, "parent", p.parent.clone().unwrap_or_default(), "")?;
        row(w, &kk, "samples", p.samples.to_string(), "")?;
        row(w, &kk, "total_ns", p.total_ns.to_string(), &b)?;
        row(w, &kk, "share_of_window", opt(p.share_of_window), &b)?;
        row(w, &kk, "share_of_parent", opt(p.share_of_parent), &b)?;
        row(w, &kk, "mean_ns", opt(p.mean_ns), &b)?;
        row(w, &kk, "sd_ns", opt(p.sd_ns), &b)?;
        for (metric, v) in [
            ("p50_ns", p.p50_ns),
            ("p90_ns", p.p90_ns),
            ("p99_ns", p.p99_ns),
            ("max_ns", p.max_ns),
        ] {
            row(w, &kk, metric, opt_i(v), &b)?;
        }
        if let Some(why) = &p.missing {
            row(w, &kk, "missing", why.clone(), "")?;
        }
    }
    let b = &r.bytes;
    let sb = codes(&b.snapshot_bytes_basis);
    let snap = key(k("bytes", "snapshot"));
    row(w, &snap, "total", b.snapshot_bytes_total.to_string(), &sb)?;
    row(
        w,
        &snap,
        "per_window",
        opt(b.snapshot_bytes_per_window),
        &sb,
    )?;
    let gbps_basis = b.snapshot_gbps_basis.code();
    row(w, &snap, "gbps", opt(b.snapshot_gbps), gbps_basis)?;
    let restore = key(k("bytes", "restore"));
    let rb = b.restore_basis.code();
    row(w, &restore, "total", b.restore_bytes_total.to_string(), rb)?;
    row(w, &restore, "gbps", opt(b.restore_gbps), rb)?;
    let rp = &r.restore_placement;
    if rp.in_pass > 0 {
        // Only where restores ran inside the passes: the other runs' rows are as before.
        let kk = key(k("restore_placement", "in_pass"));
        row(w, &kk, "windows_with_restores", rp.windows.to_string(), "")?;
        row(w, &kk, "windows", rp.in_pass.to_string(), "")?;
        row(w, &kk, "by_callbacks", rp.by_callbacks.to_string(), "")?;
        row(w, &kk, "by_sdk_log", rp.by_sdk_log.to_string(), "")?;
        row(w, &kk, "split_by_sdk_log", rp.split.to_string(), "")?;
    }
    let gpu = key(k("gpu", "all"));
    row(w, &gpu, "share_of_pass", opt(r.gpu.gpu_share_of_pass), m)?;
    row(
        w,
        &gpu,
        "share_of_window",
        opt(r.gpu.gpu_share_of_window),
        m,
    )?;
    let tax = r.dispatch_tax.plain_enqueue_mean_ns;
    row(w, &key(k("tax", "plain")), "enqueue_mean_ns", opt(tax), m)?;
    let opt_out = r.dispatch_tax.opt_out_config_mean_ns;
    row(
        w,
        &key(k("tax", "opt_out")),
        "config_mean_ns",
        opt(opt_out),
        m,
    )?;
    write_counters(w, r, &id, &label)?;
    write_rocpd(w, r, &id, &label)?;
    write_kernels_and_agents(w, r, &id, &label)
}

/// Sections `kernel` (one name per kernel) and `agent` (one name per agent handle).
fn write_kernels_and_agents(w: &mut Writer, r: &RunReport, id: &str, label: &str) -> Result<()> {
    for kn in &r.kernels {
        let k = Key {
            run_id: id,
            label,
            section: "kernel",
            name: &kn.kernel,
        };
        let b = codes(&kn.basis);
        row(w, &k, "windows", kn.windows.to_string(), "")?;
        row(w, &k, "declined", kn.declined.to_string(), "")?;
        row(w, &k, "total_ns", kn.total_ns.to_string(), &b)?;
        row(w, &k, "share_of_replay", opt(kn.share_of_replay), &b)?;
        row(w, &k, "mean_ns", opt(kn.mean_ns), &b)?;
        row(w, &k, "sd_ns", opt(kn.sd_ns), &b)?;
        for (metric, v) in [
            ("p50_ns", kn.p50_ns),
            ("p90_ns", kn.p90_ns),
            ("p99_ns", kn.p99_ns),
            ("max_ns", kn.max_ns),
        ] {
            row(w, &k, metric, opt_i(v), &b)?;
        }
        row(
            w,
            &k,
            "top_phase",
            kn.top_phase.clone().unwrap_or_default(),
            "",
        )?;
        row(w, &k, "top_phase_share", opt(kn.top_phase_share), &b)?;
    }
    for a in &r.agents {
        let name = a.agent.map_or_else(|| "?".to_string(), |a| a.to_string());
        let k = Key {
            run_id: id,
            label,
            section: "agent",
            name: &name,
        };
        let b = codes(&a.basis);
        row(w, &k, "replayed", a.replayed.to_string(), "")?;
        row(w, &k, "declined", a.declined.to_string(), "")?;
        row(w, &k, "total_ns", a.total_ns.to_string(), &b)?;
        row(w, &k, "share_of_replay", opt(a.share_of_replay), &b)?;
        row(w, &k, "mean_ns", opt(a.mean_ns), &b)?;
        row(w, &k, "sd_ns", opt(a.sd_ns), &b)?;
        row(w, &k, "max_ns", opt_i(a.max_ns), &b)?;
    }
    Ok(())
}

/// Section `counter`: one `value` and one `instances` row per counter of a pass, named
/// `<dispatch id>/<pass>/<counter>`.
fn write_counters(w: &mut Writer, r: &RunReport, id: &str, label: &str) -> Result<()> {
    for c in &r.counters {
        let name = format!("{}/{}/{}", c.dispatch_id, c.pass, c.counter);
        let k = Key {
            run_id: id,
            label,
            section: "counter",
            name: &name,
        };
        row(w, &k, "value", format!("{}", c.value), c.basis.code())?;
        row(w, &k, "instances", c.instances.to_string(), "")?;
    }
    Ok(())
}

/// Section `rocpd`: per kernel `<kernel>` its `overhead_mean_ns`, and per counter
/// `<kernel>/<counter>` its `value` (mean of rocpd's rows) and `rows_per_dispatch`.
fn write_rocpd(w: &mut Writer, r: &RunReport, id: &str, label: &str) -> Result<()> {
    let Some(s) = &r.rocpd else { return Ok(()) };
    for k in &s.kernels {
        let key = Key {
            run_id: id,
            label,
            section: "rocpd",
            name: &k.kernel,
        };
        let basis: Vec<&str> = k.overhead_basis.iter().map(|b| b.code()).collect();
        let v = |x: Option<f64>| x.map_or(String::new(), |x| format!("{x}"));
        row(
            w,
            &key,
            "overhead_mean_ns",
            v(k.overhead_mean_ns),
            &basis.join("+"),
        )?;
        for c in &k.counters {
            let name = format!("{}/{}", k.kernel, c.counter);
            let key = Key { name: &name, ..key };
            row(w, &key, "value", format!("{}", c.mean), c.basis.code())?;
            row(
                w,
                &key,
                "rows_per_dispatch",
                format!("{}", c.rows_per_dispatch),
                "",
            )?;
        }
    }
    Ok(())
}

fn write_measurements(w: &mut Writer, s: &MeasurementSection) -> Result<()> {
    let h = Basis::Harness.code();
    let e = Basis::Estimate.code();
    for a in &s.measurements {
        let m = &a.stored;
        let name = format!(
            "{}:{}/{}",
            m.measurement_id,
            m.experiment.as_deref().unwrap_or(""),
            m.variant.as_deref().unwrap_or("")
        );
        let label = m.label.clone().unwrap_or_default();
        let k = Key {
            run_id: "",
            label: &label,
            section: "measurement",
            name: &name,
        };
        let text = |v: &Option<String>| v.clone().unwrap_or_default();
        row(w, &k, "source", text(&m.source), "")?;
        row(w, &k, "mode", text(&m.mode), "")?;
        row(w, &k, "metric", text(&m.metric), "")?;
        row(w, &k, "counter_groups", opt_i(m.counter_groups), "")?;
        row(w, &k, "median_s", opt(m.median_s), h)?;
        row(w, &k, "min_s", opt(m.min_s), h)?;
        row(w, &k, "max_s", opt(m.max_s), h)?;
        row(w, &k, "samples", opt_i(m.samples), "")?;
        row(w, &k, "failures", text(&m.failures), "")?;
        row(w, &k, "projected_s", opt(m.projected_s), e)?;
        row(w, &k, "speedup", opt(m.speedup), e)?;
        let runs = m
            .linked_runs
            .iter()
            .map(|r| r.to_string())
            .collect::<Vec<_>>()
            .join(";");
        row(w, &k, "linked_runs", runs, "")?;
        row(w, &k, "valid", a.valid.to_string(), "")?;
        row(w, &k, "invalid_reason", text(&a.invalid_reason), "")?;
    }
    Ok(())
}

fn write_bench(w: &mut Writer, b: &BenchSummary) -> Result<()> {
    let h = Basis::Harness.code();
    let k = Key {
        run_id: "",
        label: "",
        section: "bench",
        name: "P1",
    };
    row(
        w,
        &k,
        "application_replay_s",
        opt(b.application_replay_s),
        h,
    )?;
    row(w, &k, "kernel_replay_s", opt(b.kernel_replay_s), h)?;
    let speedup = b.speedup_vs_application_replay;
    row(w, &k, "speedup_vs_application_replay", opt(speedup), h)?;
    let valid = b.speedup_invalid_reason.is_none().to_string();
    row(w, &k, "speedup_valid", valid, "")?;
    let why = b.speedup_invalid_reason.clone().unwrap_or_default();
    row(w, &k, "speedup_invalid_reason", why, "")?;
    Ok(())
}
