//! The summary over a small bench database whose every figure is known: P1, P5 and P6 in the
//! JSON, and P6 refused when its replay-active row ran without kernel replay.

use rusqlite::{Connection, params};

use super::*;

/// Run 1 (P5): two replayed windows with joined phase lines; runs 2 and 3 (P6 baseline and
/// replay active): four plain dispatches each, enqueue 100 ns and 150 ns. All figures known.
pub(crate) fn bench_db() -> Connection {
    let c = crate::db::open_in_memory().unwrap();
    for run in 1..=3 {
        c.execute(
            "INSERT INTO krphase_run (id, path, file_hash, imported_at) \
             VALUES (?1, 'f', ?2, 'now')",
            params![run, format!("h{run}")],
        )
        .unwrap();
    }
    c.execute(
        "INSERT INTO krphase_log_file (id, path, file_hash, imported_at) \
         VALUES (1, 'l', 'lh', 'now')",
        [],
    )
    .unwrap();
    // (start, pass_count_return, first_pass_enter, end, SDK snapshot ns): drain = pre-pass
    // − snapshot = 800 and 400 ns over windows of 2100 and 1000 ns.
    for (i, w) in [[0, 100, 1100, 2100, 200], [5000, 5100, 5600, 6000, 100]]
        .iter()
        .enumerate()
    {
        let id = i as i64 + 1;
        c.execute(
            "INSERT INTO krphase_window (id, run_id, dispatch_id, outcome, \"start\", \
             pass_count_return, first_pass_enter, \"end\") \
             VALUES (?1, 1, ?1, 'replayed', ?2, ?3, ?4, ?5)",
            params![id, w[0], w[1], w[2], w[3]],
        )
        .unwrap();
        c.execute(
            "INSERT INTO krphase_sdk_log (log_file_id, run_id, window_id, pid, dispatch_id, \
             snapshot_ns) VALUES (1, 1, ?1, 1, ?1, ?2)",
            params![id, w[4]],
        )
        .unwrap();
    }
    for (run, enqueue) in [(2, 100), (3, 150)] {
        for d in 0..4 {
            c.execute(
                "INSERT INTO krphase_dispatch (run_id, dispatch_id, \"start\", \"end\") \
                 VALUES (?1, ?2, ?3, ?4)",
                params![run, d, d * 1000, d * 1000 + enqueue],
            )
            .unwrap();
        }
    }
    // (id, experiment, variant, median_s, linked run); id 4 is an older P6 baseline that
    // the newer id 6 supersedes.
    let rows: [(i64, &str, &str, f64, Option<i64>); 7] = [
        (1, "P1", "application-replay-all-groups", 3.0, None),
        (2, "P1", "multiplexed-all-groups", 2.0, None),
        (3, "P1", "replay-all-groups", 1.5, None),
        (4, "P6", "no-replay", 9.0, None),
        (5, "P5", "drain-share", 0.5, Some(1)),
        (6, "P6", "no-replay", 1.0, Some(2)),
        (7, "P6", "replay-active-none-matched", 1.000_002, Some(3)),
    ];
    for (id, experiment, variant, median, run) in rows {
        c.execute(
            "INSERT INTO krphase_measurement (id, source, experiment, variant, median_s, \
             samples) VALUES (?1, 'krphase-bench', ?2, ?3, ?4, 2)",
            params![id, experiment, variant, median],
        )
        .unwrap();
        if let Some(run) = run {
            c.execute(
                "INSERT INTO krphase_measurement_run VALUES (?1, ?2)",
                params![id, run],
            )
            .unwrap();
        }
    }
    c
}

fn close(a: Option<f64>, b: f64) -> bool {
    a.is_some_and(|a| (a - b).abs() < 1e-9 * b.abs().max(1.0))
}

#[test]
fn json_summary_carries_p5_and_p6_with_units() {
    let c = bench_db();
    let j = report_json(&c)
        .unwrap()
        .expect("bench measurements present");
    let d = j.p5_drain.as_ref().expect("P5");
    assert_eq!((d.replayed_windows, d.windows_with_drain), (2, 2));
    assert_eq!(
        (d.drain_total_ns, d.window_total_ns),
        (Some(1200), Some(3100))
    );
    assert!(close(d.drain_share_of_window_fraction, 1200.0 / 3100.0));
    assert!(close(
        d.median_window_drain_share_fraction,
        (800.0 / 2100.0 + 400.0 / 1000.0) / 2.0
    ));
    assert!(close(d.prepass_share_of_window_fraction, 1500.0 / 3100.0));
    let t = j.p6_dispatch_tax.as_ref().expect("P6");
    assert_eq!(
        (t.baseline_measurement_id, t.replay_active_measurement_id),
        (6, 7),
        "the latest baseline"
    );
    assert_eq!(t.dispatches_per_run, Some(4.0));
    assert!(close(t.whole_run_tax_per_dispatch_ns, 2e-6 / 4.0 * 1e9));
    assert!(close(t.in_process_tax_per_dispatch_ns, 50.0));
    assert!(close(t.enqueue_mean_ns_baseline, 100.0));
    let p1 = j.p1_speedup.as_ref().expect("P1");
    assert!(close(p1.speedup_vs_application_replay_factor, 2.0));
    // Per experiment: the latest row of each variant, in experiment order.
    let per: Vec<(Option<&str>, Vec<i64>)> = j
        .experiments
        .iter()
        .map(|e| {
            (
                e.experiment.as_deref(),
                e.measurements.iter().map(|m| m.measurement_id).collect(),
            )
        })
        .collect();
    assert_eq!(
        per,
        vec![
            (Some("P1"), vec![1, 2, 3]),
            (Some("P5"), vec![5]),
            (Some("P6"), vec![6, 7]),
        ]
    );
    assert_eq!(j.experiments[2].measurements[0].linked_runs, 1);
}

#[test]
fn json_has_no_bench_key_without_bench_measurements() {
    let c = crate::db::open_in_memory().unwrap();
    assert!(report_json(&c).unwrap().is_none());
}

/// P6 with the seed's flags (its replay-active row's command lacks `--replay-mode kernel`):
/// with its phase files in rocprofv3's `pass_<n>` directories rocprofv3 ran application replay
/// and the tax is no figure (INVALID in the text, null with `valid: false` in the JSON); with
/// its several groups in one launch (a `--rocprofv3` wrapper added `--replay-mode kernel`) the
/// tax is reported, with the inference said; with the flag in the command, too.
#[test]
fn p6_tax_follows_how_rocprofv3_ran_the_replay_active_row() {
    let c = bench_db();
    c.execute_batch(
        "UPDATE krphase_measurement SET mode = 'kernel-replay', command = \
         'rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled --kernel-include-regex x \
         -d w/p6-filtered -- app' WHERE id = 7;
         UPDATE krphase_run SET path = 'w/p6-filtered/pass_1/k-1.krp' WHERE id = 3;",
    )
    .unwrap();
    let text = render(&c).unwrap();
    assert!(
        text.contains("P6  non-replayed dispatch tax INVALID"),
        "{text}"
    );
    assert!(!text.contains("/dispatch over whole runs"), "{text}");
    let t = report_json(&c).unwrap().unwrap().p6_dispatch_tax.unwrap();
    assert!(!t.valid);
    assert!(t.invalid_reason.unwrap().contains("application replay"));
    assert_eq!(
        (
            t.whole_run_tax_per_dispatch_ns,
            t.in_process_tax_per_dispatch_ns
        ),
        (None, None)
    );
    // The same command, its two groups in one launch: kernel replay mode, the tax reported.
    c.execute(
        "UPDATE krphase_run SET path = 'w/p6-filtered/k-1.krp' WHERE id = 3",
        [],
    )
    .unwrap();
    let text = render(&c).unwrap();
    assert!(text.contains("/dispatch over whole runs"), "{text}");
    let t = report_json(&c).unwrap().unwrap().p6_dispatch_tax.unwrap();
    assert!(t.valid && t.whole_run_tax_per_dispatch_ns.is_some());
    let m = read_measurements(&c, &MeasurementFilter::Id(7)).unwrap();
    assert!(
        m[0].caveat()
            .unwrap()
            .contains("replay configured, inferred"),
        "{:?}",
        m[0].caveat()
    );
    // With replay configured in the command the same rows give the figure.
    c.execute(
        "UPDATE krphase_measurement SET command = 'rocprofv3 --pmc A --pmc B --replay-mode \
         kernel --kernel-replay-beta-enabled -d w -- app' WHERE id = 7",
        [],
    )
    .unwrap();
    let t = report_json(&c).unwrap().unwrap().p6_dispatch_tax.unwrap();
    assert!(t.valid && t.whole_run_tax_per_dispatch_ns.is_some());
}
