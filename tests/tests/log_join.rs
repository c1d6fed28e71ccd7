//! Joining the SDK's log to the right run, through the emulator (which writes glog's real
//! prefix: local date and time, the `pthread_self` thread id, never the pid) and the real
//! `libkrphase.so`: a log joins only on evidence that cannot match by chance, another run's log
//! is refused with one line and the database unchanged, and a job's interleaved stderr joins
//! each process's lines to its own run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use krphase_tests::{LoggedRun, artifacts, krphase_db, output_text, run_logged};

/// A STREAM run with 2 passes; `year` selects the glog prefix with or without the year, `tz` the
/// process's time zone (POSIX form, no tzdata needed: `KRP-2` is UTC+02:00).
fn stream_in(name: &str, elements: &str, year: bool, tz: &str) -> LoggedRun {
    run_logged(
        name,
        &["stream", "--elements", elements, "--iterations", "3"],
        &[
            ("KRPHASE_PASSES", "2"),
            ("KRPHASE_EMU_LOG_YEAR", if year { "1" } else { "0" }),
            ("TZ", tz),
        ],
    )
}

fn stream(name: &str, elements: &str, year: bool) -> LoggedRun {
    stream_in(name, elements, year, "UTC0")
}

/// The replay lines' glog prefixes: (severity+date, thread id).
fn prefixes(log: &Path) -> Vec<(String, u64)> {
    let re = regex::Regex::new(
        r"^([IWEF]\d{4}(?:\d{4})?) \d{2}:\d{2}:\d{2}\.\d{6} (\d+) [\w.]+:\d+\] (?:\[kernel-replay\]|kernel replay: dispatch)",
    )
    .unwrap();
    std::fs::read_to_string(log)
        .unwrap()
        .lines()
        .filter_map(|l| {
            re.captures(l)
                .map(|c| (c[1].to_string(), c[2].parse().unwrap()))
        })
        .collect()
}

fn db_bytes(db: &Path) -> Vec<u8> {
    std::fs::read(db).unwrap()
}

fn pid_of(run: &LoggedRun) -> u64 {
    let r = run.report_run();
    r["pid"].as_u64().expect("pid")
}

#[test]
fn another_runs_log_is_refused_and_the_right_log_joins() {
    let a = stream("log-join-a", "65536", true);
    let b = stream("log-join-b", "1048576", true);
    a.krphase(&["import".as_ref(), a.krp.as_os_str()]);
    let before = db_bytes(&a.db());
    // The other run's stderr: same dispatch ids, outcomes and passes, but not this run's.
    let o = krphase_db(&a.db(), &["import-log".as_ref(), b.log.as_os_str()]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{}", output_text(&o));
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    assert!(
        err.contains("not joined") && err.contains("failed:") && err.contains("nothing stored"),
        "{err}"
    );
    assert!(err.contains("time span failed"), "{err}");
    assert_eq!(db_bytes(&a.db()), before, "the database is unchanged");
    // Its own stderr joins, on the evidence.
    let joined = a.krphase(&["import-log".as_ref(), a.log.as_os_str()]);
    assert!(
        joined.contains("joined to run 1 (evidence: ")
            && joined.contains("stamps inside the run's time span (UTC"),
        "{joined}"
    );
    let r = a.report_run();
    assert!(r["log_joined"].as_bool().unwrap());
    assert_eq!(r["log_join_forced"].as_bool(), Some(false));
    // `--run 1` on the wrong log is refused too; `--force` joins it and says so.
    let o = krphase_db(
        &a.db(),
        &[
            "import-log".as_ref(),
            b.log.as_os_str(),
            "--run".as_ref(),
            "1".as_ref(),
        ],
    );
    assert!(!o.status.success(), "{}", output_text(&o));
    let forced = a.krphase(&[
        "import-log".as_ref(),
        b.log.as_os_str(),
        "--run".as_ref(),
        "1".as_ref(),
        "--force".as_ref(),
    ]);
    assert!(
        forced.contains("joined to run 1 FORCED (evidence failed:"),
        "{forced}"
    );
    let r = a.report_run();
    assert_eq!(r["log_join_forced"].as_bool(), Some(true));
    let text = a.krphase(&["report"]);
    assert!(text.contains("SDK log joined FORCED"), "{text}");
}

#[test]
fn the_emulators_glog_prefix_with_and_without_the_year_joins_by_the_evidence() {
    // Local stamps east and west of UTC: the header's offset places them.
    for (year, tz, zone) in [
        (true, "KRP-2", "UTC+02:00"),
        (false, "KRP+4:30", "UTC-04:30"),
    ] {
        let run = stream_in(&format!("log-join-year-{year}"), "65536", year, tz);
        run.krphase(&["import".as_ref(), run.krp.as_os_str()]);
        let pre = prefixes(&run.log);
        assert!(!pre.is_empty(), "replay lines in {}", run.log.display());
        let pid = pid_of(&run);
        for (date, tid) in &pre {
            assert_eq!(date.len(), if year { 9 } else { 5 }, "{date}");
            assert_ne!(*tid, pid, "the prefix holds a thread id, not the pid");
        }
        let joined = run.krphase(&["import-log".as_ref(), run.log.as_os_str()]);
        assert!(joined.contains("joined to run 1 (evidence: "), "{joined}");
        assert!(joined.contains(&format!("time span ({zone})")), "{joined}");
        let windows = run.report_run()["windows"]["total"].as_u64().unwrap();
        assert!(
            joined.contains(&format!("{windows} joined to windows")),
            "{joined}"
        );
    }
}

/// Starts `krphase-emu run ARGS` with the tool, its stderr appended to `log`.
fn spawn(
    dir: &Path,
    name: &str,
    args: &[&str],
    passes: &str,
    log: &Path,
) -> (std::process::Child, PathBuf) {
    let a = artifacts();
    let krp = dir.join(format!("{name}.krp"));
    let err = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(log)
        .unwrap();
    let child = Command::new(&a.emu)
        .arg("run")
        .args(args)
        .env("ROCP_TOOL_LIBRARIES", &a.tool_lib)
        .env("KRPHASE_OUTPUT", &krp)
        .env("KRPHASE_PASSES", passes)
        .env("ROCPROFILER_LOG_LEVEL", "info")
        .env_remove("KRPHASE_MODE")
        .stdout(Stdio::null())
        .stderr(err)
        .spawn()
        .expect("start the emulator");
    (child, krp)
}

#[test]
fn two_processes_interleaved_on_one_stderr_join_each_its_run_or_are_refused() {
    let dir = krphase_tests::scratch_dir("log-join-interleaved");
    let log = dir.join("job.stderr.log");
    let (mut pa, a) = spawn(
        &dir,
        "a",
        &["stream", "--elements", "65536", "--iterations", "40"],
        "2",
        &log,
    );
    let (mut pb, b) = spawn(
        &dir,
        "b",
        &["saxpy", "--elements", "65536", "--iterations", "120"],
        "3",
        &log,
    );
    assert!(pa.wait().unwrap().success() && pb.wait().unwrap().success());
    let db = dir.join("k.db");
    krphase_tests::krphase_db_ok(&db, &["import".as_ref(), a.as_os_str(), b.as_os_str()]);
    let order: Vec<u64> = prefixes(&log).into_iter().map(|p| p.1).collect();
    let tids: std::collections::BTreeSet<u64> = order.iter().copied().collect();
    // The two processes ran at the same time: their lines alternate in the file.
    let switches = order.windows(2).filter(|w| w[0] != w[1]).count();
    assert!(
        tids.len() < 2 || switches >= 3,
        "the processes did not overlap ({switches} switches); the test needs interleaved lines"
    );
    let o = krphase_db(&db, &["import-log".as_ref(), log.as_os_str()]);
    if tids.len() < 2 {
        // Both processes' threads printed the same id (no address randomisation): refused.
        assert!(!o.status.success(), "{}", output_text(&o));
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.contains("failed") && err.contains("thread"), "{err}");
        return;
    }
    assert!(o.status.success(), "{}", output_text(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("joined to run 1 (evidence") && out.contains("joined to run 2 (evidence"),
        "{out}"
    );
    // Each run got exactly its own windows' lines, from its own thread ids.
    let c = rusqlite::Connection::open(&db).unwrap();
    for (run, passes) in [(1, 2), (2, 3)] {
        let (windows, logged, joined, bad): (i64, i64, i64, i64) = c
            .query_row(
                "SELECT (SELECT COUNT(*) FROM krphase_window WHERE run_id = ?1 AND outcome = 'replayed'),
                        (SELECT COUNT(*) FROM krphase_sdk_log WHERE run_id = ?1),
                        (SELECT COUNT(*) FROM krphase_sdk_log WHERE run_id = ?1 AND window_id IS NOT NULL),
                        (SELECT COUNT(*) FROM krphase_sdk_log WHERE run_id = ?1 AND executed_passes <> ?2)",
                [run, passes],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .unwrap();
        assert!(windows > 0);
        assert_eq!((logged, joined, bad), (windows, windows, 0), "run {run}");
    }
    let shared: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM (SELECT tid FROM krphase_sdk_log GROUP BY tid HAVING COUNT(DISTINCT run_id) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(shared, 0, "no thread id joined two runs");
    // Asked to join it all to run 1, the other process's lines fail the evidence.
    let db2 = dir.join("k2.db");
    krphase_tests::krphase_db_ok(&db2, &["import".as_ref(), a.as_os_str(), b.as_os_str()]);
    let o = krphase_db(
        &db2,
        &[
            "import-log".as_ref(),
            log.as_os_str(),
            "--run".as_ref(),
            "1".as_ref(),
        ],
    );
    assert!(!o.status.success(), "{}", output_text(&o));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("failed"),
        "{}",
        output_text(&o)
    );
}
