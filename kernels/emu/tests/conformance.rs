//! Conformance of the emulated SDK to the SDK's kernel replay rules (`docs/emulator.md`), checked
//! through the C ABI by the krphase-probe tool (loaded via ROCP_TOOL_LIBRARIES) and against the
//! emulator's ground truth (KRPHASE_EMU_TRUTH). One test per rule.

use krphase_tests::{artifacts, output_text, read_truth_if_any, scratch_dir};
use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

/// One emulator run with the probe.
struct Run {
    out: Output,
    probe: Value,
    truth: Vec<Value>,
}

impl Run {
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    fn ok(&self) -> &Self {
        assert!(
            self.out.status.success(),
            "emulator failed: {}",
            output_text(&self.out)
        );
        self
    }
    fn result_line(&self) -> String {
        self.stdout().lines().last().unwrap_or("").to_string()
    }
    fn list(&self, key: &str) -> Vec<Value> {
        self.probe
            .get(key)
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default()
    }
    /// Probe records of list `key` for one dispatch.
    fn list_of(&self, key: &str, dispatch: u64) -> Vec<Value> {
        self.list(key)
            .into_iter()
            .filter(|r| r["dispatch_id"] == dispatch)
            .collect()
    }
    /// Field `field` of every record of list `key` for one dispatch.
    fn field_of(&self, key: &str, dispatch: u64, field: &str) -> Vec<u64> {
        self.list_of(key, dispatch)
            .iter()
            .map(|r| r[field].as_u64().expect("numeric field"))
            .collect()
    }
    /// Probe replay records for one dispatch.
    fn replay_of(&self, dispatch: u64) -> Vec<Value> {
        self.list_of("replay", dispatch)
    }
    /// One dispatch's replay callbacks in order, as `op-phase` (`config-enter`, `pass-exit`, ...).
    fn callback_sequence(&self, dispatch: u64) -> Vec<String> {
        self.replay_of(dispatch)
            .iter()
            .map(|x| {
                format!(
                    "{}-{}",
                    x["op"].as_str().unwrap(),
                    x["phase"].as_str().unwrap()
                )
            })
            .collect()
    }
    fn replay(&self, op: &str, phase: &str) -> Vec<Value> {
        self.list("replay")
            .into_iter()
            .filter(|r| r["op"] == op && r["phase"] == phase)
            .collect()
    }
    fn truth_of(&self, ty: &str) -> Vec<Value> {
        self.truth
            .iter()
            .filter(|t| t["type"] == ty)
            .cloned()
            .collect()
    }
    fn completes(&self, dispatch: u64) -> Vec<Value> {
        self.list_of("dispatch", dispatch)
            .into_iter()
            .filter(|d| d["op"] == "complete")
            .collect()
    }
}

fn run_emu(name: &str, probe_env: &[(&str, &str)], emu_args: &[&str], with_probe: bool) -> Run {
    let a = artifacts();
    let dir = scratch_dir(&format!("conformance-{name}"));
    let probe_out: PathBuf = dir.join("probe.json");
    let truth: PathBuf = dir.join("truth.jsonl");
    let mut cmd = Command::new(&a.emu);
    cmd.arg("run").args(emu_args);
    cmd.env("KRPHASE_EMU_TRUTH", &truth)
        .env("PROBE_OUT", &probe_out)
        .env("ROCPROFILER_LOG_LEVEL", "info");
    for k in [
        "KRPHASE_EMU_DRIVER_PASSES",
        "KRPHASE_EMU_DRIVER_ORDER",
        "KRPHASE_EMU_DRIVER_FILTER",
        "KRPHASE_EMU_SDK_BUILD",
        "KRPHASE_EMU_DEVICE_GBPS",
        "ROCP_TOOL_LIBRARIES",
    ] {
        cmd.env_remove(k);
    }
    if with_probe {
        cmd.env("ROCP_TOOL_LIBRARIES", &a.probe_lib);
    }
    for (k, v) in probe_env {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run krphase-emu");
    let probe = std::fs::read_to_string(&probe_out)
        .ok()
        .and_then(|s| serde_json::from_str(&s).ok())
        .unwrap_or(Value::Null);
    // A run that fails before the emulator opens the truth file leaves none.
    let truth = read_truth_if_any(&truth);
    Run { out, probe, truth }
}

fn probe(name: &str, scenario: &str, extra: &[(&str, &str)], emu_args: &[&str]) -> Run {
    let mut env = vec![("PROBE_SCENARIO", scenario)];
    env.extend_from_slice(extra);
    run_emu(name, &env, emu_args, true)
}

const SAXPY2: &[&str] = &["saxpy", "--elements", "64", "--iterations", "2"];
/// The names the SDK reports for saxpy and stream_triad (their descriptor symbols), which the
/// probe's `PROBE_KERNEL` is compared with.
const SAXPY_SYMBOL: &str = krphase_kernels::KERNEL_SYMBOLS[5].1;
const TRIAD_SYMBOL: &str = krphase_kernels::KERNEL_SYMBOLS[3].1;

/// `krphase-emu run` arguments: `WORKLOAD --elements N --iterations N EXTRA...`.
fn workload_args<'a>(
    workload: &'a str,
    elements: &'a str,
    iterations: &'a str,
    extra: &[&'a str],
) -> Vec<&'a str> {
    let mut args = vec![workload, "--elements", elements, "--iterations", iterations];
    args.extend_from_slice(extra);
    args
}

/// Dispatch ids that got a CONFIG ENTER.
fn config_dispatches(r: &Run) -> Vec<u64> {
    r.replay("config", "enter")
        .iter()
        .map(|c| c["dispatch_id"].as_u64().expect("id"))
        .collect()
}

fn passes_of(r: &Run, d: u64, phase: &str) -> Vec<Value> {
    r.replay_of(d)
        .into_iter()
        .filter(|x| x["op"] == "pass" && x["phase"] == phase)
        .collect()
}

#[test]
fn fixed_pass_count_runs_n_passes_between_one_config_pair() {
    let r = probe("fixed", "basic", &[("PROBE_PASSES", "3")], SAXPY2);
    r.ok();
    let ds = config_dispatches(&r);
    assert_eq!(ds.len(), 2);
    for d in ds {
        let seq = r.callback_sequence(d);
        let mut want = vec!["config-enter".to_string()];
        for _ in 0..3 {
            want.push("pass-enter".into());
            want.push("pass-exit".into());
        }
        want.push("config-exit".into());
        assert_eq!(seq, want, "callback order of dispatch {d}");
        let enters = passes_of(&r, d, "enter");
        let current: Vec<u64> = enters
            .iter()
            .map(|p| p["current_pass"].as_u64().unwrap())
            .collect();
        assert_eq!(current, vec![0, 1, 2]);
        assert!(enters.iter().all(|p| p["total_passes"] == 3));
        assert!(
            enters.iter().all(|p| p["pass_count_slot"] == 0),
            "replay_pass_count reads NULL during PASS"
        );
    }
    let windows = r.truth_of("window");
    assert_eq!(windows.len(), 2);
    for w in &windows {
        assert_eq!(w["outcome"], "replayed");
        assert_eq!(w["requested_passes"], 3);
        assert_eq!(w["executed_passes"], 3);
        assert_eq!(
            w["restores"].as_array().unwrap().len(),
            2,
            "no restore after the last pass"
        );
    }
    assert_eq!(r.stderr().matches("outcome=replayed").count(), 2);
}

/// A dispatch that got CONFIG ENTER then EXIT at once and ran once, not replayed.
fn assert_config_without_passes(r: &Run, d: u64, what: &str) {
    assert_eq!(
        r.callback_sequence(d),
        vec!["config-enter", "config-exit"],
        "{what}: CONFIG EXIT at once, no PASS"
    );
    assert_eq!(
        r.completes(d).len(),
        1,
        "{what}: the dispatch runs once with the reserved id"
    );
}

fn assert_opt_out(name: &str, scenario: &str, reason: &str, pass_count_calls: usize) {
    let r = probe(name, scenario, &[], SAXPY2);
    r.ok();
    let ds = config_dispatches(&r);
    assert_eq!(ds.len(), 2);
    for d in &ds {
        assert_config_without_passes(&r, *d, scenario);
    }
    assert_eq!(r.list("pass_count").len(), pass_count_calls);
    let declines = r.truth_of("decline");
    assert_eq!(declines.len(), 2);
    for t in &declines {
        assert_eq!(t["reason"], reason);
        assert_eq!(t["config"], true);
        assert!(t["config_enter"].as_u64().unwrap() <= t["config_exit"].as_u64().unwrap());
    }
    assert!(
        r.truth_of("window").is_empty(),
        "{scenario}: no window (no lock, drain or snapshot)"
    );
    assert!(
        !r.stderr().contains("[kernel-replay]"),
        "{scenario}: no outcome line for an opt-out"
    );
}

#[test]
fn null_pass_count_opts_out() {
    assert_opt_out("count-null", "count-null", "opt_out", 0);
}

#[test]
fn pass_count_one_opts_out() {
    assert_opt_out("count-1", "count-1", "pass_count_1", 2);
}

#[test]
fn pass_count_zero_without_continue_opts_out_with_warning() {
    assert_opt_out(
        "zero-no-continue",
        "zero-no-continue",
        "zero_without_continue",
        2,
    );
    let r = probe("zero-no-continue-log", "zero-no-continue", &[], SAXPY2);
    assert_eq!(
        r.stderr()
            .lines()
            .filter(|l| l.starts_with('W') && l.contains("returned 0 without a replay_continue"))
            .count(),
        2
    );
}

#[test]
fn indefinite_loop_consults_continue_after_every_pass() {
    let r = probe(
        "indefinite",
        "indefinite",
        &[("PROBE_STOP_AFTER", "3")],
        SAXPY2,
    );
    r.ok();
    for d in config_dispatches(&r) {
        let enters = passes_of(&r, d, "enter");
        assert_eq!(enters.len(), 3);
        assert!(
            enters.iter().all(|p| p["total_passes"] == 0),
            "total_passes is 0 in an indefinite loop"
        );
        let conts = r.field_of("continue", d, "current_pass");
        assert_eq!(
            conts,
            vec![0, 1, 2],
            "continue after every pass, including the last"
        );
    }
    for w in r.truth_of("window") {
        assert_eq!(w["requested_passes"], 0);
        assert_eq!(w["executed_passes"], 3);
    }
    assert!(r.stderr().contains("requested_passes=0 executed_passes=3"));
}

#[test]
fn fixed_loop_never_consults_continue_after_last_pass() {
    let r = probe(
        "no-continue-after-last",
        "user-data-value",
        &[("PROBE_PASSES", "4")],
        SAXPY2,
    );
    r.ok();
    for d in config_dispatches(&r) {
        let conts = r.field_of("continue", d, "current_pass");
        assert_eq!(
            conts,
            vec![0, 1, 2],
            "continue sees current_pass 0..N-2 only"
        );
        assert_eq!(passes_of(&r, d, "enter").len(), 4);
    }
}

#[test]
fn early_exit_stops_fixed_loop() {
    let r = probe("early-exit", "early-exit", &[("PROBE_PASSES", "4")], SAXPY2);
    r.ok();
    for d in config_dispatches(&r) {
        assert_eq!(
            passes_of(&r, d, "enter").len(),
            2,
            "early exit after pass 1"
        );
        assert_eq!(passes_of(&r, d, "exit").len(), 2);
        assert_eq!(
            r.completes(d).len(),
            2,
            "one dispatch record per executed pass"
        );
    }
    for w in r.truth_of("window") {
        assert_eq!(
            (
                w["requested_passes"].as_u64(),
                w["executed_passes"].as_u64()
            ),
            (Some(4), Some(2))
        );
        assert_eq!(w["restores"].as_array().unwrap().len(), 1);
    }
    assert!(
        r.result_line().contains("counter=2"),
        "restores keep saxpy's counter exact: {}",
        r.result_line()
    );
}

/// User data across one window's callbacks under one `replay_continue` contract; returns what
/// each `replay_continue` call received.
fn user_data_scoping(name: &str, contract: Option<&str>) -> Vec<Vec<u64>> {
    let mut args = SAXPY2.to_vec();
    if let Some(c) = contract {
        args.extend_from_slice(&["--continue-user-data", c]);
    }
    let r = probe(name, "user-data-value", &[("PROBE_PASSES", "3")], &args);
    r.ok();
    let mut continues = Vec::new();
    for d in config_dispatches(&r) {
        let recs = r.replay_of(d);
        let ud = |op: &str, ph: &str| -> Vec<u64> {
            recs.iter()
                .filter(|x| x["op"] == op && x["phase"] == ph)
                .map(|x| x["user_data"].as_u64().unwrap())
                .collect()
        };
        assert_eq!(
            ud("pass", "enter"),
            vec![7, 7, 7],
            "each PASS ENTER sees the CONFIG value"
        );
        assert_eq!(
            ud("pass", "exit"),
            vec![1000, 1001, 1002],
            "a write in PASS ENTER is seen by that pass's EXIT"
        );
        assert_eq!(
            ud("config", "exit"),
            vec![7],
            "CONFIG EXIT sees the CONFIG value"
        );
        let pc = r.field_of("pass_count", d, "user_data");
        assert_eq!(
            pc,
            vec![7],
            "replay_pass_count receives the value stored at CONFIG ENTER"
        );
        continues.push(r.field_of("continue", d, "user_data"));
    }
    assert!(!continues.is_empty());
    continues
}

#[test]
fn user_data_is_a_fresh_copy_and_continue_gets_the_config_value_under_the_config_contract() {
    for conts in user_data_scoping("user-data-config", Some("config")) {
        assert_eq!(
            conts,
            vec![7, 7],
            "config contract: replay_continue gets the CONFIG value even after PASS ENTER rewrote the pass's copy"
        );
    }
}

/// The default follows the newest header's text: `replay_continue` gets the pass's own copy.
#[test]
fn user_data_continue_gets_the_pass_copy_by_default_and_under_the_pass_contract() {
    for contract in [None, Some("pass")] {
        for conts in user_data_scoping(&format!("user-data-pass-{contract:?}"), contract) {
            assert_eq!(
                conts,
                vec![1000, 1001],
                "pass contract: replay_continue gets the pass-scoped value"
            );
        }
    }
}

#[test]
fn sample_user_data_behind_a_pointer() {
    let r = probe(
        "user-data-ptr",
        "user-data-ptr",
        &[("PROBE_PASSES", "4")],
        SAXPY2,
    );
    r.ok();
    for d in config_dispatches(&r) {
        let recs = r.replay_of(d);
        let ptr = recs[0]["user_data"].as_u64().unwrap();
        assert_eq!(ptr, 0, "CONFIG ENTER starts with empty user data");
        let rest: Vec<u64> = recs[1..]
            .iter()
            .map(|x| x["user_data"].as_u64().unwrap())
            .collect();
        assert!(
            rest[0] != 0 && rest.iter().all(|u| *u == rest[0]),
            "the pointer reaches CONFIG EXIT and every PASS"
        );
        assert_eq!(
            passes_of(&r, d, "enter").len(),
            2,
            "2 of 4 passes: stop flag set once current_pass >= 1"
        );
    }
}

#[test]
fn toggles_succeed_only_inside_pass_enter() {
    let r = probe("toggles", "toggles", &[("PROBE_PASSES", "3")], SAXPY2);
    r.ok();
    let toggles = r.list("toggle");
    let at = |w: &str| -> Vec<u64> {
        toggles
            .iter()
            .filter(|t| t["where"] == w)
            .map(|t| t["status"].as_u64().unwrap())
            .collect()
    };
    assert!(
        !at("pass_enter").is_empty() && at("pass_enter").iter().all(|s| *s == 0),
        "SUCCESS inside PASS ENTER"
    );
    assert!(
        !at("pass_exit").is_empty() && at("pass_exit").iter().all(|s| *s == 9),
        "CONTEXT_ERROR at PASS EXIT"
    );
    assert!(
        !at("config_exit").is_empty() && at("config_exit").iter().all(|s| *s == 9),
        "CONTEXT_ERROR at CONFIG EXIT"
    );
    for d in config_dispatches(&r) {
        // Pass 1 stops our context locally (kernel-dispatch tracing honours a local stop); pass 2
        // starts it again.
        assert_eq!(
            r.completes(d).len(),
            2,
            "dispatch {d}: pass 1's record suppressed"
        );
    }
}

#[test]
fn second_claim_of_kernel_replay_gets_status_15() {
    let r = probe("claim-twice", "claim-twice", &[], SAXPY2);
    r.ok();
    assert_eq!(r.probe["claim"], 0);
    assert_eq!(r.probe["claim_same_context"], 15);
    assert_eq!(r.probe["claim_other_context"], 15);
    assert_eq!(
        r.probe["other_context_dispatch"], 0,
        "other kinds still configure on the second context"
    );
}

#[test]
fn driver_first_owns_replay_and_the_tool_gets_15() {
    let r = probe(
        "driver-first",
        "basic",
        &[],
        &workload_args(
            "saxpy",
            "64",
            "2",
            &["--driver-passes", "3", "--driver-order", "first"],
        ),
    );
    r.ok();
    assert_eq!(r.probe["claim"], 15);
    assert!(
        r.list("replay").is_empty(),
        "the refused tool gets no CONFIG or PASS callbacks"
    );
    for w in r.truth_of("window") {
        assert_eq!(w["executed_passes"], 3);
    }
    assert_eq!(
        r.list("dispatch")
            .iter()
            .filter(|d| d["op"] == "complete")
            .count(),
        6,
        "3 records per dispatch seen by an observer"
    );
}

#[test]
fn driver_refused_claim_aborts_the_process() {
    let r = probe(
        "driver-last",
        "basic",
        &[],
        &workload_args(
            "saxpy",
            "64",
            "1",
            &["--driver-passes", "3", "--driver-order", "last"],
        ),
    );
    assert!(
        !r.out.status.success(),
        "rocprofv3's tool aborts when its claim is refused"
    );
    assert!(
        r.stderr().contains("KERNEL_REPLAY") && r.stderr().contains("15"),
        "{}",
        r.stderr()
    );
}

#[test]
fn contexts_and_services_only_inside_the_configuration_window() {
    let r = probe("late", "late-configure", &[], SAXPY2);
    r.ok();
    let late = r.list("late");
    assert_eq!(late.len(), 1);
    assert_eq!(late[0]["create_context"], 16);
    assert_eq!(late[0]["configure"], 16);
    assert_eq!(r.probe["init_state_in_initialize"], "InProgress");
}

#[test]
fn same_dispatch_and_correlation_ids_on_every_pass() {
    let r = probe("ids", "basic", &[("PROBE_PASSES", "4")], SAXPY2);
    r.ok();
    for d in config_dispatches(&r) {
        let recs = r.replay_of(d);
        assert_eq!(recs.len(), 10);
        let corr = &recs[0]["correlation_id"];
        let tid = &recs[0]["thread_id"];
        assert!(
            recs.iter()
                .all(|x| &x["correlation_id"] == corr && &x["thread_id"] == tid)
        );
        let completes = r.completes(d);
        assert_eq!(completes.len(), 4, "one COMPLETE per pass");
        assert!(completes.iter().all(|c| &c["correlation_id"] == corr));
        let mut last_end = 0;
        for c in &completes {
            let (s, e) = (c["start"].as_u64().unwrap(), c["end"].as_u64().unwrap());
            assert!(
                s >= last_end && e > s,
                "passes are serialized: timestamp order is pass order"
            );
            last_end = e;
        }
        let enq = r
            .list("dispatch")
            .iter()
            .filter(|x| x["op"] == "enqueue" && x["dispatch_id"] == d)
            .count();
        assert_eq!(enq, 8, "ENQUEUE ENTER and EXIT per pass");
    }
}

#[test]
fn one_application_completion_per_logical_dispatch() {
    // The emulator counts each dispatch's application completions and fails the run unless every
    // one fired exactly once; the truth's result line gives the logical dispatch count.
    for (name, args) in [
        (
            "once-replayed",
            workload_args("queue-depth", "32", "3", &["--depth", "5"]),
        ),
        ("once-graph", workload_args("graph", "32", "2", &[])),
    ] {
        let r = probe(name, "basic", &[("PROBE_PASSES", "3")], &args);
        r.ok();
        let result = r.truth_of("result");
        assert_eq!(result.len(), 1);
        let expected = if name == "once-graph" { 6 } else { 15 };
        assert_eq!(result[0]["dispatches"], expected);
        assert!(r.result_line().contains(" ok "), "{}", r.result_line());
    }
}

fn saxpy_result(name: &str, passes: Option<&str>, order: &str) -> String {
    let mut args = workload_args("saxpy", "4096", "5", &["--restore-order", order]);
    if let Some(p) = passes {
        args.extend(["--driver-passes", p]);
    }
    let r = run_emu(name, &[], &args, false);
    r.ok();
    r.result_line()
}

#[test]
fn saxpy_restore_gives_identical_results_under_2_3_5_passes() {
    let baseline = saxpy_result("saxpy-1", None, "host");
    assert!(
        baseline.starts_with("result saxpy ok") && baseline.contains("counter=5"),
        "{baseline}"
    );
    for order in ["host", "device"] {
        for p in ["2", "3", "5"] {
            assert_eq!(
                saxpy_result(&format!("saxpy-{p}-{order}"), Some(p), order),
                baseline,
                "{p} passes, {order} restore"
            );
        }
    }
}

#[test]
fn restore_order_device_moves_restore_after_pass_enter() {
    for (order, after_enter) in [("host", false), ("device", true)] {
        let r = run_emu(
            &format!("order-{order}"),
            &[],
            &workload_args(
                "saxpy",
                "64",
                "1",
                &["--driver-passes", "3", "--restore-order", order],
            ),
            false,
        );
        r.ok();
        let w = &r.truth_of("window")[0];
        let passes = w["passes"].as_array().unwrap();
        for rs in w["restores"].as_array().unwrap() {
            let i = rs["after_pass"].as_u64().unwrap() as usize;
            let (start, end) = (rs["start"].as_u64().unwrap(), rs["end"].as_u64().unwrap());
            let prev_exit = passes[i]["exit"].as_u64().unwrap();
            let next_enter = passes[i + 1]["enter"].as_u64().unwrap();
            assert!(start >= prev_exit);
            if after_enter {
                assert!(
                    start >= next_enter && end <= passes[i + 1]["gpu_start"].as_u64().unwrap(),
                    "device: after PASS ENTER, ahead of the kernel"
                );
            } else {
                assert!(
                    end <= next_enter,
                    "host: between PASS EXIT and the next PASS ENTER"
                );
            }
        }
    }
}

#[test]
fn graph_and_multi_packet_are_declined_without_config_and_warned_once() {
    for (w, reason, warn) in [
        (
            "graph",
            "graph_launch",
            "HIP graph launches are not supported",
        ),
        (
            "multi-packet",
            "multi_packet",
            "only single-packet dispatch submissions are replayed",
        ),
    ] {
        let r = probe(w, "basic", &[], &workload_args(w, "32", "3", &[]));
        r.ok();
        assert!(r.list("replay").is_empty(), "{w}: no CONFIG at all");
        let declines = r.truth_of("decline");
        assert!(!declines.is_empty());
        assert!(
            declines.iter().all(|d| d["reason"] == reason
                && d["config"] == false
                && d["config_enter"].is_null())
        );
        assert_eq!(r.stderr().matches(warn).count(), 1, "{w}: warned once");
        let ids: std::collections::BTreeSet<u64> = r
            .list("dispatch")
            .iter()
            .map(|d| d["dispatch_id"].as_u64().unwrap())
            .collect();
        assert_eq!(
            ids.len(),
            declines.len(),
            "{w}: a fresh dispatch id per packet"
        );
    }
}

fn assert_sdk_decline(r: &Run, reason: &str) {
    r.ok();
    let ds = config_dispatches(r);
    assert!(!ds.is_empty());
    for d in &ds {
        assert_config_without_passes(r, *d, reason);
    }
    let windows = r.truth_of("window");
    assert_eq!(windows.len(), ds.len());
    for w in &windows {
        assert_eq!(w["outcome"], "declined");
        assert_eq!(w["reason"], reason);
        assert_eq!(w["executed_passes"], 0);
    }
    let warn = r
        .stderr()
        .lines()
        .filter(|l| l.starts_with('W') && l.contains(&format!("outcome=declined reason={reason}")))
        .count();
    assert_eq!(
        warn,
        ds.len(),
        "{reason}: a WARNING outcome line per declined window"
    );
}

#[test]
fn vmem_is_declined_as_untracked_memory() {
    let r = probe("vmem", "basic", &[], &workload_args("vmem", "32", "2", &[]));
    assert_sdk_decline(&r, "untracked_memory");
    assert!(
        r.truth_of("window")
            .iter()
            .all(|w| w["queue_drain"].is_null() && !w["admission"].is_null())
    );
    assert!(
        r.stderr()
            .contains("untracked_vmem_bytes=256 untracked_vmem_regions=1")
    );
}

#[test]
fn forced_sdk_declines_stop_at_their_stage() {
    // (reason, last phase reached, first phase not reached)
    let cases = [
        ("untracked_memory", "admission", "queue_drain"),
        ("footprint_budget", "admission", "queue_drain"),
        ("queue_drain_stuck", "queue_drain", "agent_drain"),
        ("agent_drain_stuck", "agent_drain", "snapshot"),
        ("snapshot_failed", "snapshot", "tail"),
    ];
    for (reason, reached, not_reached) in cases {
        let r = probe(
            &format!("decline-{reason}"),
            "basic",
            &[],
            &workload_args("saxpy", "32", "2", &["--decline", reason]),
        );
        assert_sdk_decline(&r, reason);
        for w in r.truth_of("window") {
            assert!(!w[reached].is_null(), "{reason}: {reached} reached");
            assert!(
                w[not_reached].is_null(),
                "{reason}: {not_reached} not reached"
            );
            assert!(!w["lock_wait"].is_null());
        }
        assert!(
            r.result_line().contains("counter=2"),
            "{reason}: declined dispatches run exactly once"
        );
    }
    let r = probe(
        "budget",
        "basic",
        &[],
        &workload_args("saxpy", "64", "1", &["--footprint-budget", "100"]),
    );
    assert_sdk_decline(&r, "footprint_budget");
}

/// The stuck-pass drain limit the tests use (the SDK waits 60 s).
const STUCK_TIMEOUT_MS: u64 = 50;

/// saxpy with the probe asking for 3 passes and pass `k`'s drain forced stuck.
fn stuck_run(name: &str, k: &str, iterations: &str, extra: &[&str]) -> Run {
    let timeout = STUCK_TIMEOUT_MS.to_string();
    let mut args = vec!["--decline", "pass_drain_stuck", "--stuck-pass", k];
    args.extend_from_slice(&["--drain-timeout-ms", &timeout]);
    args.extend_from_slice(extra);
    probe(
        name,
        "basic",
        &[("PROBE_PASSES", "3")],
        &workload_args("saxpy", "64", iterations, &args),
    )
}

/// One window stuck at pass `k` (case d): PASS ENTER for 0..=k, PASS EXIT for 0..k only, then
/// CONFIG EXIT; the WARNING outcome line; the truth window with the stuck pass's exit null, a
/// restore after each completed pass but none after the stuck one; the stuck kernel still
/// completes once, after CONFIG EXIT.
fn assert_stuck_window(r: &Run, d: u64, k: u64, window: &Value) {
    let mut want = vec!["config-enter".to_string()];
    for i in 0..=k {
        want.push("pass-enter".into());
        if i < k {
            want.push("pass-exit".into());
        }
    }
    want.push("config-exit".into());
    assert_eq!(r.callback_sequence(d), want, "stuck at pass {k}");
    let current: Vec<u64> = passes_of(r, d, "enter")
        .iter()
        .map(|p| p["current_pass"].as_u64().unwrap())
        .collect();
    assert_eq!(current, (0..=k).collect::<Vec<_>>());
    assert_eq!(
        r.completes(d).len() as u64,
        k + 1,
        "the stuck pass's kernel still completes, once"
    );
    let line = format!(
        "[kernel-replay] dispatch_id={d} outcome=declined reason=pass_drain_stuck requested_passes=3 executed_passes={k} "
    );
    let stderr = r.stderr();
    let outcome: Vec<&str> = stderr.lines().filter(|l| l.contains(&line)).collect();
    assert_eq!(outcome.len(), 1, "one outcome line for {d}: {stderr}");
    assert!(outcome[0].starts_with('W'), "WARNING: {}", outcome[0]);

    assert_eq!(window["dispatch_id"], d);
    assert_eq!(window["outcome"], "declined");
    assert_eq!(window["reason"], "pass_drain_stuck");
    assert_eq!(window["requested_passes"], 3);
    assert_eq!(window["executed_passes"], k);
    let passes = window["passes"].as_array().unwrap();
    assert_eq!(passes.len() as u64, k + 1);
    for (i, p) in passes.iter().enumerate() {
        assert_eq!(p["index"], i as u64);
        let stuck = i as u64 == k;
        assert_eq!(
            p["exit"].is_null(),
            stuck,
            "pass {i}: exit null only when stuck"
        );
        assert_eq!(p["gpu_end"].is_null(), stuck);
    }
    let after: Vec<u64> = window["restores"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["after_pass"].as_u64().unwrap())
        .collect();
    assert_eq!(
        after,
        (0..k).collect::<Vec<_>>(),
        "no restore after the stuck pass"
    );
    // The drain waited the whole limit before giving up on the pass.
    let stuck_enter = passes[k as usize]["enter"].as_u64().unwrap();
    let exit = window["config_exit"].as_u64().unwrap();
    assert!(
        exit - stuck_enter >= STUCK_TIMEOUT_MS * 1_000_000,
        "gave up after {} ns",
        exit - stuck_enter
    );
}

#[test]
fn pass_drain_stuck_breaks_the_loop_without_pass_exit() {
    for (k, order) in [(0, "host"), (1, "host"), (1, "device")] {
        let r = stuck_run(
            &format!("stuck-{k}-{order}"),
            &k.to_string(),
            "2",
            &["--restore-order", order],
        );
        r.ok();
        let ds = config_dispatches(&r);
        let windows = r.truth_of("window");
        assert_eq!((ds.len(), windows.len()), (2, 2), "pass {k}, {order}");
        for (d, w) in ds.iter().zip(&windows) {
            assert_stuck_window(&r, *d, k, w);
        }
        // Every dispatch's application completion fired exactly once (the emulator fails the
        // run otherwise), and saxpy's result equals one run: the stuck kernel started from the
        // restored snapshot and nothing restored after it.
        assert!(
            r.result_line().contains(" ok ") && r.result_line().contains("counter=2"),
            "pass {k}, {order}: {}",
            r.result_line()
        );
    }
}

#[test]
fn dispatch_after_a_stuck_window_replays_normally() {
    let r = stuck_run("stuck-then-normal", "1", "3", &["--stuck-windows", "1"]);
    r.ok();
    let ds = config_dispatches(&r);
    let windows = r.truth_of("window");
    assert_eq!((ds.len(), windows.len()), (3, 3));
    assert_stuck_window(&r, ds[0], 1, &windows[0]);
    for (d, w) in ds[1..].iter().zip(&windows[1..]) {
        let mut want = vec!["config-enter".to_string()];
        for _ in 0..3 {
            want.extend(["pass-enter".to_string(), "pass-exit".to_string()]);
        }
        want.push("config-exit".into());
        assert_eq!(r.callback_sequence(*d), want);
        assert_eq!(r.completes(*d).len(), 3);
        assert_eq!(w["outcome"], "replayed");
        assert_eq!(w["executed_passes"], 3);
        // The next window's drains waited for the stuck kernel, which had finished.
        assert!(w["agent_drain"]["end"].as_u64() > windows[0]["config_exit"].as_u64());
    }
    assert_eq!(r.stderr().matches("outcome=replayed").count(), 2);
    assert!(r.result_line().contains("counter=3"), "{}", r.result_line());

    // A window that ends before the stuck pass (3 passes, pass 3 would stick) replays normally.
    let r = stuck_run("stuck-unreached", "3", "2", &[]);
    r.ok();
    let windows = r.truth_of("window");
    assert_eq!(windows.len(), 2);
    assert!(
        windows
            .iter()
            .all(|w| w["outcome"] == "replayed" && w["executed_passes"] == 3)
    );
    assert!(!r.stderr().contains("pass_drain_stuck"));
}

#[test]
fn both_payload_layouts_and_the_168_byte_variant() {
    for (layout, probe_layout, size, toggles) in [
        ("a", "a", 184, true),
        ("b", "b", 184, true),
        ("c168", "b", 168, false),
    ] {
        let r = probe(
            &format!("layout-{layout}"),
            "early-exit",
            &[("PROBE_LAYOUT", probe_layout), ("PROBE_PASSES", "3")],
            &workload_args("saxpy", "64", "2", &["--payload-layout", layout]),
        );
        r.ok();
        for d in config_dispatches(&r) {
            let enters = passes_of(&r, d, "enter");
            assert_eq!(
                enters.len(),
                2,
                "layout {layout}: continue read from the right slot"
            );
            assert!(enters.iter().all(|p| p["size"] == size
                && p["total_passes"] == 3
                && p["has_toggles"] == toggles));
        }
        assert!(r.result_line().contains("counter=2"));
    }
}

#[test]
fn all_three_kind_numbers_are_found_by_name() {
    for kind in ["23", "25", "26"] {
        let r = probe(
            &format!("kind-{kind}"),
            "basic",
            &[("PROBE_PASSES", "2")],
            &workload_args("saxpy", "64", "1", &["--replay-kind", kind]),
        );
        r.ok();
        assert_eq!(r.probe["replay_kind"].to_string(), kind);
        let ops: Vec<String> = r.probe["replay_ops"]
            .as_array()
            .unwrap()
            .iter()
            .map(|o| o[1].as_str().unwrap().to_string())
            .collect();
        assert_eq!(
            ops,
            vec![
                "KERNEL_REPLAY_NONE",
                "KERNEL_REPLAY_CONFIG",
                "KERNEL_REPLAY_PASS"
            ]
        );
        assert_eq!(r.truth_of("window").len(), 1);
    }
}

#[test]
fn sample_basic_one_replay_four_passes() {
    let r = probe(
        "sample-basic",
        "basic",
        &[("PROBE_PASSES", "4"), ("PROBE_KERNEL", SAXPY_SYMBOL)],
        &workload_args("saxpy", "64", "1", &[]),
    );
    r.ok();
    assert_eq!(r.replay("config", "enter").len(), 1);
    assert_eq!(r.replay("pass", "enter").len(), 4);
}

#[test]
fn sample_opt_out_replays_only_the_target() {
    let r = probe(
        "sample-opt-out",
        "basic",
        &[("PROBE_PASSES", "3"), ("PROBE_KERNEL", TRIAD_SYMBOL)],
        &workload_args("stream", "64", "2", &[]),
    );
    r.ok();
    assert_eq!(
        r.replay("config", "enter").len(),
        10,
        "every eligible dispatch gets CONFIG"
    );
    let windows = r.truth_of("window");
    assert_eq!(windows.len(), 2);
    assert!(
        windows
            .iter()
            .all(|w| w["kernel"] == "stream_triad" && w["executed_passes"] == 3)
    );
    assert_eq!(r.truth_of("decline").len(), 8);
}

#[test]
fn memory_allocations_are_traced_and_classified() {
    let r = probe(
        "memory",
        "observe",
        &[],
        &workload_args("stream", "64", "1", &[]),
    );
    r.ok();
    let mem = r.list("memory");
    let allocs: Vec<&Value> = mem.iter().filter(|m| m["op"] == 1).collect();
    let coarse = allocs
        .iter()
        .filter(|m| m["pointer_info"][1] == 4 && m["agent"] == 2)
        .count();
    let kernarg = allocs
        .iter()
        .filter(|m| m["pointer_info"][1].as_u64().unwrap() & 1 == 1)
        .count();
    assert_eq!(
        coarse, 3,
        "three coarse-grained STREAM arrays on the GPU agent"
    );
    assert_eq!(kernarg, 1, "the queue's kernarg pool");
    assert!(
        allocs
            .iter()
            .all(|m| m["pointer_info"][0] == 0 && m["pointer_info"][3] == m["size"])
    );
    assert_eq!(
        mem.iter().filter(|m| m["op"] == 3).count(),
        4,
        "the four frees"
    );
    assert_eq!(
        r.probe["kernels"].as_object().unwrap().len(),
        krphase_kernels::KERNEL_SYMBOLS.len(),
        "kernel symbols registered at start"
    );
}

#[test]
fn the_drop_last_rule_is_the_default_and_off_keeps_every_entry() {
    let a = artifacts();
    let dir = scratch_dir("quirk");
    let list = format!(
        "{}:{}",
        a.probe_lib.display(),
        dir.join("missing.so").display()
    );
    let run = |flag: &[&str]| {
        Command::new(&a.emu)
            .args(["run", "saxpy", "--elements", "16", "--iterations", "1"])
            .args(flag)
            .env("ROCP_TOOL_LIBRARIES", &list)
            .env("PROBE_SCENARIO", "observe")
            .output()
            .expect("run emu")
    };
    for default_or_on in [&[][..], &["--tool-list-quirk"], &["--tool-list-quirk=on"]] {
        let o = run(default_or_on);
        assert!(
            o.status.success(),
            "{default_or_on:?}: the missing last entry is dropped: {}",
            output_text(&o)
        );
    }
    let bad = run(&["--tool-list-quirk=off"]);
    assert!(
        !bad.status.success(),
        "an entry that cannot be opened is fatal"
    );
    assert!(String::from_utf8_lossy(&bad.stderr).contains("missing.so"));
}

#[test]
fn must_show_stream_1m_with_driver_4_passes() {
    let r = run_emu(
        "must-show",
        &[],
        &workload_args("stream", "1048576", "10", &["--driver-passes", "4"]),
        false,
    );
    r.ok();
    let windows = r.truth_of("window");
    assert_eq!(windows.len(), 50);
    let outcome_lines = r
        .stderr()
        .lines()
        .filter(|l| {
            l.starts_with('I') && l.contains("[kernel-replay] ") && l.contains("outcome=replayed")
        })
        .count();
    assert_eq!(outcome_lines, 50, "one outcome line per replayed window");
    // Live coarse-grained agent-owned bytes (a, b, c) plus the writable module variable.
    let want = 3 * 1048576 * 8 + 8;
    for w in &windows {
        assert_eq!(w["snapshot"]["bytes"], want);
        assert_eq!(w["snapshot"]["regions"], 4);
        assert_eq!(w["executed_passes"], 4);
        for rs in w["restores"].as_array().unwrap() {
            assert_eq!(rs["bytes"], want);
        }
    }
    assert_eq!(
        r.stderr().matches("kernel replay: dispatch ").count(),
        0,
        "no phase line: no published SDK prints one"
    );
}

/// The guessed phase line is printed only with `--phase-line`: one INFO line per replayed
/// window, naming its dispatch id, with every segment the analyzer reads.
#[test]
fn phase_line_only_when_asked_for() {
    for on in [false, true] {
        let mut extra = vec!["--driver-passes", "3"];
        if on {
            extra.push("--phase-line");
        }
        let r = run_emu(
            &format!("phase-line-{on}"),
            &[],
            &workload_args("saxpy", "4096", "3", &extra),
            false,
        );
        r.ok();
        let err = r.stderr();
        let lines: Vec<&str> = err
            .lines()
            .filter(|l| l.contains("kernel replay: dispatch "))
            .collect();
        let windows = r.truth_of("window");
        assert_eq!(windows.len(), 3);
        if !on {
            assert!(lines.is_empty(), "{lines:?}");
            continue;
        }
        assert_eq!(lines.len(), windows.len(), "one phase line per window");
        for (l, w) in lines.iter().zip(&windows) {
            assert!(l.starts_with('I'), "INFO: {l}");
            let id = format!(
                "kernel replay: dispatch {} phases: lock+drain ",
                w["dispatch_id"]
            );
            assert!(l.contains(&id), "{l}");
            for seg in [
                "ms, snapshot ",
                "bytes in",
                "3 passes",
                "2 restores",
                "window ",
            ] {
                assert!(l.contains(seg), "{seg}: {l}");
            }
        }
    }
}

#[test]
fn bad_input_is_one_clear_line_and_a_nonzero_exit() {
    let a = artifacts();
    let dir = scratch_dir("bad-input");
    // (arguments, environment, what the first stderr line must name)
    type Case<'a> = (Vec<&'a str>, Vec<(&'a str, String)>, &'a str);
    let cases: Vec<Case> = vec![
        (vec!["saxpy", "--elements", "0"], vec![], "--elements"),
        (
            vec!["saxpy"],
            vec![("KRPHASE_EMU_DRIVER_PASSES", "many".into())],
            "KRPHASE_EMU_DRIVER_PASSES",
        ),
        (
            vec!["saxpy"],
            vec![
                ("KRPHASE_EMU_DRIVER_PASSES", "2".into()),
                ("KRPHASE_EMU_DRIVER_ORDER", "middle".into()),
            ],
            "KRPHASE_EMU_DRIVER_ORDER",
        ),
        (
            vec!["saxpy", "--driver-passes", "2", "--driver-filter", "("],
            vec![],
            "driver filter",
        ),
        (
            vec!["saxpy"],
            vec![(
                "KRPHASE_EMU_TRUTH",
                dir.join("no/such/dir/t.jsonl").display().to_string(),
            )],
            "KRPHASE_EMU_TRUTH",
        ),
        (vec!["saxpy", "--replay-kind", "24"], vec![], "24"),
        (
            vec!["saxpy", "--drain-timeout-ms", "0"],
            vec![],
            "--drain-timeout-ms",
        ),
        (
            vec![
                "saxpy",
                "--decline",
                "pass_drain_stuck",
                "--stuck-pass",
                "x",
            ],
            vec![],
            "--stuck-pass",
        ),
        (vec!["saxpy", "--stuck-pass", "1"], vec![], "--stuck-pass"),
        (
            vec![
                "saxpy",
                "--decline",
                "pass_drain_stuck",
                "--stuck-windows",
                "0",
            ],
            vec![],
            "--stuck-windows",
        ),
    ];
    for (args, env, needle) in cases {
        let mut cmd = Command::new(&a.emu);
        cmd.arg("run")
            .args(&args)
            .env_remove("ROCP_TOOL_LIBRARIES")
            .env_remove("KRPHASE_EMU_TRUTH");
        for (k, v) in &env {
            cmd.env(k, v);
        }
        let out = cmd.output().expect("run emu");
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?} {env:?}: {err}");
        let first = err.lines().next().unwrap_or("");
        assert!(
            first.contains(needle),
            "{args:?} {env:?}: first line {first:?} names the problem"
        );
        assert!(!err.contains("panicked"), "{err}");
    }
}

#[test]
fn reentrant_dispatch_is_declined_and_marks_the_outer_window() {
    let r = probe("reentrant", "reentrant", &[("PROBE_PASSES", "2")], SAXPY2);
    r.ok();
    let launched = r.list("reentrant");
    assert_eq!(launched.len(), 1);
    assert_eq!(launched[0]["status"], 0);
    let outer = launched[0]["dispatch_id"].as_u64().unwrap();
    let windows = r.truth_of("window");
    let inner: Vec<&Value> = windows
        .iter()
        .filter(|w| w["reason"] == "reentrant_dispatch")
        .collect();
    assert_eq!(inner.len(), 1, "the nested dispatch is declined");
    assert!(
        inner[0]["lock_wait"].is_null(),
        "decided before the writer lock"
    );
    let outer_line = r
        .stderr()
        .lines()
        .find(|l| l.contains(&format!("dispatch_id={outer} ")))
        .map(str::to_string)
        .unwrap_or_default();
    assert!(
        outer_line.starts_with('W')
            && outer_line.ends_with("reentrancy=1")
            && outer_line.contains("outcome=replayed"),
        "{outer_line}"
    );
    assert!(
        r.stderr()
            .lines()
            .filter(|l| l.contains("[kernel-replay]"))
            .all(|l| !l.contains("=-0.")),
        "no negative zero"
    );
    assert!(r.result_line().contains("counter=2"), "{}", r.result_line());
}

#[test]
fn sdk_policy_environment_variables() {
    // With the vmem decline switched off, the vmem mapping is replayed without being snapshotted:
    // the workload sees every pass's writes (the hazard the default decline prevents).
    let r = run_emu(
        "no-vmem-decline",
        &[("ROCPROFILER_KERNEL_REPLAY_DECLINE_ON_VMEM", "0")],
        &workload_args("vmem", "16", "2", &["--driver-passes", "3"]),
        false,
    );
    assert_eq!(r.out.status.code(), Some(1));
    assert!(
        r.result_line().starts_with("result vmem FAILED v[0] = 6"),
        "{}",
        r.result_line()
    );
    assert!(
        r.truth_of("window")
            .iter()
            .all(|w| w["outcome"] == "replayed")
    );
    let r = run_emu(
        "max-snapshot",
        &[("ROCPROFILER_KERNEL_REPLAY_MAX_SNAPSHOT_BYTES", "100")],
        &workload_args("saxpy", "64", "1", &["--driver-passes", "3"]),
        false,
    );
    r.ok();
    assert_eq!(r.truth_of("window")[0]["reason"], "footprint_budget");
}

#[test]
fn writer_lock_serializes_windows_per_agent_only() {
    let r = run_emu(
        "agents",
        &[],
        &workload_args(
            "multi-queue",
            "20000",
            "4",
            &["--threads", "4", "--agents", "2", "--driver-passes", "3"],
        ),
        false,
    );
    r.ok();
    let windows = r.truth_of("window");
    assert_eq!(windows.len(), 16);
    // The locked part of a window: from taking the writer lock to CONFIG EXIT.
    let locked = |w: &Value| {
        (
            w["lock_wait"]["end"].as_u64().unwrap(),
            w["config_exit"].as_u64().unwrap(),
        )
    };
    for (i, a) in windows.iter().enumerate() {
        for b in &windows[i + 1..] {
            let ((a0, a1), (b0, b1)) = (locked(a), locked(b));
            if a["agent"] == b["agent"] {
                assert!(
                    a1 <= b0 || b1 <= a0,
                    "windows on agent {} overlap",
                    a["agent"]
                );
            }
        }
    }
    let agents: std::collections::BTreeSet<u64> = windows
        .iter()
        .map(|w| w["agent"].as_u64().unwrap())
        .collect();
    assert_eq!(agents.len(), 2);
    // Each agent's snapshot holds only its own memory: 2 buffers of 20000 words per agent, plus
    // the module variable on the first GPU agent.
    for w in &windows {
        let want = if w["agent"] == 2 {
            2 * 20000 * 8 + 8
        } else {
            2 * 20000 * 8
        };
        assert_eq!(w["snapshot"]["bytes"], want);
    }
}

#[test]
fn reentrant_dispatch_that_opts_out_does_not_deadlock() {
    // The nested dispatch (queue_depth_step) is not the target, so the tool opts out: it runs
    // once while its thread holds the agent's writer lock from the outer window.
    let r = probe(
        "reentrant-opt-out",
        "reentrant",
        &[("PROBE_PASSES", "2"), ("PROBE_KERNEL", SAXPY_SYMBOL)],
        SAXPY2,
    );
    r.ok();
    let declines = r.truth_of("decline");
    assert_eq!(declines.len(), 1);
    assert_eq!(declines[0]["kernel"], "queue_depth_step");
    assert_eq!(declines[0]["reason"], "opt_out");
    assert_eq!(r.truth_of("window").len(), 2);
}
