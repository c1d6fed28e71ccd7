//! Ranks end to end: the emulator runs one process per rank under a launcher's environment, the
//! tool names each file by `%rank%` and records the rank in its header (format 3.1), and
//! `krphase report --by rank` lays the runs out by rank.

use std::path::PathBuf;

use krphase_format::FileReader;

const SAXPY: [&str; 5] = ["saxpy", "--elements", "65536", "--iterations", "3"];

/// Runs rank `rank` of a job of `size` launched as Open MPI does; returns its phase file.
fn rank_run(rank: u32, size: u32) -> PathBuf {
    let (r, s) = (rank.to_string(), size.to_string());
    let name = format!("ranks-e2e-{rank}");
    let dir = krphase_tests::scratch_dir(&format!("{name}-out"));
    let template = dir.join("app-r%rank%.krp");
    krphase_tests::run_logged(
        &name,
        &SAXPY,
        &[
            ("OMPI_COMM_WORLD_RANK", &r),
            ("OMPI_COMM_WORLD_SIZE", &s),
            ("KRPHASE_OUTPUT", template.to_str().unwrap()),
        ],
    );
    dir.join(format!("app-r{rank}.krp"))
}

#[test]
fn each_rank_is_recorded_and_the_report_lays_the_runs_out_by_rank() {
    let files: Vec<PathBuf> = (0..3).map(|k| rank_run(k, 3)).collect();
    for (k, f) in files.iter().enumerate() {
        let r = FileReader::open(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        let rank = r
            .header()
            .rank
            .clone()
            .expect("the launcher's rank is recorded");
        assert_eq!(
            (rank.rank, rank.world_size, rank.var.as_str()),
            (k as u32, Some(3), "OMPI_COMM_WORLD_RANK")
        );
    }
    let db = krphase_tests::scratch_dir("ranks-e2e-db").join("k.db");
    let mut args = vec!["import".to_string()];
    args.extend(files.iter().map(|f| f.display().to_string()));
    krphase_tests::krphase_db_ok(&db, &args);
    let v: serde_json::Value = serde_json::from_str(&krphase_tests::krphase_db_ok(
        &db,
        &["report", "--by", "rank", "--format", "json"],
    ))
    .unwrap();
    let c = &v["ranks"];
    assert_eq!(c["world_size"], 3);
    assert_eq!(c["missing"], serde_json::json!([]));
    let ranks: Vec<i64> = c["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["rank"].as_i64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 1, 2]);
    let slowest = c["slowest"].as_i64().unwrap();
    let max = c["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .max_by_key(|r| r["replay_ns"].as_i64().unwrap())
        .unwrap();
    assert_eq!(max["rank"].as_i64(), Some(slowest));
    assert!(max["replayed"].as_u64().unwrap() > 0);
}

#[test]
fn a_rank_that_is_not_a_number_names_the_file_but_is_not_recorded() {
    let dir = krphase_tests::scratch_dir("ranks-e2e-named-out");
    let template = dir.join("app-r%rank%.krp");
    krphase_tests::run_logged(
        "ranks-e2e-named",
        &SAXPY,
        &[
            ("RANK", "worker-a"),
            ("KRPHASE_OUTPUT", template.to_str().unwrap()),
        ],
    );
    let f = dir.join("app-rworker-a.krp");
    let r = FileReader::open(&f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
    assert_eq!(r.header().rank, None);
}
