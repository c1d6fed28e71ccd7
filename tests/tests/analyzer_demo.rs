//! `krphase demo` end to end on the emulator: the files it promises, a report whose figures agree
//! with the emulator's ground truth, and `compare` of the 2-pass and 4-pass STREAM runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde_json::Value;

mod common;

use common::{browser, gfm};

/// The demo's run: its output directory and what it printed.
struct Demo {
    out: PathBuf,
    stdout: String,
    stderr: String,
}

/// Runs the demo once per test process.
fn demo() -> &'static Demo {
    static DEMO: OnceLock<Demo> = OnceLock::new();
    DEMO.get_or_init(|| {
        let a = krphase_tests::artifacts();
        let out = krphase_tests::scratch_dir("analyzer-demo");
        let o = Command::new(&a.krphase)
            .args(["demo", "--no-build", "-d"])
            .arg(&out)
            .output()
            .expect("run krphase demo");
        assert!(
            o.status.success(),
            "demo failed: {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        Demo {
            out,
            stdout: String::from_utf8(o.stdout).expect("utf-8"),
            stderr: String::from_utf8(o.stderr).expect("utf-8"),
        }
    })
}

/// The demo's output directory.
fn demo_dir() -> &'static PathBuf {
    &demo().out
}

/// What the demo prints before its file list opens with `done in`: the step lines (stderr) up to
/// there and everything on stdout (the summary screen and the stack table, printed before it).
fn screen_before_file_list(d: &Demo) -> Vec<&str> {
    let steps = d.stderr.lines().take_while(|l| !l.starts_with("done in"));
    steps.chain(d.stdout.lines()).collect()
}

/// One screen: the demo opens with at most 60 lines before naming its files (no provenance
/// block is printed on the terminal; it is in the files), none wider than 100 columns, and the
/// screen holds the summary, the findings and the slowest kernels.
#[test]
fn demo_prints_one_screen_before_its_file_list() {
    let d = demo();
    let screen = screen_before_file_list(d);
    assert!(
        screen.len() <= 60,
        "{} lines before the file list:\n{}",
        screen.len(),
        screen.join("\n")
    );
    let text = screen.join("\n");
    for needle in [
        "== summary",
        "== findings",
        "slowest kernels",
        "declined by reason",
    ] {
        assert!(
            text.contains(needle),
            "no {needle:?} on the screen:\n{text}"
        );
    }
    let wide: Vec<&&str> = screen.iter().filter(|l| l.chars().count() > 100).collect();
    assert!(wide.is_empty(), "lines over 100 columns: {wide:#?}");
    let files = d
        .stderr
        .split_once("done in")
        .map(|x| x.1)
        .unwrap_or_default();
    for f in [
        "report.md",
        "report.html",
        "trace.pftrace",
        "trace.json",
        "krphase.db",
    ] {
        assert!(
            files.contains(f),
            "the file list does not name {f}: {files}"
        );
    }
    // It says what the trace holds: every run and every window of the database.
    let c = rusqlite::Connection::open(demo_dir().join("krphase.db")).unwrap();
    let (runs, windows): (i64, i64) = c
        .query_row(
            "SELECT (SELECT COUNT(*) FROM krphase_run), (SELECT COUNT(*) FROM krphase_window)",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    let says = format!("every run: {runs} runs, {windows} windows");
    assert!(files.contains(&says), "{says:?} not in: {files}");
}

/// The demo's report.html loaded in headless Chromium: no console message, a first screen that
/// is not blank, and a page that holds everything in itself (plots inlined, nothing fetched).
#[test]
fn demo_html_report_loads_in_headless_chromium() {
    let out = demo_dir();
    let page = std::fs::read_to_string(out.join("report.html")).unwrap();
    for needle in [
        "<h2>summary</h2>",
        "<h2>findings</h2>",
        "<svg",
        "<table>",
        "href=\"#run-1\"",
        "id=\"run-1\"",
        "compare stream-2p (A) with stream-4p (B)",
        "the SDK-build stack",
        "<h2>provenance</h2>",
        "EMULATED",
    ] {
        assert!(page.contains(needle), "report.html lacks {needle:?}");
    }
    for external in [
        "<script",
        "<link",
        "src=\"http",
        "href=\"http",
        "@import",
        "url(",
    ] {
        assert!(!page.contains(external), "report.html fetches: {external}");
    }
    let loaded = browser::load(&out.join("report.html"), &out.join("browser"));
    assert!(
        loaded.console.is_empty(),
        "console messages:\n{}",
        loaded.console.join("\n")
    );
    let (differ, colours) = browser::png_stats(&loaded.screenshot);
    // 1280 x 2000 pixels: text, table rules and shading cover far more than 2 % of them.
    assert!(
        differ > 1280 * 2000 / 50 && colours > 16,
        "the first screen looks blank: {differ} pixels off the background, {colours} colours"
    );
}

fn krphase(db: &Path, args: &[&str]) -> String {
    let o = krphase_tests::krphase_db(db, args);
    assert!(
        o.status.success(),
        "krphase {args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    String::from_utf8(o.stdout).expect("utf-8")
}

#[test]
fn demo_writes_database_trace_plots_and_report() {
    let out = demo_dir();
    assert!(out.join("krphase.db").is_file());
    let trace: Value = serde_json::from_slice(&std::fs::read(out.join("trace.json")).unwrap())
        .expect("trace is JSON");
    let events = trace["traceEvents"].as_array().expect("traceEvents array");
    for ph in ["X", "M", "i", "s", "f", "C"] {
        assert!(events.iter().any(|e| e["ph"] == ph), "no {ph} events");
    }
    // Every run of the database is a process of the trace.
    let c = rusqlite::Connection::open(out.join("krphase.db")).unwrap();
    let runs: usize = c
        .query_row("SELECT COUNT(*) FROM krphase_run", [], |r| r.get(0))
        .unwrap();
    let processes = events
        .iter()
        .filter(|e| e["name"] == "process_name")
        .count();
    assert_eq!(processes, runs, "one process per run");
    assert!(out.join("trace.pftrace").is_file());
    assert!(events.iter().any(|e| e["cat"] == "gpu"), "no GPU slices");
    let svgs = std::fs::read_dir(out)
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "svg")
        })
        .count();
    assert!(svgs >= 3, "{svgs} SVG files");
    let table = krphase(&out.join("krphase.db"), &["report"]);
    let widest = table.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest <= 100, "report table is {widest} columns wide");
    let md = std::fs::read_to_string(out.join("report.md")).unwrap();
    for needle in [
        "replayed",
        "declined",
        "untracked_memory",
        "pre-pass",
        "drain",
        "snapshot",
        "pass exec",
        "restore",
        "tail",
        "GB/s",
        "## summary",
        "## findings",
        "mean ± σ",
        "stream_copy",
        "## compare stream-2p (A) with stream-4p (B)",
        "## the SDK-build stack (emulated)",
        "## provenance",
    ] {
        assert!(md.contains(needle), "report.md lacks {needle:?}");
    }
    assert!(
        !md.lines().any(|l| l.starts_with("| restore bound")),
        "a restore-bound row in drive mode (no window carries one)"
    );
}

/// The demo's report.md and stack.md, and a `compare --format markdown` of its stack database,
/// render under GitHub-flavoured Markdown as written: every table row has its header's cells,
/// nothing after a table is taken into it; stack.md carries its provenance, every build in one
/// table, intervals whose ends differ and no signed zero.
#[test]
fn markdown_outputs_are_valid_gfm_with_provenance() {
    let out = demo_dir();
    let report = std::fs::read_to_string(out.join("report.md")).unwrap();
    let stack = std::fs::read_to_string(out.join("stack/stack.md")).unwrap();
    let compare = krphase(
        &out.join("stack/stack.db"),
        &["compare", "baseline", "device-side", "--format", "markdown"],
    );
    let mut problems = gfm::table_problems("report.md", &report);
    problems.extend(gfm::table_problems("stack.md", &stack));
    problems.extend(gfm::table_problems("compare.md", &compare));
    assert!(problems.is_empty(), "{}", problems.join("\n"));
    let collapsed = regex::Regex::new(r"(\d\.\d+x) \.\. (\d\.\d+x)").unwrap();
    for md in [&stack, &compare] {
        assert!(md.contains("**EMULATED**"), "{md}");
        assert!(
            md.contains("- krphase ") && md.contains("(commit `"),
            "{md}"
        );
        assert!(md.contains("- run order: "), "{md}");
        assert!(md.contains("n (runs A/B)"), "{md}");
        assert!(!md.contains("-0.0%"), "signed zero: {md}");
        for c in collapsed.captures_iter(md) {
            assert_ne!(&c[1], &c[2], "an interval collapsed to one number: {md}");
        }
    }
    for build in [
        "signal-pool",
        "skip-cu-markers",
        "keep-staging",
        "device-side",
        "all four",
    ] {
        assert!(
            stack.contains(&format!("| {build} |")),
            "{build} missing: {stack}"
        );
    }
}

/// The stack step's one interleaved bench: every build's timed runs alternate with the others'
/// (A B …, then the reverse), each build's rows carry its label, and the order is stored.
#[test]
fn stack_builds_run_interleaved_and_say_their_order() {
    let db = demo_dir().join("stack").join("stack.db");
    let c = rusqlite::Connection::open(&db).unwrap();
    let mut stmt = c
        .prepare(
            "SELECT m.label, m.run_order, s.position FROM krphase_measurement_sample s
             JOIN krphase_measurement m ON m.id = s.measurement_id ORDER BY s.position",
        )
        .unwrap();
    let rows: Vec<(String, String, i64)> = stmt
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let seq: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert!(
        rows.windows(2).all(|w| w[0].2 < w[1].2),
        "one timed run per position: {rows:?}"
    );
    let n = seq.iter().collect::<std::collections::BTreeSet<_>>().len();
    assert!(n >= 2 && seq.len() >= 2 * n, "{seq:?}");
    // Round 0 in the plan's order, round 1 reversed: the first build runs first, then last in
    // the next round, and the last build twice in a row at the turn.
    assert_eq!(seq[0], "baseline", "{seq:?}");
    assert_eq!(seq[2 * n - 1], "baseline", "{seq:?}");
    assert_eq!(seq[n - 1], seq[n], "{seq:?}");
    assert_ne!(seq[0], seq[1], "{seq:?}");
    assert!(
        rows.iter()
            .all(|r| r.1.starts_with("interleaved per measurement")
                && r.1.contains("timed: baseline ")),
        "{rows:?}"
    );
}

/// The `q` quantile as `krphase report` defines it: linear interpolation between the closest
/// order statistics (Hyndman–Fan type 7), rounded to the nearest nanosecond.
fn quantile(v: &mut [i64], q: f64) -> i64 {
    v.sort_unstable();
    let h = (v.len() - 1) as f64 * q;
    let j = h.floor() as usize;
    let g = h - j as f64;
    let next = v[(j + 1).min(v.len() - 1)];
    ((1.0 - g) * v[j] as f64 + g * next as f64).round() as i64
}

/// The report's quantile `got` of a phase against the truth's values `v` of the same windows.
/// Tool timestamps are taken inside the callbacks the truth stamps just before, so a thread
/// preempted between the two stamps moves a scheduler slice from one phase into the next. One
/// such window may cross the median, which then moves to the next order statistic: with ten
/// windows a run whose values spread over a millisecond under load, that step alone exceeds
/// any fixed tolerance. So the median must lie within one order statistic of the truth's,
/// closely; the p99 of some 50 windows is their largest but one, and one preemption (up to
/// 10 ms on a busy 2-core machine: the emulated device's workers and the tool's writer share
/// it) may sit in it.
fn check_quantile(v: &mut [i64], q: f64, got: i64, what: &str) {
    let want = quantile(v, q);
    let step = 1.0 / v.len() as f64;
    let (lo, hi) = if q > 0.5 {
        (want, want)
    } else {
        (quantile(v, q - step), quantile(v, q + step))
    };
    let slice = if q > 0.5 { 10_000_000 } else { 0 };
    let tol = want / 50 + 200_000 + slice;
    assert!(
        lo - tol <= got && got <= hi + tol,
        "{what}: report {got}, truth {want} (next order statistics {lo} .. {hi}, tolerance {tol})"
    );
}

#[test]
fn report_json_agrees_with_the_emulator_truth() {
    let out = demo_dir();
    let db = out.join("krphase.db");
    let report: Value =
        serde_json::from_str(&krphase(&db, &["report", "--format", "json"])).unwrap();
    let conn = rusqlite::Connection::open(&db).unwrap();
    let runs = report["runs"].as_array().unwrap();
    assert!(runs.len() >= 10, "{} runs", runs.len());
    let (mut checked_phases, mut saw_decline, mut saw_no_config) = (0, false, false);
    for r in runs {
        let id = r["run_id"].as_i64().unwrap();
        let path: String = conn
            .query_row("SELECT path FROM krphase_run WHERE id = ?1", [id], |x| {
                x.get(0)
            })
            .unwrap();
        let stem = Path::new(&path)
            .file_stem()
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let truth_path = Path::new(&path).with_file_name(format!("{stem}.truth.jsonl"));
        let truth = krphase_tests::read_truth(&truth_path);
        let windows: Vec<&Value> = truth.iter().filter(|t| t["type"] == "window").collect();
        let replayed: Vec<&Value> = windows
            .iter()
            .copied()
            .filter(|t| t["outcome"] == "replayed")
            .collect();
        let mut reasons: BTreeMap<String, u64> = BTreeMap::new();
        let mut no_config = 0;
        for t in &truth {
            let config_decline = t["type"] == "decline" && t["config"] == true;
            if (t["type"] == "window" && t["outcome"] == "declined") || config_decline {
                *reasons
                    .entry(t["reason"].as_str().unwrap().to_string())
                    .or_default() += 1;
            }
            no_config += u64::from(t["type"] == "decline" && t["config"] == false);
        }
        let label = &r["label"];
        assert_eq!(
            r["windows"]["replayed"].as_u64().unwrap(),
            replayed.len() as u64,
            "{label} replayed"
        );
        let got: BTreeMap<String, u64> =
            serde_json::from_value(r["declines_by_reason"].clone()).unwrap();
        assert_eq!(got, reasons, "{label} declines by reason");
        let no_config_group = r["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["group"] == "no CONFIG")
            .unwrap();
        assert_eq!(
            no_config_group["count"].as_u64().unwrap(),
            no_config,
            "{label} dispatches without CONFIG"
        );
        saw_decline |= !reasons.is_empty();
        saw_no_config |= no_config > 0;
        if replayed.is_empty() {
            continue;
        }
        let ts = |v: &Value| v.as_i64().unwrap();
        let passes = |t: &Value| t["passes"].as_array().unwrap().clone();
        let mut truth_phase: BTreeMap<&str, Vec<i64>> = BTreeMap::new();
        for t in &replayed {
            let p = passes(t);
            truth_phase
                .entry("window")
                .or_default()
                .push(ts(&t["config_exit"]) - ts(&t["config_enter"]));
            truth_phase
                .entry("pre-pass")
                .or_default()
                .push(ts(&p[0]["enter"]) - ts(&t["pass_count_return"]));
            truth_phase
                .entry("pass exec")
                .or_default()
                .push(p.iter().map(|x| ts(&x["exit"]) - ts(&x["enter"])).sum());
            if p.len() > 1 {
                // The report's restore starts when replay_continue returns (the continue
                // call is its own phase), so the truth's restore starts there too.
                let restore = p
                    .windows(2)
                    .map(|w| {
                        let from = w[0]["continue"]["end"]
                            .as_i64()
                            .unwrap_or(ts(&w[0]["exit"]));
                        ts(&w[1]["enter"]) - from
                    })
                    .sum();
                truth_phase.entry("restore").or_default().push(restore);
            }
        }
        let phases = r["phases"].as_array().unwrap();
        for (name, v) in truth_phase.iter_mut() {
            let p = phases.iter().find(|p| p["phase"] == *name).unwrap();
            assert_eq!(
                p["samples"].as_u64().unwrap(),
                v.len() as u64,
                "{label} {name} samples"
            );
            for (q, key) in [(0.5, "p50_ns"), (0.99, "p99_ns")] {
                check_quantile(
                    v,
                    q,
                    p[key].as_i64().unwrap(),
                    &format!("{label} {name} {key}"),
                );
                checked_phases += 1;
            }
        }
        let truth_bytes: i64 = replayed.iter().map(|t| ts(&t["snapshot"]["bytes"])).sum();
        assert_eq!(
            r["bytes"]["snapshot_bytes_total"].as_i64().unwrap(),
            truth_bytes,
            "{label} bytes"
        );
    }
    // Shares nest: the top-level phases of a drive-mode window tile it, so they sum to 100%.
    for r in runs
        .iter()
        .filter(|r| r["windows"]["replayed"].as_u64() > Some(0))
    {
        let phases = r["phases"].as_array().unwrap();
        let top: f64 = phases
            .iter()
            .filter(|p| p["parent"].is_null() && p["phase"] != "window")
            .filter_map(|p| p["share_of_window"].as_f64())
            .sum();
        assert!(
            (top - 1.0).abs() < 1e-9,
            "{}: top-level shares sum to {top}",
            r["label"]
        );
        assert!(
            phases.iter().all(|p| p["phase"] != "unattributed"),
            "{}: drive-mode phases leave nothing unattributed",
            r["label"]
        );
    }
    assert!(
        checked_phases >= 40,
        "{checked_phases} phase figures checked"
    );
    assert!(
        saw_decline && saw_no_config,
        "the demo shows SDK declines and graph launches"
    );
}

#[test]
fn compare_two_and_four_pass_stream() {
    let db = demo_dir().join("krphase.db");
    let c: Value = serde_json::from_str(&krphase(
        &db,
        &["compare", "stream-2p", "stream-4p", "--format", "json"],
    ))
    .unwrap();
    let c = &c["runs"];
    assert_eq!(c["a_restores_per_window"].as_f64(), Some(1.0));
    assert_eq!(c["b_restores_per_window"].as_f64(), Some(3.0));
    assert_eq!(c["a_passes_per_window"].as_f64(), Some(2.0));
    assert_eq!(c["b_passes_per_window"].as_f64(), Some(4.0));
    let verdict = |name: &str| {
        c["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == name)
            .unwrap()["verdict"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let phase = |name: &str| {
        c["phases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["phase"] == name)
            .unwrap()
            .clone()
    };
    // Runs are the unit: each side's runs and windows are counted beside every interval.
    let restore = phase("restore");
    assert!(restore["a_runs"].as_u64().unwrap() >= 3, "{restore:#}");
    assert!(restore["b_runs"].as_u64().unwrap() >= 3, "{restore:#}");
    assert!(restore["a_samples"].as_u64() > restore["a_runs"].as_u64());
    assert_eq!(restore["evidence"], "runs");
    assert!(restore["mde_ns"].as_f64().is_some(), "{restore:#}");
    // Three restores a window against one, four passes against two: both grow. Five runs of
    // ten windows a side resolve that on a quiet machine ("moved"); under load the runs drift
    // apart and the honest answer may be "not significant" (the MDE beside it says how large a
    // change the runs could have shown), but never a word for no change, nor "moved" with the
    // wrong sign.
    // (A loaded machine's passes spread from 3 to 100 ms a window, so the estimate behind a
    // "not significant" may even have the wrong sign; a "moved" never may.)
    for name in ["restore", "pass exec"] {
        let (v, p) = (verdict(name), phase(name));
        assert!(
            ["moved", "not significant"].contains(&v.as_str()),
            "{name}: {v} {p:#}"
        );
        if v == "moved" {
            assert!(
                p["delta_median_ns"].as_f64().unwrap() > 0.0,
                "{name}: {p:#}"
            );
        } else {
            assert!(p["p_value"].as_f64().unwrap() >= 0.01, "{name}: {p:#}");
        }
    }
    // The pass count does not touch the pre-pass, nor the snapshot inside it: never "moved"
    // beyond the margin (pooling windows across runs once read run-to-run drift as a 0.66x
    // change of both). The pair's copies are paced to the emulated link, so its snapshots take
    // the same 4.2 ms on both sides to a few microseconds; five runs a side can still resolve
    // a difference that small, and "moved, within" the margin is then a true statement.
    // (CONFIG, ENTER to EXIT, is no such control: it is ~1.4 us, 10 %, longer with 4 passes
    // in every run, and may be called moved.)
    for name in ["pre-pass", "snapshot"] {
        let v = verdict(name);
        assert!(
            !v.starts_with("moved") || v.starts_with("moved, within"),
            "{name}: {v} {:#}",
            phase(name)
        );
    }
    let table = krphase(&db, &["compare", "stream-2p", "stream-4p"]);
    assert!(table.lines().all(|l| l.chars().count() <= 100), "{table}");
}
