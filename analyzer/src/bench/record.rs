//! Recording `krphase bench` measurements: whole-run rows in `krphase_measurement`, each timed
//! run's phase files imported and linked (P5's SDK log joined to its run), and the
//! benchmark-database bookkeeping (app, sdk and config rows with the replay columns, one metrics
//! row per successful timed run, statistics). Without `--db` the same goes into an in-memory
//! database, which the closing summary reads.

use std::collections::HashMap;
use std::path::Path;

use anyhow::{Result, bail};
use rusqlite::{Connection, OptionalExtension};

use super::command::find_program;
use super::measure::{MeasurementResult, run_env};
use super::plan::PlannedMeasurement;
use crate::db::benchmark::{self, ConfigData, RunMetrics};
use crate::db::config_modes;
use crate::db::measurements::{MeasurementRow, SOURCE_BENCH, insert_measurement, link_run};
use crate::db::samples::{store_order, store_samples};
use crate::import::krp::import_phase_file;
use crate::import::sdk_log::import_log;
/// The benchmark mode bench rows carry in `benchmark_config`: rocprofv3 with its tool running.
pub const BENCH_BENCHMARK_MODE: &str = "tool-runtime-overhead";

pub struct Recorder {
    conn: Connection,
    app_md5: HashMap<String, String>,
    /// `--label`: carried by every measurement and phase-file run recorded.
    label: Option<String>,
    /// `--build`: the interleaved order of the measurement recorded next, in words.
    run_order: Option<String>,
}

fn abs(p: &Path) -> std::path::PathBuf {
    std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf())
}

impl Recorder {
    /// Opens the analyzer database at `db` (or an in-memory one) with the benchmark tables;
    /// everything recorded carries `label`.
    pub fn open(db: Option<&Path>, label: Option<&str>) -> Result<Recorder> {
        let conn = match db {
            Some(p) => crate::db::open(p)?,
            None => crate::db::open_in_memory()?,
        };
        benchmark::create_schema(&conn)?;
        Ok(Recorder {
            conn,
            app_md5: HashMap::new(),
            label: label.map(String::from),
            run_order: None,
        })
    }

    /// The label of what is recorded next (`--build`: each build's own).
    pub fn set_label(&mut self, label: &str) {
        self.label = Some(label.to_string());
    }

    /// The interleaved order of the measurements recorded next, in words.
    pub fn set_run_order(&mut self, order: Option<String>) {
        self.run_order = order;
    }

    pub fn conn(&self) -> &Connection {
        &self.conn
    }

    fn md5_of_app(&mut self, program: &str) -> String {
        if let Some(m) = self.app_md5.get(program) {
            return m.clone();
        }
        let m = find_program(program)
            .and_then(|p| std::fs::read(p).ok())
            .map(|b| benchmark::md5_hex(&b))
            .unwrap_or_default();
        self.app_md5.insert(program.to_string(), m.clone());
        m
    }

    /// Imports each timed run's phase files (and P5's log) and links them to `measurement_id`.
    fn link_runs(&mut self, measurement_id: i64, x: &MeasurementResult) -> Result<Vec<i64>> {
        let mut run_ids = Vec::new();
        let mut errors = Vec::new();
        for run in &x.runs {
            for f in &run.phase_files {
                match import_phase_file(&mut self.conn, f, self.label.as_deref()) {
                    Ok(id) => {
                        link_run(&self.conn, measurement_id, id)?;
                        run_ids.push(id);
                        if let (Some(log), 1) = (&run.log, run.phase_files.len())
                            && let Err(e) = import_log(&mut self.conn, log, Some(id))
                        {
                            errors.push(format!("{e:#}"));
                        }
                    }
                    Err(e) => errors.push(format!("{e:#}")),
                }
            }
        }
        if !errors.is_empty() {
            bail!(
                "{} {}: {}",
                x.row.experiment,
                x.row.variant,
                errors.join("; ")
            );
        }
        Ok(run_ids)
    }

    /// Records one measurement.
    ///
    /// The row and its samples are one transaction, each phase file's import another, and the
    /// benchmark bookkeeping a third: all IMMEDIATE (the connection's default, `db::prepare`), so
    /// a bench and an import writing the same database at once take turns.
    pub fn record(&mut self, m: &PlannedMeasurement, x: &MeasurementResult) -> Result<()> {
        let tx = self.conn.transaction()?;
        let id = insert_measurement(
            &tx,
            SOURCE_BENCH,
            &x.row,
            Some(&abs(m.outdir())),
            self.label.as_deref(),
            false,
        )?;
        let ok = || x.runs.iter().filter(|r| r.outcome.ok());
        let walls: Vec<f64> = ok().map(|r| r.outcome.wall_s).collect();
        store_samples(&tx, id, &walls)?;
        if let Some(order) = &self.run_order {
            let positions: Vec<u64> = ok().filter_map(|r| r.position).collect();
            store_order(&tx, id, &positions, order)?;
        }
        tx.commit()?;
        let linked = self.link_runs(id, x);
        let run_ids = linked.as_ref().map(|v| v.as_slice()).unwrap_or(&[]);
        self.bookkeeping(m, x, run_ids)?;
        linked.map(|_| ())
    }

    /// The seed's database rows for one measurement.
    fn bookkeeping(
        &mut self,
        m: &PlannedMeasurement,
        x: &MeasurementResult,
        run_ids: &[i64],
    ) -> Result<()> {
        let md5 = self.md5_of_app(&m.spec.app[0]);
        // Look-ups and inserts of the app, sdk and config rows under one write lock: two
        // processes recording the same configuration reuse one row.
        let tx = self.conn.transaction()?;
        let env: std::collections::BTreeMap<String, String> =
            run_env(None, m).into_iter().collect();
        let app_id = benchmark::insert_or_reuse_app(&tx, &m.spec.app, &env, &md5)?;
        let version: Option<String> = match run_ids.first() {
            Some(r) => tx
                .query_row(
                    "SELECT sdk_version FROM krphase_run WHERE id = ?1",
                    [r],
                    |row| row.get(0),
                )
                .optional()?
                .flatten(),
            None => None,
        };
        let sdk_id = benchmark::insert_or_reuse_sdk(&tx, version.as_deref().unwrap_or("unknown"))?;
        let data = ConfigData::from_args(BENCH_BENCHMARK_MODE, &m.spec.profiler_args())?;
        let cfg_id = benchmark::insert_or_reuse_config(&tx, &data, Some(sdk_id))?;
        let ok_runs = x.runs.iter().filter(|r| r.outcome.ok()).count();
        config_modes::note_replay_mode(
            &tx,
            cfg_id,
            &config_modes::replay_mode_of(data.replay.as_ref()),
            ok_runs,
        )?;
        let now = crate::db::now_utc();
        for run in x.runs.iter().filter(|r| r.outcome.ok()) {
            let metrics = RunMetrics {
                wall_time: Some(run.outcome.wall_s),
                cpu_time: Some(run.outcome.cpu_s),
                peak_rss: Some(run.outcome.peak_rss_kib as f64 / 1024.0),
            };
            benchmark::insert_metrics(&tx, app_id, cfg_id, Some(sdk_id), &now, &metrics)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Records a row derived from other measurements (P1's application-replay total), linked to
    /// their runs.
    pub fn record_derived(
        &mut self,
        row: &MeasurementRow,
        from: &[&MeasurementResult],
    ) -> Result<()> {
        let id = insert_measurement(
            &self.conn,
            SOURCE_BENCH,
            row,
            None,
            self.label.as_deref(),
            false,
        )?;
        for x in from {
            for run in &x.runs {
                for f in &run.phase_files {
                    if let Ok(r) = import_phase_file(&mut self.conn, f, self.label.as_deref()) {
                        link_run(&self.conn, id, r)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Statistics over every recorded run.
    pub fn finish(&mut self) -> Result<()> {
        let tx = self.conn.transaction()?;
        benchmark::generate_statistics(&tx)?;
        tx.commit()?;
        Ok(())
    }
}
