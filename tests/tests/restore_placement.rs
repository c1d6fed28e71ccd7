//! Restores where they happen: with a device-side snapshot (`--restore-order device`, and every
//! `--sdk-build` with `device-side`) each restore runs after the next PASS ENTER, ahead of the
//! pass's kernel. Through the emulator and the real `libkrphase.so`, with the SDK log joined,
//! the report splits such a pass: restore = the log's `restore_seconds` (within its 100 µs
//! resolution of the truth's copies), pass exec = the rest (within that and 5 % of the pass, the
//! in-process measurement's own jitter, of the truth's pass time minus the copies inside it),
//! and no finding calls the restore host work. Without a log the
//! pass keeps the restore and the report says so. The host order (the default) is unchanged.

use std::collections::BTreeMap;
use std::path::Path;

use krphase_tests::{LoggedRun, read_truth, run_logged};
use serde_json::Value;

/// The log's resolution: `restore_seconds` has 4 decimals.
const RESOLUTION_NS: i64 = 100_000;

/// A drive-mode saxpy run of 3 windows × 3 passes (two restores each) with `extra` options.
fn saxpy(name: &str, extra: &[&str]) -> LoggedRun {
    let mut args = vec!["saxpy", "--elements", "1048576", "--iterations", "3"];
    args.extend_from_slice(extra);
    run_logged(name, &args, &[("KRPHASE_PASSES", "3")])
}

/// One replayed window as the `krphase_window_phase` view gives it.
#[derive(Debug)]
struct Row {
    dispatch_id: u64,
    pass_ns: Option<i64>,
    pass_basis: Option<String>,
    restore_ns: Option<i64>,
    restore_basis: Option<String>,
    placement: Option<String>,
}

fn rows(db: &Path) -> Vec<Row> {
    let c = rusqlite::Connection::open(db).expect("open the database");
    let mut s = c
        .prepare(
            "SELECT dispatch_id, pass_ns, pass_basis, restore_ns, restore_basis, restore_placement
             FROM krphase_window_phase WHERE outcome = 'replayed' ORDER BY window_id",
        )
        .expect("the view has the columns");
    s.query_map([], |r| {
        Ok(Row {
            dispatch_id: r.get::<_, i64>(0)? as u64,
            pass_ns: r.get(1)?,
            pass_basis: r.get(2)?,
            restore_ns: r.get(3)?,
            restore_basis: r.get(4)?,
            placement: r.get(5)?,
        })
    })
    .unwrap()
    .collect::<rusqlite::Result<_>>()
    .unwrap()
}

/// The truth's replayed windows by dispatch id.
fn truth_windows(run: &LoggedRun) -> BTreeMap<u64, Value> {
    read_truth(&run.truth)
        .into_iter()
        .filter(|v| v["type"] == "window" && v["outcome"] == "replayed")
        .map(|v| (v["dispatch_id"].as_u64().unwrap(), v))
        .collect()
}

/// A true phase of a window, ns.
fn truth_ns(w: &Value, phase: &str) -> i64 {
    w["phase_ns"][phase]
        .as_i64()
        .unwrap_or_else(|| panic!("{phase}: {w}"))
}

/// Every restore of every window ran where `placement` says (the emulator's truth).
fn truth_placed(truth: &BTreeMap<u64, Value>, placement: &str) {
    assert!(!truth.is_empty());
    for w in truth.values() {
        let restores = w["restores"].as_array().unwrap();
        assert_eq!(restores.len(), 2, "{w}");
        assert!(restores.iter().all(|r| r["placement"] == placement), "{w}");
    }
}

/// `text` with each run of white space (the report's wrapping) as one space.
fn words(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The findings' sentences of the run's report.
fn findings(run: &LoggedRun) -> Vec<String> {
    let report: Value =
        serde_json::from_str(&run.krphase(&["report", "--format", "json"])).unwrap();
    report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| f["text"].as_str().unwrap().to_string())
        .collect()
}

/// The split, window by window against the truth, the report's line, and the findings.
fn assert_split(run: &LoggedRun) {
    run.krphase(&["import".as_ref(), run.krp.as_os_str()]);
    run.krphase(&["import-log".as_ref(), run.log.as_os_str()]);
    let truth = truth_windows(run);
    truth_placed(&truth, "in_pass");
    let rows = rows(&run.db());
    assert_eq!(rows.len(), truth.len(), "{rows:?}");
    for r in &rows {
        let w = &truth[&r.dispatch_id];
        assert_eq!(r.placement.as_deref(), Some("in_pass"), "{r:?}");
        assert_eq!(r.restore_basis.as_deref(), Some("sdk_log"), "{r:?}");
        assert_eq!(
            r.pass_basis.as_deref(),
            Some("in_process_minus_sdk_log"),
            "{r:?}"
        );
        let restore = truth_ns(w, "restore_copy");
        assert!(
            restore > 4 * RESOLUTION_NS,
            "a restore worth splitting: {w}"
        );
        let got = r.restore_ns.expect("restore from the log");
        assert!(
            (got - restore).abs() <= RESOLUTION_NS,
            "restore {got} ns vs the truth's {restore} ns: {r:?}"
        );
        let pass = truth_ns(w, "pass_exec") - truth_ns(w, "restore_in_pass");
        let got = r.pass_ns.expect("pass exec");
        // The pass is measured in process, where the application's threads can be preempted
        // between the emulator's own clock reads and the callbacks' (187 µs seen under a
        // parallel test run): the log's resolution plus 5 % of the pass, still far below the
        // restores a missing split would leave in (here a third of the pass).
        let slack = RESOLUTION_NS + truth_ns(w, "pass_exec") / 20;
        assert!(
            (got - pass).abs() <= slack,
            "pass exec {got} ns vs the truth's {pass} ns without the restores (± {slack}): {r:?}"
        );
        assert!(
            truth_ns(w, "restore_in_pass") > 2 * slack,
            "restores a missing split would leave in must exceed the slack: {w}"
        );
    }
    let text = words(&run.krphase(&["report"]));
    assert!(
        text.contains("restores ran inside the passes") && text.contains("pass exec excludes"),
        "{text}"
    );
    for f in findings(run) {
        assert!(
            !f.contains("host work")
                || f.contains("restores that ran inside the passes are taken out"),
            "a finding reads the restore as host work: {f}"
        );
    }
}

#[test]
fn device_restore_order_splits_the_pass_with_the_log() {
    assert_split(&saxpy(
        "restore-device-order",
        &["--restore-order", "device"],
    ));
}

#[test]
fn device_side_build_splits_the_pass_with_the_log() {
    assert_split(&saxpy(
        "restore-device-side",
        &["--sdk-build", "device-side", "--device-gbps", "20"],
    ));
}

/// Without a log the pass keeps its restores: no restore figure, pass exec measured in process
/// (the truth's pass time, restores included), a line that says so, and no finding calls the
/// restore host work.
#[test]
fn without_a_log_the_pass_holds_the_restore() {
    let run = saxpy("restore-device-nolog", &["--restore-order", "device"]);
    run.krphase(&["import".as_ref(), run.krp.as_os_str()]);
    let truth = truth_windows(&run);
    truth_placed(&truth, "in_pass");
    for r in rows(&run.db()) {
        let w = &truth[&r.dispatch_id];
        assert_eq!(r.placement.as_deref(), Some("in_pass"), "{r:?}");
        assert_eq!(
            (r.restore_ns, r.restore_basis.as_deref()),
            (None, None),
            "{r:?}"
        );
        assert_eq!(r.pass_basis.as_deref(), Some("in_process"), "{r:?}");
        let pass = truth_ns(w, "pass_exec");
        let got = r.pass_ns.unwrap();
        assert!(
            (got - pass).abs() <= RESOLUTION_NS,
            "{got} vs {pass}: {r:?}"
        );
    }
    let text = words(&run.krphase(&["report"]));
    assert!(
        text.contains("restores ran inside the passes")
            && text.contains("pass exec holds the restores of 3 windows"),
        "{text}"
    );
    for f in findings(&run) {
        assert!(!f.contains("is host work"), "{f}");
    }
}

/// The host order (the published SDK's, the default): restores between passes, measured in
/// process, pass exec whole, no line about restores inside passes.
#[test]
fn host_restore_order_is_unchanged() {
    let run = saxpy("restore-host-order", &[]);
    run.krphase(&["import".as_ref(), run.krp.as_os_str()]);
    run.krphase(&["import-log".as_ref(), run.log.as_os_str()]);
    let truth = truth_windows(&run);
    truth_placed(&truth, "between_passes");
    for r in rows(&run.db()) {
        let w = &truth[&r.dispatch_id];
        assert_eq!(r.placement.as_deref(), Some("between_passes"), "{r:?}");
        assert_eq!(r.restore_basis.as_deref(), Some("in_process"), "{r:?}");
        assert_eq!(r.pass_basis.as_deref(), Some("in_process"), "{r:?}");
        let gap = truth_ns(w, "restore");
        let got = r.restore_ns.unwrap();
        assert!((got - gap).abs() <= RESOLUTION_NS, "{got} vs {gap}: {r:?}");
    }
    let text = words(&run.krphase(&["report"]));
    assert!(!text.contains("restores ran inside the passes"), "{text}");
}
