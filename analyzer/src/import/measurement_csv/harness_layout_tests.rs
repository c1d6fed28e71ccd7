//! `import-harness` on replay_perf.py's own output layout: the CSV as Python's csv module writes
//! it, and per measurement the `-d` directory rocprofv3 wrote into, holding the phase files of
//! the `--warmup` launches beside the timed ones (the script gives every launch of a
//! measurement the same `-d`), with application replay's `pass_<n>` directories for P6's
//! replay-active row (the seed passes the beta flag without `--replay-mode kernel`).

use super::*;
use crate::db::measurements::{MeasurementFilter, read_measurements};
use crate::synth::{SynthSpec, header, write_synthetic_as};

/// One launch's phase file at `dir`, its tool started at `start_ms` (boot time) by `ppid`.
fn launch_file(dir: &Path, pid: u32, ppid: u32, start_ms: u64, windows: u64) {
    std::fs::create_dir_all(dir).unwrap();
    let spec = SynthSpec {
        windows,
        passes: 3,
        pid,
        seed: u64::from(pid),
        ..SynthSpec::default()
    };
    let mut h = header(&spec);
    h.ppid = ppid;
    h.hostname = "node".into();
    h.boottime_ns = start_ms * 1_000_000;
    let f = std::fs::File::create(dir.join(format!("krphase-node-{pid}.krp"))).unwrap();
    write_synthetic_as(std::io::BufWriter::new(f), &spec, &h).unwrap();
    // rocprofv3's own output (-o out --output-format json) beside it.
    std::fs::write(dir.join("out_results.json"), "{}").unwrap();
}

/// replay_perf.py's run of `--only p3 p6 --groups 3 --repeats 3 --warmup 1` for P3, P6's
/// replay-active row at `--repeats 2`: the CSV and the directories, under `root`. Launch `k`
/// starts at `k` seconds; pids are chosen so that their file names sort out of time order.
fn seed_layout(root: &Path, windows: u64) -> PathBuf {
    let w = root.join("replay_perf_out");
    for (k, pid) in [(0u64, 9084u32), (1, 10243), (2, 11453), (3, 8999)] {
        launch_file(&w.join("p3-16384"), pid, 500, 1000 * k, windows);
    }
    for (k, launcher) in [(10u64, 700u32), (11, 701), (12, 702)] {
        for pass in 1..=3u32 {
            let dir = w.join(format!("p6-filtered/pass_{pass}"));
            launch_file(
                &dir,
                launcher * 10 + pass,
                launcher,
                1000 * k + 100 * u64::from(pass),
                2,
            );
        }
    }
    let cmd = |d: &str, extra: &str| {
        format!(
            "rocprofv3 --pmc SQ_WAVES SQ_INSTS_VALU GRBM_COUNT --pmc SQ_WAVES SQ_INSTS_VALU \
             GRBM_GUI_ACTIVE --pmc SQ_WAVES SQ_INSTS_VALU SQ_INSTS_SALU \
             --kernel-replay-beta-enabled{extra} --output-format json -d replay_perf_out/{d} \
             -o out -- kernel-replay 16384"
        )
    };
    let csv = format!(
        "{}\r\nP3,elements-16384,kernel-replay,16384 elements,1.5,1.25,1.75,20480,3,0,{}\r\n\
         P6,replay-active-none-matched,kernel-replay,\"replay configured, no kernel matches\",\
         2.5,2.25,2.75,20480,2,0,{}\r\n",
        COLUMNS.join(","),
        cmd("p3-16384", ""),
        cmd(
            "p6-filtered",
            " --kernel-include-regex ^__no_such_kernel__$"
        ),
    );
    let p = root.join("replay_perf.csv");
    std::fs::write(&p, csv).unwrap();
    p
}

/// The warm-up launch of each row is recognised and kept out: P3 links its 3 timed launches
/// (not 4), P6 its 2 (of 3 files each, not 9), the earliest launch being the warm-up; the import
/// says so; P6's replay-active row is invalid (application replay, `pass_<n>`).
#[test]
fn warmups_in_the_same_directory_are_left_out() {
    let dir = tempfile::tempdir().unwrap();
    let csv = seed_layout(dir.path(), 20);
    let mut conn = crate::db::open(dir.path().join("k.db")).unwrap();
    let s = import_measurement_csv(&mut conn, &csv, Some(dir.path()), Some("a")).unwrap();
    assert_eq!((s.measurements, s.runs, s.warmup_launches), (2, 3 + 6, 2));
    let m = read_measurements(&conn, &MeasurementFilter::Label("a".into())).unwrap();
    let (p3, p6) = (&m[0], &m[1]);
    assert_eq!(p3.launches.len(), 3, "{:?}", p3.launches);
    assert_eq!(p3.linked_runs.len(), 3);
    assert_eq!(p3.warmup_runs.len(), 1);
    let warm_pid: i64 = conn
        .query_row(
            "SELECT pid FROM krphase_run WHERE id = ?1",
            [p3.warmup_runs[0]],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(
        warm_pid, 9084,
        "the earliest launch, not the first file name"
    );
    assert_eq!(p6.launches.iter().map(Vec::len).collect::<Vec<_>>(), [3, 3]);
    assert_eq!(p6.warmup_runs.len(), 3);
    assert!(
        p6.invalid_reason().unwrap().contains("application replay"),
        "{:?}",
        p6.invalid_reason()
    );
    // The launch times: one per timed launch, from the phase files.
    let t = crate::db::launch_times::launch_times(&conn, p3).unwrap();
    assert_eq!(t.len(), 3);
    assert!(t.iter().all(|s| *s > 0.0));
}

/// Two labelled imports compared: the CSV rows get an interval with n = 3 a side (timed launches
/// only), over the phase files' run times (basis M), and the attribution divides by launches.
#[test]
fn compared_csv_rows_get_an_interval_over_their_timed_launches() {
    let dirs = [tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap()];
    let mut conn = crate::db::open(dirs[0].path().join("k.db")).unwrap();
    for (d, (label, windows)) in dirs.iter().zip([("base", 20), ("fast", 10)]) {
        let csv = seed_layout(d.path(), windows);
        import_measurement_csv(&mut conn, &csv, Some(d.path()), Some(label)).unwrap();
    }
    let c = crate::compare::builds::compare_builds(
        &conn,
        "base",
        "fast",
        crate::compare::builds::CompareWhat::Measurements,
        15.0,
    )
    .unwrap();
    let rows = c.rows.as_ref().unwrap();
    let p3 = &rows.rows[0];
    assert_eq!((p3.a_runs, p3.b_runs), (3, 3), "warm-ups excluded");
    assert!(p3.interval.is_some());
    assert_eq!(p3.values_basis, Some(crate::db::basis::Basis::InProcess));
    let text = crate::compare::builds::render_text(&c);
    assert!(text.contains("3/3"), "{text}");
    assert!(text.contains("no SDK log can be joined"), "{text}");
    let x = c.details[0].attribution.as_ref().expect("attribution");
    assert_eq!((x.a.runs, x.b.runs), (3, 3));
    assert!(!rows.rows[1].valid, "P6 invalid");
    assert!(text.contains("INVALID"), "{text}");
}
