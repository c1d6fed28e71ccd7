//! The seed's `test_benchmark_replay.py` behaviours, re-expressed.

use super::*;

fn derive(args: &[&str]) -> Option<ReplayConfig> {
    derive_replay_config(Some(args)).expect("valid arguments")
}

/// The benchmark mode most tests record under.
const TRO: &str = "tool-runtime-overhead";

fn fresh() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    create_schema(&conn).unwrap();
    conn
}

// --- derive_replay_config ---------------------------------------------------------------------

#[test]
fn no_arguments_is_not_a_counter_run() {
    assert_eq!(derive_replay_config::<&str>(None).unwrap(), None);
    assert_eq!(derive(&[]), None);
}

#[test]
fn trace_only_run_is_not_a_counter_run() {
    assert_eq!(derive(&["--kernel-trace"]), None);
}

#[test]
fn single_pmc_group() {
    let r = derive(&["--pmc", "SQ_WAVES", "GRBM_COUNT"]).unwrap();
    assert_eq!(r.counter_group_count, Some(1));
    assert_eq!(r.counter_collection_mode, CollectionMode::SinglePass);
    assert_eq!(r.kernel_replay, None);
}

#[test]
fn several_pmc_groups_without_replay_are_application_replay() {
    let r = derive(&["--pmc", "A", "--pmc", "B", "--pmc=C"]).unwrap();
    assert_eq!(r.counter_group_count, Some(3));
    assert_eq!(r.counter_collection_mode, CollectionMode::ApplicationReplay);
}

#[test]
fn replay_flag_without_value() {
    let r = derive(&[REPLAY_FLAG, "--pmc", "A", "--pmc", "B"]).unwrap();
    assert_eq!(r.kernel_replay, Some(true));
    assert_eq!(r.counter_collection_mode, CollectionMode::KernelReplay);
    assert_eq!(r.counter_group_count, Some(2));
}

#[test]
fn replay_flag_with_separate_value() {
    for v in ["true", "TRUE", "yes", "on", "1", "t", "y"] {
        let r = derive(&["--pmc", "A", "--pmc", "B", REPLAY_FLAG, v]).unwrap();
        assert_eq!(r.kernel_replay, Some(true), "{v}");
        assert_eq!(
            r.counter_collection_mode,
            CollectionMode::KernelReplay,
            "{v}"
        );
    }
}

#[test]
fn replay_flag_disabled_by_value() {
    for v in ["false", "FALSE", "no", "off", "0", "f", "n"] {
        let r = derive(&["--pmc", "A", "--pmc", "B", REPLAY_FLAG, v]).unwrap();
        assert_eq!(r.kernel_replay, Some(false), "{v}");
        assert_eq!(
            r.counter_collection_mode,
            CollectionMode::ApplicationReplay,
            "{v}"
        );
        assert_eq!(r.counter_group_count, Some(2), "{v}");
    }
}

#[test]
fn replay_flag_with_inline_value() {
    let on = derive(&["--kernel-replay-beta-enabled=true", "--pmc", "A"]).unwrap();
    assert_eq!(on.kernel_replay, Some(true));
    let off = derive(&["--kernel-replay-beta-enabled=false", "--pmc", "A"]).unwrap();
    assert_eq!(off.kernel_replay, Some(false));
}

#[test]
fn counter_name_that_looks_like_a_truth_value_is_not_consumed() {
    let r = derive(&[REPLAY_FLAG, "--pmc", "y"]).unwrap();
    assert_eq!(r.kernel_replay, Some(true));
    assert_eq!(r.counter_group_count, Some(1));
}

#[test]
fn input_file_leaves_the_group_count_unknown() {
    let r = derive(&["-i", "input.json"]).unwrap();
    assert_eq!(r.counter_collection_mode, CollectionMode::Unknown);
    assert_eq!(r.counter_group_count, None);
}

#[test]
fn input_file_with_replay_is_still_a_replay_run() {
    let r = derive(&["--input", "input.json", REPLAY_FLAG]).unwrap();
    assert_eq!(r.counter_collection_mode, CollectionMode::KernelReplay);
}

#[test]
fn replay_flag_with_an_invalid_value_is_rejected() {
    let err = derive_replay_config(Some(&["--kernel-replay-beta-enabled=maybe"])).unwrap_err();
    assert_eq!(err.value, "maybe");
}

#[test]
fn replay_mode_kernel_is_recognised() {
    let both = derive(&[
        "--replay-mode",
        "kernel",
        REPLAY_FLAG,
        "--pmc",
        "A",
        "--pmc",
        "B",
    ])
    .unwrap();
    assert_eq!(both.counter_collection_mode, CollectionMode::KernelReplay);
    assert!(both.replay_mode_kernel);
    assert!(!both.beta_flag_without_replay_mode());
    let beta_only = derive(&[REPLAY_FLAG, "--pmc", "A", "--pmc", "B"]).unwrap();
    assert!(beta_only.beta_flag_without_replay_mode());
    let mode_only = derive(&["--replay-mode=kernel", "--pmc", "A"]).unwrap();
    assert_eq!(mode_only.kernel_replay, Some(true));
    let app_mode = derive(&["--replay-mode", "application", "--pmc", "A", "--pmc", "B"]).unwrap();
    assert_eq!(
        app_mode.counter_collection_mode,
        CollectionMode::ApplicationReplay
    );
}

// --- config rows --------------------------------------------------------------------------------

/// Two counter groups under the replay flag.
const TWO_GROUPS_REPLAY: &[&str] = &["--pmc", "A", "--pmc", "B", REPLAY_FLAG];

fn config(conn: &Connection, args: &[&str]) -> i64 {
    let data = ConfigData::from_args(TRO, args).unwrap();
    insert_or_reuse_config(conn, &data, None).unwrap()
}

fn replay_columns(conn: &Connection, id: i64) -> (Option<i64>, Option<i64>, Option<String>) {
    conn.query_row(
        "SELECT kernel_replay, counter_group_count, counter_collection_mode FROM \
         benchmark_config WHERE id = ?1",
        [id],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

#[test]
fn application_replay_and_kernel_replay_are_distinct_configs() {
    let conn = fresh();
    let app = config(&conn, &["--pmc", "A", "--pmc", "B"]);
    let rep = config(&conn, TWO_GROUPS_REPLAY);
    assert_ne!(app, rep);
    assert_eq!(
        replay_columns(&conn, app),
        (None, Some(2), Some("application-replay".into()))
    );
    assert_eq!(
        replay_columns(&conn, rep),
        (Some(1), Some(2), Some("kernel-replay".into()))
    );
}

#[test]
fn group_count_separates_otherwise_identical_runs() {
    let conn = fresh();
    let two = config(&conn, TWO_GROUPS_REPLAY);
    let four = config(
        &conn,
        &[
            "--pmc",
            "A",
            "--pmc",
            "B",
            "--pmc",
            "A",
            "--pmc",
            "B",
            REPLAY_FLAG,
        ],
    );
    assert_ne!(two, four);
}

#[test]
fn identical_runs_reuse_one_row() {
    let conn = fresh();
    let a = config(&conn, TWO_GROUPS_REPLAY);
    let b = config(&conn, TWO_GROUPS_REPLAY);
    assert_eq!(a, b);
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM benchmark_config", [], |r| r.get(0))
        .unwrap();
    assert_eq!(rows, 1);
}

#[test]
fn sdk_id_is_not_hashed_and_the_first_one_is_kept() {
    let conn = fresh();
    conn.execute_batch("INSERT INTO benchmarked_sdk (id, hash_id) VALUES (1, 'a'), (2, 'b')")
        .unwrap();
    let data = ConfigData::from_args(TRO, &["--pmc", "A"]).unwrap();
    let first = insert_or_reuse_config(&conn, &data, Some(1)).unwrap();
    let second = insert_or_reuse_config(&conn, &data, Some(2)).unwrap();
    assert_eq!(first, second);
    let sdk: i64 = conn
        .query_row(
            "SELECT sdk_id FROM benchmark_config WHERE id = ?1",
            [first],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(sdk, 1);
}

#[test]
fn label_names_the_collection_mode() {
    let data = ConfigData::from_args(TRO, TWO_GROUPS_REPLAY).unwrap();
    let label = data.label();
    assert!(label.contains("Kernel Replay"), "{label}");
    assert!(label.contains("Counter Groups=2"), "{label}");
}

#[test]
fn trace_only_run_records_no_replay_columns() {
    let conn = fresh();
    let id = config(&conn, &["--kernel-trace"]);
    assert_eq!(replay_columns(&conn, id), (None, None, None));
}

#[test]
fn baseline_run_is_unaffected() {
    let conn = fresh();
    let data = ConfigData::from_args("baseline", &["--pmc", "A"]).unwrap();
    let id = insert_or_reuse_config(&conn, &data, None).unwrap();
    assert_eq!(replay_columns(&conn, id).2, None);
}

#[test]
fn collection_mode_is_constrained() {
    let conn = fresh();
    let err = conn.execute(
        "INSERT INTO benchmark_config (hash_id, benchmark_mode, counter_collection_mode) VALUES \
         ('x', 'baseline', 'sometimes')",
        [],
    );
    match err {
        Err(rusqlite::Error::SqliteFailure(e, _)) => {
            assert_eq!(e.code, rusqlite::ErrorCode::ConstraintViolation)
        }
        other => panic!("expected a constraint violation, got {other:?}"),
    }
}

// --- migration ---------------------------------------------------------------------------------

/// A `benchmark_config` as the pre-replay schema had it, with one row.
fn old_database() -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch(
        "CREATE TABLE benchmark_config (id INTEGER PRIMARY KEY AUTOINCREMENT, hash_id TEXT NOT \
         NULL, sdk_id INTEGER, label TEXT, benchmark_mode TEXT NOT NULL, pmc_counters TEXT \
         DEFAULT '[]');
         INSERT INTO benchmark_config (hash_id, label, benchmark_mode) VALUES ('h', 'PMC', \
         'tool-runtime-overhead');",
    )
    .unwrap();
    conn
}

#[test]
fn missing_columns_are_added() {
    let conn = old_database();
    let added = migrate_config_columns(&conn).unwrap();
    assert_eq!(
        added,
        vec![
            "kernel_replay",
            "counter_group_count",
            "counter_collection_mode"
        ]
    );
    let cols = table_columns(&conn, "benchmark_config").unwrap();
    for (c, _) in ADDED_CONFIG_COLUMNS {
        assert!(cols.iter().any(|x| x == c), "{c}");
    }
}

#[test]
fn migration_preserves_existing_rows() {
    let conn = old_database();
    migrate_config_columns(&conn).unwrap();
    let (label, cols) = conn
        .query_row(
            "SELECT label, kernel_replay FROM benchmark_config",
            [],
            |r| Ok((r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?)),
        )
        .unwrap();
    assert_eq!(label, "PMC");
    assert_eq!(cols, None);
    let modes: Option<String> = conn
        .query_row(
            "SELECT counter_collection_mode FROM benchmark_config",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(modes, None);
}

#[test]
fn migration_is_idempotent_and_adds_no_check() {
    let conn = old_database();
    migrate_config_columns(&conn).unwrap();
    assert!(migrate_config_columns(&conn).unwrap().is_empty());
    // No CHECK was added: an old database accepts any mode text.
    conn.execute(
        "INSERT INTO benchmark_config (hash_id, benchmark_mode, counter_collection_mode) VALUES \
         ('y', 'baseline', 'anything')",
        [],
    )
    .unwrap();
}

#[test]
fn current_schema_needs_no_migration() {
    let conn = fresh();
    assert!(migrate_config_columns(&conn).unwrap().is_empty());
}

// --- replay view -------------------------------------------------------------------------------

/// Inserts a statistics row (mean) for a config with the given mode and group count.
fn stat(
    conn: &Connection,
    bench_mode: &str,
    mode: &str,
    groups: Option<i64>,
    metric: &str,
    mean: f64,
) -> i64 {
    conn.execute(
        "INSERT INTO benchmark_config (hash_id, benchmark_mode, counter_group_count, \
         counter_collection_mode, kernel_replay) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            format!("{bench_mode}-{mode}-{groups:?}-{mean}-{metric}"),
            bench_mode,
            groups,
            mode,
            (mode == "kernel-replay").then_some(1)
        ],
    )
    .unwrap();
    let cfg = conn.last_insert_rowid();
    conn.execute(
        "INSERT INTO benchmark_statistics (app_id, cfg_id, sdk_id, metric_name, count, mean) \
         VALUES (1, ?1, 1, ?2, 3, ?3)",
        params![cfg, metric, mean],
    )
    .unwrap();
    cfg
}

/// A single-pass (one group) reference run's mean.
fn single_pass(conn: &Connection, bench_mode: &str, metric: &str, mean: f64) -> i64 {
    stat(conn, bench_mode, "single-pass", Some(1), metric, mean)
}

/// A kernel-replay run's mean with four counter groups.
fn replay_4_groups(conn: &Connection, bench_mode: &str, metric: &str, mean: f64) -> i64 {
    stat(conn, bench_mode, "kernel-replay", Some(4), metric, mean)
}

/// How many rows the wall-time replay view has for one config.
fn replay_wall_time_rows(conn: &Connection, cfg: i64) -> i64 {
    conn.query_row(
        "SELECT COUNT(*) FROM benchmark_replay_wall_time WHERE cfg_id = ?1",
        [cfg],
        |r| r.get(0),
    )
    .unwrap()
}

fn replay_row(conn: &Connection, metric: &str, cfg: i64) -> (f64, Option<f64>, Option<f64>) {
    conn.query_row(
        &format!(
            "SELECT measured, application_replay_projected, \"speedup vs application replay\" \
             FROM benchmark_replay_{metric} WHERE cfg_id = ?1"
        ),
        [cfg],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )
    .unwrap()
}

#[test]
fn projection_and_speedup() {
    let conn = fresh();
    let single = single_pass(&conn, TRO, "wall_time", 10.0);
    let replay = replay_4_groups(&conn, TRO, "wall_time", 20.0);
    assert_eq!(
        replay_row(&conn, "wall_time", single),
        (10.0, Some(10.0), Some(1.0))
    );
    assert_eq!(
        replay_row(&conn, "wall_time", replay),
        (20.0, Some(40.0), Some(2.0))
    );
}

#[test]
fn run_without_a_single_group_reference_still_appears() {
    let conn = fresh();
    let replay = replay_4_groups(&conn, TRO, "wall_time", 20.0);
    assert_eq!(replay_row(&conn, "wall_time", replay), (20.0, None, None));
}

#[test]
fn reference_row_is_not_duplicated_by_repeated_runs() {
    let conn = fresh();
    single_pass(&conn, TRO, "wall_time", 10.0);
    single_pass(&conn, TRO, "wall_time", 12.0);
    let replay = replay_4_groups(&conn, TRO, "wall_time", 20.0);
    let n = replay_wall_time_rows(&conn, replay);
    assert_eq!(n, 1);
    // The smallest single-pass mean is the reference.
    assert_eq!(
        replay_row(&conn, "wall_time", replay),
        (20.0, Some(40.0), Some(2.0))
    );
}

#[test]
fn projection_only_applies_to_additive_metrics() {
    let conn = fresh();
    single_pass(&conn, TRO, "peak_rss", 100.0);
    let replay = replay_4_groups(&conn, TRO, "peak_rss", 120.0);
    assert_eq!(replay_row(&conn, "peak_rss", replay), (120.0, None, None));
}

#[test]
fn reference_is_scoped_to_benchmark_mode() {
    let conn = fresh();
    single_pass(&conn, "sdk-callback-overhead", "wall_time", 10.0);
    single_pass(&conn, TRO, "wall_time", 30.0);
    let a = replay_4_groups(&conn, "sdk-callback-overhead", "wall_time", 20.0);
    let b = replay_4_groups(&conn, TRO, "wall_time", 30.0);
    assert_eq!(
        replay_row(&conn, "wall_time", a),
        (20.0, Some(40.0), Some(2.0))
    );
    assert_eq!(
        replay_row(&conn, "wall_time", b),
        (30.0, Some(120.0), Some(4.0))
    );
}

#[test]
fn runs_without_counters_are_excluded() {
    let conn = fresh();
    let unknown = stat(&conn, TRO, "unknown", None, "wall_time", 5.0);
    let none = stat(&conn, TRO, "none", Some(0), "wall_time", 5.0);
    for cfg in [unknown, none] {
        let n = replay_wall_time_rows(&conn, cfg);
        assert_eq!(n, 0);
    }
}

// --- schema ------------------------------------------------------------------------------------

#[test]
fn tables_and_views_execute() {
    let conn = fresh();
    for (metric, _) in METRICS {
        for prefix in ["benchmark_replay_", "benchmark_analysis_"] {
            let n: i64 = conn
                .query_row(
                    "SELECT COUNT(*) FROM sqlite_master WHERE type = 'view' AND name = ?1",
                    [format!("{prefix}{metric}")],
                    |r| r.get(0),
                )
                .unwrap();
            assert_eq!(n, 1, "{prefix}{metric}");
            let mut stmt = conn
                .prepare(&format!("SELECT * FROM {prefix}{metric}"))
                .unwrap();
            assert!(stmt.query([]).unwrap().next().unwrap().is_none());
        }
    }
}

#[test]
fn views_are_idempotent() {
    let conn = fresh();
    create_views(&conn).unwrap();
    create_schema(&conn).unwrap();
}

#[test]
fn double_quoted_literals_parse_with_dqs_enabled() {
    let conn = Connection::open_in_memory().unwrap();
    enable_dqs(&conn).unwrap();
    conn.execute_batch(
        "CREATE TABLE t (m TEXT CHECK (m IN (\"a\", \"b\"))); INSERT INTO t VALUES ('a');",
    )
    .unwrap();
}

#[test]
fn statistics_are_generated_and_updated() {
    let conn = fresh();
    let app = insert_or_reuse_app(&conn, &["app".into()], &Default::default(), "m").unwrap();
    let cfg = config(&conn, &["--pmc", "A"]);
    for w in [1.0, 2.0, 3.0] {
        let m = RunMetrics {
            wall_time: Some(w),
            ..Default::default()
        };
        insert_metrics(&conn, app, cfg, None, "2026-01-01 00:00:00+00:00", &m).unwrap();
    }
    generate_statistics(&conn).unwrap();
    generate_statistics(&conn).unwrap();
    let (count, mean, sd): (i64, f64, f64) = conn
        .query_row(
            "SELECT count, mean, std_dev FROM benchmark_statistics WHERE metric_name = \
             'wall_time'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap();
    assert_eq!((count, mean, sd), (3, 2.0, 1.0));
    let rows: i64 = conn
        .query_row("SELECT COUNT(*) FROM benchmark_statistics", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(
        rows, 1,
        "only wall_time had values; re-running updates in place"
    );
}

#[test]
fn kernel_filter_and_environment_separate_rows() {
    let conn = fresh();
    let plain = config(&conn, TWO_GROUPS_REPLAY);
    let filtered = config(
        &conn,
        &[
            "--pmc",
            "A",
            "--pmc",
            "B",
            REPLAY_FLAG,
            "--kernel-include-regex",
            "^x$",
        ],
    );
    assert_ne!(plain, filtered);
    let label: String = conn
        .query_row(
            "SELECT label FROM benchmark_config WHERE id = ?1",
            [filtered],
            |r| r.get(0),
        )
        .unwrap();
    assert!(label.contains("Kernel Include Regex=^x$"), "{label}");
    let cmd = vec!["app".to_string()];
    let quiet = insert_or_reuse_app(&conn, &cmd, &Default::default(), "m").unwrap();
    let env = std::collections::BTreeMap::from([("ROCPROFILER_LOG_LEVEL".into(), "info".into())]);
    let logged = insert_or_reuse_app(&conn, &cmd, &env, "m").unwrap();
    assert_ne!(quiet, logged);
    assert_eq!(insert_or_reuse_app(&conn, &cmd, &env, "m").unwrap(), logged);
}
