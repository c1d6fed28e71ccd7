//! The report's figures and formats over small runs whose every time is known: the phases, their
//! shares and bases, the linked measurement, the joined log, observe mode and the counters, in
//! every format.

use crate::answers::fixture::fixture;
use crate::answers::run_report::UNATTRIBUTED;
use crate::answers::{RunReport, run_report};
use crate::render::Format;

use super::{render, render_with_bench};

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
    assert_eq!(p("window").p50_ns, Some(4250));
    assert_eq!(p("window").p99_ns, Some(5279));
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

/// Sum of the top-level shares (every phase without a parent, except the window itself).
fn top_level_share_sum(r: &RunReport) -> f64 {
    r.phases
        .iter()
        .filter(|p| p.parent.is_none() && p.phase != "window")
        .filter_map(|p| p.share_of_window)
        .sum()
}

#[test]
fn shares_nest_and_top_level_shares_sum_to_the_window() {
    use crate::db::basis::Basis;
    let c = fixture();
    c.execute_batch(
        "INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at)
           VALUES (1, 'l', 'h', 1, 'now');
         INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id, snapshot_ns)
           VALUES (1, 1, 1, 1, 600);",
    )
    .unwrap();
    let r = run_report(&c, 1).unwrap();
    let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
    assert!(
        (top_level_share_sum(&r) - 1.0).abs() < 1e-12,
        "{:?}",
        r.phases
    );
    assert!(r.phases.iter().all(|p| p.phase != UNATTRIBUTED));
    assert_eq!(p("drain").parent.as_deref(), Some("pre-pass"));
    assert_eq!(p("gpu").parent.as_deref(), Some("pass exec"));
    // GPU 2200 of pass exec 3500; snapshot 600 of pre-pass 1000 (the one joined window).
    assert!((p("gpu").share_of_parent.unwrap() - 2200.0 / 3500.0).abs() < 1e-12);
    assert!((p("snapshot").share_of_parent.unwrap() - 600.0 / 3000.0).abs() < 1e-12);
    assert_eq!(p("pre-pass").basis, vec![Basis::InProcess]);
    // The snapshot time comes from the phase line, whose format the SDK has not published.
    assert_eq!(p("snapshot").basis, vec![Basis::SdkPhaseLine]);
    assert_eq!(p("drain").basis, vec![Basis::InProcessMinusSdkLog]);
    assert_eq!(
        p("continue")
            .missing
            .as_deref()
            .map(|m| m.contains("CONTINUE")),
        Some(true)
    );
    assert_eq!(r.bytes.snapshot_gbps_basis, Basis::SdkLog);
    assert_eq!(r.bytes.snapshot_bytes_basis, vec![Basis::Estimate]);
    let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
    assert!(
        table.contains("  drain") && table.contains("M-L"),
        "{table}"
    );
    assert!(table.contains("basis of each figure"), "{table}");
    assert!(table.contains("continue: no CONTINUE records"), "{table}");
    let csv = render(std::slice::from_ref(&r), Format::Csv).unwrap();
    assert!(
        csv.starts_with("run_id,label,section,name,metric,value,basis\n"),
        "{csv}"
    );
    assert!(
        csv.contains("1,x,phase,drain,total_ns,400,in_process_minus_sdk_log"),
        "{csv}"
    );
    let v: serde_json::Value =
        serde_json::from_str(&render(std::slice::from_ref(&r), Format::Json).unwrap()).unwrap();
    let snap = &v["runs"][0]["phases"].as_array().unwrap()[3];
    assert_eq!(snap["phase"], "snapshot");
    assert_eq!(snap["basis"], serde_json::json!(["sdk_phase_line"]));
    assert_eq!(snap["parent"], "pre-pass");
}

/// An observe-mode window (no CONFIG or PASS callbacks): the window from the SDK's phase
/// line, the restore from its outcome line, the dispatch-record gap as the restore's upper
/// bound (no share: it overlaps the restore), and an `unattributed` row for the rest, so the
/// top-level shares still add up to 100%.
#[test]
fn observe_mode_figures_name_their_basis_and_the_rest_is_unattributed() {
    use crate::db::basis::Basis;
    let c = crate::db::open_in_memory().unwrap();
    c.execute_batch(
        "INSERT INTO krphase_run (id, path, file_hash, mode, \"start\", \"end\", imported_at)
           VALUES (1, 'f', 'h', 'observe', 0, 100000, 'now');
         INSERT INTO krphase_window (id, run_id, dispatch_id, outcome, executed_passes,
           \"start\", \"end\", gpu_ns, restore_ns, restores)
           VALUES (1, 1, 1, 'replayed', 2, 1000, 9000, 3000, 2500, 1);
         INSERT INTO krphase_log_file (id, path, file_hash, run_id, imported_at)
           VALUES (1, 'l', 'h', 1, 'now');
         INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, dispatch_id,
           lock_drain_ns, snapshot_ns, window_ns, restore_ns)
           VALUES (1, 1, 1, 1, 1500, 500, 10000, 2000);",
    )
    .unwrap();
    let r = run_report(&c, 1).unwrap();
    let p = |n: &str| r.phases.iter().find(|p| p.phase == n).unwrap().clone();
    assert_eq!(p("window").total_ns, 10000);
    assert_eq!(p("window").basis, vec![Basis::SdkPhaseLine]);
    assert_eq!(
        (p("restore").total_ns, p("restore").basis.clone()),
        (2000, vec![Basis::SdkLog])
    );
    let bound = p("restore bound");
    assert_eq!(
        (bound.total_ns, bound.basis.clone()),
        (2500, vec![Basis::Dispatch])
    );
    assert_eq!(
        (bound.bound_of.as_deref(), bound.share_of_window),
        (Some("restore"), None)
    );
    assert_eq!(p("pre-pass").basis, vec![Basis::SdkPhaseLine]);
    assert_eq!(p("drain").basis, vec![Basis::SdkPhaseLine]);
    assert_eq!(p("config").samples, 0);
    assert!(p("config").missing.unwrap().contains("observe"));
    // The gpu has no pass exec to be part of: a row of its own, out of the rest.
    let gpu = p("gpu");
    assert!(gpu.parent.is_none() && gpu.total_ns > 0, "{gpu:?}");
    let u = p(UNATTRIBUTED);
    assert_eq!(u.total_ns, 10000 - 2000 - 2000 - gpu.total_ns);
    let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
    // The bound's share cell says what it bounds (a narrow terminal may wrap it).
    assert!(
        table
            .lines()
            .any(|l| l.contains("restore") && l.contains(">=")),
        "{table}"
    );
    assert!(
        (top_level_share_sum(&r) - 1.0).abs() < 1e-12,
        "{:?}",
        r.phases
    );
}

#[test]
fn counter_values_per_pass_in_table_csv_and_json_with_their_basis() {
    let c = fixture();
    c.execute_batch(
        "INSERT INTO krphase_counter (run_id, window_id, dispatch_id, pass_index, counter_id,
           name, value, instances)
         VALUES (1, 1, 1, 0, 7, 'SQ_WAVES', 4096, 1), (1, 1, 1, 1, 8, 'GRBM_COUNT', 1234.5, 2),
                (1, 2, 2, 0, 7, 'SQ_WAVES', 4096, 1), (1, 2, 2, 1, 9, NULL, 3, 1);",
    )
    .unwrap();
    let r = run_report(&c, 1).unwrap();
    assert_eq!(r.counters.len(), 4);
    assert_eq!(
        r.counters[3].counter, "counter 9",
        "an unnamed counter by its id"
    );
    let table = render(std::slice::from_ref(&r), Format::Table).unwrap();
    assert!(table.contains("counters per pass [C]"), "{table}");
    assert!(
        table.contains("GRBM_COUNT") && table.contains("1234.5"),
        "{table}"
    );
    assert!(
        table.contains("C   measured in process (SDK counting service)"),
        "{table}"
    );
    let csv = render(std::slice::from_ref(&r), Format::Csv).unwrap();
    assert!(
        csv.contains("1,x,counter,1/1/GRBM_COUNT,value,1234.5,sdk_counting"),
        "{csv}"
    );
    let json: serde_json::Value =
        serde_json::from_str(&render(std::slice::from_ref(&r), Format::Json).unwrap()).unwrap();
    let first = &json["runs"][0]["counters"][0];
    assert_eq!(first["counter"], "SQ_WAVES");
    assert_eq!(first["basis"], "sdk_counting");
}

/// The bench summary rides in the report's JSON under `bench`, next to the runs; without bench
/// measurements there is no `bench` key.
#[test]
fn the_report_json_carries_the_bench_summary() {
    let c = crate::bench::summary::tests::bench_db();
    let v: serde_json::Value =
        serde_json::from_str(&render_with_bench(&c, &[], Format::Json).unwrap()).unwrap();
    assert_eq!(v["runs"], serde_json::json!([]));
    assert_eq!(v["bench"]["p5_drain"]["drain_total_ns"], 1200);
    assert_eq!(v["bench"]["p6_dispatch_tax"]["dispatches_per_run"], 4.0);
    assert!(v["bench"]["p6_dispatch_tax"]["in_process_tax_per_dispatch_ns"].is_number());
    assert!(v["bench"]["p6_dispatch_tax"]["whole_run_tax_per_dispatch_ns"].is_number());

    let c = crate::db::open_in_memory().unwrap();
    let v: serde_json::Value =
        serde_json::from_str(&render_with_bench(&c, &[], Format::Json).unwrap()).unwrap();
    assert!(v.get("bench").is_none(), "{v}");
}
