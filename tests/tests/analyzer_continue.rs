//! Drive mode with stuck passes (`--decline pass_drain_stuck`): the analyzer's continue phase and
//! stuck windows, checked by ordering against the emulator's ground truth (no timing goals).

use std::collections::HashMap;

use serde_json::Value;

#[test]
fn continue_phase_and_stuck_windows_agree_with_the_truth() {
    let emu = krphase_tests::run_logged(
        "analyzer-continue",
        &[
            "stream",
            "--elements",
            "16384",
            "--iterations",
            "3",
            "--decline",
            "pass_drain_stuck",
            "--stuck-pass",
            "1",
            "--stuck-windows",
            "2",
            "--drain-timeout-ms",
            "12",
        ],
        &[("KRPHASE_PASSES", "3")],
    );
    emu.krphase(&["import".as_ref(), emu.krp.as_os_str()]);
    let truth = krphase_tests::read_truth(&emu.truth);
    let windows: HashMap<i64, &Value> = truth
        .iter()
        .filter(|t| t["type"] == "window")
        .map(|t| (t["dispatch_id"].as_i64().unwrap(), t))
        .collect();
    let stuck_truth = windows
        .values()
        .filter(|t| t["reason"] == "pass_drain_stuck")
        .count();
    let replayed_truth = windows
        .values()
        .filter(|t| t["outcome"] == "replayed")
        .count();
    assert_eq!(stuck_truth, 2, "the emulator stuck two windows");

    // From the file alone: stuck windows are declined pass_drain_stuck and counted.
    let r = &emu.report_run();
    assert_eq!(r["windows"]["stuck"].as_u64(), Some(stuck_truth as u64));
    assert_eq!(
        r["windows"]["replayed"].as_u64(),
        Some(replayed_truth as u64)
    );
    assert_eq!(
        r["declines_by_reason"]["pass_drain_stuck"].as_u64(),
        Some(stuck_truth as u64)
    );
    let cont = krphase_tests::report_phase(r, "continue");
    assert_eq!(cont["samples"].as_u64(), Some(replayed_truth as u64));

    // Joining the log keeps the count (the SDK's reason is the same).
    let joined = emu.krphase(&["import-log".as_ref(), emu.log.as_os_str()]);
    assert!(joined.contains("joined to run 1"), "{joined}");

    // Per pass, by ordering against the emulator's call sites: PASS EXIT (truth) <= the tool's
    // PASS EXIT <= its continue return <= the emulator's continue return; the restore then runs
    // to the tool's next PASS ENTER, after the emulator's. A stuck pass starts after the
    // emulator's ENTER and the window ends after the emulator's CONFIG EXIT.
    let c = rusqlite::Connection::open(emu.db()).unwrap();
    let mut stmt = c
        .prepare(
            "SELECT w.dispatch_id, w.outcome, w.executed_passes, w.\"end\", w.stuck_ns,
                    p.pass_index, p.\"start\", p.\"end\", p.incomplete, p.continue_ns,
                    p.restore_start, p.restore_end
             FROM krphase_pass p JOIN krphase_window w ON w.id = p.window_id
             ORDER BY w.id, p.pass_index",
        )
        .unwrap();
    let mut rows = stmt.query([]).unwrap();
    let (mut continues, mut incomplete) = (0, 0);
    while let Some(row) = rows.next().unwrap() {
        let d: i64 = row.get(0).unwrap();
        let t = windows[&d];
        let idx: usize = row.get::<_, i64>(5).unwrap() as usize;
        let tp = &t["passes"][idx];
        let (enter, exit): (i64, Option<i64>) = (row.get(6).unwrap(), row.get(7).unwrap());
        assert!(
            enter >= tp["enter"].as_i64().unwrap(),
            "dispatch {d} pass {idx}"
        );
        if row.get::<_, i64>(8).unwrap() == 1 {
            incomplete += 1;
            assert_eq!(t["reason"], "pass_drain_stuck");
            assert!(exit.is_none() && tp["exit"].is_null());
            let outcome: String = row.get(1).unwrap();
            assert_eq!(outcome, "declined");
            let executed: i64 = row.get(2).unwrap();
            assert_eq!(Some(executed), t["executed_passes"].as_i64());
            let end: i64 = row.get(3).unwrap();
            assert!(end >= t["config_exit"].as_i64().unwrap());
            let stuck: i64 = row.get(4).unwrap();
            assert_eq!(stuck, end - enter);
            continue;
        }
        let exit = exit.unwrap();
        assert!(exit >= tp["exit"].as_i64().unwrap());
        if let Some(cn) = row.get::<_, Option<i64>>(9).unwrap() {
            continues += 1;
            let ret = exit + cn;
            assert!(cn >= 0 && ret <= tp["continue"]["end"].as_i64().unwrap());
            let (rs, re): (i64, i64) = (row.get(10).unwrap(), row.get(11).unwrap());
            assert_eq!(rs, ret, "the restore starts at the continue return");
            assert!(re >= t["passes"][idx + 1]["enter"].as_i64().unwrap());
        }
    }
    assert_eq!(incomplete, stuck_truth);
    // Every gap between two passes has its continue phase (2 per replayed window, 1 per stuck
    // window that reached pass 1).
    assert_eq!(continues, 2 * replayed_truth + stuck_truth);
}
