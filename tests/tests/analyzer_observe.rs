//! An observe-mode run (the emulator's rocprofv3-like client owns replay, the tool only watches):
//! import, join the SDK log, and check the report against the emulator's ground truth.

use serde_json::Value;

#[test]
fn observe_mode_windows_match_the_truth() {
    let emu = krphase_tests::run_logged(
        "analyzer-observe",
        &[
            "saxpy",
            "--elements",
            "65536",
            "--iterations",
            "6",
            "--driver-passes",
            "3",
        ],
        &[],
    );
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let joined = emu.krphase(&["import-log".as_ref(), emu.log.as_os_str()]);
    assert!(joined.contains("joined to run 1"), "{joined}");
    let r = &emu.report_run();
    let truth = krphase_tests::read_truth(&emu.truth);
    let replayed: Vec<&Value> = truth
        .iter()
        .filter(|t| t["type"] == "window" && t["outcome"] == "replayed")
        .collect();
    assert_eq!(r["mode"], "observe");
    assert_eq!(
        r["windows"]["replayed"].as_u64().unwrap(),
        replayed.len() as u64
    );
    assert_eq!(r["passes_per_window"].as_f64(), Some(3.0));
    let restores = krphase_tests::report_phase(r, "restore");
    assert_eq!(restores["samples"].as_u64().unwrap(), replayed.len() as u64);
    // The snapshot comes from the joined log; bytes agree with the truth.
    let bytes: i64 = replayed
        .iter()
        .map(|t| t["snapshot"]["bytes"].as_i64().unwrap())
        .sum();
    assert_eq!(r["bytes"]["snapshot_bytes_total"].as_i64().unwrap(), bytes);
    assert!(r["log_joined"].as_bool().unwrap());
}

/// Quantile `q` of `v` (linear interpolation between order statistics, as the report's).
fn quantile(v: &mut [i64], q: f64) -> i64 {
    v.sort_unstable();
    let k = (v.len() - 1) as f64 * q;
    let (lo, hi) = (k.floor() as usize, k.ceil() as usize);
    (v[lo] as f64 + (v[hi] - v[lo]) as f64 * (k - lo as f64)).round() as i64
}

/// The truth's interval `v` in ns.
fn dur(v: &Value) -> i64 {
    v["end"].as_i64().unwrap() - v["start"].as_i64().unwrap()
}

/// Errors (figure − truth) of one observe-mode phase, by workload.
type Errors = std::collections::BTreeMap<(&'static str, &'static str), Vec<i64>>;

/// One observe-mode run (driver `order`; with the emulator's guessed SDK phase line when
/// `phase_line`): every bound holds against the truth, the SDK log's restore and snapshot agree
/// with it within their printed resolution; adds (gap − true restore) and each phase's error to
/// `errors`.
fn check_observe_run(
    workload: &'static str,
    args: &[&str],
    order: &str,
    phase_line: bool,
    errors: &mut Errors,
) {
    let mut all = vec![workload];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--driver-passes", "3", "--driver-order", order]);
    if phase_line {
        all.push("--phase-line");
    }
    let emu = krphase_tests::run_logged(
        &format!("observe-bounds-{workload}-{order}-{phase_line}"),
        &all,
        &[],
    );
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    emu.krphase(&["import-log".as_ref(), emu.log.as_os_str()]);
    let truth = krphase_tests::read_truth(&emu.truth);
    let by_id: std::collections::HashMap<u64, &Value> = truth
        .iter()
        .filter(|t| t["type"] == "window" && t["outcome"] == "replayed")
        .map(|t| (t["dispatch_id"].as_u64().unwrap(), t))
        .collect();
    let c = rusqlite::Connection::open(emu.db()).unwrap();
    let mut gaps = c
        .prepare(
            "SELECT w.dispatch_id, p.pass_index, p.complete_host, p.restore_start, p.restore_end
             FROM krphase_pass p JOIN krphase_window w ON w.id = p.window_id
             WHERE w.outcome = 'replayed' ORDER BY w.dispatch_id, p.pass_index",
        )
        .unwrap();
    type Gap = (u64, u64, Option<i64>, Option<i64>, Option<i64>);
    let rows: Vec<Gap> = gaps
        .query_map([], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(rows.len(), 3 * by_id.len(), "3 passes per window");
    let mut n_gaps = 0;
    for (d, i, host, start, end) in rows {
        let t = by_id[&d];
        assert!(
            host.is_some(),
            "dispatch {d} pass {i}: no COMPLETE host time"
        );
        let Some(r) = t["restores"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["after_pass"] == i)
        else {
            assert!(start.is_none(), "dispatch {d}: a gap after the last pass");
            continue;
        };
        let (s, e) = (start.unwrap(), end.unwrap());
        // The gap contains the restore: it starts before the restore starts, ends after it ends.
        assert_eq!(
            Some(s),
            host,
            "dispatch {d} pass {i}: the gap starts at the completion"
        );
        assert!(
            s <= r["start"].as_i64().unwrap(),
            "dispatch {d} pass {i}: {s} > {r}"
        );
        assert!(
            e >= r["end"].as_i64().unwrap(),
            "dispatch {d} pass {i}: {e} < {r}"
        );
        errors
            .entry(("gap − true restore (per gap)", workload))
            .or_default()
            .push(e - s - dur(r));
        n_gaps += 1;
    }
    assert_eq!(n_gaps, 2 * by_id.len());
    let mut rows = c
        .prepare(
            "SELECT dispatch_id, restore_ns, restore_bound_ns, restore_basis, restore_bound_basis,
                    window_ns, prepass_ns, snapshot_ns, gpu_ns
             FROM krphase_window_phase WHERE outcome = 'replayed'",
        )
        .unwrap();
    let rows: Vec<Row> = rows
        .query_map([], |r| {
            Ok((
                r.get(0)?,
                r.get(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
                r.get(7)?,
                r.get(8)?,
            ))
        })
        .unwrap()
        .collect::<rusqlite::Result<_>>()
        .unwrap();
    assert_eq!(rows.len(), by_id.len());
    for row in rows {
        let add = |phase, err| errors.entry((phase, workload)).or_default().push(err);
        check_observe_window(by_id[&row.0], row, phase_line, add);
    }
}

/// One window's figures: dispatch id, restore, restore bound, their bases, window, pre-pass,
/// snapshot, gpu.
type Row = (u64, i64, i64, String, String, i64, Option<i64>, i64, i64);

/// One window's observe-mode figures against its truth `t`: the restore bound holds, the SDK
/// log's restore and snapshot are within half their 100 us resolution; without a phase line the
/// window is the passes' span (inside CONFIG ENTER to EXIT) and the pre-pass is unavailable,
/// with it both come from the line.
fn check_observe_window(
    t: &Value,
    (d, restore, bound, rb, bb, window, prepass, snapshot, gpu): Row,
    phase_line: bool,
    mut add: impl FnMut(&'static str, i64),
) {
    let true_restore: i64 = t["restores"].as_array().unwrap().iter().map(dur).sum();
    assert_eq!((rb.as_str(), bb.as_str()), ("sdk_log", "dispatch"));
    assert!(
        bound >= true_restore,
        "dispatch {d}: bound {bound} < {true_restore}"
    );
    // restore_seconds and snap_seconds are printed with 4 decimals: within half of 100 us (+1 ns
    // of parsing).
    assert!(
        (restore - true_restore).abs() <= 50_001,
        "dispatch {d}: SDK-log restore {restore} vs true {true_restore}"
    );
    let ns = |k: &str| t[k].as_i64().unwrap();
    let passes = t["passes"].as_array().unwrap();
    let true_gpu: i64 = passes
        .iter()
        .map(|p| p["gpu_end"].as_i64().unwrap() - p["gpu_start"].as_i64().unwrap())
        .sum();
    let true_prepass = passes[0]["enter"].as_i64().unwrap() - ns("pass_count_return");
    let true_snapshot = dur(&t["snapshot"]);
    let true_window = ns("config_exit") - ns("config_enter");
    add("restore (L)", restore - true_restore);
    add("restore bound (D)", bound - true_restore);
    add("gpu (M)", gpu - true_gpu);
    if phase_line {
        add("window (P)", window - true_window);
        let prepass = prepass.expect("the phase line's pre-pass");
        add("pre-pass (P)", prepass - true_prepass);
        add("snapshot (P)", snapshot - true_snapshot);
        return;
    }
    // What a published SDK prints: snap_seconds, no pre-pass; the window is the passes' span
    // (pass 0's enqueue to the last completion callback), which lies inside CONFIG ENTER to
    // EXIT and holds every pass's kernel.
    assert!(
        prepass.is_none(),
        "dispatch {d}: no pre-pass without a phase line"
    );
    assert!(
        (snapshot - true_snapshot).abs() <= 50_001,
        "dispatch {d}: snap_seconds {snapshot} vs true {true_snapshot}"
    );
    add("snapshot (L)", snapshot - true_snapshot);
    assert!(
        true_gpu <= window && window < true_window,
        "dispatch {d}: span {window} vs gpu {true_gpu} and window {true_window}"
    );
    let span =
        passes.last().unwrap()["gpu_end"].as_i64().unwrap() - passes[0]["enter"].as_i64().unwrap();
    add("window (D) − PASS 0 ENTER..last GPU end", window - span);
}

/// Observe mode under the emulator's rocprofv3-like driver, registered first and last, with the
/// log lines a published SDK prints: per window, every dispatch-record gap contains the SDK's
/// restore, the restore bound is at least the true restore, and the SDK log's restore and
/// snapshot agree with the truth within their resolution. Prints the error table (median, p99)
/// of docs/observe-mode.md.
#[test]
fn observe_mode_bounds_hold_per_window_driver_first_and_last() {
    let mut errors = Errors::new();
    for order in ["first", "last"] {
        check_observe_run(
            "saxpy",
            &["--elements", "65536", "--iterations", "10"],
            order,
            false,
            &mut errors,
        );
        check_observe_run(
            "stream",
            &["--elements", "262144", "--iterations", "2"],
            order,
            false,
            &mut errors,
        );
    }
    print_errors(&mut errors);
}

/// The same with the emulator's guessed SDK phase line on (`--phase-line`, a line no published
/// SDK prints): the window, pre-pass and snapshot then come from it (basis P).
#[test]
fn observe_mode_with_the_guessed_phase_line() {
    let mut errors = Errors::new();
    check_observe_run(
        "saxpy",
        &["--elements", "65536", "--iterations", "10"],
        "first",
        true,
        &mut errors,
    );
    print_errors(&mut errors);
}

/// Prints the error table (median, p99 per figure and workload).
fn print_errors(errors: &mut Errors) {
    eprintln!("| figure | workload | n | median error | p99 error |\n|---|---|---|---|---|");
    for ((phase, workload), v) in errors.iter_mut() {
        let n = v.len();
        let (m, p99) = (quantile(v, 0.5), quantile(v, 0.99));
        eprintln!(
            "| {phase} | {workload} | {n} | {:.1} µs | {:.1} µs |",
            m as f64 / 1e3,
            p99 as f64 / 1e3
        );
    }
}
