//! `krphase doctor` end to end with the built binary: each set-up trap it knows is caught in one
//! line with its fix, the exit code is 1 exactly when a trap would lose the run, and the tool-list
//! trap it names is the one the emulated SDK's drop-last rule (its default, as in the real SDK)
//! really springs.

use krphase_tests::{artifacts, output_text, scratch_dir};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// A set-up the doctor should find clean: libkrphase.so listed alone, SDK log at info, a
/// writable working directory for the phase file.
struct Setup {
    dir: PathBuf,
    env: Vec<(String, String)>,
}

impl Setup {
    fn new(name: &str) -> Setup {
        let a = artifacts();
        Setup {
            dir: scratch_dir(&format!("doctor-{name}")),
            env: vec![
                (
                    "ROCP_TOOL_LIBRARIES".into(),
                    a.tool_lib.display().to_string(),
                ),
                ("ROCPROFILER_LOG_LEVEL".into(), "info".into()),
                ("PATH".into(), std::env::var("PATH").unwrap_or_default()),
            ],
        }
    }

    fn set(mut self, k: &str, v: &str) -> Setup {
        self.env.retain(|(n, _)| n != k);
        self.env.push((k.into(), v.into()));
        self
    }

    fn unset(mut self, k: &str) -> Setup {
        self.env.retain(|(n, _)| n != k);
        self
    }

    fn doctor(&self, command: &[&str]) -> Output {
        let mut cmd = Command::new(&artifacts().krphase);
        cmd.arg("doctor").env_clear().current_dir(&self.dir);
        cmd.envs(self.env.iter().map(|(k, v)| (k, v)));
        if !command.is_empty() {
            cmd.arg("--").args(command);
        }
        cmd.output().expect("run krphase doctor")
    }
}

/// The one finding line containing `needle` (panics unless exactly one), and the exit code.
fn one_line(o: &Output, needle: &str) -> (String, i32) {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let lines: Vec<&str> = stdout.lines().filter(|l| l.contains(needle)).collect();
    assert_eq!(
        lines.len(),
        1,
        "one line with {needle:?}: {}",
        output_text(o)
    );
    assert!(
        lines[0].contains(" -- fix: "),
        "the line says the fix: {}",
        lines[0]
    );
    (lines[0].to_string(), o.status.code().expect("exit code"))
}

/// Exit 0 and no finding at all.
fn assert_clean(o: &Output) {
    assert_eq!(
        (o.status.code(), findings(o)),
        (Some(0), 0),
        "{}",
        output_text(o)
    );
}

fn findings(o: &Output) -> usize {
    String::from_utf8_lossy(&o.stdout)
        .lines()
        .filter(|l| l.starts_with("TRAP: ") || l.starts_with("warning: "))
        .count()
}

#[test]
fn a_clean_setup_has_no_findings() {
    let o = Setup::new("clean").doctor(&["./app", "--n", "3"]);
    assert_clean(&o);
}

#[test]
fn the_last_entry_of_the_tool_list_is_named_with_the_trailing_colon_fix() {
    let a = artifacts();
    let list = format!("{}:{}", a.probe_lib.display(), a.tool_lib.display());
    let s = Setup::new("tool-list").set("ROCP_TOOL_LIBRARIES", &list);
    let (line, code) = one_line(&s.doctor(&["./app"]), "drops the last entry");
    assert_eq!(code, 1);
    assert!(line.starts_with("TRAP: "), "{line}");
    assert!(
        line.contains(&format!("{} would not be loaded", a.tool_lib.display())),
        "{line}"
    );
    assert!(
        line.ends_with(&format!("(ROCP_TOOL_LIBRARIES={list}:)")),
        "{line}"
    );
    let fixed = s.set("ROCP_TOOL_LIBRARIES", &format!("{list}:"));
    let o = fixed.doctor(&["./app"]);
    assert_clean(&o);
}

/// `sample.so:libkrphase.so` without the trailing ':': the doctor names it, and the emulated SDK
/// with its default (the real SDK's drop-last rule) runs that list without krphase — exit 0, the
/// sample client configured, no phase file; the trailing ':' records.
#[test]
fn the_emulator_by_default_loses_the_run_the_doctor_names() {
    let a = artifacts();
    let dir = scratch_dir("doctor-quirk-run");
    let run = |list: String, out: &Path| {
        Command::new(&a.emu)
            .args(["run", "stream", "--elements", "4096", "--iterations", "2"])
            .env("ROCP_TOOL_LIBRARIES", list)
            .env("KRPHASE_OUTPUT", out)
            .env("PROBE_OUT", out.with_extension("probe.json"))
            .env_remove("KRPHASE_MODE")
            .output()
            .expect("run the emulator")
    };
    let list = format!("{}:{}", a.probe_lib.display(), a.tool_lib.display());
    let s = Setup::new("lost-run").set("ROCP_TOOL_LIBRARIES", &list);
    let (line, code) = one_line(&s.doctor(&["./app"]), "drops the last entry");
    assert_eq!(code, 1, "{line}");
    let lost = dir.join("lost.krp");
    let o = run(list.clone(), &lost);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(
        !lost.exists(),
        "the drop-last rule drops libkrphase.so: no phase file"
    );
    assert!(
        lost.with_extension("probe.json").exists(),
        "the run goes on with the sample client: {}",
        output_text(&o)
    );
    let kept = dir.join("kept.krp");
    let o = run(format!("{list}:"), &kept);
    assert!(o.status.success(), "{}", output_text(&o));
    assert!(kept.exists(), "with the trailing ':' krphase records");
}

#[test]
fn a_missing_or_unloadable_libkrphase_is_a_trap() {
    let s = Setup::new("unloadable");
    let missing = s.dir.join("nowhere/libkrphase.so");
    let o = s
        .set("ROCP_TOOL_LIBRARIES", &missing.display().to_string())
        .doctor(&[]);
    let (line, code) = one_line(&o, "cannot be loaded: no such file");
    assert_eq!(code, 1, "{line}");
    let s = Setup::new("unloadable-text");
    let text = s.dir.join("libkrphase.so");
    std::fs::write(&text, "not a library\n").unwrap();
    let o = s
        .set("ROCP_TOOL_LIBRARIES", &text.display().to_string())
        .doctor(&[]);
    let (line, code) = one_line(&o, "cannot be loaded");
    assert_eq!(code, 1, "{line}");
    let o = Setup::new("absent")
        .unset("ROCP_TOOL_LIBRARIES")
        .doctor(&["./app"]);
    let (line, code) = one_line(&o, "libkrphase.so is not in ROCP_TOOL_LIBRARIES");
    assert_eq!(code, 1, "{line}");
}

#[test]
fn a_log_level_below_info_is_a_warning() {
    let o = Setup::new("log")
        .set("ROCPROFILER_LOG_LEVEL", "warning")
        .doctor(&["./app"]);
    let (line, code) = one_line(&o, "ROCPROFILER_LOG_LEVEL=warning");
    assert_eq!(code, 0, "a warning does not lose the run: {line}");
    assert!(line.contains("ROCPROFILER_LOG_LEVEL=info"), "{line}");
    let o = Setup::new("log-unset")
        .unset("ROCPROFILER_LOG_LEVEL")
        .doctor(&[]);
    one_line(&o, "ROCPROFILER_LOG_LEVEL is unset");
}

#[test]
fn rocprofv3_replay_flags_without_their_partner_are_traps() {
    let s = Setup::new("rocprofv3");
    let beta_only = ["rocprofv3 --pmc A --pmc B --kernel-replay-beta-enabled -- ./app"];
    let (line, code) = one_line(&s.doctor(&beta_only), "no --replay-mode kernel");
    assert_eq!(code, 1);
    assert!(line.ends_with("fix: add --replay-mode kernel"), "{line}");
    let mode_only = ["rocprofv3 --replay-mode kernel --pmc A --pmc B -- ./app"];
    let (line, code) = one_line(
        &s.doctor(&mode_only),
        "without --kernel-replay-beta-enabled",
    );
    assert_eq!(code, 1);
    assert!(
        line.ends_with("fix: add --kernel-replay-beta-enabled"),
        "{line}"
    );
    let both =
        ["rocprofv3 --replay-mode kernel --kernel-replay-beta-enabled --pmc A --pmc B -- ./app"];
    let o = s.doctor(&both);
    assert_clean(&o);
}

#[test]
fn stderr_thrown_away_is_named() {
    let o = Setup::new("stderr").doctor(&["./app --n 3 2>/dev/null"]);
    let (line, code) = one_line(&o, "throws stderr away (2>/dev/null)");
    assert_eq!(code, 0, "{line}");
    let o = Setup::new("stderr-sh").doctor(&["sh", "-c", "./app >/dev/null 2>&1"]);
    one_line(&o, "throws stderr away (>/dev/null 2>&1)");
    let o = Setup::new("stderr-kept").doctor(&["./app 2>sdk.log"]);
    assert_eq!(findings(&o), 0, "{}", output_text(&o));
}

#[test]
fn an_output_path_that_cannot_be_written_is_a_trap() {
    let s = Setup::new("output");
    let gone = s.dir.join("no-such-dir/run.krp");
    let o = s
        .set("KRPHASE_OUTPUT", &gone.display().to_string())
        .doctor(&["./app"]);
    let (line, code) = one_line(&o, "it does not exist");
    assert_eq!(code, 1, "{line}");
    // /proc accepts no new files, not even from root.
    let o = Setup::new("output-proc")
        .set("KRPHASE_OUTPUT", "/proc/run.krp")
        .doctor(&["./app"]);
    let (line, code) = one_line(&o, "it is not writable");
    assert_eq!(code, 1, "{line}");
    let o = Setup::new("output-d").doctor(&["rocprofv3 --replay-mode kernel --kernel-replay-beta-enabled --pmc A --pmc B -d /proc/out -- ./app"]);
    let (line, code) = one_line(&o, "rocprofv3's output directory /proc/out");
    assert_eq!(code, 1, "{line}");
    let o = Setup::new("output-template")
        .set("KRPHASE_OUTPUT", "run-%user%.krp")
        .doctor(&[]);
    let (line, code) = one_line(&o, "%user%");
    assert_eq!(code, 1, "{line}");
}

#[test]
fn unknown_krphase_names_get_the_nearest_known_one() {
    let o = Setup::new("names")
        .set("KRPHASE_PASES", "3")
        .doctor(&["KRPHASE_OUTPT=x.krp ./app"]);
    let (line, code) = one_line(&o, "KRPHASE_PASES is not a krphase variable");
    assert_eq!(code, 0, "{line}");
    assert!(line.contains("did you mean KRPHASE_PASSES?"), "{line}");
    let (line, _) = one_line(&o, "KRPHASE_OUTPT is not a krphase variable");
    assert!(line.contains("did you mean KRPHASE_OUTPUT?"), "{line}");
    let o = Setup::new("bad-value")
        .set("KRPHASE_MODE", "fast")
        .doctor(&[]);
    let (line, code) = one_line(&o, "KRPHASE_MODE=\"fast\"");
    assert_eq!(code, 1, "the tool would decline: {line}");
}

/// The configure order the doctor prints: its `N. library` lines.
fn order_lines(o: &Output) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&o.stdout);
    let mut lines = stdout
        .lines()
        .skip_while(|l| !l.starts_with("configure order"));
    assert!(
        lines.next().is_some(),
        "no configure order: {}",
        output_text(o)
    );
    lines
        .take_while(|l| l.starts_with("  "))
        .map(|l| l.trim().to_string())
        .collect()
}

/// The doctor's configure order against the emulated SDK's (which follows `find_clients()`): the
/// probe records the priority (configure index) the SDK gave it, listed first or preloaded after
/// the listed krphase.
#[test]
fn the_doctor_prints_the_order_the_sdk_configures_the_tools_in() {
    let a = artifacts();
    let (tool, probe) = (
        a.tool_lib.display().to_string(),
        a.probe_lib.display().to_string(),
    );
    for (list, preload, probe_index) in [(&tool, &probe, 1u64), (&probe, &tool, 0)] {
        let s = Setup::new("order")
            .set("ROCP_TOOL_LIBRARIES", list)
            .set("LD_PRELOAD", preload);
        let lines = order_lines(&s.doctor(&["./app"]));
        assert_eq!(lines.len(), 2, "{lines:?}");
        assert!(lines[0].starts_with(&format!("1. {list}  (ROCP_TOOL_LIBRARIES entry 1)")));
        assert!(lines[1].starts_with(&format!("2. {preload}  (preloaded")));
        let out = s.dir.join("probe.json");
        let o = Command::new(&a.emu)
            .args(["run", "saxpy", "--elements", "64", "--iterations", "1"])
            .env("ROCP_TOOL_LIBRARIES", list)
            .env("LD_PRELOAD", preload)
            .env("KRPHASE_MODE", "observe")
            .env("KRPHASE_OUTPUT", s.dir.join("run.krp"))
            .env("PROBE_SCENARIO", "observe")
            .env("PROBE_OUT", &out)
            .output()
            .expect("run the emulator");
        assert!(o.status.success(), "{}", output_text(&o));
        let got: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&out).expect("probe output"))
                .expect("probe JSON");
        assert_eq!(
            got["configure"]["priority"].as_u64(),
            Some(probe_index),
            "the doctor said {lines:?}"
        );
    }
}

/// Under rocprofv3 (the README's observe command) krphase is configured first, rocprofv3's tool
/// second.
#[test]
fn under_rocprofv3_the_doctor_puts_krphase_first_and_rocprofv3s_tool_second() {
    let s = Setup::new("order-rocprofv3");
    let lines = order_lines(&s.doctor(&[
        "rocprofv3",
        "--replay-mode",
        "kernel",
        "--kernel-replay-beta-enabled",
        "--pmc",
        "SQ_WAVES",
        "--pmc",
        "SQ_INSTS_VALU",
        "-d",
        "out",
        "--",
        "./my_app",
    ]));
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(
        lines[0].contains("libkrphase.so  (ROCP_TOOL_LIBRARIES entry 1)"),
        "{lines:?}"
    );
    assert!(
        lines[1].contains("librocprofiler-sdk-tool.so  (preloaded; found by the global lookup)"),
        "{lines:?}"
    );
}
