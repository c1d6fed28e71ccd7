//! `krphase import-benchmark benchmark.db`: a `rocprofv3-benchmark` database into the analyzer's
//! whole-run measurements. The input is never modified: its tables are copied into an in-memory
//! database (read-only attach), migrated there (an old database lacks the replay columns), given
//! statistics if it has none, and read through the replay view.

use std::path::Path;

use anyhow::{Context, Result, bail};
use rusqlite::{Connection, OpenFlags, params};

use crate::db::benchmark;
use crate::db::measurements::SOURCE_BENCHMARK_DB;
use crate::db::quantiles::median;
use crate::db::samples::store_samples;

/// Tables copied from the input (the first two are required; the last is krphase bench's record
/// of each config row's replay modes, absent from the seed's own databases).
const TABLES: [&str; 6] = [
    "benchmark_config",
    "benchmark_metrics",
    "benchmarked_app",
    "benchmarked_sdk",
    "benchmark_statistics",
    "krphase_config_replay_mode",
];

/// Percent-encodes the characters that end a path in an SQLite URI.
fn uri_path(path: &Path) -> String {
    let s = path.display().to_string();
    s.replace('%', "%25")
        .replace('?', "%3f")
        .replace('#', "%23")
}

/// Copies the benchmark tables of `path` into a fresh in-memory database, migrated and with
/// views and statistics in place.
pub fn load_copy(path: &Path) -> Result<Connection> {
    let mut magic = [0u8; 16];
    {
        use std::io::Read;
        let mut f = std::fs::File::open(path)
            .with_context(|| format!("cannot open benchmark database {}", path.display()))?;
        if f.read_exact(&mut magic).is_err() || &magic != b"SQLite format 3\0" {
            bail!("{} is not an SQLite database", path.display());
        }
    }
    let mem = Connection::open_with_flags(
        ":memory:",
        OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_URI
            | OpenFlags::SQLITE_OPEN_MEMORY,
    )?;
    benchmark::enable_dqs(&mem)?;
    mem.execute(
        "ATTACH DATABASE ?1 AS src",
        [format!("file:{}?mode=ro", uri_path(path))],
    )
    .with_context(|| format!("cannot attach {}", path.display()))?;
    let present: Vec<String> = mem
        .prepare("SELECT name FROM src.sqlite_master WHERE type = 'table'")
        .and_then(|mut s| {
            s.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .with_context(|| format!("{} is not a readable SQLite database", path.display()))?;
    for required in &TABLES[..2] {
        if !present.iter().any(|t| t == required) {
            bail!(
                "{} is not a rocprofv3-benchmark database: it has no {required} table",
                path.display()
            );
        }
    }
    for t in TABLES {
        if present.iter().any(|p| p == t) {
            mem.execute_batch(&format!("CREATE TABLE main.{t} AS SELECT * FROM src.{t}"))
                .with_context(|| format!("{}: cannot read table {t}", path.display()))?;
        }
    }
    mem.execute_batch("DETACH DATABASE src")?;
    // Whatever the input lacks (apps, sdks, statistics, replay columns, views) is created empty.
    benchmark::create_schema(&mem).with_context(|| format!("{}: migrate", path.display()))?;
    let stats: i64 = mem.query_row("SELECT COUNT(*) FROM benchmark_statistics", [], |r| {
        r.get(0)
    })?;
    if stats == 0 {
        benchmark::generate_statistics(&mem)?;
    }
    Ok(mem)
}

/// Summary of one import.
#[derive(Debug, Default)]
pub struct BenchmarkImport {
    pub configs: usize,
    pub measurements: usize,
    /// Config rows an old database had without replay columns.
    pub configs_without_replay_columns: usize,
    /// One line per imported row whose figures are invalid (a config row filled by several
    /// rocprofv3 configs).
    pub warnings: Vec<String>,
}

/// One measurement made from a statistics row of the benchmark database.
struct StatisticRow {
    experiment: String,
    variant: String,
    mode: Option<String>,
    detail: String,
    median: Option<f64>,
    min: Option<f64>,
    max: Option<f64>,
    rss_kib: Option<i64>,
    samples: i64,
    command: String,
    metric: &'static str,
    groups: Option<i64>,
    projected: Option<f64>,
    speedup: Option<f64>,
    /// The modes the config row mixes (`config_modes`), when it mixes several.
    mixed_modes: Option<String>,
    /// The metric of each run, in the metrics table's order.
    raw: Vec<f64>,
}

/// One measurement per (app, config, sdk) and additive metric, from the statistics rows.
fn statistic_rows(src: &Connection) -> Result<Vec<StatisticRow>> {
    let mut rows = Vec::new();
    for metric in benchmark::ADDITIVE_METRICS {
        let sql = format!(
            "SELECT s.app_id, s.cfg_id, s.sdk_id, c.benchmark_mode, COALESCE(c.label, ''), \
             c.counter_collection_mode, c.counter_group_count, c.kernel_replay, s.count, s.mean, \
             s.min, s.max, s.std_dev, a.command, r.application_replay_projected, \
             r.\"speedup vs application replay\" \
             FROM benchmark_statistics s JOIN benchmark_config c ON c.id = s.cfg_id \
             LEFT JOIN benchmarked_app a ON a.id = s.app_id \
             LEFT JOIN benchmark_replay_{metric} r ON r.id = s.id \
             WHERE s.metric_name = '{metric}' ORDER BY s.app_id, s.cfg_id, s.sdk_id"
        );
        let mut stmt = src.prepare(&sql)?;
        let mut q = stmt.query([])?;
        while let Some(r) = q.next()? {
            let (app, cfg, sdk): (i64, i64, Option<i64>) = (r.get(0)?, r.get(1)?, r.get(2)?);
            let raw = benchmark::metric_values(src, metric, app, cfg, sdk)?;
            let rss: Option<f64> = src.query_row(
                "SELECT MAX(CAST(peak_rss AS REAL)) FROM benchmark_metrics WHERE app_id = ?1 AND \
                 cfg_id = ?2 AND sdk_id IS ?3",
                params![app, cfg, sdk],
                |r| r.get(0),
            )?;
            let mean: Option<f64> = r.get(9)?;
            let command: Option<String> = r.get(13)?;
            let command = command
                .map(|c| {
                    serde_json::from_str::<Vec<String>>(&c)
                        .map(|v| v.join(" "))
                        .unwrap_or(c)
                })
                .unwrap_or_default();
            let groups: Option<i64> = r.get(6)?;
            let replay: Option<i64> = r.get(7)?;
            let projected: Option<f64> = r.get(14)?;
            let speedup: Option<f64> = r.get(15)?;
            let mut detail = format!("metric={metric} app={app} cfg={cfg}");
            if let Some(s) = sdk {
                detail += &format!(" sdk={s}");
            }
            if let Some(g) = groups {
                detail += &format!(" groups={g}");
            }
            if let Some(k) = replay {
                detail += &format!(" kernel_replay={k}");
            }
            if let Some(m) = mean {
                detail += &format!(" mean={m}");
            }
            if let Some(sd) = r.get::<_, Option<f64>>(12)? {
                detail += &format!(" std_dev={sd}");
            }
            if let Some(p) = projected {
                detail += &format!(" application_replay_projected={p}");
            }
            if let Some(s) = speedup {
                detail += &format!(" speedup_vs_application_replay={s}");
            }
            rows.push(StatisticRow {
                experiment: r.get(3)?,
                variant: r.get(4)?,
                mode: r.get(5)?,
                detail,
                median: median(&raw).or(mean),
                min: r.get(10)?,
                max: r.get(11)?,
                rss_kib: rss.map(|mb| (mb * 1024.0).round() as i64),
                samples: r.get::<_, Option<i64>>(8)?.unwrap_or(0),
                command,
                metric,
                groups,
                projected,
                speedup,
                mixed_modes: match crate::db::config_modes::mixed_modes(src, cfg)? {
                    Some(m) => Some(m),
                    None => crate::db::config_modes::mix_from_run_counts(src, app, cfg, sdk)?,
                },
                raw,
            });
        }
    }
    Ok(rows)
}

/// Replaces the measurements of the file `key` with `rows`, in one transaction.
fn store(
    conn: &mut Connection,
    rows: &[StatisticRow],
    key: &str,
    label: Option<&str>,
) -> Result<()> {
    let tx = conn.transaction()?;
    tx.execute(
        "DELETE FROM krphase_measurement_run WHERE measurement_id IN (SELECT id FROM \
         krphase_measurement WHERE source = ?1 AND outdir = ?2)",
        params![SOURCE_BENCHMARK_DB, key],
    )?;
    tx.execute(
        "DELETE FROM krphase_measurement WHERE source = ?1 AND outdir = ?2",
        params![SOURCE_BENCHMARK_DB, key],
    )?;
    let now = crate::db::now_utc();
    for o in rows {
        tx.execute(
            "INSERT INTO krphase_measurement (source, experiment, variant, mode, detail, \
             median_s, min_s, max_s, peak_child_rss_kib, samples, failures, command, outdir, \
             label, imported_at, metric, counter_groups, projected_s, speedup, mixed_modes) \
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, '0', ?11, ?12, ?13, ?14, ?15, ?16, \
             ?17, ?18, ?19)",
            params![
                SOURCE_BENCHMARK_DB,
                o.experiment,
                o.variant,
                o.mode,
                o.detail,
                o.median,
                o.min,
                o.max,
                o.rss_kib,
                o.samples,
                o.command,
                key,
                label,
                now,
                o.metric,
                o.groups,
                o.projected,
                o.speedup,
                o.mixed_modes
            ],
        )?;
        store_samples(&tx, tx.last_insert_rowid(), &o.raw)?;
    }
    tx.commit()?;
    Ok(())
}

/// Imports the whole-run figures: one measurement per (app, config, sdk) and time metric
/// (wall_time, cpu_time), with the median of the raw runs, min/max, sample count, peak RSS of the
/// same runs (the seed labels it MB; stored ×1024 as KiB), and the replay view's projection and
/// speedup in `detail`. Re-importing the same file replaces its rows.
pub fn import_benchmark(
    conn: &mut Connection,
    path: &Path,
    label: Option<&str>,
) -> Result<BenchmarkImport> {
    // The source's errors name it already; flattened to text, a SQLite error among them is not
    // taken for one of the analyzer database's (`db::locked::name_database`).
    let src = load_copy(path).map_err(|e| anyhow::anyhow!("{e:#}"))?;
    let key = std::fs::canonicalize(path)
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string();
    let configs = src.query_row("SELECT COUNT(*) FROM benchmark_config", [], |r| {
        r.get::<_, i64>(0)
    })? as usize;
    let configs_without_replay_columns = src.query_row(
        "SELECT COUNT(*) FROM benchmark_config WHERE benchmark_mode <> 'baseline' AND \
         counter_collection_mode IS NULL",
        [],
        |r| r.get::<_, i64>(0),
    )? as usize;

    let rows = statistic_rows(&src)?;
    store(conn, &rows, &key, label)?;
    let warnings = crate::db::measurements::read_measurements(
        conn,
        &crate::db::measurements::MeasurementFilter::All,
    )?
    .iter()
    .filter(|m| {
        m.source.as_deref() == Some(SOURCE_BENCHMARK_DB) && m.outdir.as_deref() == Some(&key)
    })
    .filter_map(|m| m.warning())
    .collect();
    Ok(BenchmarkImport {
        configs,
        measurements: rows.len(),
        configs_without_replay_columns,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_sql(name: &str) -> String {
        std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../tests/fixtures/bench")
                .join(name),
        )
        .unwrap()
    }

    /// Builds a benchmark.db from the committed SQL of an old (pre-replay-column) database,
    /// whose CHECK and view use double-quoted literals as the seed's did.
    fn old_db(dir: &Path) -> std::path::PathBuf {
        let p = dir.join("benchmark-old.db");
        let c = Connection::open(&p).unwrap();
        benchmark::enable_dqs(&c).unwrap();
        c.execute_batch(&fixture_sql("benchmark_old.sql")).unwrap();
        p
    }

    /// A current-schema database with a single-pass reference and a 3-group replay config.
    fn new_db(dir: &Path) -> std::path::PathBuf {
        let p = dir.join("benchmark.db");
        let app = ["transpose".into(), "1".into()];
        crate::synth_benchmark::write_benchmark_db(&p, &app, &[1.0, 1.2, 1.1], &[1.5, 1.4, 1.6])
            .unwrap();
        p
    }

    fn count(conn: &Connection, sql: &str) -> i64 {
        conn.query_row(sql, [], |r| r.get(0)).unwrap()
    }

    #[test]
    fn imports_a_current_database_with_projection() {
        let dir = tempfile::tempdir().unwrap();
        let src = new_db(dir.path());
        let before = std::fs::read(&src).unwrap();
        let mut conn = crate::db::open(dir.path().join("k.db")).unwrap();
        let s = import_benchmark(&mut conn, &src, Some("b")).unwrap();
        assert_eq!((s.configs, s.measurements), (2, 4));
        assert_eq!(std::fs::read(&src).unwrap(), before, "input untouched");
        let (median, detail): (f64, String) = conn
            .query_row(
                "SELECT median_s, detail FROM krphase_measurement WHERE mode = 'kernel-replay' \
                 AND detail LIKE 'metric=wall_time%'",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .unwrap();
        assert_eq!(median, 1.5);
        // Reference 1.1 s × 3 groups = 3.3 s projected, 2.2× speedup.
        assert!(detail.contains("groups=3"), "{detail}");
        assert!(
            detail.contains("application_replay_projected=3.3"),
            "{detail}"
        );
        assert!(
            detail.contains("speedup_vs_application_replay=2.2"),
            "{detail}"
        );
        let rss: i64 = count(
            &conn,
            "SELECT MAX(peak_child_rss_kib) FROM krphase_measurement",
        );
        assert_eq!(rss, 102400);
        // Idempotent.
        import_benchmark(&mut conn, &src, Some("b")).unwrap();
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM krphase_measurement"), 4);
    }

    #[test]
    fn imports_an_old_database_without_touching_it() {
        let dir = tempfile::tempdir().unwrap();
        let src = old_db(dir.path());
        let before = std::fs::read(&src).unwrap();
        let mut conn = crate::db::open(dir.path().join("k.db")).unwrap();
        let s = import_benchmark(&mut conn, &src, None).unwrap();
        assert_eq!(std::fs::read(&src).unwrap(), before, "input untouched");
        assert_eq!(s.configs, 2);
        assert_eq!(s.configs_without_replay_columns, 1);
        // 2 (app, cfg, sdk) groups × wall/cpu.
        assert_eq!(s.measurements, 4);
        let cols =
            benchmark::table_columns(&Connection::open(&src).unwrap(), "benchmark_config").unwrap();
        assert!(
            !cols.iter().any(|c| c == "kernel_replay"),
            "no migration of the input"
        );
        let median: f64 = conn
            .query_row(
                "SELECT median_s FROM krphase_measurement WHERE experiment = 'baseline' AND \
                 detail LIKE 'metric=wall_time%'",
                [],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(median, 2.0);
    }

    #[test]
    fn rejects_files_that_are_not_benchmark_databases() {
        let dir = tempfile::tempdir().unwrap();
        let mut conn = crate::db::open(dir.path().join("k.db")).unwrap();
        let text = dir.path().join("notes.db");
        std::fs::write(&text, "hello, this is not sqlite at all").unwrap();
        let e = import_benchmark(&mut conn, &text, None).unwrap_err();
        assert!(
            format!("{e:#}").contains("is not an SQLite database"),
            "{e:#}"
        );
        let other = dir.path().join("other.db");
        Connection::open(&other)
            .unwrap()
            .execute_batch("CREATE TABLE t (x)")
            .unwrap();
        let e = import_benchmark(&mut conn, &other, None).unwrap_err();
        assert!(
            format!("{e:#}").contains("no benchmark_config table"),
            "{e:#}"
        );
        let missing = import_benchmark(&mut conn, &dir.path().join("nope.db"), None).unwrap_err();
        assert!(
            format!("{missing:#}").contains("cannot open"),
            "{missing:#}"
        );
        assert_eq!(count(&conn, "SELECT COUNT(*) FROM krphase_measurement"), 0);
    }

    /// The kernel-replay wall-time row labelled `seed`, as read back.
    fn seed_replay_row(conn: &Connection) -> crate::db::measurements::StoredMeasurement {
        crate::db::measurements::read_measurements(
            conn,
            &crate::db::measurements::MeasurementFilter::Label("seed".into()),
        )
        .unwrap()
        .into_iter()
        .find(|m| m.mode.as_deref() == Some("kernel-replay"))
        .unwrap()
    }

    /// A config row that `krphase bench` filled with `--replay-mode kernel` runs and runs of the
    /// beta flag alone (one row under the seed's hash) imports as invalid, naming both modes;
    /// a seed database that records no modes leaves the kernel-replay row valid but with the
    /// caveat that it cannot be verified.
    #[test]
    fn a_config_row_mixing_modes_is_flagged_with_its_modes() {
        use crate::db::config_modes::{note_replay_mode, replay_mode_of};
        let dir = tempfile::tempdir().unwrap();
        let src = new_db(dir.path());
        let mut conn = crate::db::open(dir.path().join("k.db")).unwrap();
        import_benchmark(&mut conn, &src, Some("seed")).unwrap();
        let replay = seed_replay_row(&conn);
        assert!(replay.invalid_reason().is_none());
        assert!(replay.caveat().unwrap().contains("ignores --replay-mode"));

        // The synthetic database's replay config asks with --replay-mode kernel; the same
        // groups with the beta flag alone hash to the same row.
        let c = Connection::open(&src).unwrap();
        let groups = ["--pmc", "A", "--pmc", "B", "--pmc", "C"];
        let beta_args = [&["--kernel-replay-beta-enabled"][..], &groups[..]].concat();
        let kernel_args = [&["--replay-mode", "kernel"][..], &beta_args[..]].concat();
        let mut ids = Vec::new();
        for args in [&beta_args, &kernel_args] {
            let d = benchmark::ConfigData::from_args("tool-runtime-overhead", args).unwrap();
            let cfg = benchmark::insert_or_reuse_config(&c, &d, None).unwrap();
            note_replay_mode(&c, cfg, &replay_mode_of(d.replay.as_ref()), 3).unwrap();
            ids.push(cfg);
        }
        assert_eq!(ids[0], ids[1], "one row under the seed's hash");
        drop(c);
        import_benchmark(&mut conn, &src, Some("seed")).unwrap();
        let why = seed_replay_row(&conn)
            .invalid_reason()
            .expect("mixed row is invalid");
        assert!(
            why.contains("--replay-mode kernel): 3 run(s)") && why.contains("beta flag alone"),
            "{why}"
        );
    }
}
